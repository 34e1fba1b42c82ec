"""Saves and deletes per second with the embedded vector store, from 4 threads (issue 46).

    python benchmarks/bench_vector_writes.py [--threads 4] [--writes 100] [--rounds 3]
                                             [--base CHECKOUT]

Connects like the tests (``NEO4J_*`` variables, else Docker, else the embedded server).
Each thread has a user of its own and, through one sync facade with ``QdrantDB(path=)``
(offline embedding), saves ``--writes`` interactions of one memory each, then deletes
those memories one by one. A delete removes its point before its commit and again after
it; a save adds its points only, so it should cost what it did.

With ``--base`` (another checkout of memora-ogm, for example the commit before a
change), each round runs twice, alternated, in processes of their own: once importing
that checkout, once this one. It prints, per code, the median over rounds of saves/s
and deletes/s, statements per save and per delete, and the ratio new/base.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path

HERE = Path(__file__).resolve()


def one_run(threads: int, writes: int) -> dict[str, float]:
    """Saves/s, deletes/s and statements per call of this process's memora-ogm."""
    from neo4j import GraphDatabase

    from memora_ogm import sync
    from memora_ogm.schema.storage import MemoriesAndInteraction, MemoryToStore
    from memora_ogm.server import connect_or_start
    from memora_ogm.testing import clear_database
    from memora_ogm.vector_db.embedding import HashingEmbedding

    with connect_or_start() as conn, tempfile.TemporaryDirectory(prefix="bench-") as work:
        with GraphDatabase.driver(conn.uri, auth=conn.auth) as driver:
            clear_database(driver, conn.database)
        store = sync.QdrantDB(path=Path(work) / "vectors", embedding_function=HashingEmbedding())
        args = (conn.uri, conn.username, conn.password, conn.database)
        memora = sync.Neo4jGraphInterface(*args, store)
        memora.setup()
        org = memora.create_organization("Bench").org_id
        agent = memora.create_agent(org, "Bot").agent_id
        users = [memora.create_user(org, f"user {n}").user_id for n in range(threads)]
        memories: dict[str, list[str]] = {user: [] for user in users}

        def save(user: str, number: int) -> None:
            data = MemoriesAndInteraction(
                interaction=[{"role": "user", "content": f"note {number}"}],
                memories=[MemoryToStore(memory=f"{user} noted {number}", source_msg_block_pos=[0])],
            )
            interaction_id, _ = memora.save_interaction_with_memories(org, agent, user, data)
            found = memora.get_interaction(org, user, interaction_id, with_messages=False)
            memories[user] += [memory.memory_id for memory in found.memories or []]

        def delete(user: str, number: int) -> None:
            memora.delete_user_memory(org, user, memories[user][number])

        def timed(call: Callable[[str, int], None]) -> tuple[float, float]:
            """Calls per second from the threads, and statements per call."""
            before = memora.graph.statements
            started = time.perf_counter()

            def run(user: str) -> None:
                for number in range(writes):
                    call(user, number)

            workers = [threading.Thread(target=run, args=(user,)) for user in users]
            for thread in workers:
                thread.start()
            for thread in workers:
                thread.join()
            seconds = time.perf_counter() - started
            calls = threads * writes
            return calls / seconds, (memora.graph.statements - before) / calls

        saves_per_second, per_save = timed(save)
        deletes_per_second, per_delete = timed(delete)
        memora.delete_organization(org)
        memora.close()
        store.close()
    return {
        "saves/s": saves_per_second,
        # A save's statements here include the read of its memory ids (one statement).
        "statements per save": per_save - 1,
        "deletes/s": deletes_per_second,
        "statements per delete": per_delete,
    }


def alternated(base: Path, threads: int, writes: int, rounds: int) -> None:
    runs: dict[str, list[dict[str, float]]] = {"base": [], "new": []}
    for _ in range(rounds):
        for code, path in (("base", base), ("new", HERE.parent.parent)):
            env = {**os.environ, "PYTHONPATH": str(path)}
            command = [sys.executable, str(HERE), "--one"]
            command += ["--threads", str(threads), "--writes", str(writes)]
            done = subprocess.run(command, env=env, capture_output=True, text=True, check=True)
            runs[code].append(json.loads(done.stdout.strip().splitlines()[-1]))
    print(f"{rounds} rounds alternated, {threads} threads x {writes} writes, embedded store")
    medians: dict[str, dict[str, float]] = {}
    for code, results in runs.items():
        medians[code] = {key: statistics.median(r[key] for r in results) for key in results[0]}
        spread = {
            key: (min(r[key] for r in results), max(r[key] for r in results)) for key in results[0]
        }
        print(
            f"  {code}: "
            + ", ".join(
                f"{key} {value:.1f} ({spread[key][0]:.1f}-{spread[key][1]:.1f})"
                for key, value in medians[code].items()
            )
        )
    for key in ("saves/s", "deletes/s"):
        print(f"  new/base {key}: {medians['new'][key] / medians['base'][key]:.3f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--threads", type=int, default=4)
    parser.add_argument("--writes", type=int, default=100, help="saves (then deletes) per thread")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--base", type=Path, help="a checkout to alternate with")
    parser.add_argument("--one", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        print(json.dumps(one_run(args.threads, args.writes)))
    elif args.base is not None:
        alternated(args.base, args.threads, args.writes, args.rounds)
    else:
        for key, value in one_run(args.threads, args.writes).items():
            print(f"{key}: {value:.2f}")


if __name__ == "__main__":
    main()
