"""Each interface talks only to its own server and database (issue 12).

Two real Neo4j servers in one process; on each, 8 workers at once (asyncio tasks on
async interfaces, threads on sync interfaces, ``from_neomodel()`` interfaces next to
explicit ones, both twins at once) create an organisation, a user and an agent, and
mix saves, updates, deletes and reads on them. Every read must find what the worker
wrote, and afterwards each server holds exactly the organisations, users,
interactions and memories written through its own interfaces.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from functools import partial
from typing import Any

import pytest
from interaction_helpers import chat, conversation
from neo4j import GraphDatabase
from neo4j.exceptions import ClientError
from neomodel import adb, db
from sync_adapter import AwaitableTwin

from memora_ogm import sync
from memora_ogm._async.interface import Neo4jGraphInterface
from memora_ogm.errors import MemoryNotFound, OrganizationNotFound
from memora_ogm.server import Neo4jConnection
from memora_ogm.testing import clear_database

pytestmark = pytest.mark.local_server

WORKERS_PER_SERVER = 8
ROUNDS = 4


@dataclass
class Written:
    """What workers wrote through the interfaces of one server, by kind of node."""

    orgs: set[str] = field(default_factory=set)
    users: set[str] = field(default_factory=set)
    interactions: set[str] = field(default_factory=set)
    memories: set[str] = field(default_factory=set)

    def merge(self, other: Written) -> None:
        self.orgs |= other.orgs
        self.users |= other.users
        self.interactions |= other.interactions
        self.memories |= other.memories


async def _memory_ids(memora: Any, org_id: str, user_id: str, interaction_id: str) -> set[str]:
    found = await memora.get_interaction(org_id, user_id, interaction_id)
    return {memory.memory_id for memory in found.memories or []}


async def work(memora: Any, name: str) -> Written:
    """One worker: its own organisation, then ``ROUNDS`` rounds of writes, each checked
    by reads through the same interface (which must see exactly this worker's data)."""
    org_id = (await memora.create_organization(name)).org_id
    user_id = (await memora.create_user(org_id, f"{name} user")).user_id
    agent_id = (await memora.create_agent(org_id, f"{name} agent")).agent_id
    written = Written({org_id}, {user_id})
    by_interaction: dict[str, set[str]] = {}
    for n in range(ROUNDS):
        data = conversation(
            chat(f"{name} says {n}", "noted"),
            memories=[(f"user_{user_id} fact {n}", [0]), (f"{name} aside {n}", [1])],
        )
        interaction_id, _ = await memora.save_interaction_with_memories(
            org_id, agent_id, user_id, data
        )
        written.interactions.add(interaction_id)
        by_interaction[interaction_id] = await _memory_ids(memora, org_id, user_id, interaction_id)
        assert len(by_interaction[interaction_id]) == 2
        if n % 3 == 1:
            update = conversation(
                chat(f"{name} says {n}", "changed"), memories=[(f"{name} update {n}", [1])]
            )
            await memora.update_interaction_and_memories(
                org_id, agent_id, user_id, interaction_id, update
            )
            by_interaction[interaction_id] = await _memory_ids(
                memora, org_id, user_id, interaction_id
            )
            assert len(by_interaction[interaction_id]) == 3
        if n % 3 == 2:
            gone = sorted(by_interaction[interaction_id])[0]
            await memora.delete_user_memory(org_id, user_id, gone)
            by_interaction[interaction_id].discard(gone)
            with pytest.raises(MemoryNotFound):
                await memora.get_user_memory(org_id, user_id, gone)
        if n % 4 == 3:
            await memora.delete_user_interaction_and_its_memories(org_id, user_id, interaction_id)
            written.interactions.discard(interaction_id)
            del by_interaction[interaction_id]
        mine = set().union(*by_interaction.values())
        page = await memora.get_all_user_memories(org_id, user_id)
        assert {memory.memory_id for memory in page} == mine
        some = sorted(mine)[0]
        assert (await memora.get_user_memory(org_id, user_id, some)).memory_id == some
        interactions = await memora.get_all_user_interactions(org_id, user_id, limit=100)
        assert {interaction.interaction_id for interaction in interactions} == set(by_interaction)
    assert [u.user_id for u in await memora.get_all_org_users(org_id)] == [user_id]
    written.memories = set().union(*by_interaction.values())
    return written


def on_a_thread(pool: ThreadPoolExecutor, memora: Any, name: str) -> Awaitable[Written]:
    """Run a worker on a sync interface (dressed as async) on a thread of its own."""
    twin = AwaitableTwin(memora, Neo4jGraphInterface)
    return asyncio.get_running_loop().run_in_executor(pool, lambda: asyncio.run(work(twin, name)))


def held(conn: Neo4jConnection) -> Written:
    """What the server holds, read with a driver of the test's own."""
    with GraphDatabase.driver(conn.uri, auth=conn.auth) as driver:

        def ids(label: str, key: str) -> set[str]:
            records = driver.execute_query(
                f"MATCH (n:{label}) RETURN n.{key} AS id", database_=conn.database
            ).records
            return {record["id"] for record in records}

        return Written(
            ids("Org", "org_id"),
            ids("User", "user_id"),
            ids("Interaction", "interaction_id"),
            ids("Memory", "memory_id"),
        )


@dataclass
class Servers:
    a: Neo4jConnection
    b: Neo4jConnection

    def args(self, conn: Neo4jConnection) -> tuple[str, str, str, str]:
        return conn.uri, conn.username, conn.password, conn.database


@pytest.fixture
def servers(neo4j_connection: Neo4jConnection, second_neo4j_connection: Neo4jConnection) -> Servers:
    """Both servers, emptied."""
    for conn in (neo4j_connection, second_neo4j_connection):
        with GraphDatabase.driver(conn.uri, auth=conn.auth) as driver:
            clear_database(driver, conn.database)
    return Servers(neo4j_connection, second_neo4j_connection)


Job = Callable[[], Awaitable[Written]]


async def run_and_check(servers: Servers, jobs: dict[str, list[Job]]) -> None:
    """Run every job of both servers at once; each server holds exactly what its jobs wrote."""
    assert all(len(server_jobs) >= WORKERS_PER_SERVER for server_jobs in jobs.values())
    results = await asyncio.gather(
        *(job() for server_jobs in jobs.values() for job in server_jobs), return_exceptions=True
    )
    errors = [result for result in results if isinstance(result, BaseException)]
    assert not errors, f"{len(errors)} workers failed, first: {errors[0]!r}"
    expected = {key: Written() for key in jobs}
    written = iter(results)
    for key, server_jobs in jobs.items():
        for _ in server_jobs:
            expected[key].merge(next(written))  # type: ignore[arg-type]
    assert held(servers.a) == expected["a"]
    assert held(servers.b) == expected["b"]


async def close_all(*interfaces: Any) -> None:
    for interface in interfaces:
        result = interface.close()
        if asyncio.iscoroutine(result):
            await result


async def test_async_interfaces_on_two_servers_each_write_only_to_their_own(
    servers: Servers,
) -> None:
    interfaces = {
        key: [Neo4jGraphInterface(*servers.args(conn)) for _ in range(2)]
        for key, conn in (("a", servers.a), ("b", servers.b))
    }
    for pair in interfaces.values():
        await pair[0].setup()
    jobs: dict[str, list[Job]] = {
        key: [partial(work, pair[n % 2], f"{key}-async-{n}") for n in range(WORKERS_PER_SERVER)]
        for key, pair in interfaces.items()
    }
    try:
        await run_and_check(servers, jobs)
    finally:
        await close_all(*interfaces["a"], *interfaces["b"])


async def test_sync_interfaces_on_threads_on_two_servers_each_write_only_to_their_own(
    servers: Servers,
) -> None:
    interfaces = {
        key: [sync.Neo4jGraphInterface(*servers.args(conn)) for _ in range(2)]
        for key, conn in (("a", servers.a), ("b", servers.b))
    }
    for pair in interfaces.values():
        pair[0].setup()
    with ThreadPoolExecutor(max_workers=2 * WORKERS_PER_SERVER) as pool:
        jobs: dict[str, list[Job]] = {
            key: [
                partial(on_a_thread, pool, pair[n % 2], f"{key}-sync-{n}")
                for n in range(WORKERS_PER_SERVER)
            ]
            for key, pair in interfaces.items()
        }
        try:
            await run_and_check(servers, jobs)
        finally:
            await close_all(*interfaces["a"], *interfaces["b"])


@pytest.fixture
async def neomodel_on_both(servers: Servers) -> AsyncIterator[None]:
    """The application's neomodel: its sync ``db`` on server A, its async ``adb`` on B."""
    db.set_connection(url=servers.a.neomodel_url)
    await adb.set_connection(url=servers.b.neomodel_url)
    yield
    db.close_connection()
    await adb.close_connection()


@pytest.mark.usefixtures("neomodel_on_both")
async def test_from_neomodel_and_explicit_interfaces_of_both_twins_at_once(
    servers: Servers,
) -> None:
    """On A: an explicit async interface (tasks) and sync ``from_neomodel()`` (threads);
    on B: async ``from_neomodel()`` (tasks) and an explicit sync interface (threads)."""
    explicit_a = Neo4jGraphInterface(*servers.args(servers.a))
    neomodel_a = sync.Neo4jGraphInterface.from_neomodel()
    neomodel_b = Neo4jGraphInterface.from_neomodel()
    explicit_b = sync.Neo4jGraphInterface(*servers.args(servers.b))
    await explicit_a.setup()
    await neomodel_b.setup()
    half = WORKERS_PER_SERVER // 2
    with ThreadPoolExecutor(max_workers=WORKERS_PER_SERVER) as pool:
        jobs: dict[str, list[Job]] = {
            "a": [
                *(partial(work, explicit_a, f"a-explicit-{n}") for n in range(half)),
                *(partial(on_a_thread, pool, neomodel_a, f"a-neomodel-{n}") for n in range(half)),
            ],
            "b": [
                *(partial(work, neomodel_b, f"b-neomodel-{n}") for n in range(half)),
                *(partial(on_a_thread, pool, explicit_b, f"b-explicit-{n}") for n in range(half)),
            ],
        }
        try:
            await run_and_check(servers, jobs)
        finally:
            await close_all(explicit_a, neomodel_a, neomodel_b, explicit_b)
    assert (await adb.cypher_query("RETURN 1"))[0] == [[1]], "the application's adb still works"


@pytest.mark.usefixtures("servers")
async def test_from_neomodel_never_runs_on_an_explicit_interfaces_driver(
    servers: Servers, monkeypatch: pytest.MonkeyPatch
) -> None:
    """neomodel configured only by its settings (as django_neomodel leaves it), pointing at B;
    an explicit interface on A runs first (and leaves neomodel's connection alone)."""
    await adb.close_connection()
    from neomodel import get_config

    monkeypatch.setattr(get_config(), "database_url", servers.b.neomodel_url)
    explicit_a = Neo4jGraphInterface(*servers.args(servers.a))
    try:
        await explicit_a.setup()
        org_a = await explicit_a.create_organization("on A")
        neomodel_b = Neo4jGraphInterface.from_neomodel()
        await neomodel_b.setup()
        org_b = await neomodel_b.create_organization("on B")
        assert [o.org_id for o in await neomodel_b.get_all_organizations()] == [org_b.org_id]
        assert [o.org_id for o in await explicit_a.get_all_organizations()] == [org_a.org_id]
        assert held(servers.a).orgs == {org_a.org_id}
        assert held(servers.b).orgs == {org_b.org_id}
    finally:
        await explicit_a.close()
        await adb.close_connection()


@pytest.mark.parametrize("twin", ["async", "sync"])
async def test_from_neomodel_follows_neomodel_to_another_server(
    servers: Servers, twin: str
) -> None:
    """The application points neomodel at B after the interface ran calls on A: the
    next calls, reads and writes, run on B (an idle session of A's driver is not reused)."""

    async def connect(conn: Neo4jConnection) -> None:
        if twin == "async":
            await adb.set_connection(url=conn.neomodel_url)
        else:
            db.set_connection(url=conn.neomodel_url)

    await connect(servers.a)
    memora = (
        Neo4jGraphInterface.from_neomodel()
        if twin == "async"
        else AwaitableTwin(sync.Neo4jGraphInterface.from_neomodel(), Neo4jGraphInterface)
    )
    try:
        await memora.setup()
        on_a = await memora.create_organization("on A")
        assert (await memora.get_organization(on_a.org_id)).org_name == "on A"
        await connect(servers.b)
        await memora.setup()
        with pytest.raises(OrganizationNotFound):
            await memora.get_organization(on_a.org_id)
        on_b = await memora.create_organization("on B")
        assert [org.org_id for org in await memora.get_all_organizations()] == [on_b.org_id]
        assert held(servers.a).orgs == {on_a.org_id}
        assert held(servers.b).orgs == {on_b.org_id}
    finally:
        await close_all(memora)
        if twin == "async":
            await adb.close_connection()
        else:
            db.close_connection()


async def test_interfaces_on_two_databases_of_one_server_never_mix(
    neo4j_connection: Neo4jConnection,
) -> None:
    """One interface on the ``neo4j`` database, one on ``system`` (Community has no other):
    concurrently, every read of the first finds its organisations, and every read of
    the second runs on ``system``, which refuses ``MATCH``."""
    conn = neo4j_connection
    with GraphDatabase.driver(conn.uri, auth=conn.auth) as driver:
        clear_database(driver, conn.database)
    users = Neo4jGraphInterface(conn.uri, conn.username, conn.password, conn.database)
    system = Neo4jGraphInterface(conn.uri, conn.username, conn.password, "system")
    try:
        await users.setup()
        orgs = {(await users.create_organization(f"org {n}")).org_id for n in range(3)}
        one = sorted(orgs)[0]

        async def user_database(n: int) -> None:
            for _ in range(5):
                assert {o.org_id for o in await users.get_all_organizations()} == orgs
                assert (await users.get_organization(one)).org_id == one
                await users.update_organization(one, f"renamed {n}")

        async def system_database() -> None:
            for _ in range(5):
                with pytest.raises(ClientError, match="system database"):
                    await system.get_all_organizations()
                with pytest.raises(ClientError, match="system database"):
                    await system.get_organization(one)

        await asyncio.gather(
            *(user_database(n) for n in range(WORKERS_PER_SERVER)),
            *(system_database() for _ in range(WORKERS_PER_SERVER)),
        )
    finally:
        await close_all(users, system)
