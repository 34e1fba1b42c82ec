"""Erase a user of 500k+ nodes and an organisation of 1M+ through the facade, beside a
bare-driver baseline, on a server with the default transaction memory.

    MEMORA_OGM_NEO4J_HEAP_MB=1024 python benchmarks/bench_erasure.py [--only user] [--scale 1]

Starts its own embedded Neo4j (heap ``$MEMORA_OGM_NEO4J_HEAP_MB``, 1024 MiB by default;
the transaction memory is the server's default, 70% of it). Each tenant is built with
bare-driver ``UNWIND`` statements shaped as the facade writes (collections, days,
interactions with message chains and memories, the memories' sources and days); the
user also has one interaction of 100,000 messages. Each tenant is built twice: one copy
is erased by the facade (``delete_user``, ``delete_organization``); the other, alone in
the database, by the bare-driver floor, ``memora_ogm.testing.clear_database`` (all
relationships, then all nodes, 10,000 per statement, no traversal at all). Bare
``CALL { ... } IN TRANSACTIONS`` deletes of the tenant's nodes found by traversal ran out
of the default transaction memory already at a tenth of the user. It prints nodes/s
for both, the client's peak RSS, and the server heap (the peak of samples taken while
each erasure runs). No vector store is attached: the graph's side is what is measured.

Then (``chain``) single interactions of 20,000 and 100,000 messages are erased with
``delete_user_interaction_and_its_memories``, timing each batch: after the first, which
finds the chain's end from its start, a batch walks back from where the one before
stopped, so the batches of the last quarter cost what those of the first do.
"""

from __future__ import annotations

import argparse
import asyncio
import resource
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from neo4j import Driver, GraphDatabase

from memora_ogm import Neo4jGraphInterface
from memora_ogm.server import LocalNeo4jServer
from memora_ogm.server.connection import DEFAULT_DATABASE as DATABASE
from memora_ogm.testing import clear_database

# Test data only: bare statements are the quickest way to make a million nodes of the
# Memora shape. Caller values travel as parameters.
ORG = "CREATE (:Org {org_id: $org, org_name: $org, created_at: datetime()})"
AGENT = (
    "MATCH (o:Org {org_id: $org}) "
    "CREATE (o)-[:HAS_AGENT]->(:Agent {org_id: $org, agent_id: $agent, agent_label: 'Bot', "
    "created_at: datetime()})"
)
USERS = """
MATCH (o:Org {org_id: $org})
UNWIND $users AS uid
CREATE (u:User {org_id: $org, user_id: uid, user_name: uid, created_at: datetime()})
CREATE (u)-[:BELONGS_TO]->(o)
CREATE (u)-[:INTERACTIONS_IN]->(:InteractionCollection {org_id: $org, user_id: uid})
CREATE (u)-[:HAS_MEMORIES]->(:MemoryCollection {org_id: $org, user_id: uid})
WITH uid
UNWIND range(0, $days - 1) AS d
CREATE (:Date {org_id: $org, user_id: uid, date: date('2026-01-01') + duration({days: d})})
"""
INTERACTIONS = """
MATCH (user:User {org_id: $org, user_id: $user})-[:INTERACTIONS_IN]->(ic),
      (user)-[:HAS_MEMORIES]->(mc)
UNWIND range($first, $first + $count - 1) AS n
MATCH (day:Date {org_id: $org, user_id: $user,
                 date: date('2026-01-01') + duration({days: n % $days})})
CREATE (ic)-[:HAD_INTERACTION]->(i:Interaction {org_id: $org, user_id: $user,
        agent_id: $agent, interaction_id: $user + '-' + n,
        created_at: datetime(), updated_at: datetime()})-[:HAS_OCCURRENCE_ON]->(day)
WITH i, mc, day
CALL (i) {
    UNWIND range(0, $messages - 1) AS p
    CREATE (m:MessageBlock {msg_position: p, role: CASE p % 2 WHEN 0 THEN 'user'
            ELSE 'assistant' END, content: 'message ' + p})
    RETURN collect(m) AS chain
}
WITH i, mc, day, chain, chain[0] AS first
CREATE (i)-[:FIRST_MESSAGE]->(first)
WITH i, mc, day, chain
CALL (chain) {
    UNWIND range(0, size(chain) - 2) AS k
    WITH chain[k] AS a, chain[k + 1] AS b
    CREATE (a)-[:IS_NEXT]->(b)
}
CALL (i, mc, day, chain) {
    UNWIND range(0, $memories - 1) AS k
    WITH chain[k % size(chain)] AS source, k
    CREATE (mc)-[:INCLUDES]->(mem:Memory {org_id: $org, user_id: $user, agent_id: $agent,
            interaction_id: i.interaction_id, memory_id: randomUUID(),
            memory: 'user_' + $user + ' fact ' + k, obtained_at: datetime()})
    CREATE (mem)-[:INTERACTION_SOURCE]->(i)
    CREATE (mem)-[:MESSAGE_SOURCE]->(source)
    CREATE (mem)-[:DATE_OBTAINED]->(day)
}
"""
TAIL = (
    "MATCH (:Interaction {org_id: $org, user_id: $user, interaction_id: $id})"
    "-[:FIRST_MESSAGE]->(:MessageBlock)-[:IS_NEXT*0..]->(last) "
    "WHERE NOT EXISTS { (last)-[:IS_NEXT]->() } RETURN elementId(last) AS tail"
)
EXTEND = """
MATCH (tail:MessageBlock) WHERE elementId(tail) = $tail
CALL () {
    UNWIND range($first, $first + $count - 1) AS p
    CREATE (m:MessageBlock {msg_position: p, role: CASE p % 2 WHEN 0 THEN 'user'
            ELSE 'assistant' END, content: 'message ' + p})
    RETURN collect(m) AS chain
}
WITH tail, chain, chain[0] AS head
CREATE (tail)-[:IS_NEXT]->(head)
WITH chain
CALL (chain) {
    UNWIND range(0, size(chain) - 2) AS k
    WITH chain[k] AS a, chain[k + 1] AS b
    CREATE (a)-[:IS_NEXT]->(b)
}
RETURN elementId(chain[-1]) AS tail
"""
HEAP = (
    "CALL dbms.queryJmx('java.lang:type=Memory') YIELD attributes "
    "RETURN attributes.HeapMemoryUsage.value.properties AS heap"
)


@dataclass(frozen=True)
class Shape:
    """How many of each a tenant holds, per user."""

    users: int
    interactions: int
    messages: int
    memories: int
    days: int
    #: Messages of one long interaction of the (first) user, 0 for none.
    long_messages: int = 0


#: Messages of the single interactions erased batch by batch (``chain``).
CHAINS = (20_000, 100_000)
USER = Shape(users=1, interactions=50_000, messages=4, memories=4, days=30, long_messages=100_000)
ORGANISATION = Shape(users=100, interactions=1_250, messages=4, memories=4, days=30)


def build(driver: Driver, org: str, shape: Shape) -> tuple[int, list[str]]:
    """Make the tenant; returns how many nodes it has and its user ids."""
    agent = f"{org}-agent"
    driver.execute_query(ORG, org=org)
    driver.execute_query(AGENT, org=org, agent=agent)
    users = [f"{org}-u{n}" for n in range(shape.users)]
    driver.execute_query(USERS, org=org, users=users, days=shape.days)
    chunk = 2_000
    for user in users:
        for first in range(0, shape.interactions, chunk):
            driver.execute_query(
                INTERACTIONS,
                org=org,
                user=user,
                agent=agent,
                first=first,
                count=min(chunk, shape.interactions - first),
                days=shape.days,
                messages=shape.messages,
                memories=shape.memories,
            )
    if shape.long_messages:
        user, first_chunk = users[0], min(20_000, shape.long_messages)
        driver.execute_query(
            INTERACTIONS,
            org=org,
            user=user,
            agent=agent,
            first=shape.interactions,
            count=1,
            days=shape.days,
            messages=first_chunk,
            memories=1_000,
        )
        long_id = f"{user}-{shape.interactions}"
        tail = driver.execute_query(TAIL, org=org, user=user, id=long_id).records[0]["tail"]
        for first in range(first_chunk, shape.long_messages, first_chunk):
            tail = driver.execute_query(
                EXTEND, tail=tail, first=first, count=min(first_chunk, shape.long_messages - first)
            ).records[0]["tail"]
    return count(driver, org), users


def count(driver: Driver, org: str) -> int:
    """The tenant's nodes: those with its org_id, and its messages."""
    return int(
        driver.execute_query(
            "RETURN COUNT { MATCH (n) WHERE n.org_id = $org } + COUNT { MATCH (:Org {org_id: $org})"
            "<-[:BELONGS_TO]-(:User)-[:INTERACTIONS_IN]->()-[:HAD_INTERACTION]->()"
            "-[:FIRST_MESSAGE]->()-[:IS_NEXT*0..]->(m) } AS n",
            org=org,
        ).records[0]["n"]
    )


class HeapSampler:
    """The server's used heap, sampled on a thread while an erasure runs."""

    def __init__(self, driver: Driver) -> None:
        self.driver = driver
        self.peak = 0
        self.max = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.is_set():
            heap = self.driver.execute_query(HEAP).records[0]["heap"]
            self.peak, self.max = max(self.peak, heap["used"]), heap["max"]
            self._stop.wait(0.5)

    def __enter__(self) -> HeapSampler:
        self._thread.start()
        return self

    def __exit__(self, *_: Any) -> None:
        self._stop.set()
        self._thread.join()


def rss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


async def timed(
    driver: Driver, label: str, nodes: int, erase: Callable[[], Any]
) -> tuple[float, float]:
    """Run ``erase`` (a coroutine function or a plain one); print and return nodes/s and
    the peak heap in MiB."""
    with HeapSampler(driver) as heap:
        started = time.perf_counter()
        result = erase()
        if asyncio.iscoroutine(result):
            await result
        elapsed = time.perf_counter() - started
    rate = nodes / elapsed
    print(
        f"  {label:<9} {nodes:>9,} nodes in {elapsed:7.1f} s: {rate:>8,.0f} nodes/s; "
        f"server heap peak {heap.peak / 2**20:,.0f} of {heap.max / 2**20:,.0f} MiB; "
        f"client peak RSS {rss_mib():,.0f} MiB"
    )
    return rate, heap.peak / 2**20


async def compare(
    driver: Driver, graph: Neo4jGraphInterface, kind: str, shape: Shape
) -> tuple[float, float]:
    """Build the tenant twice; erase one copy through the facade, the other bare."""
    facade_org, bare_org = f"{kind}-facade", f"{kind}-bare"
    started = time.perf_counter()
    #: A user's erasure leaves the organisation and its agent.
    kept = 2 if kind == "user" else 0
    nodes, users = build(driver, facade_org, shape)
    nodes -= kept
    print(f"{kind}: {nodes:,} nodes each, built in {time.perf_counter() - started:.0f} s")
    if kind == "user":
        erase = lambda: graph.delete_user(facade_org, users[0])  # noqa: E731
    else:
        erase = lambda: graph.delete_organization(facade_org)  # noqa: E731
    facade, _ = await timed(driver, "facade", nodes, erase)
    if (left := count(driver, facade_org) - kept) != 0:
        raise SystemExit(f"the facade left {left} nodes of the {kind}")

    # The baseline's tenant is alone in the database: the floor deletes everything.
    bare_nodes, _ = build(driver, bare_org, shape)
    bare, _ = await timed(
        driver, "baseline", bare_nodes, lambda: clear_database(driver, DATABASE, 10_000)
    )
    if (left := count(driver, bare_org)) != 0:
        raise SystemExit(f"the baseline left {left} nodes of the {kind}")
    print(f"  facade / baseline: {facade / bare:.2f}x the baseline's nodes/s")
    for org in (facade_org, bare_org):
        driver.execute_query(
            "MATCH (n) WHERE n.org_id = $org CALL (n) { DETACH DELETE n } IN TRANSACTIONS",
            org=org,
        )
    return facade, bare


async def chain(driver: Driver, graph: Neo4jGraphInterface, messages: int) -> list[float]:
    """Erase one interaction of ``messages`` messages (and 1,000 memories) with
    ``delete_user_interaction_and_its_memories``; print and return each batch's seconds.

    A batch walks back from where the one before stopped, so the batches after the first
    (which finds the chain's end from its start) should cost the same however long the
    chain: compared here between the first and the last quarter of the batches.
    """
    org = "chain"
    _, users = build(driver, org, Shape(1, 0, 0, 0, 1, long_messages=messages))
    seconds: list[float] = []
    send = graph.graph._send  # where every statement leaves

    async def timed_statement(runner: Any, query: str, params: Any) -> list[dict[str, Any]]:
        started = time.perf_counter()
        try:
            return await send(runner, query, params)
        finally:
            seconds.append(time.perf_counter() - started)

    graph.graph._send = timed_statement  # type: ignore[method-assign]
    try:
        started = time.perf_counter()
        await graph.delete_user_interaction_and_its_memories(org, users[0], f"{users[0]}-0")
        elapsed = time.perf_counter() - started
    finally:
        del graph.graph._send
    quarter = max(1, (len(seconds) - 1) // 4)
    first, last = seconds[1 : 1 + quarter], seconds[-quarter:]
    print(
        f"chain: {messages:,} messages in {len(seconds)} batches, {elapsed:.1f} s; first batch "
        f"{seconds[0] * 1000:,.0f} ms, then {sum(first) / len(first) * 1000:,.0f} ms a batch "
        f"in the first quarter and {sum(last) / len(last) * 1000:,.0f} ms in the last"
    )
    clear_database(driver, DATABASE)  # the chain's tenant is alone in the database
    return seconds


def scaled(shape: Shape, scale: float) -> Shape:
    """``shape`` with its users, interactions and long chain times ``scale`` (a quick run)."""
    return replace(
        shape,
        users=max(1, round(shape.users * scale)),
        interactions=max(1, round(shape.interactions * scale)),
        long_messages=round(shape.long_messages * scale),
    )


async def run(only: str | None, scale: float) -> None:
    with LocalNeo4jServer() as conn:
        graph = Neo4jGraphInterface(conn.uri, conn.username, conn.password, conn.database)
        await graph.setup()
        with GraphDatabase.driver(conn.uri, auth=conn.auth) as driver:
            memory = driver.execute_query(
                "SHOW SETTINGS YIELD name, value WHERE name = 'db.memory.transaction.total.max' "
                "RETURN value"
            ).records[0]["value"]
            print(f"db.memory.transaction.total.max = {memory} (default: 70% of the heap)")
            for kind, shape in (("user", USER), ("org", ORGANISATION)):
                if only in (None, kind):
                    await compare(driver, graph, kind, scaled(shape, scale))
            if only in (None, "chain"):
                for messages in CHAINS:
                    await chain(driver, graph, round(messages * scale))
        await graph.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", choices=["user", "org", "chain"], help="erase only this tenant")
    parser.add_argument("--scale", type=float, default=1.0, help="shrink the tenants (quick run)")
    args = parser.parse_args()
    asyncio.run(run(args.only, args.scale))


if __name__ == "__main__":
    main()
