"""Concurrent saves of memora-ogm against the hand-written baseline, in many paired rounds.

    python benchmarks/bench_throughput.py [--pairs 10] [--seconds 3] [--workers 8]
                                          [--twins async,sync] [--workloads own,shared]

``bench_api.py`` ends with three alternating rounds per layer and prints the ratio of
their totals; on a shared machine one slow round moves that ratio by 0.1. Here each
workload runs ``--pairs`` pairs of rounds (memora-ogm then the baseline, or the other
way round, alternating), and every pair gives a ratio of two rounds run seconds apart.
It prints each layer's saves per second, the median of the pair ratios with their
lowest and highest, how many pairs memora-ogm won, and per save the client's CPU
(``time.process_time``: all threads of this process) and, for a local server
(``memora-ogm server`` or the embedded one, found by its Bolt port), the server's CPU.

The data is ``bench_api.py``'s: an organisation of ``--workers`` + 1 users (a user per
worker, or all workers on the first one) and the same save of 10 messages and 4
memories; everything made is deleted at the end.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import time
from collections.abc import Callable
from pathlib import Path

import neo4j
import shortuuid
from bench_api import Loader, Thunk, Twin, World, open_twins, save_layers

from memora_ogm.server import connect_or_start

WORKLOADS = {"own": "a user per worker", "shared": "one shared user"}


def server_pid(uri: str) -> int | None:
    """The pid of the local Neo4j launcher (``LocalNeo4j``) serving ``uri``'s port, if any."""
    port = uri.rsplit(":", 1)[-1]
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            args = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if b"LocalNeo4j" in args and port.encode() in args:
            return int(entry.name)
    return None


def server_cpu(pid: int | None) -> float:
    """User plus system CPU seconds of process ``pid`` so far (0 when unknown)."""
    if pid is None:
        return 0.0
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


class Round:
    """Saves, wall seconds and CPU seconds (client, server) of one layer's rounds."""

    def __init__(self) -> None:
        self.saves: list[int] = []
        self.client: list[float] = []
        self.server: list[float] = []

    def rate(self, index: int, seconds: float) -> float:
        return self.saves[index] / seconds

    def cpu_per_save(self, spent: list[float]) -> float:
        return sum(spent) / max(sum(self.saves), 1) * 1000


async def one_round(
    twin: Twin, seconds: float, workers: int, work: Callable[[int], Thunk], pid: int | None
) -> tuple[int, float, float]:
    client, server = time.process_time(), server_cpu(pid)
    saves = await twin.workers(workers, seconds, work)
    return saves, time.process_time() - client, server_cpu(pid) - server


async def measure(
    twin: Twin, world: World, options: argparse.Namespace, shared: bool, pid: int | None
) -> None:
    layers = save_layers(world, twin, options.workers, shared)
    rounds = {name: Round() for name in layers}
    names = list(layers)
    # One untimed round each: connections opened, code and server warm.
    for name in names:
        await twin.workers(options.workers, 1.0, layers[name])
    for pair in range(options.pairs):
        for name in names if pair % 2 == 0 else names[::-1]:
            saves, client, server = await one_round(
                twin, options.seconds, options.workers, layers[name], pid
            )
            rounds[name].saves.append(saves)
            rounds[name].client.append(client)
            rounds[name].server.append(server)
    ogm, base = rounds["memora-ogm"], rounds["baseline"]
    ratios = [ogm.saves[n] / base.saves[n] for n in range(options.pairs)]
    won = sum(ratio >= 1.0 for ratio in ratios)
    workload = WORKLOADS["shared" if shared else "own"]
    print(
        f"{workload:<18} {twin.name:<5}"
        f" {statistics.median(ogm.rate(n, options.seconds) for n in range(options.pairs)):7.1f}"
        f" {statistics.median(base.rate(n, options.seconds) for n in range(options.pairs)):7.1f}"
        f"  {statistics.median(ratios):5.2f} {min(ratios):5.2f} {max(ratios):5.2f}"
        f"  {won:>2}/{options.pairs}"
        f"  {ogm.cpu_per_save(ogm.client):5.2f} {base.cpu_per_save(base.client):5.2f}"
        f"  {ogm.cpu_per_save(ogm.server):5.2f} {base.cpu_per_save(base.server):5.2f}",
        flush=True,
    )


async def run(options: argparse.Namespace) -> None:
    prefix = f"bench-throughput-{shortuuid.uuid()[:8]}"
    with connect_or_start() as conn:
        auth = (conn.username, conn.password)
        database = conn.database or None
        pid = server_pid(conn.uri)
        loader = Loader(neo4j.AsyncGraphDatabase.driver(conn.uri, auth=auth), database)
        twins = await open_twins(conn, options.twins)
        try:
            world = await loader.org(f"{prefix} main", options.workers + 1, 1)
            world.prefix = prefix
            print(
                f"saves/s of {options.workers} workers (10 msgs, 4 mems), {options.pairs} pairs"
                f" of {options.seconds:g} s rounds; server CPU "
                + ("measured" if pid else "not measured (no local server found)")
            )
            print(
                f"{'workload':<18} {'twin':<5} {'ogm/s':>7} {'base/s':>7}  {'ratio':>5}"
                f" {'low':>5} {'high':>5}  {'won':>5}  {'c.ogm':>5} {'c.base':>5}"
                f"  {'s.ogm':>5} {'s.base':>5}"
            )
            print(f"{'':<45}(ratio: median of the pairs; CPU: ms per save)")
            for workload in options.workloads.split(","):
                for twin in twins:
                    await measure(twin, world, options, workload == "shared", pid)
        finally:
            await loader.cleanup(prefix)
            for twin in twins:
                await twin.close()
            await loader.driver.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--pairs", type=int, default=10, help="paired rounds per workload (10)")
    parser.add_argument("--seconds", type=float, default=3.0, help="per round (3)")
    parser.add_argument("--workers", type=int, default=8, help="concurrent savers (8)")
    parser.add_argument("--twins", default="async,sync", help="async, sync or both")
    parser.add_argument("--workloads", default="own,shared", help="own, shared or both")
    asyncio.run(run(parser.parse_args()))


if __name__ == "__main__":
    main()
