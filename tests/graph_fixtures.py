"""Fixtures for the facade: a connected ``Neo4jGraphInterface`` on an empty graph."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
from neo4j import Driver

from memora_ogm._async.interface import Neo4jGraphInterface
from memora_ogm.server import Neo4jConnection
from memora_ogm.testing import clear_database


@pytest.fixture
def driver(neo4j_driver: Driver) -> Driver:
    """A sync driver for the assertion queries of a test."""
    return neo4j_driver


@pytest.fixture
async def memora(
    neo4j_connection: Neo4jConnection, neo4j_driver: Driver
) -> AsyncIterator[Neo4jGraphInterface]:
    clear_database(neo4j_driver, neo4j_connection.database)
    conn = neo4j_connection
    interface = Neo4jGraphInterface(conn.uri, conn.username, conn.password, conn.database)
    await interface.setup()
    yield interface
    await interface.close()
