"""The picture's read (``graph_of``): one read statement whose row becomes a
:class:`~memora_ogm.picture.MemoryGraph`; no I/O, shared by both twins.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from memora_ogm._async.nodes import (
    Agent,
    Interaction,
    InteractionCollection,
    Memory,
    MessageBlock,
    Org,
    User,
)
from memora_ogm.calls.organization import match_org
from memora_ogm.calls.user import match_user
from memora_ogm.engine.call import Call
from memora_ogm.engine.pages import Count, Related, output_each
from memora_ogm.engine.projection import projection, reading
from memora_ogm.engine.unit_of_work import UnitOfWork
from memora_ogm.picture import GraphEdge, GraphNode, MemoryGraph
from memora_ogm.placeholders import resolve_placeholders
from memora_ogm.schema.validation import check_ids, check_page

#: Interactions (or users and agents) a picture shows unless told otherwise.
DEFAULT_LIMIT = 20


def _owned(*same: str) -> dict[str, Count]:
    """What an organisation or a user owns, counted by its ``same`` key properties."""
    return {
        "interactions": Count(Interaction, same),
        "memories": Count(Memory, same),
        # memories that a newer one contradicted (CONTRARY_UPDATE)
        "superseded": Count(Memory, same, having=Memory.contrary_update),
    }


#: What an organisation and each of its users are counted with (here and in ``inspect``).
ORGANIZATION_COUNTS = {
    "users": Count(User, ("org_id",)),
    "agents": Count(Agent, ("org_id",)),
    **_owned("org_id"),
}
USER_COUNTS = _owned("org_id", "user_id")

#: What a picture shows of a memory on the other side of a ``CONTRARY_UPDATE``.
OTHER_MEMORY = ("memory_id", "memory", "interaction_id", "agent_id", "obtained_at")


def graph_of(
    org_id: str, user_id: str | None = None, limit: int = DEFAULT_LIMIT
) -> Call[MemoryGraph]:
    """A picture of the memory graph: the user's ``limit`` most recent interactions with
    their messages, memories, days and contradiction history (one ``CONTRARY_UPDATE``
    step each way, even into older interactions), or without a user the organisation's
    users and agents (``limit`` of each) with their counts. One read statement; the
    picture shows itself in Jupyter and ``write_html(path)`` writes it as a page."""
    check_ids(org_id=org_id)
    check_page(0, limit)
    if user_id is None:
        return Call(_organization_read(org_id, limit), _organization_graph)
    check_ids(user_id=user_id)
    return Call(_user_read(org_id, user_id, limit), _user_graph)


def _user_read(org_id: str, user_id: str, limit: int) -> UnitOfWork:
    work = UnitOfWork()
    user = match_user(work, org_id, user_id)
    collection = work.match_related(user, User.interactions_in)
    interactions = work.reachable(
        collection,
        InteractionCollection.had_interaction,
        order_by="updated_at",
        descending=True,
        limit=limit,
    )
    memories = work.reachable(interactions, Interaction.memories, order_by="obtained_at")
    work.output("user", user)
    work.output("agents", work.nodes(Agent, org_id=org_id))
    output_each(
        work,
        "interactions",
        interactions,
        messages=Related(
            (Interaction.first_message, MessageBlock.is_next),
            ("msg_position", "role", "content"),
            "msg_position",
        ),
        days=Related((Interaction.has_occurrence_on,), ("date",), "date"),
    )
    output_each(
        work,
        "memories",
        memories,
        sources=Related((Memory.message_source,), ("msg_position",), "msg_position"),
        interaction=Related((Memory.interaction_source,), ("interaction_id",)),
        days=Related((Memory.date_obtained,), ("date",), "date"),
        superseded=Related((Memory.contradicts,), OTHER_MEMORY, "obtained_at"),
        superseded_by=Related((Memory.contrary_update,), OTHER_MEMORY, "obtained_at"),
    )
    return work


def _organization_read(org_id: str, limit: int) -> UnitOfWork:
    work = UnitOfWork()
    org = match_org(work, org_id)
    users = work.reachable(org, Org.users, order_by="created_at", limit=limit)
    agents = work.reachable(org, Org.has_agent, order_by="created_at", limit=limit)
    output_each(work, "org", org, **ORGANIZATION_COUNTS)
    output_each(
        work,
        "users",
        users,
        **USER_COUNTS,
        agents=Related((User.has_agent,), ("agent_id",), "agent_id"),
    )
    work.output("agents", agents)
    return work


def _stamp(value: Any) -> str:
    """A DATETIME or DATE as ISO text (read values, or the driver's own as stored)."""
    return str(value.iso_format() if hasattr(value, "iso_format") else value.isoformat())


def _values(cls: type, row: Mapping[str, Any]) -> dict[str, Any]:
    """A node's projected properties, inflated (datetimes as datetimes)."""
    return projection(reading(cls)).values(row)


def _short(text: str, length: int = 60) -> str:
    return text if len(text) <= length else text[: length - 1] + "…"


class _Builder:
    """Nodes and edges in the order they are added, each once."""

    def __init__(self) -> None:
        self.nodes: dict[str, GraphNode] = {}
        self.edges: dict[tuple[str, str, str], GraphEdge] = {}

    def node(self, node_id: str, kind: str, caption: str, **properties: Any) -> str:
        self.nodes.setdefault(node_id, GraphNode(node_id, kind, caption, properties))
        return node_id

    def edge(self, source: str, target: str, rel: str) -> None:
        """An edge between two nodes of the picture (none to a node it does not show)."""
        if source in self.nodes and target in self.nodes:
            self.edges.setdefault((source, target, rel), GraphEdge(source, target, rel))

    def graph(self, title: str) -> MemoryGraph:
        return MemoryGraph(title, tuple(self.nodes.values()), tuple(self.edges.values()))


def _user_graph(row: dict[str, Any]) -> MemoryGraph:
    user = _values(User, row["user"])
    labels = {agent["agent_id"]: agent["agent_label"] for agent in row["agents"]}
    built = _Builder()

    def day(value: Any) -> str:
        text = _stamp(value)
        return built.node(f"date:{text}", "Date", text, date=text)

    def memory(values: Mapping[str, Any]) -> str:
        text = resolve_placeholders(
            values["memory"], user["user_name"], labels.get(values["agent_id"])
        )
        return built.node(
            f"memory:{values['memory_id']}",
            "Memory",
            _short(text),
            memory_id=values["memory_id"],
            memory=text,
            interaction_id=values["interaction_id"],
            agent_id=values["agent_id"],
            obtained_at=_stamp(values["obtained_at"]),
        )

    for entry in row["interactions"]:
        values = _values(Interaction, entry)
        interaction_id = values["interaction_id"]
        agent = labels.get(values["agent_id"], values["agent_id"])
        node = built.node(
            f"interaction:{interaction_id}",
            "Interaction",
            f"with {agent}, {_stamp(values['updated_at'])[:16].replace('T', ' ')}",
            interaction_id=interaction_id,
            agent_id=values["agent_id"],
            created_at=_stamp(values["created_at"]),
            updated_at=_stamp(values["updated_at"]),
        )
        previous, rel = node, "FIRST_MESSAGE"
        for position, role, content in entry["messages"]:
            message = built.node(
                f"message:{interaction_id}:{position}",
                "MessageBlock",
                _short(f"{role}: {content}", 40),
                interaction_id=interaction_id,
                msg_position=position,
                role=role,
                content=content,
            )
            built.edge(previous, message, rel)
            previous, rel = message, "IS_NEXT"
        for date in entry["days"]:
            built.edge(node, day(date), "HAS_OCCURRENCE_ON")
    for entry in row["memories"]:
        values = _values(Memory, entry)
        node = memory(values)
        for interaction_id in entry["interaction"]:
            built.edge(node, f"interaction:{interaction_id}", "INTERACTION_SOURCE")
        for position in entry["sources"]:
            built.edge(node, f"message:{values['interaction_id']}:{position}", "MESSAGE_SOURCE")
        for date in entry["days"]:
            built.edge(node, day(date), "DATE_OBTAINED")
        for other in entry["superseded"]:
            built.edge(memory(dict(zip(OTHER_MEMORY, other, strict=True))), node, "CONTRARY_UPDATE")
        for other in entry["superseded_by"]:
            built.edge(node, memory(dict(zip(OTHER_MEMORY, other, strict=True))), "CONTRARY_UPDATE")
    shown = len(row["interactions"])
    return built.graph(f"{user['user_name']}: the {shown} most recent interaction(s)")


def _organization_graph(row: dict[str, Any]) -> MemoryGraph:
    org = _values(Org, row["org"])
    built = _Builder()
    root = built.node(
        f"org:{org['org_id']}",
        "Org",
        org["org_name"],
        org_id=org["org_id"],
        **{name: row["org"][name] for name in ORGANIZATION_COUNTS},
    )
    for entry in row["agents"]:
        agent = _values(Agent, entry)
        node = built.node(
            f"agent:{agent['agent_id']}",
            "Agent",
            agent["agent_label"],
            agent_id=agent["agent_id"],
            user_id=agent.get("user_id"),
        )
        built.edge(root, node, "HAS_AGENT")
    for entry in row["users"]:
        user = _values(User, entry)
        counts = {name: entry[name] for name in USER_COUNTS}
        node = built.node(
            f"user:{user['user_id']}",
            "User",
            f"{user['user_name']}: {counts['interactions']} interactions, "
            f"{counts['memories']} memories",
            user_id=user["user_id"],
            **counts,
        )
        built.edge(node, root, "BELONGS_TO")
        for agent_id in entry["agents"]:
            built.edge(node, f"agent:{agent_id}", "HAS_AGENT")
    counts = row["org"]
    return built.graph(f"{org['org_name']}: {counts['users']} user(s), {counts['agents']} agent(s)")
