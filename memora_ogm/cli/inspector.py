"""``memora-ogm inspect`` and the shell's ``show()``: a read-only look around a memory graph.

The timeline uses the facade's public reads; the counts, which it has no read for, are one
read each (:mod:`memora_ogm.calls.picture`: overview, organisation) on the graph's door. They
find nodes by key properties, so a node counts even when nothing links it. Nothing is
written, not even the schema.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from memora_ogm.calls.picture import organization_overview, overview
from memora_ogm.cli.transfer import info, reporting
from memora_ogm.engine import convert
from memora_ogm.engine.nodes import Nodes
from memora_ogm.engine.projection import reading
from memora_ogm.schema import models
from memora_ogm.schema.models import when
from memora_ogm.server.connection import Neo4jConnection

if TYPE_CHECKING:  # memora_ogm.sync loads qdrant-client: only when a command runs
    from memora_ogm.config import MemoraConfig
    from memora_ogm.sync import Neo4jGraphInterface

DEFAULT_LIMIT = 20


def _history_lines(
    memora: Neo4jGraphInterface, memory: models.Memory, current: models.Memory | None
) -> list[str]:
    """What a memory superseded and what superseded it (its ``CONTRARY_UPDATE`` chain)."""
    older = memora.get_user_memory_history(memory.org_id, memory.user_id, memory.memory_id)[1:]
    lines = [f"supersedes: {old.memory}  (obtained {when(old.obtained_at)})" for old in older]
    if current is not None and current.memory_id != memory.memory_id:
        lines.append(
            f"superseded by: {current.memory}  (obtained {when(current.obtained_at)}, "
            f"interaction {current.interaction_id})"
        )
    return lines


def timeline_lines(
    memora: Neo4jGraphInterface, org_id: str, user_id: str, limit: int = DEFAULT_LIMIT
) -> list[str]:
    """A user's interactions, newest first, with messages, memories and their history."""
    user = memora.get_user(org_id, user_id)
    interactions = memora.get_all_user_interactions(org_id, user_id, limit=limit)
    lines = [
        f"{user.user_name} (user {user.user_id} of org {org_id}): "
        f"{len(interactions)} interaction(s), newest first"
        + (f" (at most {limit})" if len(interactions) == limit else "")
    ]
    agents = {a.agent_id: a.agent_label for a in memora.get_all_org_agents(org_id)}
    memories = [memory for interaction in interactions for memory in interaction.memories or []]
    ids = [[{"org_id": m.org_id, "user_id": m.user_id, "memory_id": m.memory_id}] for m in memories]
    resolved = memora.fetch_user_memories_resolved_batch(ids) if ids else []
    current = {
        m.memory_id: (found[0] if found else None)
        for m, found in zip(memories, resolved, strict=True)
    }
    for interaction in interactions:
        lines += [
            "",
            f"Interaction {interaction.interaction_id} with "
            f"{agents.get(interaction.agent_id, 'agent')} ({interaction.agent_id}), "
            f"updated {when(interaction.updated_at)} (created {when(interaction.created_at)})",
            f"  messages ({len(interaction.messages or [])}):",
        ]
        lines.extend(message.line("    ") for message in interaction.messages or [])
        if interaction.memories:
            lines.append(f"  memories ({len(interaction.memories)}):")
        for memory in interaction.memories or []:
            lines.extend(memory.entry_lines("    ", origin=False))
            history = _history_lines(memora, memory, current.get(memory.memory_id))
            lines.extend("      " + line for line in history)
    return lines


def _counts(row: Any) -> str:
    return (
        f"interactions {row['interactions']}, memories {row['memories']} "
        f"({row['superseded']} superseded)"
    )


def _shown(count: int, total: int) -> str:
    return f"{count} of {total}" if count < total else str(total)


def _overview(nodes: Nodes, row: dict[str, Any]) -> list[str]:
    node = reading(nodes.Org)
    lines = [f"organisations ({_shown(len(row['orgs']), row['organizations'])}):"]
    for counted in row["orgs"]:
        org = convert.organization(counted, node)
        lines.append(f"  {org.org_name}  org_id {org.org_id}, created {when(org.created_at)}")
        lines.append(
            f"    users {counted['users']}, agents {counted['agents']}, {_counts(counted)}"
        )
    return lines


def _organization(nodes: Nodes, row: dict[str, Any]) -> list[str]:
    counted, agents, users = row["org"], row["agents"], row["users"]
    org = convert.organization(counted, reading(nodes.Org))
    lines = [
        f"organisation {org.org_name}  org_id {org.org_id}, created {when(org.created_at)}",
        f"  {_counts(counted)}",
        f"  agents ({_shown(len(agents), counted['agents'])}):",
    ]
    for agent in agents:
        owner = f", for user {agent['user_id']}" if agent["user_id"] else ""
        lines.append(f"    {agent['agent_label']}  agent_id {agent['agent_id']}{owner}")
    lines.append(f"  users ({_shown(len(users), counted['users'])}):")
    for user in users:
        lines.append(f"    {user['user_name']}  user_id {user['user_id']}: {_counts(user)}")
    return lines


def inspect_lines(
    conn: Neo4jConnection, org_id: str | None, user_id: str | None, limit: int
) -> list[str]:
    lines = [f"connected to {conn.uri} (database {conn.database})", ""]
    from memora_ogm.sync import Neo4jGraphInterface  # with qdrant-client: only when used

    with Neo4jGraphInterface.from_connection(conn) as memora:
        graph = memora.graph
        if org_id is None:
            return lines + _overview(graph.nodes, graph.execute(overview, limit))
        row = graph.execute(organization_overview, org_id, user_id, limit)
        lines += _organization(graph.nodes, row)
        user = row.get("user")
        if user_id is not None:
            header, *timeline = timeline_lines(memora, org_id, user_id, limit)
            lines += ["", header, f"  {_counts(user)}", *timeline]
        return lines


@reporting
def run_inspect(
    config: MemoraConfig,
    *,
    org: str | None = None,
    user: str | None = None,
    limit: int = DEFAULT_LIMIT,
) -> int:
    """Print :func:`inspect_lines`; exit 1 on an unknown id, 2 on options that clash."""
    if user is not None and org is None:
        info("--user needs --org")
        return 2
    if limit < 1:
        info("--limit must be at least 1")
        return 2
    print("\n".join(inspect_lines(config.neo4j, org, user, limit)))
    return 0
