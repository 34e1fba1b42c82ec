"""The consistency check over one organisation, beside a bare scroll and a bare read.

    python benchmarks/bench_check.py [--memories 100000] [--users 10] [--engine edge|memory]

Loads an organisation of ``--memories`` memories spread over ``--users`` users into an
embedded Neo4j (bulk ``UNWIND`` statements of the driver) and the same memories as points
into ``QdrantDB``'s embedded engine (bulk upserts, 16-dimensional vectors: the check
reads no vector): Qdrant Edge in a temporary folder, ``QdrantDB(path=...)`` (``edge``, the
default), or qdrant-client's local mode in memory (``memory``). Then, in this order, each
with its wall time and the peak RSS of the Python process:

1. the bare scroll: every point of the collection with its payload, in pages of the
   check's size, by the engine alone (``qdrant_edge.EdgeShard.scroll``, or the
   qdrant-client client in memory); the collection also holds a small organisation,
   which both sides read once first, untimed: a cold server plans;
2. the bare read: the organisation's memories (the properties the check compares),
   streamed by the neo4j driver alone, one statement;
3. ``check_consistency(org_id)``, which must find the stores in agreement.

It prints the check's memories/s and its time over the two bare reads' sum. The peak
RSS is sampled from ``/proc/self/statm`` every 10 ms; a phase's peak includes what the
process already held (the loaded data), so the growth over the phase's start is shown too,
and the growth of the memory not backed by a file (Edge maps its segments: the pages a
read touches count in the RSS but are the page cache's).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import tempfile
import threading
import time
import uuid
from collections.abc import Awaitable
from datetime import datetime, timedelta, timezone
from typing import Any, TypeVar

import qdrant_edge as edge
from neo4j import GraphDatabase
from qdrant_client import models

from memora_ogm import Neo4jGraphInterface
from memora_ogm._async.consistency import CHECK_PAGE
from memora_ogm.server import LocalNeo4jServer
from memora_ogm.vector_db.embedding import HashingEmbedding
from memora_ogm.vector_db.qdrant import QdrantDB

T = TypeVar("T")
ORG = "bench-org"
#: A small organisation both sides read first, untimed: a cold server plans and compiles.
WARM_UP = "warm-up-org"
WARM_UP_MEMORIES = 200
AGENT = "bench-agent"
DIMENSION = 16
#: Rows per bulk statement and points per bulk upsert.
BATCH = 10_000
START = datetime(2024, 1, 1, 8, 0, tzinfo=timezone.utc)

CREATE_TENANTS = """
UNWIND $orgs AS org
MERGE (:Org {org_id: org.org, org_name: 'Bench', created_at: datetime()})
MERGE (:User {org_id: org.org, user_id: org.user, user_name: org.user, created_at: datetime()})
"""
CREATE_MEMORIES = """
UNWIND $rows AS row
CREATE (:Memory {org_id: row.org, user_id: row.user, agent_id: $agent, interaction_id: 'i',
                 memory_id: row.id, memory: row.text, obtained_at: datetime(row.at)})
"""
BARE_READ = """
MATCH (m:Memory {org_id: $org})
RETURN m.user_id, m.memory_id, m.agent_id, m.memory, m.obtained_at
"""


def _rss_now() -> int:
    with open("/proc/self/statm", "rb") as statm:
        return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def _anonymous_now() -> int:
    """The resident memory not backed by a file (the process's own heap): Edge maps its
    segments, and the pages of them a read touches count in the RSS as the page cache's."""
    with open("/proc/self/statm", "rb") as statm:
        fields = statm.read().split()
    return (int(fields[1]) - int(fields[2])) * os.sysconf("SC_PAGE_SIZE")


class Phase:
    """Wall time and peak RSS (sampled every 10 ms) of one timed phase."""

    def __init__(self, name: str) -> None:
        self.name = name

    async def run(self, work: Awaitable[T]) -> T:
        self.start_rss = self.peak = _rss_now()
        self.start_anonymous = self.peak_anonymous = _anonymous_now()
        stop = threading.Event()

        def sample() -> None:
            while not stop.wait(0.01):
                self.peak = max(self.peak, _rss_now())
                self.peak_anonymous = max(self.peak_anonymous, _anonymous_now())

        sampler = threading.Thread(target=sample, daemon=True)
        sampler.start()
        started = time.perf_counter()
        try:
            return await work
        finally:
            self.seconds = time.perf_counter() - started
            stop.set()
            sampler.join()
            self.peak = max(self.peak, _rss_now())
            self.peak_anonymous = max(self.peak_anonymous, _anonymous_now())

    def shown(self) -> str:
        peak, grown = self.peak / 2**20, (self.peak - self.start_rss) / 2**20
        anonymous = (self.peak_anonymous - self.start_anonymous) / 2**20
        return (
            f"{self.name:<12} {self.seconds:8.2f} s   peak RSS {peak:6.0f} MB (+{grown:.0f}; "
            f"not file-backed +{anonymous:.0f})"
        )


def memories(org: str, count: int, users: int) -> list[dict[str, str]]:
    return [
        {
            "org": org,
            "user": f"u{i % users:04d}",
            "id": str(uuid.uuid4()),
            "text": f"memory {i} of user_u{i % users:04d}",
            "at": (START + timedelta(minutes=i)).isoformat(),
        }
        for i in range(count)
    ]


async def load(store: QdrantDB, driver: Any, rows: list[dict[str, str]]) -> None:
    tenants = sorted({(row["org"], row["user"]) for row in rows})
    driver.execute_query(CREATE_TENANTS, orgs=[{"org": o, "user": u} for o, u in tenants])
    await store.setup()
    for start in range(0, len(rows), BATCH):
        batch = rows[start : start + BATCH]
        driver.execute_query(CREATE_MEMORIES, rows=batch, agent=AGENT)
        points = [
            models.PointStruct(
                id=row["id"],
                vector=[1.0] * DIMENSION,
                payload={
                    "org_id": row["org"],
                    "user_id": row["user"],
                    "agent_id": AGENT,
                    "obtained_at": row["at"],
                    "memory_id": row["id"],
                    "memory": row["text"],
                },
            )
            for row in batch
        ]
        await store.async_client.upsert(store.collection_name, points=points, wait=True)


async def bare_scroll(store: QdrantDB, folder: str | None) -> int:
    """Every point with its payload, a page of the check's size at a time: from the Edge
    shard in ``folder`` (the store closed first: one opener), else by the store's client."""
    if folder is not None:
        await store.close()
        return edge_scroll(os.path.join(folder, store.collection_name))
    count, offset = 0, None
    while True:
        points, offset = await store.async_client.scroll(
            store.collection_name, limit=CHECK_PAGE, offset=offset, with_payload=True
        )
        count += len(points)
        if offset is None:
            return count


def edge_scroll(shard_folder: str) -> int:
    shard = edge.EdgeShard.load(shard_folder)
    count, offset = 0, None
    try:
        while True:
            request = edge.ScrollRequest(
                offset=offset, limit=CHECK_PAGE, with_payload=True, with_vector=False
            )
            points, offset = shard.scroll(request)
            count += len(points)
            if offset is None:
                return count
    finally:
        shard.close()


async def bare_read(driver: Any, org: str) -> int:
    with driver.session() as session:
        return sum(1 for _ in session.run(BARE_READ, org=org))


async def main(count: int, users: int, engine: str) -> None:
    rows = memories(WARM_UP, WARM_UP_MEMORIES, users) + memories(ORG, count, users)
    with (
        tempfile.TemporaryDirectory(prefix="bench-check-") as workdir,
        LocalNeo4jServer() as conn,
        GraphDatabase.driver(conn.uri, auth=conn.auth) as driver,
    ):
        folder = os.path.join(workdir, "vectors") if engine == "edge" else None

        def opened() -> tuple[QdrantDB, Neo4jGraphInterface]:
            embedding = HashingEmbedding(DIMENSION)
            if folder is None:
                store = QdrantDB(location=":memory:", embedding_function=embedding)
            else:
                store = QdrantDB(path=folder, embedding_function=embedding)
            return store, Neo4jGraphInterface.from_connection(conn, store)

        store, graph = opened()
        await graph.setup()
        loading = time.perf_counter()
        await load(store, driver, rows)
        print(f"loaded {count} memories of {users} users in {time.perf_counter() - loading:.1f} s")
        del rows
        assert await bare_read(driver, WARM_UP) == WARM_UP_MEMORIES
        assert (await graph.check_consistency(WARM_UP)).agree
        scroll, read, check = Phase("bare scroll"), Phase("bare read"), Phase("check")
        assert await scroll.run(bare_scroll(store, folder)) == count + WARM_UP_MEMORIES
        if folder is not None:  # the bare scroll closed the store to open its folder
            await graph.close()
            store, graph = opened()
        assert await read.run(bare_read(driver, ORG)) == count
        report = await check.run(graph.check_consistency(ORG))
        assert report.agree and report.memories == report.points == count, report.summary()
        await graph.close()
        await store.close()
    for phase in (scroll, read, check):
        print(phase.shown())
    bare = scroll.seconds + read.seconds
    print(
        f"check: {count / check.seconds:,.0f} memories/s; bare scroll + read: "
        f"{count / bare:,.0f} memories/s; check / bare = {check.seconds / bare:.2f}"
    )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--memories", type=int, default=100_000)
    parser.add_argument("--users", type=int, default=10)
    parser.add_argument("--engine", choices=("edge", "memory"), default="edge")
    arguments = parser.parse_args()
    asyncio.run(main(arguments.memories, arguments.users, arguments.engine))
