"""Latency and Bolt queries per call of the interaction and memory methods.

    python benchmarks/bench_interactions_memories.py [--runs 11] [--large 20000]

Connects like the tests (``NEO4J_*`` variables, else Docker, else the embedded
server), works in an organisation of its own and deletes it at the end. All data
is made through the facade itself: interactions of 50 messages with 20 memories
(15 new, 5 contradicting the previous interaction's 5, in chains of 10
interactions), one every six hours, for a user with 1,000 and a user with
``--large`` memories.

Bolt queries are counted by wrapping ``run`` of the driver's ``AsyncTransaction``
and ``AsyncSession``: every query neomodel sends, whatever built it, is a RUN on
one of those two, so the count is what crosses the wire (BEGIN/COMMIT not
included). The APOC check (``has_apoc``, asked once per interface) is made before
timing.

Each method prints its median latency over ``--runs`` calls and its queries per
call; write methods also run with a small payload (5 messages, 2 memories) to
show the count does not depend on the size. The paginated reads compare page 1
between the two users.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time
from collections.abc import Awaitable, Callable
from datetime import datetime, timedelta, timezone
from typing import Any

import neo4j

from memora_ogm._async.interface import Neo4jGraphInterface
from memora_ogm.schema.storage import ContraryMemoryToStore, MemoriesAndInteraction, MemoryToStore
from memora_ogm.server import connect_or_start

START = datetime(2024, 1, 1, 9, tzinfo=timezone.utc)
MESSAGES = 50
MEMORIES = 20
CONTRARY = 5
CHAIN = 10
SMALL = 1_000

Prepare = Callable[[int], Awaitable[tuple[Any, ...]]]


class QueryCounter:
    """Counts the queries sent through the async driver (see the module docstring)."""

    def __init__(self) -> None:
        self.count = 0
        for cls in (neo4j.AsyncTransaction, neo4j.AsyncSession):
            cls.run = self._counting(cls.run)  # type: ignore[method-assign]

    def _counting(self, run: Any) -> Any:
        async def counted(*args: Any, **kwargs: Any) -> Any:
            self.count += 1
            return await run(*args, **kwargs)

        return counted


def conversation(tag: str, messages: int = MESSAGES) -> list[dict[str, str]]:
    return [
        {"role": "user" if p % 2 == 0 else "assistant", "content": f"{tag} message {p}"}
        for p in range(messages)
    ]


def payload(
    when: datetime,
    user_id: str,
    agent_id: str,
    messages: list[dict[str, str]],
    memories: int = MEMORIES,
    superseded: tuple[str, ...] = (),
) -> MemoriesAndInteraction:
    """``memories`` memories citing ``messages``, one of them contrary per superseded id."""
    count = len(messages)
    new = [
        MemoryToStore(
            memory=f"user_{user_id} told agent_{agent_id} fact {k}",
            source_msg_block_pos=[k % count, (k + 1) % count] if count else [],
        )
        for k in range(memories - len(superseded))
    ]
    contrary = [
        ContraryMemoryToStore(
            memory=f"user_{user_id}'s fact {k} changed",
            source_msg_block_pos=[k % count] if count else [],
            existing_contrary_memory_id=memory_id,
        )
        for k, memory_id in enumerate(superseded)
    ]
    return MemoriesAndInteraction(
        interaction=messages, interaction_date=when, memories=new, contrary_memories=contrary
    )


def args(*values: Any) -> Prepare:
    """A ``prepare`` that gives the same arguments every run."""

    async def prepare(_: int) -> tuple[Any, ...]:
        return values

    return prepare


class Bench:
    def __init__(self, runs: int) -> None:
        self.counter = QueryCounter()
        self.runs = runs
        self.medians: dict[str, float] = {}

    async def measure(
        self, name: str, call: Callable[..., Awaitable[Any]], variants: dict[str, Prepare]
    ) -> None:
        """Median latency and queries of ``call(*await prepare(run))`` for each variant.

        ``prepare`` is not timed. The variants' runs alternate, so load from
        elsewhere on the machine hits them alike.
        """
        times: dict[str, list[float]] = {label: [] for label in variants}
        counts: dict[str, set[int]] = {label: set() for label in variants}
        for run in range(self.runs):
            for label, prepare in variants.items():
                arguments = await prepare(run)
                self.counter.count = 0
                started = time.perf_counter()
                await call(*arguments)
                times[label].append(time.perf_counter() - started)
                counts[label].add(self.counter.count)
        for label in variants:
            key = f"{name} [{label}]" if label else name
            self.medians[key] = statistics.median(times[label])
            queries = "-".join(str(count) for count in sorted(counts[label]))
            print(f"{key:<72} {self.medians[key] * 1000:8.1f} ms {queries:>3} queries", flush=True)


class Scenario:
    """One organisation and agent, with the helpers that make data in it."""

    def __init__(self, graph: Neo4jGraphInterface, bench: Bench, org_id: str, agent_id: str):
        self.graph = graph
        self.bench = bench
        self.org_id = org_id
        self.agent_id = agent_id
        self.when = START + timedelta(days=4_000)

    async def user(self) -> str:
        return (await self.graph.create_user(self.org_id, "Bench user")).user_id

    async def save(self, user_id: str, messages: int, memories: int) -> str:
        data = payload(self.when, user_id, self.agent_id, conversation("s", messages), memories)
        interaction_id, _ = await self.graph.save_interaction_with_memories(
            self.org_id, self.agent_id, user_id, data
        )
        return interaction_id

    async def memory_ids(self, user_id: str, interaction_id: str) -> list[str]:
        found = await self.graph.get_interaction(self.org_id, user_id, interaction_id, False, True)
        return [memory.memory_id for memory in found.memories or []]

    async def fill(self, memories: int) -> tuple[str, list[str], str]:
        """A user with ``memories`` memories (see the module docstring).

        Returns the user, the memories of the interaction that starts the last
        contrary chain, and the newest memory of that chain.
        """
        user_id = await self.user()
        previous: list[str] = []
        chain_start: list[str] = []
        for index in range(memories // MEMORIES):
            superseded = tuple(previous[-CONTRARY:]) if index % CHAIN else ()
            data = payload(
                START + timedelta(hours=6 * index),
                user_id,
                self.agent_id,
                conversation(f"i{index}"),
                superseded=superseded,
            )
            interaction_id, _ = await self.graph.save_interaction_with_memories(
                self.org_id, self.agent_id, user_id, data
            )
            found = await self.graph.get_interaction(
                self.org_id, user_id, interaction_id, False, True
            )
            # Contrary memories last, so the next interaction supersedes them.
            ordered = sorted(found.memories or [], key=lambda memory: "changed" in memory.memory)
            previous = [memory.memory_id for memory in ordered]
            if not superseded:
                chain_start = previous
        return user_id, chain_start, previous[-1]

    async def writes(self, superseded: tuple[str, ...], user_id: str) -> None:
        """Each write method with 50 messages and 20 memories, then with 5 and 2."""
        await self.writes_of(MESSAGES, MEMORIES, superseded, user_id)
        await self.writes_of(5, 2, (), user_id)

    async def writes_of(
        self, messages: int, memories: int, superseded: tuple[str, ...], user_id: str
    ) -> None:
        graph, bench = self.graph, self.bench
        label = f"{messages} msgs, {memories} memories"
        target_user = await self.user()
        target = await self.save(target_user, messages, 0)
        shown = await self.save(target_user, messages, memories)

        async def save(_: int) -> tuple[Any, ...]:
            chat = conversation("n", messages)
            data = payload(self.when, user_id, self.agent_id, chat, memories, superseded)
            return (self.org_id, self.agent_id, user_id, data)

        async def update(run: int) -> tuple[Any, ...]:
            # Two lists that differ from the middle on: each run truncates and appends.
            half = messages // 2
            chat = conversation("s", messages)[:half] + conversation(f"v{run % 2}", messages)[half:]
            when = self.when + timedelta(days=run)
            data = payload(when, target_user, self.agent_id, chat, memories)
            return (self.org_id, self.agent_id, target_user, target, data)

        async def doomed(_: int) -> tuple[Any, ...]:
            return (self.org_id, target_user, await self.save(target_user, messages, memories))

        for name, call, prepare in (
            ("save_interaction_with_memories", graph.save_interaction_with_memories, save),
            (
                "update_interaction_and_memories (differ at half)",
                graph.update_interaction_and_memories,
                update,
            ),
            ("get_interaction", graph.get_interaction, args(self.org_id, target_user, shown)),
            (
                "delete_user_interaction_and_its_memories",
                graph.delete_user_interaction_and_its_memories,
                doomed,
            ),
        ):
            await bench.measure(f"{name} ({label})", call, {"": prepare})

    async def deletes(self) -> None:
        graph, bench = self.graph, self.bench

        def user_with(interactions: int) -> Prepare:
            async def prepare(_: int) -> tuple[Any, ...]:
                user_id = await self.user()
                for _k in range(interactions):
                    await self.save(user_id, MESSAGES, MEMORIES)
                return (self.org_id, user_id)

            return prepare

        sizes = {f"{n} x (50 msgs, 20 memories)": user_with(n) for n in (1, 5)}
        await bench.measure(
            "delete_all_user_interactions_and_their_memories",
            graph.delete_all_user_interactions_and_their_memories,
            sizes,
        )
        await bench.measure("delete_all_user_memories", graph.delete_all_user_memories, sizes)
        user_id = await self.user()

        async def one_memory(_: int) -> tuple[Any, ...]:
            memory_ids = await self.memory_ids(user_id, await self.save(user_id, 2, 1))
            return (self.org_id, user_id, memory_ids[0])

        await bench.measure("delete_user_memory", graph.delete_user_memory, {"": one_memory})

    async def reads(self, users: dict[int, tuple[str, list[str], str]]) -> None:
        """Each read for every user, their runs interleaved."""
        graph, org_id, measure = self.graph, self.org_id, self.bench.measure
        interactions, memories = graph.get_all_user_interactions, graph.get_all_user_memories
        pages: list[tuple[str, Callable[..., Awaitable[Any]], tuple[Any, ...]]] = [
            ("get_all_user_interactions page 1, limit 50", interactions, (True, True, 0, 50)),
            ("get_all_user_interactions page 1, limit 100 (default)", interactions, ()),
            ("get_all_user_interactions page 1, no messages/memories", interactions,
             (False, False, 0, 50)),
            ("get_all_user_interactions page 5, limit 10", interactions, (True, True, 40, 10)),
            ("get_all_user_memories page 1, limit 1000 (default)", memories, ()),
            ("get_all_user_memories page 1, agent filter", memories, (self.agent_id,)),
            ("get_all_user_memories page 1, limit 50", memories, (None, 0, 50)),
        ]  # fmt: skip
        for name, call, extra in pages:
            await measure(
                name, call, {f"{n:,}": args(org_id, u, *extra) for n, (u, _, _) in users.items()}
            )
        for name, call in (
            ("get_user_memory", graph.get_user_memory),
            (f"get_user_memory_history (chain of {CHAIN})", graph.get_user_memory_history),
        ):
            await measure(
                name,
                call,
                {f"{n:,}": args(org_id, u, newest) for n, (u, _, newest) in users.items()},
            )
        ids = {
            f"{n:,}": [{"org_id": org_id, "user_id": u, "memory_id": m} for m in chain]
            for n, (u, chain, _) in users.items()
        }
        await measure(
            "fetch_user_memories_resolved (20 ids, 9 hops)",
            graph.fetch_user_memories_resolved,
            {label: args(batch) for label, batch in ids.items()},
        )
        await measure(
            "fetch_user_memories_resolved_batch (5 x 20 ids)",
            graph.fetch_user_memories_resolved_batch,
            {label: args([batch] * 5) for label, batch in ids.items()},
        )


async def run(runs: int, large: int) -> None:
    bench = Bench(runs)
    with connect_or_start() as conn:
        graph = Neo4jGraphInterface(conn.uri, conn.username, conn.password, conn.database)
        await graph.setup()
        apoc = await graph.graph.has_apoc()
        org = await graph.create_organization("bench interactions and memories")
        agent = await graph.create_agent(org.org_id, "Bench agent")
        scenario = Scenario(graph, bench, org.org_id, agent.agent_id)
        try:
            print(f"placeholders resolved {'by APOC' if apoc else 'in Python'}; {runs} runs each")
            started = time.perf_counter()
            users = {size: await scenario.fill(size) for size in (SMALL, large)}
            print(
                f"made users of {SMALL:,} and {large:,} memories"
                f" in {time.perf_counter() - started:.0f} s"
            )
            small_user, small_chain, _ = users[SMALL]
            print("\n-- writes")
            await scenario.writes(tuple(small_chain[-CONTRARY:]), small_user)
            print("\n-- deletes")
            await scenario.deletes()
            print(f"\n-- reads, users with {SMALL:,} and {large:,} memories")
            await scenario.reads(users)
            print()
            for name in (
                "get_all_user_interactions page 1, limit 50",
                "get_all_user_memories page 1, limit 1000 (default)",
            ):
                ratio = bench.medians[f"{name} [{large:,}]"] / bench.medians[f"{name} [{SMALL:,}]"]
                print(f"{name}: {large:,} vs {SMALL:,} memories = {ratio:.2f}x (must be < 1.5x)")
        finally:
            await graph.delete_organization(org.org_id)
            await graph.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--runs", type=int, default=11, help="calls per method (median)")
    parser.add_argument("--large", type=int, default=20_000, help="memories of the large user")
    options = parser.parse_args()
    asyncio.run(run(options.runs, options.large))


if __name__ == "__main__":
    main()
