"""What must hold of any memora graph at rest, whatever ran on it (issue 6).

The concurrency, server-fault and bad-input tests and the soak script
(``tests/soak.py``) all end with these checks, so a violation found under load
is described the same way as one found by a unit test:

- :func:`graph_violations`: every message chain is valid (one head, positions
  0..n-1, no fork, no cycle), nothing is orphaned (messages without an
  interaction, memories without a collection or an interaction, dates linked to
  nothing, nodes of a user or organisation that no longer exists), and every
  link stays inside one tenant;
- :func:`store_violations`: the graph and the vector store hold the same memories
  (ids and tenants);
- :func:`full_snapshot`: every node (element id, labels, properties), every
  relationship (element id, type, ends, properties) and every vector entry, to
  show that a refused call changed nothing.
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass
from typing import Any

from neo4j import Driver

#: (name, query): each query returns one row per violation, with a ``found`` column.
GRAPH_CHECKS: tuple[tuple[str, str], ...] = (
    (
        "interaction with more than one FIRST_MESSAGE",
        "MATCH (i:Interaction) WHERE COUNT { (i)-[:FIRST_MESSAGE]->() } > 1 "
        "RETURN i.interaction_id AS found",
    ),
    (
        "message with two successors or not exactly one predecessor (fork or orphan)",
        "MATCH (m:MessageBlock) "
        "WHERE COUNT { (m)-[:IS_NEXT]->() } > 1 "
        "OR COUNT { ()-[:IS_NEXT]->(m) } + COUNT { ()-[:FIRST_MESSAGE]->(m) } <> 1 "
        "RETURN elementId(m) AS found",
    ),
    (
        "message not reachable from an interaction (orphan or cycle)",
        "MATCH (m:MessageBlock) WHERE NOT EXISTS "
        "{ (:Interaction)-[:FIRST_MESSAGE]->(:MessageBlock)-[:IS_NEXT*0..]->(m) } "
        "RETURN elementId(m) AS found",
    ),
    (
        "message position differs from its place in the chain",
        "MATCH (i:Interaction)-[:FIRST_MESSAGE]->(first:MessageBlock) "
        "MATCH path = (first)-[:IS_NEXT*0..]->(m:MessageBlock) "
        "WITH i, m, length(path) AS hop "
        "WHERE m.msg_position IS NULL OR valueType(m.msg_position) <> 'INTEGER NOT NULL' "
        "OR m.msg_position <> hop "
        "RETURN i.interaction_id + ':' + toString(hop) AS found",
    ),
    (
        "interaction outside its user's collection",
        "MATCH (i:Interaction) WHERE NOT EXISTS "
        "{ (c:InteractionCollection)-[:HAD_INTERACTION]->(i) "
        "WHERE c.org_id = i.org_id AND c.user_id = i.user_id } "
        "OR COUNT { ()-[:HAD_INTERACTION]->(i) } <> 1 "
        "RETURN i.interaction_id AS found",
    ),
    (
        "interaction without its own user's Date",
        "MATCH (i:Interaction) WHERE NOT EXISTS { (i)-[:HAS_OCCURRENCE_ON]->(:Date) } "
        "OR EXISTS { (i)-[:HAS_OCCURRENCE_ON]->(d:Date) "
        "WHERE d.org_id <> i.org_id OR d.user_id <> i.user_id } "
        "RETURN i.interaction_id AS found",
    ),
    (
        "memory outside its user's memory collection",
        "MATCH (m:Memory) WHERE NOT EXISTS { (c:MemoryCollection)-[:INCLUDES]->(m) "
        "WHERE c.org_id = m.org_id AND c.user_id = m.user_id } "
        "OR COUNT { ()-[:INCLUDES]->(m) } <> 1 "
        "RETURN m.memory_id AS found",
    ),
    (
        "memory without its source interaction",
        "MATCH (m:Memory) WHERE NOT EXISTS { (m)-[:INTERACTION_SOURCE]->(i:Interaction) "
        "WHERE i.org_id = m.org_id AND i.user_id = m.user_id "
        "AND i.interaction_id = m.interaction_id } "
        "OR COUNT { (m)-[:INTERACTION_SOURCE]->() } <> 1 "
        "RETURN m.memory_id AS found",
    ),
    (
        "memory not linked to exactly the Date it was obtained on",
        "MATCH (m:Memory) WHERE COUNT { (m)-[:DATE_OBTAINED]->() } <> 1 "
        "OR NOT EXISTS { (m)-[:DATE_OBTAINED]->(d:Date) WHERE d.org_id = m.org_id "
        "AND d.user_id = m.user_id AND d.date = date(m.obtained_at) } "
        "RETURN m.memory_id AS found",
    ),
    (
        "memory's source message outside its interaction's chain",
        "MATCH (m:Memory)-[:MESSAGE_SOURCE]->(b) WHERE NOT EXISTS "
        "{ (m)-[:INTERACTION_SOURCE]->(:Interaction)-[:FIRST_MESSAGE]->()-[:IS_NEXT*0..]->(b) } "
        "RETURN m.memory_id AS found",
    ),
    (
        "contrary update across users",
        "MATCH (old:Memory)-[:CONTRARY_UPDATE]->(new) WHERE NOT new:Memory "
        "OR old.org_id <> new.org_id OR old.user_id <> new.user_id "
        "RETURN old.memory_id AS found",
    ),
    (
        "Date linked to nothing",
        "MATCH (d:Date) WHERE NOT (d)--() RETURN d.user_id + ':' + toString(d.date) AS found",
    ),
    (
        "more than one Date node for one user's day",
        "MATCH (d:Date) WITH d.org_id AS org, d.user_id AS user, d.date AS day, count(*) AS n "
        "WHERE n > 1 RETURN user + ':' + toString(day) AS found",
    ),
    (
        "user without exactly one organisation, interaction and memory collection of its own",
        "MATCH (u:User) WHERE "
        "COUNT { (u)-[:BELONGS_TO]->(o:Org) WHERE o.org_id = u.org_id } <> 1 "
        "OR COUNT { (u)-[:INTERACTIONS_IN]->(c:InteractionCollection) "
        "WHERE c.org_id = u.org_id AND c.user_id = u.user_id } <> 1 "
        "OR COUNT { (u)-[:HAS_MEMORIES]->(c:MemoryCollection) "
        "WHERE c.org_id = u.org_id AND c.user_id = u.user_id } <> 1 "
        "RETURN u.user_id AS found",
    ),
    (
        "collection without its user",
        "MATCH (c) WHERE (c:InteractionCollection OR c:MemoryCollection) AND NOT EXISTS "
        "{ (u:User)-->(c) WHERE u.org_id = c.org_id AND u.user_id = c.user_id } "
        "RETURN labels(c)[0] + ':' + c.user_id AS found",
    ),
    (
        "agent outside its organisation",
        "MATCH (a:Agent) WHERE NOT EXISTS { (o:Org)-[:HAS_AGENT]->(a) WHERE o.org_id = a.org_id } "
        "RETURN a.agent_id AS found",
    ),
    (
        "node of an organisation that does not exist (half-deleted organisation)",
        "MATCH (n) WHERE n.org_id IS NOT NULL AND NOT n:Org "
        "AND NOT EXISTS { MATCH (o:Org) WHERE o.org_id = n.org_id } "
        "RETURN labels(n)[0] + ':' + n.org_id AS found",
    ),
    (
        "node of a user that does not exist (half-deleted user)",
        # A user-specific agent outlives its user by design (it stays with the organisation).
        "MATCH (n) WHERE n.user_id IS NOT NULL AND NOT n:User AND NOT n:Agent "
        "AND NOT EXISTS { MATCH (u:User) WHERE u.org_id = n.org_id AND u.user_id = n.user_id } "
        "RETURN labels(n)[0] + ':' + n.user_id AS found",
    ),
)

#: Examples named per violated check.
EXAMPLES = 5


def graph_violations(driver: Driver, database: str | None = None) -> list[str]:
    """One line per violated graph invariant (with a few examples); empty when all hold."""
    violations = []
    for name, query in GRAPH_CHECKS:
        records, _, _ = driver.execute_query(query, database_=database)
        if records:
            found = [str(record["found"]) for record in records[:EXAMPLES]]
            violations.append(f"{name}: {len(records)} (e.g. {', '.join(found)})")
    return violations


MemoryEntry = tuple[str, str, str]
"""``(memory_id, org_id, user_id)`` of a stored memory."""


def graph_memories(driver: Driver, database: str | None = None) -> list[MemoryEntry]:
    records, _, _ = driver.execute_query(
        "MATCH (m:Memory) RETURN m.memory_id AS id, m.org_id AS org, m.user_id AS user",
        database_=database,
    )
    return sorted((record["id"], record["org"], record["user"]) for record in records)


async def vector_memories(store: Any) -> list[MemoryEntry]:
    """The memories a ``QdrantDB`` holds, async or sync twin, possibly wrapped (``.inner``)."""
    store = getattr(store, "inner", store)
    client = getattr(store, "async_client", None) or store.client
    entries: list[MemoryEntry] = []
    offset = None
    while True:
        page = client.scroll(store.collection_name, limit=1_000, offset=offset, with_payload=True)
        points, offset = await page if inspect.isawaitable(page) else page
        for point in points:
            payload = point.payload or {}
            entries.append((payload["memory_id"], payload["org_id"], payload["user_id"]))
        if offset is None:
            return sorted(entries)


def store_violations(graph: list[MemoryEntry], vectors: list[MemoryEntry]) -> list[str]:
    """Where the graph's memories and the vector store's differ; empty when they are in step."""
    violations = []
    if len(set(vectors)) != len(vectors):
        violations.append(f"vector store holds duplicates: {len(vectors) - len(set(vectors))}")
    only_graph, only_vectors = set(graph) - set(vectors), set(vectors) - set(graph)
    for where, entries in (("graph", only_graph), ("vector store", only_vectors)):
        if entries:
            examples = ", ".join(entry[0] for entry in sorted(entries)[:EXAMPLES])
            violations.append(f"memories only in the {where}: {len(entries)} (e.g. {examples})")
    return violations


async def all_violations(
    driver: Driver, vector_store: Any = None, database: str | None = None
) -> list[str]:
    """:func:`graph_violations`, plus :func:`store_violations` when there is a vector store."""
    violations = graph_violations(driver, database)
    if vector_store is not None:
        violations += store_violations(
            graph_memories(driver, database), await vector_memories(vector_store)
        )
    return violations


@dataclass(frozen=True)
class Snapshot:
    """Everything both stores hold, comparable with ``==``."""

    nodes: list[tuple[str, list[str], dict[str, Any]]]
    relationships: list[tuple[str, str, str, str, dict[str, Any]]]
    vectors: list[MemoryEntry]


async def full_snapshot(
    driver: Driver, vector_store: Any = None, database: str | None = None
) -> Snapshot:
    """Both stores whole; the graph in one round trip (tests take one after every call)."""
    records, _, _ = driver.execute_query(
        "CALL () { MATCH (n) WITH n ORDER BY elementId(n) "
        "RETURN collect([elementId(n), labels(n), properties(n)]) AS nodes } "
        "CALL () { MATCH (a)-[r]->(b) WITH a, r, b ORDER BY elementId(r) "
        "RETURN collect([elementId(r), type(r), elementId(a), elementId(b), properties(r)]) "
        "AS relationships } "
        "RETURN nodes, relationships",
        database_=database,
    )
    (graph,) = records
    return Snapshot(
        nodes=[(id_, sorted(labels), props) for id_, labels, props in graph["nodes"]],
        relationships=[tuple(r) for r in graph["relationships"]],
        vectors=await vector_memories(vector_store) if vector_store is not None else [],
    )
