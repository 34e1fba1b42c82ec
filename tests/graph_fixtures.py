"""Fixtures for the facade: a connected ``Neo4jGraphInterface`` on an empty graph.

``memora`` is parametrised: every test that uses it runs against the async facade and
against the generated sync facade (dressed as async by :class:`AwaitableTwin`), so
the whole behavioural suite checks both twins without a second copy of any test.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from neo4j import Driver
from neomodel import adb, db
from sync_adapter import AwaitableTwin

from memora_ogm import fork, sync
from memora_ogm._async.connection import point_neomodel as point_async
from memora_ogm._async.graph import Work as AsyncWork
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


def links(connection: Any) -> list[Any]:
    """The links of a graph's connection in this process, on every event loop."""
    return [
        link
        for (generation, _), link in connection._links.items()
        if generation == fork.generation()
    ]


@contextmanager
def neomodel_on(work: Any, driver: Any) -> Iterator[None]:
    """Run neomodel's queries of this context on the explicit transaction of ``work`` (a
    ``Work`` of either twin) and on ``driver``, its graph's, through neomodel's private
    per-context transaction slot. The package never binds neomodel so: tests show that
    the node classes' own queries may still join the facade's transactions."""
    neomodel_db, point = (
        (adb, point_async) if isinstance(work, AsyncWork) else (db, sync.point_neomodel)
    )
    undo = point(driver, work.graph.database)
    saved = neomodel_db._active_transaction
    neomodel_db._active_transaction = work.transaction
    try:
        yield
    finally:
        neomodel_db._active_transaction = saved
        undo()
