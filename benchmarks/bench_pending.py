"""What the journal of pending vector changes costs a save (issue 40).

    python benchmarks/bench_pending.py [--saves 300] [--rounds 5]

Connects like the tests (``NEO4J_*`` variables, else Docker, else the embedded server).
A save with one memory through the async facade, with the embedded vector store
(``QdrantDB(path=...)``, offline embedding), in two settings timed in alternating
rounds on the same server and store:

- ``file``: the default, each write's vector changes journalled in the store's
  ``pending_folder`` (a line before the vector half, a line after the commit);
- ``memory``: ``pending_folder=None``, the records kept in this process's memory only
  (what the journal adds over it is the two file writes).

It prints the median wall time and client CPU per save of each, their ratio, the
journal's own cost per write (``begin`` and ``close`` of a record, timed alone) against
one Bolt round trip (``RETURN 1``), and the statements per save, which the journal must
leave unchanged.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
import time
from pathlib import Path

from memora_ogm import Neo4jGraphInterface
from memora_ogm.schema.storage import MemoriesAndInteraction, MemoryToStore
from memora_ogm.server import connect_or_start
from memora_ogm.testing import clear_database
from memora_ogm.vector_db.embedding import HashingEmbedding
from memora_ogm.vector_db.pending import Journal
from memora_ogm.vector_db.qdrant import QdrantDB


def median_ms(values: list[float]) -> float:
    return statistics.median(values) * 1000


async def saves(
    memora: Neo4jGraphInterface, ids: tuple[str, str, str], count: int
) -> list[tuple[float, float]]:
    """(wall, CPU) seconds of ``count`` saves of one message and one memory."""
    org_id, agent_id, user_id = ids
    times = []
    for number in range(count):
        data = MemoriesAndInteraction(
            interaction=[{"role": "user", "content": f"note {number}"}],
            memories=[
                MemoryToStore(memory=f"user_{user_id} noted {number}", source_msg_block_pos=[0])
            ],
        )
        wall, cpu = time.perf_counter(), time.thread_time()
        await memora.save_interaction_with_memories(org_id, agent_id, user_id, data)
        times.append((time.perf_counter() - wall, time.thread_time() - cpu))
    return times


async def round_trips(memora: Neo4jGraphInterface, count: int) -> list[float]:
    driver = await memora.graph.driver()
    times = []
    for _ in range(count):
        start = time.perf_counter()
        await driver.execute_query("RETURN 1")
        times.append(time.perf_counter() - start)
    return times


def journal_cost(folder: Path, count: int) -> list[float]:
    journal = Journal(folder)
    ids = ["0b9d5c3e-7f1a-4d2b-9e8c-3a6f1d2e4b5c"]
    times = []
    for _ in range(count):
        start = time.perf_counter()
        journal.close(journal.begin(ids))
        times.append(time.perf_counter() - start)
    return times


async def main(count: int, rounds: int) -> None:
    with connect_or_start() as conn, tempfile.TemporaryDirectory(prefix="bench-pending-") as work:
        from neo4j import GraphDatabase

        with GraphDatabase.driver(conn.uri, auth=conn.auth) as driver:
            clear_database(driver, conn.database)
        store = QdrantDB(path=Path(work) / "vectors", embedding_function=HashingEmbedding())
        journalled = store.pending_folder
        memora = Neo4jGraphInterface.from_connection(conn, store)
        await memora.setup()
        org = (await memora.create_organization("Bench")).org_id
        agent = (await memora.create_agent(org, "Bot")).agent_id
        user = (await memora.create_user(org, "Ann")).user_id
        ids = (org, agent, user)
        await saves(memora, ids, 50)  # warm up
        measured: dict[str, list[tuple[float, float]]] = {"file": [], "memory": []}
        statements: dict[str, float] = {}
        for _ in range(rounds):
            for setting in ("file", "memory"):
                # A store's journal is chosen on its first write: a fresh store object
                # on the same folder for each setting.
                await memora.close()
                await store.close()
                store = QdrantDB(
                    path=Path(work) / "vectors",
                    embedding_function=HashingEmbedding(),
                    pending_folder=journalled if setting == "file" else None,
                )
                memora = Neo4jGraphInterface.from_connection(conn, store)
                before = memora.graph.statements
                measured[setting] += await saves(memora, ids, count)
                statements[setting] = (memora.graph.statements - before) / count
        floor = await round_trips(memora, 200)
        await memora.delete_organization(org)
        await memora.close()
        await store.close()
        journal = journal_cost(Path(work) / "journal", 2000)
    print(f"{rounds} rounds of {count} saves per setting, alternated")
    for setting, times in measured.items():
        print(
            f"  {setting:7s} median {median_ms([t[0] for t in times]):.3f} ms wall, "
            f"{median_ms([t[1] for t in times]):.3f} ms CPU, "
            f"{statements[setting]:.2f} statements per save"
        )
    wall = median_ms([t[0] for t in measured["file"]]) / median_ms(
        [t[0] for t in measured["memory"]]
    )
    cpu = median_ms([t[1] for t in measured["file"]]) / median_ms(
        [t[1] for t in measured["memory"]]
    )
    print(f"  file / memory: wall {wall:.3f}, CPU {cpu:.3f}")
    print(
        f"journal begin+close: median {median_ms(journal) * 1000:.1f} us; "
        f"one Bolt round trip {median_ms(floor) * 1000:.1f} us "
        f"(ratio {statistics.median(journal) / statistics.median(floor):.3f})"
    )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--saves", type=int, default=300, help="saves per setting and round")
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    asyncio.run(main(args.saves, args.rounds))
