"""``from_neomodel``: either twin on the connection the application gave neomodel."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator

import pytest
from neo4j import Driver
from neomodel import adb, db, get_config

from memora_ogm import sync
from memora_ogm._async.interface import Neo4jGraphInterface
from memora_ogm.server import Neo4jConnection
from memora_ogm.testing import clear_database


@pytest.fixture
def empty_graph(neo4j_connection: Neo4jConnection, neo4j_driver: Driver) -> Driver:
    clear_database(neo4j_driver, neo4j_connection.database)
    return neo4j_driver


@pytest.fixture
async def app_adb(neo4j_connection: Neo4jConnection) -> AsyncIterator[None]:
    """neomodel's async ``adb`` connected the way an application does it."""
    await adb.set_connection(url=neo4j_connection.neomodel_url)
    yield
    await adb.close_connection()


@pytest.fixture
def app_db_from_settings(
    neo4j_connection: Neo4jConnection, monkeypatch: pytest.MonkeyPatch
) -> Iterator[None]:
    """Only neomodel's settings, as django_neomodel leaves them: ``db`` connects lazily."""
    db.close_connection()
    monkeypatch.setattr(get_config(), "database_url", neo4j_connection.neomodel_url)
    yield
    db.close_connection()


def _org_names(driver: Driver) -> list[str]:
    return [r["name"] for r in driver.execute_query("MATCH (o:Org) RETURN o.org_name AS name")[0]]


@pytest.mark.usefixtures("app_adb")
async def test_async_interface_uses_the_applications_adb(empty_graph: Driver) -> None:
    driver = adb.driver
    memora = Neo4jGraphInterface.from_neomodel()
    await memora.setup()
    org = await memora.create_organization("Acme")
    assert (await memora.get_organization(org.org_id)).org_name == "Acme"
    await memora.close()

    assert adb.driver is driver, "the application's connection stays open"
    assert _org_names(empty_graph) == ["Acme"]
    results, _ = await adb.cypher_query("RETURN 1")
    assert results == [[1]]


@pytest.mark.usefixtures("app_db_from_settings")
def test_sync_interface_connects_through_neomodel_settings(
    empty_graph: Driver, neo4j_connection: Neo4jConnection
) -> None:
    memora = sync.Neo4jGraphInterface.from_neomodel(database=neo4j_connection.database)
    memora.setup()
    org = memora.create_organization("Globex")
    user = memora.create_user(org.org_id, "Ann")
    assert [u.user_name for u in memora.get_all_org_users(org.org_id)] == ["Ann"]
    memora.close()

    assert db.driver is not None, "neomodel built its driver from the settings and keeps it"
    assert _org_names(empty_graph) == ["Globex"]
    assert memora.get_user(org.org_id, user.user_id).user_name == "Ann"
