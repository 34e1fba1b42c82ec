"""Fixtures for the facade: a connected ``Neo4jGraphInterface`` on an empty graph."""

from __future__ import annotations

import os
from collections.abc import AsyncIterator

import pytest
from neo4j import GraphDatabase

from memora_ogm._async.interface import Neo4jGraphInterface


def _settings() -> tuple[str, str, str, str]:
    return (
        os.environ["NEO4J_URI"],
        os.environ.get("NEO4J_USERNAME", "neo4j"),
        os.environ["NEO4J_PASSWORD"],
        os.environ.get("NEO4J_DATABASE", "neo4j"),
    )


@pytest.fixture
def driver():  # type: ignore[no-untyped-def]
    uri, user, password, _ = _settings()
    with GraphDatabase.driver(uri, auth=(user, password)) as d:
        yield d


@pytest.fixture
async def memora(driver) -> AsyncIterator[Neo4jGraphInterface]:  # type: ignore[no-untyped-def]
    driver.execute_query("MATCH (n) CALL (n) { DETACH DELETE n } IN TRANSACTIONS OF 5000 ROWS")
    uri, user, password, database = _settings()
    interface = Neo4jGraphInterface(uri, user, password, database)
    await interface.setup()
    yield interface
    await interface.close()
