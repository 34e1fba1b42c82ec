"""Fixtures for the facade: a connected ``Neo4jGraphInterface`` on an empty graph.

``memora`` is parametrised: every test that uses it runs against the async facade and
against the generated sync facade (dressed as async by :class:`AwaitableTwin`), so
the whole behavioural suite checks both twins without a second copy of any test.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest
from neo4j import Driver
from sync_adapter import AwaitableTwin

from memora_ogm import sync
from memora_ogm._async.interface import Neo4jGraphInterface
from memora_ogm.server import Neo4jConnection
from memora_ogm.testing import clear_database


@pytest.fixture
def driver(neo4j_driver: Driver) -> Driver:
    """A sync driver for the assertion queries of a test."""
    return neo4j_driver


@pytest.fixture(params=["async", "sync"])
async def memora(
    request: pytest.FixtureRequest, neo4j_connection: Neo4jConnection, neo4j_driver: Driver
) -> AsyncIterator[Any]:
    """The facade on an emptied graph after ``setup()``; the sync one uses neomodel's ``db``."""
    clear_database(neo4j_driver, neo4j_connection.database)
    conn = neo4j_connection
    args = (conn.uri, conn.username, conn.password, conn.database)
    interface: Any = (
        Neo4jGraphInterface(*args)
        if request.param == "async"
        else AwaitableTwin(sync.Neo4jGraphInterface(*args), Neo4jGraphInterface)
    )
    await interface.setup()
    yield interface
    await interface.close()
