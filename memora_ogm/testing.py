"""pytest plugin (entry point ``pytest11``): a real Neo4j for the whole test session,
wired to neomodel, for any project that installs memora-ogm. Its fixtures
(``neo4j_connection``, ``neo4j_driver``, ``neomodel_db``, ``neomodel_adb``,
``clean_neo4j``, ``second_neo4j_connection``, ``second_neo4j_driver``) are described in
``docs/usage.md``; whatever a fixture started is stopped when the session ends.
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Iterator, Mapping
from contextlib import contextmanager
from typing import TYPE_CHECKING

import pytest

from memora_ogm.server import Neo4jConnection, connect_or_start
from memora_ogm.server.connection import ENV_DATABASE, ENV_PASSWORD, ENV_URI, ENV_USERNAME
from memora_ogm.server.local import ENV_HEAP_MB, ENV_PAGECACHE_MB

if TYPE_CHECKING:
    from neo4j import Driver
    from neomodel.async_.database import AsyncDatabase
    from neomodel.sync_.database import Database

    from memora_ogm.engine.unit_of_work import UnitOfWork

CLEAN_BATCH_SIZE = 10_000
#: Environment variables naming the second server: ``NEO4J_SECOND_URI`` for ``NEO4J_URI``...
SECOND_SERVER_PREFIX = "NEO4J_SECOND_"
#: The embedded second server shares a small machine with the first.
SECOND_HEAP_MB = 512
SECOND_PAGECACHE_MB = 256


def clear_database(driver: Driver, database: str, batch_size: int = CLEAN_BATCH_SIZE) -> int:
    """Empty the graph (schema stays) by :func:`delete_everything`; returns nodes deleted."""
    from memora_ogm.engine.unit_of_work import UnitOfWork

    work = UnitOfWork()
    delete_everything(work, batch_size)
    query, params = work.compile()
    deleted = 0
    while True:
        records, _, _ = driver.execute_query(query, params, database_=database)
        (row,) = records
        deleted += int(row["deleted"])
        if row["emptied"]:
            return deleted


def delete_everything(work: UnitOfWork, limit: int) -> None:
    """One batch: ``limit`` relationships, then once none is left ``limit`` nodes (no batch
    grows with a degree). Outputs ``deleted`` (nodes) and ``emptied``."""
    from memora_ogm.engine import plan

    relationships, nodes = plan.Var("relationships"), plan.Var("nodes")
    batch = work.param(limit, "limit")
    every = plan.match(plan.cy(plan.node(), plan.hop(direction=1, var="r"), plan.node()))
    work.add(plan.Bind(relationships, plan.collect(every, plan.returning("r", limit=batch))))
    work.add(plan.Update(plan.foreach("r", relationships, plan.delete("r", detach=False))))
    rest = plan.cy(plan.size(relationships), f" < {batch}")
    some = plan.collect(plan.match(plan.node("n")), plan.returning("n", limit=batch))
    work.add(plan.Bind(nodes, plan.case(rest, some, "[]")))
    work.add(plan.Update(plan.foreach("node", nodes, plan.delete("node", detach=False))))
    work.output_value("deleted", plan.size(nodes))
    work.output_value("emptied", plan.cy(rest, " AND ", plan.size(nodes), f" < {batch}"))


@pytest.fixture(scope="session")
def neo4j_connection() -> Iterator[Neo4jConnection]:
    with connect_or_start() as conn:
        yield conn


@contextmanager
def second_server(
    first: Neo4jConnection, environ: Mapping[str, str] | None = None
) -> Iterator[Neo4jConnection]:
    """A Neo4j server other than ``first``, from the chain with ``NEO4J_SECOND_*`` for
    ``NEO4J_*``; whatever it started is stopped on exit."""
    env = dict(os.environ if environ is None else environ)
    for name in (ENV_URI, ENV_USERNAME, ENV_PASSWORD, ENV_DATABASE):
        env.pop(name, None)
        second = env.get(name.replace("NEO4J_", SECOND_SERVER_PREFIX, 1))
        if second:
            env[name] = second
    with connect_or_start(
        env,
        heap_mb=int(env.get(ENV_HEAP_MB) or SECOND_HEAP_MB),
        pagecache_mb=int(env.get(ENV_PAGECACHE_MB) or SECOND_PAGECACHE_MB),
    ) as conn:
        if (conn.uri, conn.database) == (first.uri, first.database):
            raise RuntimeError(f"the second Neo4j server is the first one ({conn.uri})")
        yield conn


@pytest.fixture(scope="session")
def second_neo4j_connection(neo4j_connection: Neo4jConnection) -> Iterator[Neo4jConnection]:
    with second_server(neo4j_connection) as conn:
        yield conn


@pytest.fixture(scope="session")
def second_neo4j_driver(second_neo4j_connection: Neo4jConnection) -> Iterator[Driver]:
    yield from _driver(second_neo4j_connection)


def _driver(conn: Neo4jConnection) -> Iterator[Driver]:
    from neo4j import GraphDatabase

    driver = GraphDatabase.driver(conn.uri, auth=conn.auth)
    try:
        driver.verify_connectivity()
        yield driver
    finally:
        driver.close()


@pytest.fixture(scope="session")
def neo4j_driver(neo4j_connection: Neo4jConnection) -> Iterator[Driver]:
    yield from _driver(neo4j_connection)


@pytest.fixture(scope="session")
def neomodel_db(neo4j_connection: Neo4jConnection) -> Iterator[Database]:
    from neomodel import db

    db.set_connection(url=neo4j_connection.neomodel_url)
    try:
        yield db
    finally:
        db.close_connection()


try:  # memora-ogm installed without its test extra still loads this plugin
    import pytest_asyncio
except ImportError:  # pragma: no cover
    pass
else:

    @pytest_asyncio.fixture(scope="session", loop_scope="session")
    async def neomodel_adb(neo4j_connection: Neo4jConnection) -> AsyncIterator[AsyncDatabase]:
        from neomodel import adb

        await adb.set_connection(url=neo4j_connection.neomodel_url)
        try:
            yield adb
        finally:
            await adb.close_connection()


@pytest.fixture
def clean_neo4j(neo4j_driver: Driver, neo4j_connection: Neo4jConnection) -> Driver:
    clear_database(neo4j_driver, neo4j_connection.database)
    return neo4j_driver
