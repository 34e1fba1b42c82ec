"""Import and export an organisation of 100k+ nodes; print throughput and peak memory.

    python benchmarks/bench_transfer.py [--users 60] [--interactions 50] [--tracemalloc]

Starts its own embedded Neo4j sized for a shared 2-core machine (768 MB heap, 256 MB
page cache). Writes a synthetic ``memora-ogm-export`` file (users, org-wide and
user-specific agents, interactions with message chains over several days and
offsets, memories with sources, contrary updates), imports it with
``import_records`` (validation, conflict check and batched writes), exports it again
to a file with ``export_organization``, and checks that the export holds exactly the
file's content (same digest). For each phase it prints records/s, nodes/s and the
peak memory of the process (ru_maxrss), which must stay under 300 MB; with
``--tracemalloc`` also the peak of the Python heap in each phase (tracemalloc slows
Python down several times, so throughput is then pessimistic).
"""

from __future__ import annotations

import argparse
import asyncio
import resource
import signal
import sys
import tempfile
import time
import tracemalloc
import uuid
from collections.abc import Iterator
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

from neo4j import GraphDatabase

from memora_ogm import Neo4jGraphInterface, transfer
from memora_ogm.server import LocalNeo4jServer

LIMIT_MB = 300
MESSAGES = 30
MEMORIES = 8
OFFSETS = [timezone.utc, timezone(timedelta(hours=2)), timezone(timedelta(hours=-5, minutes=-30))]


def synthetic(org_id: str, users: int, interactions: int) -> Iterator[dict[str, Any]]:
    """An export, in export order (ids zero-padded so that text order is number order)."""
    start = datetime(2024, 1, 1, 8, 0, tzinfo=timezone.utc)
    counts: dict[str, int] = {kind: 0 for kind in transfer.CONTENT_TYPES}

    def emit(record: dict[str, Any]) -> dict[str, Any]:
        counts[record["type"]] += 1
        return record

    yield transfer.header("organization", org_id, None, "neo4j")
    yield emit(
        {
            "type": "organization",
            "org_id": org_id,
            "org_name": "Bench",
            "created_at": start.isoformat(),
        }
    )
    user_ids = [f"u{u:05d}" for u in range(users)]
    for user_id in user_ids:
        yield emit(
            {
                "type": "user",
                "org_id": org_id,
                "user_id": user_id,
                "user_name": f"user {user_id}",
                "created_at": start.isoformat(),
            }
        )
    agents = [("a-shared", None)] + [(f"a-{user_id}", user_id) for user_id in user_ids]
    for agent_id, owner in agents:
        yield emit(
            {
                "type": "agent",
                "org_id": org_id,
                "agent_id": agent_id,
                "agent_label": f"agent {agent_id}",
                "user_id": owner,
                "created_at": start.isoformat(),
            }
        )
    for user_id in user_ids:
        moments = {}
        for i in range(interactions):
            when = (start + timedelta(hours=7 * i)).astimezone(OFFSETS[i % len(OFFSETS)])
            later = when + timedelta(days=1)
            moments[i] = when
            yield emit(
                {
                    "type": "interaction",
                    "org_id": org_id,
                    "user_id": user_id,
                    "interaction_id": f"i{i:05d}",
                    "agent_id": "a-shared" if i % 2 else f"a-{user_id}",
                    "created_at": when.isoformat(),
                    "updated_at": later.isoformat(),
                    "dates": sorted({when.date().isoformat(), later.date().isoformat()}),
                    "messages": [
                        {"role": "user" if p % 2 == 0 else "assistant", "content": f"m{p} " * 20}
                        for p in range(MESSAGES)
                    ],
                }
            )
        for i in range(interactions):
            for k in range(MEMORIES):
                yield emit(
                    {
                        "type": "memory",
                        "org_id": org_id,
                        "user_id": user_id,
                        "memory_id": memory_id(user_id, i, k),
                        "interaction_id": f"i{i:05d}",
                        "agent_id": "a-shared",
                        "memory": f"user_{user_id} fact {k} of conversation {i}",
                        "obtained_at": moments[i].isoformat(),
                        "date_obtained": moments[i].date().isoformat(),
                        "source_positions": [] if k == 0 else sorted({k, (k * 7) % MESSAGES}),
                    }
                )
        for i in range(interactions):
            yield emit(
                {
                    "type": "contrary_update",
                    "org_id": org_id,
                    "user_id": user_id,
                    "memory_id": memory_id(user_id, i, 1),
                    "updated_by": memory_id(user_id, i, 2),
                }
            )
    yield transfer.end(counts)


def memory_id(user_id: str, interaction: int, k: int) -> str:
    """A memory id as the format requires: a canonical UUID, unique across users (``u00042``
    is user 42), and in the order the file writes a user's memories, as an export sorts
    them, so that the export's digest equals the file's."""
    number = (int(user_id[1:]) << 64) | (interaction << 16) | k
    return str(uuid.UUID(int=number))


def rss_mb() -> float:
    kilobytes = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return kilobytes / 1024 if sys.platform != "darwin" else kilobytes / 2**20


class Phase:
    """Times a phase and measures the Python heap's peak in it (tracemalloc when on)."""

    def __init__(self, name: str, traced: bool) -> None:
        self.name, self.traced = name, traced

    def __enter__(self) -> Phase:
        if self.traced:
            tracemalloc.reset_peak()
        self.started = time.perf_counter()
        return self

    def __exit__(self, *_: object) -> None:
        self.seconds = time.perf_counter() - self.started
        self.peak_mb = tracemalloc.get_traced_memory()[1] / 2**20 if self.traced else 0.0

    def report(self, records: int, nodes: int) -> None:
        heap = f"{self.peak_mb:7.1f} MB" if self.traced else "    n/a"
        print(
            f"{self.name:<8} {self.seconds:7.1f} s  {records / self.seconds:8.0f} records/s  "
            f"{nodes / self.seconds:8.0f} nodes/s  python heap peak {heap}  "
            f"process max RSS {rss_mb():6.1f} MB",
            flush=True,
        )


class Progress:
    """Prints the import's progress every 10%, to see its pace on a busy machine."""

    def __init__(self, started: float) -> None:
        self.started, self.shown = started, 0

    def __call__(self, done: int, total: int) -> None:
        if done * 10 // total > self.shown:
            self.shown = done * 10 // total
            elapsed = time.perf_counter() - self.started
            print(f"  import {done}/{total} records after {elapsed:.0f} s", flush=True)


async def run(users: int, interactions: int, traced: bool) -> None:
    workdir = Path(tempfile.mkdtemp(prefix="bench-transfer-"))
    source = workdir / "source.jsonl"
    exported = workdir / "exported.jsonl"
    org_id = "bench-org"
    expected = transfer.Digest()
    with source.open("w", encoding="utf-8") as out:
        for record in synthetic(org_id, users, interactions):
            expected.add(record)
            out.write(transfer.dumps(record) + "\n")
    counts = dict(expected.counts)
    records = sum(counts.values()) + 2
    print(f"input: {records} records, {source.stat().st_size / 2**20:.1f} MB, {counts}")
    if traced:
        tracemalloc.start()

    with LocalNeo4jServer(heap_mb=768, pagecache_mb=256) as conn:
        graph = Neo4jGraphInterface(conn.uri, conn.username, conn.password, conn.database)
        await graph.setup()
        with GraphDatabase.driver(conn.uri, auth=conn.auth) as driver:
            with Phase("import", traced) as imported:
                summary = await graph.import_records(
                    transfer.JsonLinesFile(source), progress=Progress(imported.started)
                )
            rows, _, _ = driver.execute_query("MATCH (n) RETURN count(n) AS n")
            nodes = int(rows[0]["n"])
            print(f"graph: {nodes} nodes; created {dict(summary.created)}")
            imported.report(records, nodes)
            with Phase("export", traced) as exporting:
                digest = transfer.Digest()
                with exported.open("w", encoding="utf-8") as out:
                    async for record in graph.export_organization(org_id):
                        digest.add(record)
                        out.write(transfer.dumps(record) + "\n")
            exporting.report(records, nodes)
        await graph.close()
    same = digest.hexdigest() == expected.hexdigest()
    print(f"export equals the imported file: {same} (digest {digest.hexdigest()[:16]})")
    peak = max(rss_mb(), imported.peak_mb, exporting.peak_mb)
    print(f"peak memory of the Python process: {rss_mb():.1f} MB RSS (limit {LIMIT_MB} MB)")
    for path in (source, exported):
        path.unlink()
    workdir.rmdir()
    if not same or nodes < 100_000 or peak >= LIMIT_MB:
        raise SystemExit("benchmark failed its checks")


def main() -> None:
    # On SIGTERM, leave through the `with` blocks so the embedded Neo4j is stopped.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(1))
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--users", type=int, default=60)
    parser.add_argument("--interactions", type=int, default=50, help="per user")
    parser.add_argument("--tracemalloc", dest="traced", action="store_true")
    args = parser.parse_args()
    asyncio.run(run(args.users, args.interactions, args.traced))


if __name__ == "__main__":
    main()
