"""Concurrent saves with coalescing on and off, against Memora's layer and the bare ceiling.

    python benchmarks/bench_coalesce.py [--rounds 3] [--seconds 2] [--callers 1,8,32,128]
                                        [--twins async,sync] [--mix own,hot,zipf]
                                        [--no-memora] [--limit 1] [--store]

Every configuration (a twin, a number of concurrent callers, a layer) runs once per
round, the rounds interleaved (the order reversed every other round), so each figure is
a median of rounds spread over the whole run, printed with its lowest and highest.
Layers: memora-ogm with ``coalesce_writes`` off and on, Memora v0.3.1's own layer
(memora-core, async only), and the ceiling: a bare async driver sending the layer's own
batched statement (``UNWIND $batch``), 32 saves per transaction from 8 sessions, with
fresh ids per save. A save is 6 messages and 3 memories, as in issue 48. With
``--store``, each twin also with the embedded vector store (``QdrantDB(path=)``, the
hashing embedding): layers ``async+v`` and ``sync+v``.

Printed per configuration: saves/s (median, low, high), latency from call entry (p50,
p99, queue wait included), statements, transactions, round trips, the client's CPU time
(this process's) and the server's (its JVM's, through JMX) per save, and for coalescing
the histogram of batch sizes. Key mixes: a user per caller (``own``), every caller on one
user (``hot``), users drawn by Zipf's law over 128 (``zipf``).
"""

from __future__ import annotations

import argparse
import asyncio
import random
import shutil
import statistics
import tempfile
import threading
import time
import uuid
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import neo4j
import shortuuid
from bench_api import START, Loader, Spec, spec
from memora.graph_db.neo4j import Neo4jGraphInterface as MemoraInterface
from memora.schema import storage_schema as memora_schema

from memora_ogm import Neo4jGraphInterface as AsyncInterface
from memora_ogm.calls import interaction
from memora_ogm.engine.unit_of_work import UnitOfWork
from memora_ogm.server import connect_or_start
from memora_ogm.sync import Neo4jGraphInterface as SyncInterface
from memora_ogm.sync import QdrantDB as SyncQdrantDB
from memora_ogm.vector_db.embedding import HashingEmbedding
from memora_ogm.vector_db.qdrant import QdrantDB

MESSAGES, MEMORIES = 6, 3
#: The ceiling's transactions: saves per transaction, sessions sending them.
CEILING_BATCH, CEILING_SESSIONS = 32, 8
USERS = CEILING_BATCH * CEILING_SESSIONS


@dataclass
class Figures:
    """One configuration's rounds."""

    rates: list[float] = field(default_factory=list)
    latencies: list[float] = field(default_factory=list)
    saves: int = 0
    statements: int = 0
    sizes: Counter[int] = field(default_factory=Counter)
    #: CPU seconds of this process (the client) over the rounds.
    cpu: float = 0.0
    #: CPU seconds of the server's JVM over the rounds (its JMX ``ProcessCpuTime``).
    server: float = 0.0

    def line(self, name: str) -> str:
        rates = sorted(self.rates)
        lat = sorted(self.latencies) or [0.0]
        p50, p99 = lat[len(lat) // 2], lat[min(len(lat) - 1, int(len(lat) * 0.99))]
        per = max(self.saves, 1)
        transactions = sum(self.sizes.values())
        trips = self.sizes[1] + 2 * (transactions - self.sizes[1])
        counts = (
            f"{self.statements / per:5.3f} {transactions / per:5.3f} {trips / per:5.3f}"
            if transactions
            else f"{self.statements / per:5.3f} {'':>5} {'':>5}"
        )
        return (
            f"{name:<34} {statistics.median(rates):8.1f} {rates[0]:8.1f} {rates[-1]:8.1f}"
            f"  {p50 * 1000:7.2f} {p99 * 1000:7.2f}  {counts}  {self.cpu / per * 1e6:6.0f}"
            f" {self.server / per * 1e6:6.0f}"
        )


async def server_cpu(driver: neo4j.AsyncDriver, database: str | None) -> float:
    """CPU seconds the server's JVM has used so far (JMX, through ``dbms.queryJmx``)."""
    records, _, _ = await driver.execute_query(
        "CALL dbms.queryJmx('java.lang:type=OperatingSystem') YIELD attributes "
        "RETURN attributes.ProcessCpuTime.value AS nanoseconds",
        database_=database,
    )
    return float(records[0]["nanoseconds"]) / 1e9


def histogram(sizes: Counter[int]) -> str:
    buckets: Counter[str] = Counter()
    for size, times in sizes.items():
        low = 1 if size == 1 else 2 ** (size - 1).bit_length() // 2 + 1
        high = 1 if size == 1 else 2 ** (size - 1).bit_length()
        buckets[f"{low}-{high}" if low != high else "1"] += times
    order = sorted(buckets, key=lambda key: int(key.split("-")[0]))
    return "  ".join(f"{key}:{buckets[key]}" for key in order)


class Users:
    """Which user each call saves for, by key mix."""

    def __init__(self, users: list[str], mix: str) -> None:
        self.users, self.mix = users, mix
        weights = [1 / (rank + 1) ** 1.1 for rank in range(128)]
        self.zipf = random.Random(48)
        self.weights = weights

    def of(self, caller: int) -> str:
        if self.mix == "hot":
            return self.users[0]
        if self.mix == "zipf":
            return self.zipf.choices(self.users[:128], self.weights)[0]
        return self.users[caller % len(self.users)]


async def timed_callers(
    callers: int, seconds: float, save: Callable[[int], Any], threads: bool
) -> tuple[int, list[float]]:
    """Saves done by ``callers`` looping ``save(caller)`` for ``seconds``, and each's latency."""
    deadline = time.perf_counter() + seconds
    latencies: list[list[float]] = [[] for _ in range(callers)]
    if threads:

        def thread(caller: int) -> None:
            while time.perf_counter() < deadline:
                began = time.perf_counter()
                save(caller)
                latencies[caller].append(time.perf_counter() - began)

        running = [threading.Thread(target=thread, args=(n,)) for n in range(callers)]
        for each in running:
            each.start()

        def join() -> None:
            for each in running:
                each.join()

        await asyncio.to_thread(join)
    else:

        async def task(caller: int) -> None:
            while time.perf_counter() < deadline:
                began = time.perf_counter()
                await save(caller)
                latencies[caller].append(time.perf_counter() - began)

        await asyncio.gather(*(task(n) for n in range(callers)))
    flat = [latency for caller in latencies for latency in caller]
    return len(flat), flat


def memora_model(saved: Spec) -> Any:
    return memora_schema.MemoriesAndInteraction(
        interaction=saved.messages,
        interaction_date=saved.at,
        memories=[
            memora_schema.MemoryToStore(memory=text, source_msg_block_pos=sources)
            for text, sources, _ in saved.memories
        ],
        contrary_memories=[],
    )


def fresh(row: dict[str, Any]) -> dict[str, Any]:
    """A captured row of the batched statement with new ids (a new interaction)."""
    interaction_id = shortuuid.uuid()
    return {
        **row,
        "interaction": {**row["interaction"], "interaction_id": interaction_id},
        "memories": [
            {
                **memory,
                "p": {
                    **memory["p"],
                    "interaction_id": interaction_id,
                    "memory_id": str(uuid.uuid4()),
                },
            }
            for memory in row["memories"]
        ],
    }


async def ceiling(
    driver: neo4j.AsyncDriver,
    database: str | None,
    text: str,
    rows: list[dict[str, Any]],
    seconds: float,
) -> tuple[int, list[float]]:
    """Saves/s of the bare driver: the batched statement, 32 rows a transaction, 8 sessions
    (each on users of its own), and each transaction's latency."""
    deadline = time.perf_counter() + seconds
    latencies: list[float] = []

    async def session(number: int) -> int:
        mine = rows[number * CEILING_BATCH : (number + 1) * CEILING_BATCH]
        done = 0
        async with driver.session(database=database) as opened:
            while time.perf_counter() < deadline:
                batch = {"batch": [{**fresh(row), "index": n} for n, row in enumerate(mine)]}

                async def work(
                    tx: neo4j.AsyncManagedTransaction, batch: dict[str, Any] = batch
                ) -> None:
                    await (await tx.run(text, batch)).consume()

                began = time.perf_counter()
                await opened.execute_write(work)
                latencies.append(time.perf_counter() - began)
                done += CEILING_BATCH
        return done

    saves = sum(await asyncio.gather(*(session(n) for n in range(CEILING_SESSIONS))))
    return saves, latencies


async def run(options: argparse.Namespace) -> None:
    prefix = f"bench-coalesce-{shortuuid.uuid()[:8]}"
    callers = [int(n) for n in options.callers.split(",")]
    twins = options.twins.split(",")
    with connect_or_start() as conn:
        auth = (conn.username, conn.password)
        database = conn.database or None
        loader = Loader(neo4j.AsyncGraphDatabase.driver(conn.uri, auth=auth), database)
        ogm = AsyncInterface(conn.uri, *auth, conn.database)
        ogm_sync = SyncInterface(conn.uri, *auth, conn.database)
        folder = Path(tempfile.mkdtemp(prefix="bench-coalesce-"))
        stores = (
            (
                QdrantDB(path=folder / "async", embedding_function=HashingEmbedding()),
                SyncQdrantDB(path=folder / "sync", embedding_function=HashingEmbedding()),
            )
            if options.store
            else None
        )
        ogm_v, ogm_sync_v = (
            (None, None)
            if stores is None
            else (
                AsyncInterface(conn.uri, *auth, conn.database, stores[0]),
                SyncInterface(conn.uri, *auth, conn.database, stores[1]),
            )
        )
        for interface in (ogm, ogm_sync, ogm_v, ogm_sync_v):
            if interface is not None:
                interface.graph.coalescer.limit = options.limit
        memora = None if options.no_memora else MemoraInterface(conn.uri, *auth, conn.database)
        bare = neo4j.AsyncGraphDatabase.driver(conn.uri, auth=auth)
        try:
            await ogm.setup()
            if ogm_v is not None and ogm_sync_v is not None:
                await ogm_v.setup()
                ogm_sync_v.setup()
            world = await loader.org(f"{prefix} main", USERS, 1)
            org, agent = world.org_id, world.agents[0]
            when = START
            specs = {user: spec(user, agent, when, "s", MESSAGES, MEMORIES) for user in world.users}
            captured = [
                interaction.save_interaction_with_memories(
                    ogm.graph.nodes, org, agent, user, specs[user].model()
                )
                for user in world.users
            ]
            works = [call.statement for call in captured]
            assert all(isinstance(work, UnitOfWork) for work in works)
            forms = [work.compile(per_row=True) for work in works if isinstance(work, UnitOfWork)]
            text, rows = forms[0][0], [row for _, row in forms]

            def saver(facade: Any, users: Users) -> Callable[[int], Any]:
                """Caller ``n``'s save through ``facade`` (either twin)."""
                return lambda n: facade.save_interaction_with_memories(
                    org, agent, (u := users.of(n)), specs[u].model()
                )

            def layers(mix: str) -> dict[str, tuple[Callable[[int], Any], bool, Any]]:
                """name -> (save of a caller, in threads, the graph counted)."""
                users = Users(world.users, mix)
                found: dict[str, tuple[Callable[[int], Any], bool, Any]] = {}
                facades = (
                    ("async", ogm, False),
                    ("sync", ogm_sync, True),
                    ("async+v", ogm_v, False),
                    ("sync+v", ogm_sync_v, True),
                )
                for name, facade, threaded in facades:
                    if facade is not None and name.split("+")[0] in twins:
                        found[name] = (saver(facade, users), threaded, facade)
                if memora is not None:
                    found["memora"] = (
                        lambda n: memora.save_interaction_with_memories(
                            org, agent, (u := users.of(n)), memora_model(specs[u])
                        ),
                        False,
                        None,
                    )
                return found

            configs: list[tuple[str, int, str, bool]] = []  # mix, callers, layer, coalesce
            for mix in options.mix.split(","):
                for count in callers:
                    for layer in layers(mix):
                        for coalesce in (False, True) if layer != "memora" else (False,):
                            configs.append((mix, count, layer, coalesce))
            figures: dict[Any, Figures] = {config: Figures() for config in configs}
            figures["ceiling"] = Figures()
            if options.bulk:
                figures["bulk"] = Figures()
            bulk_users = Users(world.users, "own")

            async def bulk() -> tuple[int, list[float]]:
                """``--bulk`` saves from one caller through the bulk method."""
                items = [
                    (user, specs[user].model())
                    for user in (bulk_users.of(n) for n in range(options.bulk))
                ]
                began = time.perf_counter()
                answers = await ogm.save_interactions_with_memories(org, agent, items)
                elapsed = time.perf_counter() - began
                assert not [answer for answer in answers if isinstance(answer, Exception)]
                return len(answers), [elapsed]

            mixes = {mix: layers(mix) for mix in options.mix.split(",")}
            # Warm: connections opened, code and server warm, both statements planned.
            for mix, count, layer, coalesce in configs:
                save, threads, interface = mixes[mix][layer]
                if interface is not None:
                    interface.coalesce_writes = coalesce
                await timed_callers(count, 1.0 if coalesce else 0.3, save, threads)
            await ceiling(bare, database, text, rows, 0.5)
            print(
                f"saves of {MESSAGES} messages and {MEMORIES} memories; {options.rounds} rounds"
                f" of {options.seconds:g} s, interleaved; in-flight limit {options.limit}",
                flush=True,
            )
            for round_ in range(options.rounds):
                order: list[Any] = [*configs, "ceiling", *(["bulk"] if options.bulk else [])]
                for config in order if round_ % 2 == 0 else order[::-1]:
                    figure = figures[config]
                    figure.cpu -= time.process_time()
                    figure.server -= await server_cpu(bare, database)
                    if config == "bulk":
                        sizes = Counter(ogm.graph.coalescer.sizes)
                        saves, latencies = await bulk()
                        figure.rates.append(saves / latencies[0])
                        figure.saves += saves
                        figure.sizes += Counter(ogm.graph.coalescer.sizes) - sizes
                        figure.cpu += time.process_time()
                        figure.server += await server_cpu(bare, database)
                        continue
                    if config == "ceiling":
                        saves, latencies = await ceiling(
                            bare, database, text, rows, options.seconds
                        )
                        figure.rates.append(saves / options.seconds)
                        figure.saves += saves
                        figure.latencies += latencies
                        figure.cpu += time.process_time()
                        figure.server += await server_cpu(bare, database)
                        continue
                    mix, count, layer, coalesce = config
                    save, threads, interface = mixes[mix][layer]
                    graph = None if interface is None else interface.graph
                    if interface is not None:
                        interface.coalesce_writes = coalesce
                    statements = 0 if graph is None else graph.statements
                    sizes = Counter() if graph is None else Counter(graph.coalescer.sizes)
                    saves, latencies = await timed_callers(count, options.seconds, save, threads)
                    figure.rates.append(saves / options.seconds)
                    figure.saves += saves
                    figure.latencies += latencies
                    if graph is not None:
                        figure.statements += graph.statements - statements
                        figure.sizes += Counter(graph.coalescer.sizes) - sizes
                    figure.cpu += time.process_time()
                    figure.server += await server_cpu(bare, database)
                print(f"round {round_ + 1} done", flush=True)
            print(
                f"\n{'configuration':<34} {'saves/s':>8} {'low':>8} {'high':>8}  {'p50 ms':>7}"
                f" {'p99 ms':>7}  {'stmt':>5} {'tx':>5} {'trips':>5}  {'cpu µs':>6} {'server':>6}"
                "   (per save)"
            )
            for config in configs:
                mix, count, layer, coalesce = config
                name = f"{mix:<5} {count:>3} {layer:<7} " + (
                    "" if layer == "memora" else ("coalescing" if coalesce else "alone")
                )
                print(figures[config].line(name))
                if coalesce:
                    print(f"{'':<6}batch sizes: {histogram(figures[config].sizes)}")
            print(
                figures["ceiling"].line(
                    f"ceiling: bare, {CEILING_BATCH}/tx, {CEILING_SESSIONS} sessions"
                )
                + "   (latency: per transaction)"
            )
            if options.bulk:
                print(
                    figures["bulk"].line(f"bulk: {options.bulk} saves, 1 async caller")
                    + "   (latency: the whole call)"
                )
                print(f"{'':<6}batch sizes: {histogram(figures['bulk'].sizes)}")
            targets(figures, configs, options)
        finally:
            await loader.cleanup(prefix)
            await loader.driver.close()
            await bare.close()
            await ogm.close()
            ogm_sync.close()
            if ogm_v is not None and ogm_sync_v is not None and stores is not None:
                await ogm_v.close()
                ogm_sync_v.close()
                await stores[0].close()
                stores[1].close()
            shutil.rmtree(folder, ignore_errors=True)
            if memora is not None:
                await memora.close()


def targets(figures: dict[Any, Figures], configs: list[Any], options: argparse.Namespace) -> None:
    """Issue 48's targets, each with its measured ratio (medians of rounds)."""
    print("\ntargets (issue 48):")
    ceiling = statistics.median(figures["ceiling"].rates)
    if "bulk" in figures:
        ratio = statistics.median(figures["bulk"].rates) / ceiling
        print(f"  bulk method, 1 caller: saves/s vs ceiling {ratio:.2f} (target >= 0.8)")
    for mix, count, layer, coalesce in configs:
        if layer == "memora" or not coalesce:
            continue
        on, off = figures[(mix, count, layer, True)], figures[(mix, count, layer, False)]
        if count == 1:
            ratio = statistics.median(sorted(on.latencies)) / statistics.median(
                sorted(off.latencies)
            )
            print(f"  {mix} {layer}: 1 caller, p50 latency on/off {ratio:.3f} (target <= 1.05)")
        if count == 8 and (mix, 8, "memora", False) in figures:
            memora = statistics.median(figures[(mix, 8, "memora", False)].rates)
            ratio = statistics.median(on.rates) / memora
            print(f"  {mix} {layer}: 8 callers, saves/s vs Memora {ratio:.2f}x (target >= 4)")
        if count == 32:
            ratio = statistics.median(on.rates) / ceiling
            print(f"  {mix} {layer}: 32 callers, saves/s vs ceiling {ratio:.2f} (target >= 0.7)")
    for mix, count, layer, coalesce in configs:
        bare = (mix, count, layer.removesuffix("+v"), coalesce)
        if count == 8 and layer.endswith("+v") and bare in figures:
            ratio = statistics.median(figures[(mix, count, layer, coalesce)].rates) / (
                statistics.median(figures[bare].rates)
            )
            mode = "coalescing" if coalesce else "alone"
            print(
                f"  {mix} {layer} {mode}: 8 callers, saves/s with the embedded store vs "
                f"without {ratio:.2f} (target >= 0.5)"
            )


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--seconds", type=float, default=2.0)
    parser.add_argument("--callers", default="1,8,32,128")
    parser.add_argument("--twins", default="async,sync")
    parser.add_argument("--mix", default="own", help="own, hot, zipf (comma-separated)")
    parser.add_argument("--no-memora", action="store_true", help="leave Memora's layer out")
    parser.add_argument("--limit", type=int, default=1, help="coalescing transactions in flight")
    parser.add_argument("--bulk", type=int, default=2000, help="saves of the bulk method (0: none)")
    parser.add_argument(
        "--store", action="store_true", help="also with the embedded vector store (+v layers)"
    )
    asyncio.run(run(parser.parse_args()))


if __name__ == "__main__":
    main()
