"""neomodel's connection stays the application's (issue 21).

An interface never puts its driver into neomodel's process-wide slot (``adb.driver`` /
``db.driver``), and the application's ``close_connection()`` never closes an interface's
driver: whether the application configures neomodel (as django_neomodel does, through
``get_config().database_url``) before or after creating the interface, for the same
server or another one. Node-class calls inside the facade's units of work still run on
the interface's transaction.
"""

from __future__ import annotations

import asyncio
import socket
from collections.abc import AsyncIterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any
from urllib.parse import urlsplit

import pytest
from graph_fixtures import links, neomodel_on
from neo4j import Driver, GraphDatabase
from neo4j.exceptions import AuthError, ServiceUnavailable
from neomodel import adb, db, get_config
from sync_adapter import AwaitableTwin

from memora_ogm import sync
from memora_ogm._async.graph import Work
from memora_ogm._async.interface import Neo4jGraphInterface
from memora_ogm._async.nodes import Org as AsyncOrg
from memora_ogm._sync.nodes import Org as SyncOrg
from memora_ogm.engine.call import Query
from memora_ogm.server import Neo4jConnection
from memora_ogm.testing import clear_database

TWINS = ["async", "sync"]


class App:
    """The application's own neomodel, of one twin (``adb`` or ``db``)."""

    def __init__(self, twin: str) -> None:
        self.twin = twin

    def driver(self) -> Any:
        """neomodel's driver slot as the application sees it."""
        return adb.driver if self.twin == "async" else db.driver

    async def query(self, query: str) -> list[list[Any]]:
        if self.twin == "async":
            rows, _ = await adb.cypher_query(query)
        else:
            rows, _ = db.cypher_query(query)
        return rows

    async def connect(self, url: str) -> None:
        if self.twin == "async":
            await adb.set_connection(url=url)
        else:
            db.set_connection(url=url)

    async def close(self) -> None:
        if self.twin == "async":
            await adb.close_connection()
        else:
            db.close_connection()


@pytest.fixture
async def settings(monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[pytest.MonkeyPatch]:
    """neomodel with no connection and no settings, as an application starts; both twins'
    connections are closed again afterwards (monkeypatch restores the settings)."""
    config = get_config()
    monkeypatch.setattr(config, "database_url", None)
    monkeypatch.setattr(config, "driver", None)
    await adb.close_connection()
    db.close_connection()
    yield monkeypatch
    await adb.close_connection()
    db.close_connection()


def interface(twin: str, conn: Neo4jConnection) -> Any:
    args = (conn.uri, conn.username, conn.password, conn.database)
    if twin == "async":
        return Neo4jGraphInterface(*args)
    return AwaitableTwin(sync.Neo4jGraphInterface(*args), Neo4jGraphInterface)


def ours(memora: Any) -> set[Any]:
    """The drivers the interface opened."""
    return {link.driver for link in links(memora.graph.connection)}


def _url(conn: Neo4jConnection, username: str, password: str, port: int | None = None) -> str:
    parts = urlsplit(conn.uri)
    return f"{parts.scheme}://{username}:{password}@{parts.hostname}:{port or parts.port}/neo4j"


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
    return port


def elsewhere(conn: Neo4jConnection, where: str) -> tuple[str, type[Exception]]:
    """The application's own settings, and the error its queries raise on them: a port
    nothing listens on, or a user the server does not know (not the interface's user,
    whom failed logins would lock out)."""
    if where == "another server":
        return _url(conn, conn.username, conn.password, _free_port()), ServiceUnavailable
    return _url(conn, "memora_app", "not-the-password"), AuthError


async def facade_calls(memora: Any) -> str:
    """Reads and writes, in auto-commit statements and in units of work that run
    neomodel's node classes (the migration runner); returns the organisation's id."""
    await memora.setup()
    org = await memora.create_organization("Acme")
    user = await memora.create_user(org.org_id, "Ann")
    assert [u.user_id for u in await memora.get_all_org_users(org.org_id)] == [user.user_id]
    await memora.migrate()
    assert (await memora.get_organization(org.org_id)).org_name == "Acme"
    return str(org.org_id)


def org_names(driver: Driver, conn: Neo4jConnection) -> list[str]:
    records, _, _ = driver.execute_query(
        "MATCH (o:Org) RETURN o.org_name AS name ORDER BY name", database_=conn.database
    )
    return [record["name"] for record in records]


@pytest.mark.usefixtures("settings")
@pytest.mark.parametrize("where", ["another server", "other credentials"])
@pytest.mark.parametrize("configured", ["before", "after"])
@pytest.mark.parametrize("twin", TWINS)
async def test_the_applications_neomodel_fails_on_its_own_settings(
    twin: str,
    configured: str,
    where: str,
    settings: pytest.MonkeyPatch,
    neo4j_connection: Neo4jConnection,
    clean_neo4j: Driver,
) -> None:
    """Configured like django_neomodel configures it, for another server or with other
    credentials: after facade calls, the application's query fails on those settings
    instead of running on the interface's driver, which neomodel never holds."""
    url, error = elsewhere(neo4j_connection, where)
    app = App(twin)
    if configured == "before":
        settings.setattr(get_config(), "database_url", url)
    memora = interface(twin, neo4j_connection)
    try:
        org_id = await facade_calls(memora)
        if configured == "after":
            settings.setattr(get_config(), "database_url", url)
            await memora.create_organization("Globex")
        with pytest.raises(error):
            await app.query("RETURN 1")
        own = app.driver()
        assert own is not None and own not in ours(memora), "built from its own settings"
        assert (await memora.get_organization(org_id)).org_name == "Acme"
    finally:
        await memora.close()
    expected = ["Acme", "Globex"] if configured == "after" else ["Acme"]
    assert org_names(clean_neo4j, neo4j_connection) == expected


@pytest.mark.usefixtures("settings")
@pytest.mark.parametrize("configured", ["before", "after"])
@pytest.mark.parametrize("twin", TWINS)
async def test_the_applications_neomodel_on_the_same_server_runs_on_its_own_driver(
    twin: str,
    configured: str,
    settings: pytest.MonkeyPatch,
    neo4j_connection: Neo4jConnection,
    clean_neo4j: Driver,
) -> None:
    """The application's neomodel on the interface's server: its queries run on the
    driver it built from its settings, and its normal teardown (``close_connection()``)
    leaves the interface working, reads and writes, on its own driver."""
    app = App(twin)
    url = neo4j_connection.neomodel_url
    if configured == "before":
        settings.setattr(get_config(), "database_url", url)
    memora = interface(twin, neo4j_connection)
    try:
        org_id = await facade_calls(memora)
        if configured == "after":
            settings.setattr(get_config(), "database_url", url)
        assert await app.query("CREATE (:Org {org_name: 'by the app'}) RETURN 1") == [[1]]
        own = app.driver()
        await memora.create_user(org_id, "Bob")
        await app.close()  # the application's normal teardown
        assert (await memora.get_organization(org_id)).org_name == "Acme"
        await memora.create_organization("Globex")
        assert sorted(u.user_name for u in await memora.get_all_org_users(org_id)) == ["Ann", "Bob"]
        await memora.migrate()
        assert own is not None and own not in ours(memora), "built from its own settings"
        assert app.driver() is None, "the interface does not lend neomodel its driver"
    finally:
        await memora.close()
    assert org_names(clean_neo4j, neo4j_connection) == ["Acme", "Globex", "by the app"]


@pytest.mark.usefixtures("settings")
@pytest.mark.parametrize("twin", TWINS)
async def test_the_application_closing_its_connection_leaves_the_interface_working(
    twin: str, neo4j_connection: Neo4jConnection, clean_neo4j: Driver
) -> None:
    """The application connected explicitly (``set_connection``) and closes at teardown,
    while the interface keeps serving: the interface never takes the emptied slot."""
    app = App(twin)
    await app.connect(neo4j_connection.neomodel_url)
    memora = interface(twin, neo4j_connection)
    try:
        org_id = await facade_calls(memora)
        await app.close()
        await memora.create_user(org_id, "Bob")
        assert sorted(u.user_name for u in await memora.get_all_org_users(org_id)) == [
            "Ann",
            "Bob",
        ]
        await memora.migrate()
        assert app.driver() is None
        with pytest.raises(ValueError, match="No Neo4j connection has been configured"):
            await app.query("RETURN 1")
    finally:
        await memora.close()
    assert org_names(clean_neo4j, neo4j_connection) == ["Acme"]


@pytest.mark.usefixtures("settings")
async def test_the_facade_passes_its_transaction_and_leaves_neomodel_alone(
    neo4j_connection: Neo4jConnection, clean_neo4j: Driver
) -> None:
    """A facade transaction is passed to its work explicitly: neomodel's context (its
    session, transaction, database and driver) stays the application's throughout, and
    its connection manager keeps neomodel's own class until something binds it."""
    memora = Neo4jGraphInterface.from_connection(neo4j_connection)
    seen: dict[str, Any] = {}

    async def work(transaction: Work) -> None:
        seen["bound"] = (adb._session, adb._active_transaction, adb.driver)
        seen["org"] = await transaction.send(
            Query(
                "CREATE (o:Org {org_id: $id, org_name: 'Initech'}) RETURN o.org_id AS id",
                {"id": "o-1"},
            )
        )

    try:
        await memora.setup()
        manager_class = type(adb._connection)
        await memora.graph.transaction(work)
        await memora.create_organization("Acme")
        assert seen == {"bound": (None, None, None), "org": [{"id": "o-1"}]}
        assert type(adb._connection) is manager_class
    finally:
        await memora.close()
    assert org_names(clean_neo4j, neo4j_connection) == ["Acme", "Initech"]


@pytest.mark.usefixtures("settings")
async def test_node_classes_in_a_unit_of_work_run_on_its_transaction_only_there(
    neo4j_connection: Neo4jConnection, clean_neo4j: Driver
) -> None:
    """Inside a unit of work neomodel sees the unit's driver and transaction, in that
    task only: a concurrent task sees neomodel's own, empty slot, and a rolled-back unit
    leaves nothing."""
    memora = Neo4jGraphInterface.from_connection(neo4j_connection)
    seen: dict[str, Any] = {}
    inside, done = asyncio.Event(), asyncio.Event()

    async def save(work: Work) -> None:
        with neomodel_on(work, await memora.graph.driver()):
            await AsyncOrg(org_id="org-1", org_name="Initech").save()
            seen["inside"] = adb.driver
            inside.set()
            await done.wait()

    async def meanwhile() -> None:
        await inside.wait()
        seen["meanwhile"] = adb.driver
        done.set()

    async def fail(work: Work) -> None:
        with neomodel_on(work, await memora.graph.driver()):
            await AsyncOrg(org_id="org-2", org_name="Rolled back").save()
            raise RuntimeError("the unit of work fails")

    try:
        await memora.setup()
        await asyncio.gather(memora.graph.transaction(save), meanwhile())
        assert seen["inside"] in ours(memora)
        assert seen["meanwhile"] is None
        with pytest.raises(RuntimeError, match="the unit of work fails"):
            await memora.graph.transaction(fail)
        assert adb.driver is None
        assert (await memora.get_organization("org-1")).org_name == "Initech"
    finally:
        await memora.close()
    assert org_names(clean_neo4j, neo4j_connection) == ["Initech"]


@pytest.mark.usefixtures("settings")
def test_sync_node_classes_in_a_unit_of_work_run_on_its_transaction_only_there(
    neo4j_connection: Neo4jConnection, clean_neo4j: Driver
) -> None:
    """The sync twin: a concurrent thread sees neomodel's own, empty slot."""
    memora = sync.Neo4jGraphInterface.from_connection(neo4j_connection)
    seen: dict[str, Any] = {}

    def save(work: Any) -> None:
        with neomodel_on(work, memora.graph.driver()):
            SyncOrg(org_id="org-1", org_name="Initech").save()
            seen["inside"] = db.driver
            with ThreadPoolExecutor(max_workers=1) as pool:
                seen["meanwhile"] = pool.submit(lambda: db.driver).result()

    def fail(work: Any) -> None:
        with neomodel_on(work, memora.graph.driver()):
            SyncOrg(org_id="org-2", org_name="Rolled back").save()
            raise RuntimeError("the unit of work fails")

    try:
        memora.setup()
        memora.graph.transaction(save)
        assert seen["inside"] in ours(memora)
        assert seen["meanwhile"] is None
        with pytest.raises(RuntimeError, match="the unit of work fails"):
            memora.graph.transaction(fail)
        assert db.driver is None
        assert memora.get_organization("org-1").org_name == "Initech"
    finally:
        memora.close()
    assert org_names(clean_neo4j, neo4j_connection) == ["Initech"]


@pytest.mark.usefixtures("settings")
@pytest.mark.parametrize("twin", TWINS)
async def test_from_neomodel_next_to_an_explicit_interface_uses_the_applications_driver(
    twin: str, settings: pytest.MonkeyPatch, neo4j_connection: Neo4jConnection
) -> None:
    """An explicit interface runs first; a ``from_neomodel()`` interface then runs on the
    driver neomodel builds from the application's settings, which the explicit interface
    never touched, and closing it leaves that driver open."""
    with GraphDatabase.driver(neo4j_connection.uri, auth=neo4j_connection.auth) as driver:
        clear_database(driver, neo4j_connection.database)
    settings.setattr(get_config(), "database_url", neo4j_connection.neomodel_url)
    app = App(twin)
    explicit = interface(twin, neo4j_connection)
    borrowing = (
        Neo4jGraphInterface.from_neomodel(neo4j_connection.database)
        if twin == "async"
        else AwaitableTwin(
            sync.Neo4jGraphInterface.from_neomodel(neo4j_connection.database),
            Neo4jGraphInterface,
        )
    )
    try:
        org_id = await facade_calls(explicit)
        assert app.driver() is None
        assert (await borrowing.get_organization(org_id)).org_name == "Acme"
        own = app.driver()
        assert own is not None and own not in ours(explicit)
        assert ours(borrowing) == {own}
        await borrowing.close()
        assert app.driver() is own and await app.query("RETURN 1") == [[1]]
    finally:
        await explicit.close()
        await borrowing.close()
