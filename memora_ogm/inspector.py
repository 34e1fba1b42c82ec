"""``memora-ogm inspect`` and the shell's ``show()``: look around a memory graph, read-only.

    memora-ogm inspect                           organisations with their counts
    memora-ogm inspect --org ORG                 its agents and users, with their counts
    memora-ogm inspect --org ORG --user USER     and that user's timeline

Every read runs in a read transaction of the sync facade: the timeline through its
public reads, the counts through the named counting reads of :mod:`memora_ogm.queries`
(the facade has no counting read), run by its graph's one statement path
(``Graph.query``, with its retries). Nothing is written, not even the schema, and only
the organisation asked for is read.
Output is bounded by ``--limit`` (organisations, users, agents, interactions).
"""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING, Any

from typing_extensions import LiteralString

from memora_ogm import queries
from memora_ogm.errors import NotFoundError
from memora_ogm.pretty import memory_lines, message_line, when
from memora_ogm.schema import models
from memora_ogm.server.connection import Neo4jConnection
from memora_ogm.server.state import NO_SERVER_HINT, existing_connection

if TYPE_CHECKING:  # memora_ogm.sync loads qdrant-client: only when a command runs
    from memora_ogm.sync import Neo4jGraphInterface

DEFAULT_LIMIT = 20


# --------------------------------------------------------------------------- timeline


def _history_lines(
    memora: Neo4jGraphInterface, memory: models.Memory, current: models.Memory | None
) -> list[str]:
    """What a memory superseded and what superseded it (its ``CONTRARY_UPDATE`` chain)."""
    lines = []
    older = memora.get_user_memory_history(memory.org_id, memory.user_id, memory.memory_id)[1:]
    for old in older:
        lines.append(f"supersedes: {old.memory}  (obtained {when(old.obtained_at)})")
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
        lines.append("")
        lines.append(
            f"Interaction {interaction.interaction_id} with "
            f"{agents.get(interaction.agent_id, 'agent')} ({interaction.agent_id}), "
            f"updated {when(interaction.updated_at)} (created {when(interaction.created_at)})"
        )
        lines.append(f"  messages ({len(interaction.messages or [])}):")
        for message in interaction.messages or []:
            lines.append(message_line(message, "    "))
        if interaction.memories:
            lines.append(f"  memories ({len(interaction.memories)}):")
        for memory in interaction.memories or []:
            lines.extend(memory_lines(memory, "    ", origin=False))
            history = _history_lines(memora, memory, current.get(memory.memory_id))
            lines.extend("      " + line for line in history)
    return lines


# --------------------------------------------------------------------------- the command


def _read(memora: Neo4jGraphInterface, query: LiteralString, **params: Any) -> list[Any]:
    """One counting read of :mod:`memora_ogm.queries`, on a session that may only read."""
    return memora.graph.query(query, params, list)


def _counts(row: Any) -> str:
    return (
        f"interactions {row['interactions']}, memories {row['memories']} "
        f"({row['superseded']} superseded)"
    )


def _shown(count: int, total: int) -> str:
    return f"{count} of {total}" if count < total else str(total)


def overview_lines(memora: Neo4jGraphInterface, limit: int) -> list[str]:
    """Every organisation (up to ``limit``) with its counts."""
    total = _read(memora, queries.INSPECT_ORGANIZATION_COUNT)[0]["n"]
    rows = _read(memora, queries.INSPECT_ORGANIZATIONS, limit=limit)
    lines = [f"organisations ({_shown(len(rows), total)}):"]
    for row in rows:
        lines.append(
            f"  {row['org_name']}  org_id {row['org_id']}, "
            f"created {when(row['created_at'].to_native())}"
        )
        lines.append(f"    users {row['users']}, agents {row['agents']}, {_counts(row)}")
    return lines


def organization_lines(memora: Neo4jGraphInterface, org_id: str, limit: int) -> list[str]:
    """One organisation: its totals, agents and users (up to ``limit`` each)."""
    org = memora.get_organization(org_id)
    totals = _read(memora, queries.INSPECT_ORG_TOTALS, org_id=org_id)[0]
    agents = _read(memora, queries.INSPECT_AGENTS, org_id=org_id, limit=limit)
    users = _read(memora, queries.INSPECT_USERS, org_id=org_id, limit=limit)
    lines = [
        f"organisation {org.org_name}  org_id {org.org_id}, created {when(org.created_at)}",
        f"  {_counts(totals)}",
        f"  agents ({_shown(len(agents), totals['agents'])}):",
    ]
    for row in agents:
        owner = f", for user {row['user_id']}" if row["user_id"] else ""
        lines.append(f"    {row['agent_label']}  agent_id {row['agent_id']}{owner}")
    lines.append(f"  users ({_shown(len(users), totals['users'])}):")
    for row in users:
        lines.append(f"    {row['user_name']}  user_id {row['user_id']}: {_counts(row)}")
    return lines


def inspect_lines(
    conn: Neo4jConnection, org_id: str | None, user_id: str | None, limit: int
) -> list[str]:
    """What ``memora-ogm inspect`` prints."""
    lines = [f"connected to {conn.uri} (database {conn.database})", ""]
    from memora_ogm.sync import Neo4jGraphInterface  # with qdrant-client: only when used

    with Neo4jGraphInterface.from_connection(conn) as memora:
        if org_id is None:
            return lines + overview_lines(memora, limit)
        lines += organization_lines(memora, org_id, limit)
        if user_id is not None:
            totals = _read(memora, queries.INSPECT_USER_TOTALS, org_id=org_id, user_id=user_id)
            header, *timeline = timeline_lines(memora, org_id, user_id, limit)
            lines += ["", header, f"  {_counts(totals[0])}", *timeline]
        return lines


def _limit(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError("the limit must be at least 1")
    return value


def cmd_inspect(args: argparse.Namespace) -> int:
    if args.user is not None and args.org is None:
        print("memora-ogm: --user needs --org", file=sys.stderr)
        return 2
    conn = existing_connection()
    if conn is None:
        print(f"memora-ogm: nothing to inspect: {NO_SERVER_HINT}", file=sys.stderr)
        return 1
    try:
        lines = inspect_lines(conn, args.org, args.user, args.limit)
    except NotFoundError as exc:
        print(f"memora-ogm: {exc}", file=sys.stderr)
        return 1
    print("\n".join(lines))
    return 0


def add_inspect_parser(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    inspect = subparsers.add_parser(
        "inspect", help="read-only: organisations, users, agents, counts, a user's timeline"
    )
    inspect.add_argument("--org", default=None, help="show this organisation (org_id)")
    inspect.add_argument("--user", default=None, help="and this user's timeline (user_id)")
    inspect.add_argument(
        "--limit",
        type=_limit,
        default=DEFAULT_LIMIT,
        help=f"at most this many organisations, users, agents, interactions ({DEFAULT_LIMIT})",
    )
    inspect.set_defaults(func=cmd_inspect)
