"""Soak: a bounded random mix of every facade operation from concurrent workers (issue 6).

    python tests/soak.py [--seconds 180] [--workers 8] [--seed 1] [--orgs 3] [--users 4]
                         [--lost-replies 0.02] [--processes 1] [--qdrant-url URL]

Workers are asyncio tasks sharing one async facade (each task has its own
neomodel session and transactions) with a Qdrant store associated: in memory, or the
server at ``--qdrant-url``. With ``--processes N``, N soak processes of their own
organisations share one Neo4j and one Qdrant server (the tests' stand-in, unless
``--qdrant-url`` names one), each with its own seed. They
pick operations at random, weighted towards saves, updates and reads, on a small
population of organisations, users, agents, interactions and memories, so that
they keep meeting each other on the same users, interactions and days, and
deletes race everything else. Ids go stale as others delete them: a not-found
error is an expected outcome; any other error is not.

The fault mix: the facade reaches the server through :mod:`lost_replies`' proxy (a
process of its own), which cuts the connection under a share (``--lost-replies``) of the
write commits: after the server committed, before the answer came back, or as the
commit was on its way (then nothing landed), so that writes of every kind meet an
unanswered commit while others run. Each must still return as if the answer had come
(or fail as it would have).

When the time is up (or ``--max-ops`` operations ran) the workers stop, the pending
vector changes are settled as an application's ``setup()`` settles them (by a facade
connected directly, not through the proxy; with several processes, once they all
ended), and the invariants of :mod:`invariants` are checked over the whole graph and the
vector store. The report gives operations, errors by type, throughput and pending
changes settled. The exit status is 1 when an invariant is violated or an operation
failed unexpectedly.

Connects to ``NEO4J_URI`` & co. when set, else starts a local Neo4j (as the tests
do). It empties that database first: point it at a throwaway one.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import random
import statistics
import subprocess
import sys
import time
from collections import Counter, defaultdict
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any, cast

sys.path.insert(0, str(Path(__file__).resolve().parent))

from interaction_helpers import NO_MEMORY  # noqa: E402
from invariants import all_violations  # noqa: E402
from neo4j import GraphDatabase  # noqa: E402
from qdrant_standin import qdrant_standin  # noqa: E402

from memora_ogm._async.interface import Neo4jGraphInterface  # noqa: E402
from memora_ogm.errors import NotFoundError  # noqa: E402
from memora_ogm.schema.storage import (  # noqa: E402
    ContraryMemoryToStore,
    MemoriesAndInteraction,
    MemoryToStore,
)
from memora_ogm.server import connect_or_start  # noqa: E402
from memora_ogm.testing import clear_database  # noqa: E402
from memora_ogm.vector_db.embedding import HashingEmbedding  # noqa: E402
from memora_ogm.vector_db.qdrant import QdrantDB  # noqa: E402

FIRST_DAY = datetime(2030, 1, 1, 9, 0, tzinfo=timezone.utc)
#: Days the interactions fall on: few, so that writers meet on the same Date nodes.
DAYS = 6


@dataclass
class Population:
    """The ids the workers know of; they go stale as other workers delete them."""

    rng: random.Random
    orgs: list[str] = field(default_factory=list)
    users: dict[str, list[str]] = field(default_factory=lambda: defaultdict(list))
    agents: dict[str, list[str]] = field(default_factory=lambda: defaultdict(list))
    interactions: dict[tuple[str, str], list[str]] = field(
        default_factory=lambda: defaultdict(list)
    )
    memories: dict[tuple[str, str], list[str]] = field(default_factory=lambda: defaultdict(list))

    def pick(self, items: list[str], missing: str = "gone") -> str:
        """One of ``items``, or an id nothing has (``missing``) when there is none."""
        return self.rng.choice(items) if items else missing

    def org(self) -> str:
        return self.pick(self.orgs)

    def user(self) -> tuple[str, str]:
        org = self.org()
        return org, self.pick(self.users[org])

    def agent(self, org: str) -> str:
        return self.pick(self.agents[org])

    def interaction(self, owner: tuple[str, str]) -> str:
        return self.pick(self.interactions[owner])

    def memory(self, owner: tuple[str, str]) -> str:
        return self.pick(self.memories[owner], NO_MEMORY)  # memory ids are canonical UUIDs

    def forget(self, items: list[str], item: str) -> None:
        if item in items:
            items.remove(item)


def conversation(pop: Population, owner: tuple[str, str]) -> MemoriesAndInteraction:
    """A few messages, memories citing some of them, and sometimes a contrary memory."""
    rng = pop.rng
    messages = [
        {"role": "user" if n % 2 == 0 else "assistant", "content": f"message {n} {rng.random()}"}
        for n in range(rng.randint(0, 6))
    ]
    if rng.random() < 0.5:  # share a prefix with the stock opening: updates keep a head
        messages = [{"role": "user", "content": "hello"}, *messages]

    def positions() -> list[int]:
        return rng.sample(range(len(messages)), min(len(messages), rng.randint(0, 2)))

    memories = [
        MemoryToStore(
            memory=f"user_{owner[1]} fact {rng.random()}", source_msg_block_pos=positions()
        )
        for _ in range(rng.randint(0, 3))
    ]
    contrary = [
        ContraryMemoryToStore(
            memory=f"user_{owner[1]} changed {rng.random()}",
            source_msg_block_pos=positions(),
            existing_contrary_memory_id=pop.memory(owner),
        )
        for _ in range(1 if rng.random() < 0.3 and pop.memories[owner] else 0)
    ]
    day = FIRST_DAY + timedelta(days=rng.randrange(DAYS), minutes=rng.randrange(600))
    return MemoriesAndInteraction(
        interaction=messages, interaction_date=day, memories=memories, contrary_memories=contrary
    )


Operation = Callable[[Neo4jGraphInterface, Population], Awaitable[Any]]


async def save(g: Neo4jGraphInterface, pop: Population) -> None:
    org, user = owner = pop.user()
    data = conversation(pop, owner)
    interaction_id, _ = await g.save_interaction_with_memories(org, pop.agent(org), user, data)
    pop.interactions[owner].append(interaction_id)
    if data.memories or data.contrary_memories:
        found = await g.get_interaction(org, user, interaction_id, with_messages=False)
        pop.memories[owner].extend(memory.memory_id for memory in found.memories or [])


async def update(g: Neo4jGraphInterface, pop: Population) -> None:
    org, user = owner = pop.user()
    await g.update_interaction_and_memories(
        org, pop.agent(org), user, pop.interaction(owner), conversation(pop, owner)
    )


async def delete_interaction(g: Neo4jGraphInterface, pop: Population) -> None:
    org, user = owner = pop.user()
    interaction_id = pop.interaction(owner)
    await g.delete_user_interaction_and_its_memories(org, user, interaction_id)
    pop.forget(pop.interactions[owner], interaction_id)


async def delete_memory(g: Neo4jGraphInterface, pop: Population) -> None:
    org, user = owner = pop.user()
    memory_id = pop.memory(owner)
    await g.delete_user_memory(org, user, memory_id)
    pop.forget(pop.memories[owner], memory_id)


async def create_user(g: Neo4jGraphInterface, pop: Population) -> None:
    org = pop.org()
    user = await g.create_user(org, f"user {pop.rng.random()}")
    pop.users[org].append(user.user_id)


async def delete_user(g: Neo4jGraphInterface, pop: Population) -> None:
    org, user = pop.user()
    if len(pop.users[org]) > 2:  # keep a few users per organisation
        await g.delete_user(org, user)
        pop.forget(pop.users[org], user)


async def create_agent(g: Neo4jGraphInterface, pop: Population) -> None:
    org, user = pop.user()
    agent = await g.create_agent(org, "agent", user if pop.rng.random() < 0.3 else None)
    pop.agents[org].append(agent.agent_id)


async def delete_agent(g: Neo4jGraphInterface, pop: Population) -> None:
    org = pop.org()
    if len(pop.agents[org]) > 2:
        agent_id = pop.agent(org)
        await g.delete_agent(org, agent_id)
        pop.forget(pop.agents[org], agent_id)


async def create_organization(g: Neo4jGraphInterface, pop: Population) -> None:
    org = (await g.create_organization(f"org {pop.rng.random()}")).org_id
    for _ in range(2):
        pop.agents[org].append((await g.create_agent(org, "agent")).agent_id)
        pop.users[org].append((await g.create_user(org, "user")).user_id)
    pop.orgs.append(org)


async def delete_organization(g: Neo4jGraphInterface, pop: Population) -> None:
    if len(pop.orgs) > 2:
        org = pop.org()
        pop.forget(pop.orgs, org)  # no new work for it, but what is under way goes on
        await g.delete_organization(org)


def _ids(pop: Population) -> dict[str, str]:
    org, user = owner = pop.user()
    return {"org_id": org, "user_id": user, "memory_id": pop.memory(owner)}


def _owner_call(method: str, *extra: Any) -> Operation:
    """An operation calling ``method(org_id, user_id, *extra)`` on a random user."""

    async def call(g: Neo4jGraphInterface, pop: Population) -> Any:
        return await getattr(g, method)(*pop.user(), *extra)

    return call


OPERATIONS: dict[str, tuple[float, Operation]] = {
    "save_interaction_with_memories": (20, save),
    "update_interaction_and_memories": (12, update),
    "get_interaction": (
        8,
        lambda g, p: g.get_interaction(*(o := p.user()), p.interaction(o)),
    ),
    "get_all_user_interactions": (
        6,
        lambda g, p: g.get_all_user_interactions(*p.user(), skip=p.rng.randrange(3), limit=5),
    ),
    "get_all_user_memories": (8, _owner_call("get_all_user_memories")),
    "get_user_memory": (5, lambda g, p: g.get_user_memory(*(o := p.user()), p.memory(o))),
    "get_user_memory_history": (
        3,
        lambda g, p: g.get_user_memory_history(*(o := p.user()), p.memory(o)),
    ),
    "fetch_user_memories_resolved": (
        4,
        lambda g, p: g.fetch_user_memories_resolved([_ids(p) for _ in range(3)]),
    ),
    "fetch_user_memories_resolved_batch": (
        2,
        lambda g, p: g.fetch_user_memories_resolved_batch([[_ids(p)], [_ids(p), _ids(p)]]),
    ),
    "delete_user_memory": (3, delete_memory),
    "delete_user_interaction_and_its_memories": (3, delete_interaction),
    "delete_all_user_memories": (0.7, _owner_call("delete_all_user_memories")),
    "delete_all_user_interactions_and_their_memories": (
        0.7,
        _owner_call("delete_all_user_interactions_and_their_memories"),
    ),
    "create_user": (1.5, create_user),
    "get_user": (2, _owner_call("get_user")),
    "update_user": (1, _owner_call("update_user", "renamed")),
    "get_all_org_users": (1, lambda g, p: g.get_all_org_users(p.org())),
    "delete_user": (1, delete_user),
    "create_agent": (1, create_agent),
    "get_agent": (1, lambda g, p: g.get_agent(o := p.org(), p.agent(o))),
    "get_all_org_agents": (1, lambda g, p: g.get_all_org_agents(p.org())),
    "get_all_user_agents": (1, _owner_call("get_all_user_agents")),
    "update_agent": (0.5, lambda g, p: g.update_agent(o := p.org(), p.agent(o), "relabelled")),
    "delete_agent": (0.5, delete_agent),
    "create_organization": (0.3, create_organization),
    "get_organization": (1, lambda g, p: g.get_organization(p.org())),
    "get_all_organizations": (0.5, lambda g, p: g.get_all_organizations()),
    "update_organization": (0.5, lambda g, p: g.update_organization(p.org(), "renamed")),
    "delete_organization": (0.3, delete_organization),
}


class Settled(logging.Handler):
    """Counts the pending vector changes the graph reports settled (its log's INFO line)."""

    def __init__(self) -> None:
        super().__init__()
        self.count = 0

    def emit(self, record: logging.LogRecord) -> None:
        if record.msg == "settled %d pending vector changes":
            self.count += cast(tuple[int], record.args)[0]


SETTLED = Settled()
logging.getLogger("memora_ogm").addHandler(SETTLED)
logging.getLogger("memora_ogm").setLevel(logging.INFO)


@dataclass
class Tally:
    operations: Counter[str] = field(default_factory=Counter)
    expected_errors: Counter[str] = field(default_factory=Counter)
    unexpected_errors: Counter[str] = field(default_factory=Counter)
    examples: dict[str, str] = field(default_factory=dict)
    latencies: list[float] = field(default_factory=list)
    lost_replies: int = 0
    #: Pending vector changes settled while the workers ran, and at the end.
    settled: int = 0
    settled_at_end: int = 0


async def worker(
    g: Neo4jGraphInterface, pop: Population, tally: Tally, deadline: float, budget: list[int]
) -> None:
    names = list(OPERATIONS)
    weights = [OPERATIONS[name][0] for name in names]
    while time.monotonic() < deadline and budget[0] > 0:
        budget[0] -= 1
        name = pop.rng.choices(names, weights)[0]
        started = time.monotonic()
        try:
            await OPERATIONS[name][1](g, pop)
        except NotFoundError as error:
            tally.expected_errors[type(error).__name__] += 1
        except Exception as error:  # noqa: BLE001 - every other error is a finding
            key = f"{name}: {type(error).__name__}"
            tally.unexpected_errors[key] += 1
            tally.examples.setdefault(key, str(error)[:300])
        tally.operations[name] += 1
        tally.latencies.append(time.monotonic() - started)


def _store(args: argparse.Namespace) -> QdrantDB:
    if args.qdrant_url:
        return QdrantDB(url=args.qdrant_url, embedding_function=HashingEmbedding())
    return QdrantDB(location=":memory:", embedding_function=HashingEmbedding())


async def soak(args: argparse.Namespace) -> int:
    if args.processes > 1:
        return await soak_processes(args)
    with connect_or_start() as conn:
        driver = GraphDatabase.driver(conn.uri, auth=conn.auth)
        if not args.part:
            clear_database(driver, conn.database)
        vectors = _store(args)
        tally, elapsed = await run_workers(args, conn, vectors)
        settler = Neo4jGraphInterface(
            conn.uri, conn.username, conn.password, conn.database, vectors
        )
        before = SETTLED.count
        await settler.setup()  # settles what is pending, as an application starting does
        tally.settled_at_end = SETTLED.count - before
        await settler.close()
        if args.part:  # one of several: the first process checks once all have ended
            await vectors.close()
            driver.close()
            report(args, tally, elapsed, None, 0.0, {})
            return 1 if tally.unexpected_errors else 0
        checked = time.monotonic()
        violations = await all_violations(driver, vectors, conn.database)
        check_seconds = time.monotonic() - checked
        await vectors.close()
        nodes = _labels(driver, conn.database)
        driver.close()
    report(args, tally, elapsed, violations, check_seconds, nodes)
    return 1 if violations or tally.unexpected_errors else 0


async def run_workers(
    args: argparse.Namespace, conn: Any, vectors: QdrantDB
) -> tuple[Tally, float]:
    """The workers' run through the reply-losing proxy; its tally and seconds."""
    pop = Population(random.Random(args.seed))
    proxy = subprocess.Popen(
        [sys.executable, str(Path(__file__).with_name("lost_replies.py")), conn.uri]
        + ["--rate", str(args.lost_replies), "--seed", str(args.seed)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert proxy.stdin is not None and proxy.stdout is not None
    uri = proxy.stdout.readline().strip()
    graph = Neo4jGraphInterface(uri, conn.username, conn.password, conn.database, vectors)
    await graph.setup()
    for _ in range(args.orgs):
        await create_organization(graph, pop)
    for org in pop.orgs:
        for _ in range(args.users - 2):
            pop.users[org].append((await graph.create_user(org, "user")).user_id)

    tally = Tally()
    started = time.monotonic()
    budget = [args.max_ops]
    await asyncio.gather(
        *(worker(graph, pop, tally, started + args.seconds, budget) for _ in range(args.workers))
    )
    elapsed = time.monotonic() - started
    tally.settled = SETTLED.count
    await graph.close()
    proxy.stdin.close()
    tally.lost_replies = int(proxy.stdout.readline())
    proxy.wait()
    return tally, elapsed


async def soak_processes(args: argparse.Namespace) -> int:
    """``--processes`` soaks at once, on one Neo4j and one Qdrant server, then settled
    and checked here once they all ended."""
    with connect_or_start() as conn, qdrant_standin() as (standin_url, _):
        url = args.qdrant_url or standin_url
        driver = GraphDatabase.driver(conn.uri, auth=conn.auth)
        clear_database(driver, conn.database)
        env = {**os.environ, **conn.env()}
        shared = ["--qdrant-url", url, "--seconds", str(args.seconds), "--workers"]
        shared += [str(args.workers), "--lost-replies", str(args.lost_replies)]
        shared += ["--orgs", str(args.orgs), "--users", str(args.users)]
        children = [
            subprocess.Popen(
                [sys.executable, __file__, *shared]
                + ["--seed", str(args.seed * 100 + part), "--part", str(part)],
                env=env,
            )
            for part in range(1, args.processes + 1)
        ]
        failed = [child.wait() for child in children]
        vectors = _store(argparse.Namespace(qdrant_url=url))
        settler = Neo4jGraphInterface(
            conn.uri, conn.username, conn.password, conn.database, vectors
        )
        await settler.setup()  # the ended processes' journals, if they left any open
        print(f"settled after all {args.processes} processes ended: {SETTLED.count}")
        await settler.close()
        violations = await all_violations(driver, vectors, conn.database)
        await vectors.close()
        nodes = _labels(driver, conn.database)
        driver.close()
    print(f"{args.processes} processes ended with exit statuses {failed}")
    print("graph at the end: " + ", ".join(f"{label} {n}" for label, n in nodes.items()))
    print(f"invariants checked: {len(violations)} violated")
    for violation in violations:
        print(f"  VIOLATED {violation}")
    return 1 if violations or any(failed) else 0


def _direct(conn: Any, vectors: QdrantDB) -> Neo4jGraphInterface:
    """A facade on the server itself, not through the proxy."""
    return Neo4jGraphInterface(conn.uri, conn.username, conn.password, conn.database, vectors)


def _labels(driver: Any, database: str | None) -> dict[str, int]:
    records = driver.execute_query(
        "MATCH (n) RETURN labels(n)[0] AS label, count(*) AS n ORDER BY label",
        database_=database,
    ).records
    return {record["label"]: record["n"] for record in records}


def report(
    args: argparse.Namespace,
    tally: Tally,
    elapsed: float,
    violations: list[str] | None,
    check_seconds: float,
    nodes: dict[str, int],
) -> None:
    """The run's figures; ``violations`` None: not checked here (one of several)."""
    total = sum(tally.operations.values())
    latencies = sorted(tally.latencies) or [0.0]
    part = f", process {args.part}" if args.part else ""
    print(f"soak: {args.workers} workers, {elapsed:.0f} s, seed {args.seed}{part}")
    print(f"operations: {total} ({total / elapsed:.1f}/s)")
    print(f"write commits lost, or their answers: {tally.lost_replies}")
    print(
        f"pending vector changes settled: {tally.settled} while running, "
        f"{tally.settled_at_end} at the end"
    )
    print(
        f"latency: median {statistics.median(latencies) * 1000:.0f} ms, "
        f"p95 {latencies[int(len(latencies) * 0.95)] * 1000:.0f} ms, "
        f"max {latencies[-1] * 1000:.0f} ms"
    )
    for name, count in tally.operations.most_common():
        print(f"  {name:50} {count:7}")
    expected = sum(tally.expected_errors.values())
    print(f"expected errors (stale ids after concurrent deletes): {expected}")
    for name, count in tally.expected_errors.most_common():
        print(f"  {name:50} {count:7}")
    print(f"unexpected errors: {sum(tally.unexpected_errors.values())}")
    for name, count in tally.unexpected_errors.most_common():
        print(f"  {name:50} {count:7}  e.g. {tally.examples[name]}")
    if violations is None:
        return
    print("graph at the end: " + ", ".join(f"{label} {n}" for label, n in nodes.items()))
    print(f"invariants checked in {check_seconds:.1f} s: {len(violations)} violated")
    for violation in violations:
        print(f"  VIOLATED {violation}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=180, help="how long (default 180)")
    parser.add_argument("--workers", type=int, default=8, help="concurrent workers (default 8)")
    parser.add_argument("--seed", type=int, default=1, help="random seed (default 1)")
    parser.add_argument("--orgs", type=int, default=3, help="organisations at the start")
    parser.add_argument("--users", type=int, default=4, help="users per organisation")
    parser.add_argument(
        "--max-ops", type=int, default=1_000_000, help="stop after this many operations"
    )
    parser.add_argument(
        "--lost-replies",
        type=float,
        default=0.02,
        help="share of write commits lost, or their answers (default 0.02)",
    )
    parser.add_argument(
        "--processes", type=int, default=1, help="soak processes sharing the servers (default 1)"
    )
    parser.add_argument("--qdrant-url", help="a Qdrant server (default: a store in memory)")
    parser.add_argument("--part", type=int, default=0, help=argparse.SUPPRESS)
    return asyncio.run(soak(parser.parse_args(argv)))


if __name__ == "__main__":
    sys.exit(main())
