"""Routing, read and write transactions, and the connection settings of an interface (issue 12).

A ``neo4j://`` URI makes the driver route: reads to readers, writes to the leader. That
only works when every read runs in a read transaction and every write in a write
transaction, and a read only sees the interface's earlier writes on a follower when its
session carries their bookmarks. A spy on the sessions' statements and transactions
records both here, on the core flow run through a ``neo4j://`` URI against the local
server (the routing driver accepts a single server).
"""

from __future__ import annotations

import asyncio
import inspect
import secrets
import time
from collections.abc import Awaitable, Callable, Iterator
from typing import Any

import neo4j
import pytest
from graph_fixtures import links
from interaction_helpers import chat, conversation
from neo4j import READ_ACCESS, WRITE_ACCESS, Driver
from neo4j.exceptions import ConnectionAcquisitionTimeoutError
from neomodel import adb, db
from sync_adapter import AwaitableTwin

from memora_ogm import sync
from memora_ogm._async.interface import Neo4jGraphInterface
from memora_ogm.engine.call import Call, Query
from memora_ogm.errors import MemoryNotFound, OrganizationNotFound
from memora_ogm.server import Neo4jConnection
from memora_ogm.testing import clear_database

Sessions = list[tuple[str | None, str | None, object]]
"""``(database, access mode, bookmark manager)`` of the session of each auto-commit
statement or explicit transaction any driver ran."""


@pytest.fixture
def sessions(monkeypatch: pytest.MonkeyPatch) -> Sessions:
    """The session of every unit of work either twin runs from now on (sessions are
    reused between calls, so opening them tells nothing)."""
    ran: Sessions = []
    for cls in (neo4j.AsyncSession, neo4j.Session):
        for name in ("run", "begin_transaction"):
            original = getattr(cls, name)

            def spy(self: Any, *args: Any, original: Any = original, **kwargs: Any) -> Any:
                config = self._config
                ran.append((config.database, config.default_access_mode, config.bookmark_manager))
                return original(self, *args, **kwargs)

            monkeypatch.setattr(cls, name, spy)
    return ran


async def settle(value: Any) -> Any:
    """``value``, awaited when it came from the async twin."""
    return await value if inspect.isawaitable(value) else value


def interface(twin: str, *args: Any, **kwargs: Any) -> Any:
    """The async interface, or the sync one dressed as async."""
    if twin == "async":
        return Neo4jGraphInterface(*args, **kwargs)
    return AwaitableTwin(sync.Neo4jGraphInterface(*args, **kwargs), Neo4jGraphInterface)


def routing(conn: Neo4jConnection) -> str:
    assert conn.uri.startswith("bolt://")
    return "neo4j://" + conn.uri.removeprefix("bolt://")


@pytest.mark.parametrize("twin", ["async", "sync"])
async def test_core_flow_through_neo4j_uri_reads_in_read_and_writes_in_write_transactions(
    twin: str, neo4j_connection: Neo4jConnection, neo4j_driver: Driver, sessions: Sessions
) -> None:
    conn = neo4j_connection
    clear_database(neo4j_driver, conn.database)
    memora = interface(twin, routing(conn), conn.username, conn.password, conn.database)
    await memora.setup()
    await memora.get_all_organizations()  # placeholder mode detected before the spying

    bookmarks: set[int] = set()

    async def step(kind: str, call: Awaitable[Any]) -> Any:
        sessions.clear()
        result = await call
        modes = [mode for _, mode, _ in sessions]
        assert sessions, "the call ran no unit of work"
        assert {database for database, _, _ in sessions} == {conn.database}
        assert all(manager is not None for _, _, manager in sessions)
        bookmarks.update(id(manager) for _, _, manager in sessions)
        if kind == "read":
            assert set(modes) == {READ_ACCESS}, modes
        else:
            assert WRITE_ACCESS in modes, modes
            assert set(modes) <= {READ_ACCESS, WRITE_ACCESS}
        return result

    org = await step("write", memora.create_organization("Acme"))
    user = await step("write", memora.create_user(org.org_id, "Ann"))
    agent = await step("write", memora.create_agent(org.org_id, "Bot", user.user_id))
    first = conversation(chat("hello", "hi", "I like tea"), memories=[("user_x likes tea", [2])])
    interaction_id, _ = await step(
        "write",
        memora.save_interaction_with_memories(org.org_id, agent.agent_id, user.user_id, first),
    )
    found = await step("read", memora.get_interaction(org.org_id, user.user_id, interaction_id))
    assert [m.content for m in found.messages or []] == ["hello", "hi", "I like tea"]
    (tea,) = found.memories or []
    changed = conversation(chat("hello", "hi", "I like coffee"), memories=[("coffee", [2])])
    await step(
        "write",
        memora.update_interaction_and_memories(
            org.org_id, agent.agent_id, user.user_id, interaction_id, changed
        ),
    )
    (page,) = await step(
        "read", memora.get_all_user_interactions(org.org_id, user.user_id, skip=0, limit=10)
    )
    assert [m.content for m in page.messages or []] == ["hello", "hi", "I like coffee"]
    memories = await step("read", memora.get_all_user_memories(org.org_id, user.user_id))
    assert sorted(m.memory for m in memories) == ["Ann likes tea", "coffee"]
    ids = {"org_id": org.org_id, "user_id": user.user_id, "memory_id": tea.memory_id}
    reads: list[Awaitable[Any]] = [
        memora.get_user_memory(org.org_id, user.user_id, tea.memory_id),
        memora.get_user_memory_history(org.org_id, user.user_id, tea.memory_id),
        memora.fetch_user_memories_resolved([ids]),
        memora.fetch_user_memories_resolved_batch([[ids], []]),
        memora.get_organization(org.org_id),
        memora.get_all_organizations(),
        memora.get_user(org.org_id, user.user_id),
        memora.get_all_org_users(org.org_id),
        memora.get_agent(org.org_id, agent.agent_id),
        memora.get_all_org_agents(org.org_id),
        memora.get_all_user_agents(org.org_id, user.user_id),
    ]
    for read in reads:
        await step("read", read)
    for write in (
        memora.update_organization(org.org_id, "Acme 2"),
        memora.update_user(org.org_id, user.user_id, "Bea"),
        memora.update_agent(org.org_id, agent.agent_id, "Bot 2"),
    ):
        await step("write", write)
    assert (await memora.get_user_memory(org.org_id, user.user_id, tea.memory_id)).memory == (
        "Bea likes tea"
    )
    await step("write", memora.delete_user_memory(org.org_id, user.user_id, tea.memory_id))
    with pytest.raises(MemoryNotFound):
        await memora.get_user_memory(org.org_id, user.user_id, tea.memory_id)
    await step(
        "write",
        memora.delete_user_interaction_and_its_memories(org.org_id, user.user_id, interaction_id),
    )
    assert await memora.get_all_user_memories(org.org_id, user.user_id) == []
    for write in (
        memora.delete_all_user_memories(org.org_id, user.user_id),
        memora.delete_all_user_interactions_and_their_memories(org.org_id, user.user_id),
        memora.delete_agent(org.org_id, agent.agent_id),
        memora.delete_user(org.org_id, user.user_id),
        memora.delete_organization(org.org_id),
    ):
        await step("write", write)
    with pytest.raises(OrganizationNotFound):
        await memora.get_organization(org.org_id)
    assert neo4j_driver.execute_query("MATCH (n) RETURN count(n) AS n").records[0]["n"] == 0
    assert len(bookmarks) == 1, "one bookmark manager chains all units of work of the interface"
    await memora.close()


@pytest.mark.parametrize("twin", ["async", "sync"])
async def test_direct_uri_reuses_sessions_without_bookmarks_and_reads_its_writes(
    twin: str,
    neo4j_connection: Neo4jConnection,
    neo4j_driver: Driver,
    sessions: Sessions,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A ``bolt://`` driver talks to one server: no bookmarks travel, every call still
    reads what the call before it wrote, and calls in turn reuse one session per access
    mode. A statement that fails closes its session instead of returning it."""
    conn = neo4j_connection
    clear_database(neo4j_driver, conn.database)
    opened: list[str] = []
    for cls in (neo4j.AsyncDriver, neo4j.Driver):
        original = cls.session

        def session(self: Any, original: Callable[..., Any] = original, **config: Any) -> Any:
            opened.append(config["default_access_mode"])
            return original(self, **config)

        monkeypatch.setattr(cls, "session", session)
    memora = interface(twin, conn.uri, conn.username, conn.password, conn.database)
    await memora.setup()
    org = await memora.create_organization("Acme")
    for number in range(10):
        user = await memora.create_user(org.org_id, f"Ann {number}")
        assert (await memora.get_user(org.org_id, user.user_id)).user_name == f"Ann {number}"
        renamed = await memora.update_user(org.org_id, user.user_id, f"Bea {number}")
        assert renamed.user_name == f"Bea {number}"
        assert (await memora.get_user(org.org_id, user.user_id)).user_name == f"Bea {number}"
    users = await memora.get_all_org_users(org.org_id)
    assert sorted(found.user_name for found in users) == [f"Bea {n}" for n in range(10)]
    assert sessions, "the calls ran their statements"
    assert {manager for _, _, manager in sessions} == {None}
    assert sorted(opened).count(READ_ACCESS) == 1, opened
    assert sorted(opened).count(WRITE_ACCESS) <= 2, opened  # setup's own, and the calls'

    graph = memora.graph
    (link,) = links(graph.connection)
    (idle_reader,) = link.idle[(conn.database, False)]
    with pytest.raises(neo4j.exceptions.ClientError):
        await settle(graph.run(Call(Query("RETURN 1 / $zero AS n", {"zero": 0}), list)))
    assert link.idle[(conn.database, False)] == [], "the failed statement's session is not reused"
    assert idle_reader.closed()
    assert await settle(graph.run(Call(Query("RETURN 1 AS n", {}), list))) == [{"n": 1}]
    await memora.close()
    assert link.idle == {} and link.closed
    assert links(graph.connection) == []


async def _blocked_transactions(driver: Driver) -> int:
    """How many transactions wait for a lock right now."""
    records = driver.execute_query(
        "SHOW TRANSACTIONS YIELD status WHERE status STARTS WITH 'Blocked' RETURN count(*) AS n"
    ).records
    return int(records[0]["n"])


async def test_pool_size_and_acquisition_timeout_reach_the_driver(
    neo4j_connection: Neo4jConnection, neo4j_driver: Driver
) -> None:
    """With one connection in the pool, a call made while another unit of work holds it
    waits ``connection_acquisition_timeout`` and fails; an interface with the default pool
    is unaffected, and the first call completes once it can."""
    conn = neo4j_connection
    clear_database(neo4j_driver, conn.database)
    args = (conn.uri, conn.username, conn.password, conn.database)
    narrow = Neo4jGraphInterface(
        *args, max_connection_pool_size=1, connection_acquisition_timeout=0.5
    )
    wide = Neo4jGraphInterface(*args)
    await narrow.setup()
    org = await narrow.create_organization("Acme")
    user = await narrow.create_user(org.org_id, "Ann")
    with neo4j_driver.session(database=conn.database) as session:
        lock = session.begin_transaction()
        lock.run(
            "MATCH (u:User {org_id: $org, user_id: $user}) SET u.user_name = 'locked'",
            org=org.org_id,
            user=user.user_id,
        )
        waiting = asyncio.ensure_future(narrow.update_user(org.org_id, user.user_id, "Bea"))
        deadline = time.monotonic() + 60
        while await _blocked_transactions(neo4j_driver) == 0:
            assert time.monotonic() < deadline, "the update never waited for the lock"
            assert not waiting.done(), waiting
            await asyncio.sleep(0.05)
        started = time.monotonic()
        with pytest.raises(ConnectionAcquisitionTimeoutError):
            await narrow.get_organization(org.org_id)
        assert time.monotonic() - started >= 0.5
        assert (await wide.get_organization(org.org_id)).org_name == "Acme"
        lock.rollback()
    assert (await waiting).user_name == "Bea"
    assert (await narrow.get_user(org.org_id, user.user_id)).user_name == "Bea"
    await narrow.close()
    await wide.close()


def _user_agents(driver: Driver) -> list[str]:
    records = driver.execute_query("CALL dbms.listConnections() YIELD userAgent").records
    return [record["userAgent"] for record in records]


@pytest.mark.parametrize("twin", ["async", "sync"])
async def test_driver_config_reaches_the_driver_and_old_signatures_still_work(
    twin: str, neo4j_connection: Neo4jConnection, neo4j_driver: Driver
) -> None:
    conn = neo4j_connection
    clear_database(neo4j_driver, conn.database)
    args = (conn.uri, conn.username, conn.password, conn.database)
    agent = f"memora-ogm-test/{secrets.token_hex(4)}"
    configured = interface(twin, *args, driver_config={"user_agent": agent})
    positional = interface(twin, *args, None, False)
    named = interface(twin, *args, associated_vector_db=None, enable_logging=False)
    await configured.setup()
    org = await configured.create_organization("Acme")
    assert agent in _user_agents(neo4j_driver), "the connection announced the configured agent"
    for memora in (positional, named):
        assert (await memora.get_organization(org.org_id)).org_name == "Acme"
    for memora in (configured, positional, named):
        await memora.close()
    deadline = time.monotonic() + 30  # the server notices a closed socket a little later
    while agent in _user_agents(neo4j_driver):
        assert time.monotonic() < deadline, "close() closed that driver"
        await asyncio.sleep(0.1)


@pytest.fixture
def neomodel_thinks_enterprise(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """neomodel's process-wide edition cache says Enterprise, as if it had asked such a
    server first."""
    for database in (adb, db):
        monkeypatch.setattr(database, "_database_edition", "enterprise")
    yield


@pytest.mark.usefixtures("neomodel_thinks_enterprise")
@pytest.mark.parametrize("twin", ["async", "sync"])
async def test_setup_installs_keys_for_its_own_servers_edition(
    twin: str, neo4j_connection: Neo4jConnection, neo4j_driver: Driver
) -> None:
    conn = neo4j_connection
    clear_database(neo4j_driver, conn.database)
    for record in neo4j_driver.execute_query(
        "SHOW CONSTRAINTS YIELD name WHERE name STARTS WITH 'unique_' RETURN name"
    ).records:  # IF NOT EXISTS would hide the wrong kind behind an existing name
        neo4j_driver.execute_query(f"DROP CONSTRAINT `{record['name']}`")
    memora = interface(twin, conn.uri, conn.username, conn.password, conn.database)
    await memora.setup()
    await memora.migrate()
    edition = neo4j_driver.execute_query(
        "CALL dbms.components() YIELD edition RETURN edition"
    ).records[0]["edition"]
    types = {
        record["type"]
        for record in neo4j_driver.execute_query(
            "SHOW CONSTRAINTS YIELD name, type WHERE name STARTS WITH 'unique_' RETURN type"
        ).records
    }
    assert types == {"NODE_KEY" if edition == "enterprise" else "UNIQUENESS"}
    await memora.close()
