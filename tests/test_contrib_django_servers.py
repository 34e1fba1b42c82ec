"""The quick start's project (docs/django.md) under the servers Django apps deploy on.

Six tenants talk to it at once, 16 client threads, 3,000 requests per server: every
answer must be its own tenant's, every saved memory must be in the graph afterwards, and
SIGTERM must end the master and every worker within ``STOP_BOUND`` seconds. Under
``--preload`` the master has used the facade before it forks.
"""

from __future__ import annotations

import http.client
import json
import sys
import threading
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

import pytest
from django_quickstart import project_env, quickstart_project
from web_servers import serve

from memora_ogm import sync
from memora_ogm.server import Neo4jConnection

TENANTS, REQUESTS, CLIENT_THREADS = 6, 3000, 16
#: One request in this many saves a conversation; the others read the memories.
SAVE_EVERY = 10

GUNICORN = [sys.executable, "-m", "gunicorn", "mysite.wsgi", "-w", "4", "-b", "127.0.0.1:{port}"]
UVICORN = [sys.executable, "-m", "uvicorn", "mysite.asgi:application", "--workers", "2"]
#: A gunicorn config whose master uses the facade after loading the app and before it
#: forks the workers: each worker must open its own instead of sharing the master's.
MASTER_USES_THE_FACADE = """
def when_ready(server):
    from memora_ogm.contrib.django import get_interface

    get_interface().get_all_organizations()
"""
SERVERS = {
    "gunicorn": (GUNICORN, ""),
    "gunicorn-preload": ([*GUNICORN, "--preload", "-c", "master_uses_the_facade.py"], ""),
    "uvicorn": ([*UVICORN, "--host", "127.0.0.1", "--port", "{port}"], "/async"),
}


class Client(threading.local):
    """One kept-alive connection per client thread (reopened when the server closes it)."""

    def __init__(self, url: str) -> None:
        self.connection = http.client.HTTPConnection(urlsplit(url).netloc, timeout=30)

    def call(self, method: str, path: str, body: dict[str, str] | None = None) -> Any:
        data = json.dumps(body) if body is not None else None
        self.connection.request(method, path, data, {"Content-Type": "application/json"})
        response = self.connection.getresponse()
        payload = response.read()
        if response.will_close:
            self.connection.close()
        assert response.status in (200, 201), (path, response.status, payload[:500])
        return json.loads(payload)


@dataclass(frozen=True)
class Tenant:
    name: str
    org_id: str
    agent_id: str
    user_id: str

    def path(self, prefix: str) -> str:
        return f"{prefix}/orgs/{self.org_id}/agents/{self.agent_id}/users/{self.user_id}/memories"


def talk(client: Client, tenant: Tenant, prefix: str, turn: int) -> list[str]:
    """One request of ``tenant``: a save, or a read; what in the answer is not its own."""
    if turn % SAVE_EVERY == 0:
        said = {"said": f"turn {turn}", "learnt": f"{tenant.name} fact {turn}"}
        client.call("POST", tenant.path(prefix), said)
        return []
    answer = client.call("GET", tenant.path(prefix))
    return [
        memory["memory"]
        for memory in answer["memories"]
        if (memory["org_id"], memory["user_id"]) != (tenant.org_id, tenant.user_id)
        or not memory["memory"].startswith(f"{tenant.name} fact ")
    ]


@pytest.mark.parametrize("server", list(SERVERS))
def test_tenants_only_see_their_own_memories_and_workers_stop(
    server: str, neo4j_connection: Neo4jConnection
) -> None:
    command, prefix = SERVERS[server]
    folder = quickstart_project(neo4j_connection)
    (folder / "master_uses_the_facade.py").write_text(MASTER_USES_THE_FACADE)
    env = project_env(neo4j_connection)
    with serve(command, env, "/start", cwd=folder) as served:
        client = Client(served.url)
        tenants = [
            Tenant(name, **client.call("POST", "/start", {"org_name": name, "user_name": name}))
            for name in (f"{server}-tenant-{n}" for n in range(TENANTS))
        ]
        with ThreadPoolExecutor(CLIENT_THREADS) as pool:
            foreign = list(
                pool.map(
                    lambda turn: talk(client, tenants[turn % TENANTS], prefix, turn),
                    range(REQUESTS),
                )
            )
        served.stop()

    assert [answer for answer in foreign if answer] == []
    saves = Counter(tenants[turn % TENANTS] for turn in range(0, REQUESTS, SAVE_EVERY))
    with sync.Neo4jGraphInterface.from_connection(neo4j_connection) as memora:
        for tenant in tenants:
            stored = memora.get_all_user_memories(tenant.org_id, tenant.user_id)
            assert sorted(m.memory for m in stored) == sorted(
                f"{tenant.name} fact {turn}"
                for turn in range(0, REQUESTS, SAVE_EVERY)
                if tenants[turn % TENANTS] == tenant
            )
            assert len(stored) == saves[tenant]
