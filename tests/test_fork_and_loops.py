"""Interfaces shared across a fork, across event loops, and switched to another database
(issue 20, items 1, 3 and 8).

A fork hands the parent's pooled connections to every child; a child that used them
would read other processes' answers (another tenant's records). An async driver belongs
to the event loop that opened it; ``asyncio.run`` per call, or two loops in two threads,
must each get their own. A kept session must never outlive a change of ``database``.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, TypeVar

import neo4j
import pytest
import web_servers
from graph_fixtures import links
from neo4j import Driver
from qdrant_standin import StandIn
from served_tenants import serve_tenants
from test_connections import interface
from web_servers import EXAMPLES, STOP_BOUND, example, serve

from memora_ogm._async.interface import Neo4jGraphInterface
from memora_ogm.server import Neo4jConnection
from memora_ogm.testing import clear_database

T = TypeVar("T")
TESTS = Path(__file__).resolve().parent
#: Calls per worker of each process in the fork race (4 workers, 4 processes).
FORK_ROUNDS = 150


def _environment(conn: Neo4jConnection) -> dict[str, str]:
    return {**os.environ, **conn.env(), "PYTHONPATH": os.pathsep.join(sys.path)}


def _users_per_org(driver: Driver) -> dict[str, int]:
    records = driver.execute_query(
        "MATCH (u:User)-[:BELONGS_TO]->(o:Org) RETURN o.org_id AS org, count(u) AS users"
    ).records
    return {record["org"]: record["users"] for record in records}


@pytest.mark.parametrize("twin", ["sync", "async"])
def test_forked_children_and_their_parent_each_get_only_their_own_answers(
    twin: str, neo4j_connection: Neo4jConnection, clean_neo4j: Driver
) -> None:
    """An interface made and used by several threads before ``os.fork()``; then three
    children and the parent read their own organisation and user and create and read
    back users, from four workers each. Every answer is the process's own, no call
    fails, and every user each process created is in the graph, in its organisation."""
    done = subprocess.run(
        [sys.executable, str(TESTS / "fork_race.py"), twin, str(FORK_ROUNDS)],
        env=_environment(neo4j_connection),
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    summaries = json.loads(done.stdout.strip().splitlines()[-1])
    expected_calls = 4 * (2 * FORK_ROUNDS + FORK_ROUNDS // 10)
    assert [summary["process"] for summary in summaries] == [
        "parent",
        "child 1",
        "child 2",
        "child 3",
    ]
    for summary in summaries:
        assert (summary["calls"], summary["wrong"], summary["errors"]) == (
            expected_calls,
            0,
            {},
        ), summary
    users = _users_per_org(clean_neo4j)
    created = 4 * (FORK_ROUNDS // 10)
    assert {summary["org_id"]: users[summary["org_id"]] for summary in summaries} == {
        summary["org_id"]: 1 + created for summary in summaries
    }


def test_a_preforked_flask_app_serves_every_tenant_its_own_then_stops_on_sigterm(
    neo4j_connection: Neo4jConnection, clean_neo4j: Driver, qdrant_server: tuple[str, StandIn]
) -> None:
    """The Flask example's app factory (``memora_ogm.contrib.flask``) under ``gunicorn
    --preload -w 4``, set up by ``flask memora-ogm setup``: the app is built in the master,
    each worker opens its own facade on its first request. 16 client threads send six
    tenants' 3,000 requests (saves with a memory through the shared Qdrant server, searches,
    reads); no answer is another tenant's. Then a deploy's restart: SIGTERM to the master,
    and master and workers end by a normal exit within ``STOP_BOUND`` seconds, not by the
    master's SIGKILL after its 30 s graceful timeout (onnxruntime 1.29+ hung every worker
    in ``exit()``)."""
    url, held = qdrant_server
    settings = {**neo4j_connection.env(), "QDRANT_URL": url, "EMBEDDER": "hashing"}
    app = example("flask_app").create_app(
        {f"MEMORA_OGM_{name}": value for name, value in settings.items()}
    )
    assert app.test_cli_runner().invoke(args=["memora-ogm", "setup"]).exit_code == 0
    command = [
        "gunicorn",
        "--preload",
        "-w",
        "4",
        "-b",
        "127.0.0.1:{port}",
        "flask_app:create_app()",
    ]
    env = {**_environment(neo4j_connection), **settings}
    with serve([sys.executable, "-m", *command], env, "/orgs/none", cwd=EXAMPLES) as served:
        assert serve_tenants(served.url, neo4j_connection, clean_neo4j, held) == []
        assert len(web_servers.children(served.process.pid)) == 4
        assert served.stop() < STOP_BOUND
        assert served.process.returncode == 0


def _in_thread(work: Callable[[], T]) -> T:
    """``work()`` in a thread of its own, so that its ``asyncio.run`` loops are the only
    ones of that thread (the test session's loop stays untouched)."""
    with ThreadPoolExecutor(1) as thread:
        return thread.submit(work).result(timeout=120)


def _links(memora: Neo4jGraphInterface) -> list[Any]:
    return links(memora.graph.connection)


def test_an_async_interface_works_from_asyncio_run_per_call(
    neo4j_connection: Neo4jConnection, clean_neo4j: Driver
) -> None:
    """Each ``asyncio.run`` is a new loop: every call gets a driver of its loop, that
    driver is closed when its loop shuts down, and the final ``close()`` runs clean."""
    conn = neo4j_connection
    memora = Neo4jGraphInterface(conn.uri, conn.username, conn.password, conn.database)

    def calls() -> list[str]:
        org = asyncio.run(memora.create_organization("Acme"))
        names = []
        for number in range(10):
            user = asyncio.run(memora.create_user(org.org_id, f"Ann {number}"))
            names.append(asyncio.run(memora.get_user(org.org_id, user.user_id)).user_name)
            assert all(link.closed for link in _links(memora)), "closed with its loop"
        names.append(asyncio.run(memora.get_organization(org.org_id)).org_name)
        asyncio.run(memora.close())
        return names

    assert _in_thread(calls) == [f"Ann {number}" for number in range(10)] + ["Acme"]
    assert _links(memora) == []
    assert _users_per_org(clean_neo4j) == {
        clean_neo4j.execute_query("MATCH (o:Org) RETURN o.org_id AS id").records[0]["id"]: 10
    }


def test_an_async_interface_serves_two_loops_in_two_threads_at_once(
    neo4j_connection: Neo4jConnection, clean_neo4j: Driver
) -> None:
    """Two threads, each with its own loop running 40 calls on one interface at the same
    time: each loop gets its own driver, every answer is right, and ``close()`` from a
    third loop closes the driver of the loop still running and forgets the closed ones."""
    conn = neo4j_connection
    memora = Neo4jGraphInterface(conn.uri, conn.username, conn.password, conn.database)
    org = _in_thread(lambda: asyncio.run(memora.create_organization("Acme")))
    start = threading.Barrier(2)
    stop = threading.Event()
    answered = threading.Event()

    async def session(label: str, linger: bool) -> list[str]:
        start.wait(timeout=60)
        names = []
        for number in range(20):
            user = await memora.create_user(org.org_id, f"{label} {number}")
            names.append((await memora.get_user(org.org_id, user.user_id)).user_name)
        if linger:
            answered.set()
        while linger and not stop.is_set():
            await asyncio.sleep(0.05)  # keeps this loop, and its driver, alive
        return names

    with ThreadPoolExecutor(2) as threads:
        lingering = threads.submit(asyncio.run, session("Bea", linger=True))
        done = threads.submit(asyncio.run, session("Cy", linger=False))
        try:
            assert done.result(timeout=120) == [f"Cy {number}" for number in range(20)]
            assert answered.wait(timeout=120)
            open_links = [link for link in _links(memora) if not link.closed]
            assert len(open_links) == 1, "the lingering loop's driver is still open"
            _in_thread(lambda: asyncio.run(memora.close()))
            assert open_links[0].closed, "close() closed it on its own, running loop"
        finally:
            stop.set()  # never leave the lingering loop running
        assert lingering.result(timeout=120) == [f"Bea {number}" for number in range(20)]
    assert _links(memora) == []
    assert sum(_users_per_org(clean_neo4j).values()) == 40


@pytest.mark.parametrize("twin", ["async", "sync"])
async def test_assigning_database_takes_effect_for_every_later_call(
    twin: str, neo4j_connection: Neo4jConnection, neo4j_driver: Driver
) -> None:
    """After ``database`` is assigned, reads and writes run on the new database, not on
    the sessions kept for the old one; assigning it back works again."""
    conn = neo4j_connection
    clear_database(neo4j_driver, conn.database)
    memora = interface(twin, conn.uri, conn.username, conn.password, conn.database)
    org = await memora.create_organization("Acme")
    assert [found.org_id for found in await memora.get_all_organizations()] == [org.org_id]
    assert (await memora.get_organization(org.org_id)).org_name == "Acme"
    memora.database = "nosuchdatabase"
    for call in (
        lambda: memora.get_all_organizations(),
        lambda: memora.get_organization(org.org_id),
        lambda: memora.create_organization("Elsewhere"),
    ):
        with pytest.raises(neo4j.exceptions.ClientError) as raised:
            await call()
        assert raised.value.code == "Neo.ClientError.Database.DatabaseNotFound"
    memora.database = conn.database
    assert [found.org_name for found in await memora.get_all_organizations()] == ["Acme"]
    await memora.close()
    count = neo4j_driver.execute_query("MATCH (o:Org) RETURN count(o) AS n").records[0]["n"]
    assert count == 1, "nothing was written while the database was another"
