"""``memora_ogm.contrib.fastapi``: the lifespan and ``get_interface`` in an app, and the
FastAPI example under ``uvicorn --workers 2``, on a real Neo4j and a Qdrant server."""

from __future__ import annotations

import os
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Annotated, Any

import pytest
import web_servers
from fastapi import Depends, FastAPI, Request
from fastapi.testclient import TestClient
from graph_fixtures import links
from neo4j import Driver
from qdrant_standin import StandIn
from served_tenants import serve_tenants
from web_servers import EXAMPLES, STOP_BOUND, serve

from memora_ogm import Neo4jGraphInterface, cli
from memora_ogm.contrib.fastapi import get_interface, memora_lifespan
from memora_ogm.server import Neo4jConnection

Memora = Annotated[Neo4jGraphInterface, Depends(get_interface)]


def test_the_lifespan_composes_with_the_apps_own_and_closes_the_facade(
    neo4j_connection: Neo4jConnection, clean_neo4j: Driver, qdrant_server: tuple[str, StandIn]
) -> None:
    """The app's own lifespan starts with the facade open (and may use it), its state
    reaches the requests next to the facade, and it stops before the facade closes; a
    view saves through ``Depends(get_interface)``; after shutdown the facade holds no
    driver."""
    events: list[str] = []

    @asynccontextmanager
    async def own(app: FastAPI) -> AsyncIterator[dict[str, Any]]:
        org = await app.state.memora_ogm.create_organization("Made at startup")
        events.append("own started")
        yield {"startup_org": org.org_id}
        events.append("own stopped")

    settings = {**neo4j_connection.env(), "QDRANT_URL": qdrant_server[0], "EMBEDDER": "hashing"}
    app = FastAPI(lifespan=memora_lifespan(own, settings))

    @app.post("/orgs/{name}")
    async def create(name: str, request: Request, memora: Memora) -> dict[str, str]:
        org = await memora.create_organization(name)
        startup = await memora.get_organization(request.state.startup_org)
        return {"org_id": org.org_id, "startup": startup.org_name}

    with TestClient(app) as client:
        memora = app.state.memora_ogm
        assert events == ["own started"]
        reply = client.post("/orgs/Acme")
        assert reply.status_code == 200 and reply.json()["startup"] == "Made at startup"
        assert links(memora.graph.connection), "the facade is open while the app runs"
    assert events == ["own started", "own stopped"]
    assert links(memora.graph.connection) == [], "closed at shutdown"
    names = clean_neo4j.execute_query("MATCH (o:Org) RETURN o.org_name AS name ORDER BY name")
    assert [record["name"] for record in names.records] == ["Acme", "Made at startup"]


def test_get_interface_without_the_lifespan_says_how_to_add_it() -> None:
    app = FastAPI()

    @app.get("/")
    async def view(memora: Memora) -> None:
        raise AssertionError("not reached")

    with (
        TestClient(app) as client,
        pytest.raises(RuntimeError, match=r"FastAPI\(lifespan=memora_ogm\.contrib\.fastapi"),
    ):
        client.get("/")


def test_uvicorn_workers_serve_every_tenant_its_own_then_stop_on_sigterm(
    neo4j_connection: Neo4jConnection, clean_neo4j: Driver, qdrant_server: tuple[str, StandIn]
) -> None:
    """``examples/fastapi_app.py`` under ``uvicorn --workers 2``, set up by ``memora-ogm
    setup``: each worker's lifespan opens its facade. 16 client threads send six tenants'
    3,000 requests (saves with a memory through the shared Qdrant server, searches,
    reads); no answer is another tenant's. SIGTERM ends the master and both workers
    within ``STOP_BOUND`` seconds."""
    url, held = qdrant_server
    settings = {**neo4j_connection.env(), "QDRANT_URL": url, "EMBEDDER": "hashing"}
    assert cli.main(["setup", "--qdrant-url", url], environ=settings) == 0
    command = [sys.executable, "-m", "uvicorn", "fastapi_app:app", "--workers", "2"]
    command += ["--host", "127.0.0.1", "--port", "{port}", "--no-access-log"]
    env = {**os.environ, **settings, "PYTHONPATH": os.pathsep.join(sys.path)}
    with serve(command, env, "/orgs/none/users/none", cwd=EXAMPLES) as served:
        assert serve_tenants(served.url, neo4j_connection, clean_neo4j, held) == []
        assert len(web_servers.children(served.process.pid)) >= 2
        assert served.stop() < STOP_BOUND
