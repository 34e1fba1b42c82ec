"""Reads that look around a graph: the picture's (``graph_of``), one read statement whose
row becomes a :class:`~memora_ogm.picture.MemoryGraph`, and ``inspect``'s counts. No I/O,
shared by both twins.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from memora_ogm.calls.organization import match_org
from memora_ogm.calls.user import match_user
from memora_ogm.engine.call import Call
from memora_ogm.engine.nodes import Nodes
from memora_ogm.engine.pages import Count, Related, output_each
from memora_ogm.engine.projection import projection, reading
from memora_ogm.engine.unit_of_work import UnitOfWork
from memora_ogm.picture import GraphEdge, GraphNode, MemoryGraph
from memora_ogm.placeholders import resolve_placeholders
from memora_ogm.schema.validation import check_ids, check_page

#: Interactions (or users and agents) a picture shows unless told otherwise.
DEFAULT_LIMIT = 20


def user_counts(nodes: Nodes, *same: str) -> dict[str, Count]:
    """What a user owns (an organisation too: ``same`` its key), counted."""
    same = same or ("org_id", "user_id")
    return {
        "interactions": Count(nodes.Interaction, same),
        "memories": Count(nodes.Memory, same),
        # memories that a newer one contradicted (CONTRARY_UPDATE)
        "superseded": Count(nodes.Memory, same, having=nodes.Memory.contrary_update),
    }


def organization_counts(nodes: Nodes) -> dict[str, Count]:
    """What an organisation is counted with (here and in ``inspect``)."""
    return {
        "users": Count(nodes.User, ("org_id",)),
        "agents": Count(nodes.Agent, ("org_id",)),
        **user_counts(nodes, "org_id"),
    }


#: The counts of :func:`user_counts`, by name.
USER_COUNTED = ("interactions", "memories", "superseded")

#: What a picture shows of a memory on the other side of a ``CONTRARY_UPDATE``.
OTHER_MEMORY = ("memory_id", "memory", "interaction_id", "agent_id", "obtained_at")


def graph_of(
    nodes: Nodes, org_id: str, user_id: str | None = None, limit: int = DEFAULT_LIMIT
) -> Call[MemoryGraph]:
    """A picture of the memory graph: the user's ``limit`` most recent interactions with
    their messages, memories, days and contradiction history (one ``CONTRARY_UPDATE``
    step each way, even into older interactions), or without a user the organisation's
    users and agents (``limit`` of each) with their counts. One read statement; the
    picture shows itself in Jupyter and ``write_html(path)`` writes it as a page."""
    check_ids(org_id=org_id)
    check_page(0, limit)
    if user_id is None:
        return Call(
            _organization_read(nodes, org_id, limit), lambda row: _organization_graph(nodes, row)
        )
    check_ids(user_id=user_id)
    return Call(_user_read(nodes, org_id, user_id, limit), lambda row: _user_graph(nodes, row))


def _user_read(nodes: Nodes, org_id: str, user_id: str, limit: int) -> UnitOfWork:
    work = UnitOfWork()
    user = match_user(nodes, work, org_id, user_id)
    collection = work.match_related(user, nodes.User.interactions_in)
    interactions = work.reachable(
        collection,
        nodes.InteractionCollection.had_interaction,
        order_by="updated_at",
        descending=True,
        limit=limit,
    )
    memories = work.reachable(interactions, nodes.Interaction.memories, order_by="obtained_at")
    work.output("user", user)
    work.output("agents", work.nodes(nodes.Agent, org_id=org_id))
    output_each(
        work,
        "interactions",
        interactions,
        messages=Related(
            (nodes.Interaction.first_message, nodes.MessageBlock.is_next),
            ("msg_position", "role", "content"),
            "msg_position",
        ),
        days=Related((nodes.Interaction.has_occurrence_on,), ("date",), "date"),
    )
    output_each(
        work,
        "memories",
        memories,
        sources=Related((nodes.Memory.message_source,), ("msg_position",), "msg_position"),
        interaction=Related((nodes.Memory.interaction_source,), ("interaction_id",)),
        days=Related((nodes.Memory.date_obtained,), ("date",), "date"),
        superseded=Related((nodes.Memory.contradicts,), OTHER_MEMORY, "obtained_at"),
        superseded_by=Related((nodes.Memory.contrary_update,), OTHER_MEMORY, "obtained_at"),
    )
    return work


def _organization_read(nodes: Nodes, org_id: str, limit: int) -> UnitOfWork:
    work = UnitOfWork()
    org = match_org(nodes, work, org_id)
    users = work.reachable(org, nodes.Org.users, order_by="created_at", limit=limit)
    agents = work.reachable(org, nodes.Org.has_agent, order_by="created_at", limit=limit)
    output_each(work, "org", org, **organization_counts(nodes))
    output_each(
        work,
        "users",
        users,
        **user_counts(nodes),
        agents=Related((nodes.User.has_agent,), ("agent_id",), "agent_id"),
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


def _user_graph(nodes: Nodes, row: dict[str, Any]) -> MemoryGraph:
    user = _values(nodes.User, row["user"])
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
        values = _values(nodes.Interaction, entry)
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
        values = _values(nodes.Memory, entry)
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


def _organization_graph(nodes: Nodes, row: dict[str, Any]) -> MemoryGraph:
    org = _values(nodes.Org, row["org"])
    built = _Builder()
    root = built.node(
        f"org:{org['org_id']}",
        "Org",
        org["org_name"],
        org_id=org["org_id"],
        **{name: row["org"][name] for name in ("users", "agents", *USER_COUNTED)},
    )
    for entry in row["agents"]:
        agent = _values(nodes.Agent, entry)
        node = built.node(
            f"agent:{agent['agent_id']}",
            "Agent",
            agent["agent_label"],
            agent_id=agent["agent_id"],
            user_id=agent.get("user_id"),
        )
        built.edge(root, node, "HAS_AGENT")
    for entry in row["users"]:
        user = _values(nodes.User, entry)
        counts = {name: entry[name] for name in USER_COUNTED}
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


def overview(nodes: Nodes, limit: int) -> Call[dict[str, Any]]:
    """``inspect``'s overview: the number of organisations, the oldest ``limit`` with their
    counts."""
    work = UnitOfWork()
    orgs = work.nodes(nodes.Org, limit, order_by=("created_at", "org_id"))
    work.output_value("organizations", work.count(nodes.Org))
    output_each(work, "orgs", orgs, **organization_counts(nodes))
    return Call(work, dict)


def organization_overview(
    nodes: Nodes, org_id: str, user_id: str | None, limit: int
) -> Call[dict[str, Any]]:
    """An organisation with its counts, its oldest ``limit`` agents and users (these
    with their counts), and the user ``user_id`` with its counts when given."""
    work = UnitOfWork()
    org = match_org(nodes, work, org_id)
    user = None if user_id is None else match_user(nodes, work, org_id, user_id)
    agents = work.nodes(nodes.Agent, limit, order_by=("created_at", "agent_id"), org_id=org_id)
    users = work.nodes(nodes.User, limit, order_by=("created_at", "user_id"), org_id=org_id)
    output_each(work, "org", org, **organization_counts(nodes))
    work.output("agents", agents)
    output_each(work, "users", users, **user_counts(nodes))
    if user is not None:
        output_each(work, "user", user, **user_counts(nodes))
    return Call(work, dict)
