"""The server memory of the generated statements as their inputs grow: linear or not.

    python benchmarks/bench_statement_memory.py [--heap-mb 1024] [--sizes 1000x10,...]

For each size (messages x memories) it builds the facade's own statements, a save and
an update of an interaction of that size, by calling the facade with its statement
runner replaced by a recorder, then sends each statement with ``PROFILE`` in a
transaction that is rolled back, and prints the server's estimate of the memory the
statement needed (the plan's ``GlobalMemory``), its db hits, and the memory per
message and per memory. A statement linear in what it carries keeps its memory per
input roughly flat as the sizes grow; one that grows with messages x memories (as a
save of 10,000 x 1,000 did, failing with ``MemoryPoolOutOfMemoryError``) does not.
Starts its own embedded server (``$MEMORA_OGM_NEO4J_HEAP_MB``, else 1024 MB).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import time
from collections.abc import Iterator
from datetime import datetime, timezone
from typing import Any

from neo4j import GraphDatabase

from memora_ogm import Neo4jGraphInterface
from memora_ogm._async.nodes import NODES
from memora_ogm.calls.interaction import (
    save_interaction_with_memories,
    update_interaction_and_memories,
)
from memora_ogm.schema.storage import ContraryMemoryToStore, MemoriesAndInteraction, MemoryToStore
from memora_ogm.server import LocalNeo4jServer

DAY = datetime(2024, 5, 1, 9, 30, tzinfo=timezone.utc)
DEFAULT_SIZES = "1000x10,1000x1000,10000x10,10000x100,10000x1000,20000x1000"


def interaction(messages: int, memories: int, contrary: str | None) -> MemoriesAndInteraction:
    """``messages`` messages and ``memories`` memories citing two messages each."""
    return MemoriesAndInteraction(
        interaction=[
            {"role": "user" if n % 2 == 0 else "assistant", "content": f"message {n}"}
            for n in range(messages)
        ],
        interaction_date=DAY,
        memories=[
            MemoryToStore(
                memory=f"memory {n}", source_msg_block_pos=[n % messages, (n + 1) % messages]
            )
            for n in range(memories)
        ],
        contrary_memories=[
            ContraryMemoryToStore(
                memory="instead", source_msg_block_pos=[0], existing_contrary_memory_id=contrary
            )
        ]
        if contrary
        else [],
    )


def tree(plan: dict[str, Any]) -> Iterator[dict[str, Any]]:
    yield plan
    for child in plan.get("children", []):
        yield from tree(child)


async def main(heap_mb: int, sizes: list[tuple[int, int]]) -> None:
    with LocalNeo4jServer(heap_mb=heap_mb) as conn:
        graph = Neo4jGraphInterface(conn.uri, conn.username, conn.password, conn.database)
        await graph.setup()
        org = await graph.create_organization("Acme")
        user = await graph.create_user(org.org_id, "Ann")
        agent = await graph.create_agent(org.org_id, "Bot")
        ids = (org.org_id, agent.agent_id, user.user_id)
        first, _ = await graph.save_interaction_with_memories(*ids, interaction(2, 1, None))
        (memory,) = await graph.get_all_user_memories(org.org_id, user.user_id)
        print(f"server heap {heap_mb} MiB; load average {os.getloadavg()[0]:.2f}")
        print(
            f"{'statement':<8} {'messages':>8} {'memories':>8} {'memory MiB':>11} "
            f"{'B/message':>10} {'B/memory':>9} {'db hits':>10} {'s':>6}"
        )
        with GraphDatabase.driver(conn.uri, auth=conn.auth) as driver:
            for messages, memories in sizes:
                data = interaction(messages, memories, memory.memory_id)
                # The declarations compile without a server: profile their statements.
                statements = [
                    ("save", save_interaction_with_memories(NODES, *ids, data).statement),
                    (
                        "update",
                        update_interaction_and_memories(NODES, *ids, first, data).statement,
                    ),
                ]
                for name, work in statements:
                    assert work is not None
                    query, params = work.compile()
                    with driver.session(database=conn.database) as session:
                        tx = session.begin_transaction()
                        started = time.perf_counter()
                        try:
                            summary = tx.run("PROFILE " + query, params).consume()
                            seconds = time.perf_counter() - started
                            plan = summary.profile or {}
                            used = plan.get("args", {}).get("GlobalMemory", 0)
                            hits = sum(node.get("dbHits", 0) for node in tree(plan))
                            print(
                                f"{name:<8} {messages:>8} {memories:>8} {used / 2**20:>11.1f} "
                                f"{used / messages:>10.0f} {used / max(memories, 1):>9.0f} "
                                f"{hits:>10} {seconds:>6.1f}",
                                flush=True,
                            )
                        except Exception as error:  # noqa: BLE001 - a failing size is a result
                            print(
                                f"{name:<8} {messages:>8} {memories:>8} failed: "
                                f"{type(error).__name__}: {str(error)[:120]}"
                            )
                        finally:
                            tx.rollback()
        await graph.close()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--heap-mb", type=int, default=int(os.environ.get("MEMORA_OGM_NEO4J_HEAP_MB") or 1024)
    )
    parser.add_argument("--sizes", default=DEFAULT_SIZES)
    args = parser.parse_args()
    parsed = [tuple(int(n) for n in size.split("x")) for size in args.sizes.split(",")]
    asyncio.run(main(args.heap_mb, [(m, n) for m, n in parsed]))
