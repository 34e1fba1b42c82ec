"""Six tenants' traffic through an example app served by real workers (gunicorn, uvicorn).

:func:`serve_tenants` creates six organisations with a user and an agent each, then 16
client threads send 3,000 requests through the server: 60 saves of an interaction with
a memory, 300 searches for those memories, and 2,640 reads of a tenant's user. It
returns every answer that was not the requested tenant's, and checks that the graph and
the vector store hold the same 60 memories, whichever worker saved them.
"""

from __future__ import annotations

import json
import urllib.parse
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from neo4j import Driver
from qdrant_standin import StandIn

from memora_ogm import sync
from memora_ogm.server import Neo4jConnection
from memora_ogm.vector_db.qdrant import SINGLE_VECTOR_COLLECTION_NAME

TENANTS, SAVES, SEARCHES, REQUESTS, CLIENTS = 6, 60, 300, 3000, 16
Tenant = tuple[str, str, str, str]  # org_id, user_id, agent_id, user_name


def make_tenants(conn: Neo4jConnection) -> list[Tenant]:
    with sync.Neo4jGraphInterface.from_connection(conn) as memora:
        tenants = []
        for number in range(TENANTS):
            org = memora.create_organization(f"Tenant {number}")
            user = memora.create_user(org.org_id, f"User of tenant {number}")
            agent = memora.create_agent(org.org_id, f"Bot of tenant {number}")
            tenants.append((org.org_id, user.user_id, agent.agent_id, user.user_name))
    return tenants


def fact(number: int) -> str:
    return f"tenant {number % TENANTS} fact {number // TENANTS % 10}"


def _get(url: str) -> Any:
    with urllib.request.urlopen(url, timeout=60) as reply:
        return json.load(reply)


def serve_tenants(
    url: str, conn: Neo4jConnection, driver: Driver, standin: StandIn
) -> list[tuple[int, Any]]:
    """The wrong answers (request number, answer) among the 3,000; the stores checked."""
    tenants = make_tenants(conn)

    def save(number: int) -> int:
        org_id, user_id, agent_id, _ = tenants[number % TENANTS]
        body = {
            "agent_id": agent_id,
            "interaction": [{"role": "user", "content": f"remember: {fact(number)}"}],
            "memories": [{"memory": fact(number), "source_msg_block_pos": [0]}],
        }
        saving = urllib.request.Request(
            f"{url}/orgs/{org_id}/users/{user_id}/interactions",
            data=json.dumps(body).encode(),
            headers={"Content-Type": "application/json"},
        )
        with urllib.request.urlopen(saving, timeout=60) as reply:
            status: int = reply.status
            return status

    def search(number: int) -> bool:
        """The searched memory first, and only the tenant's user's memories."""
        org_id, user_id, _, _ = tenants[number % TENANTS]
        query = urllib.parse.urlencode({"q": fact(number)})
        found = _get(f"{url}/orgs/{org_id}/users/{user_id}/memories/search?{query}")
        owners = {(memory["org_id"], memory["user_id"]) for memory in found}
        return bool(found) and found[0]["memory"] == fact(number) and owners == {(org_id, user_id)}

    def read(number: int) -> bool:
        org_id, user_id, _, user_name = tenants[number % TENANTS]
        body = _get(f"{url}/orgs/{org_id}/users/{user_id}")
        return (body["org_id"], body["user_id"], body["user_name"]) == (
            org_id,
            user_id,
            user_name,
        )

    with ThreadPoolExecutor(CLIENTS) as clients:
        saved = list(clients.map(save, range(SAVES)))
        searched = list(clients.map(search, range(SEARCHES)))
        reads = list(clients.map(read, range(REQUESTS - SAVES - SEARCHES)))
    wrong: list[tuple[int, object]] = [
        (number, status) for number, status in enumerate(saved) if status != 201
    ]
    wrong += [(SAVES + number, "search") for number, ok in enumerate(searched) if not ok]
    wrong += [(SAVES + SEARCHES + number, "read") for number, ok in enumerate(reads) if not ok]

    held = {
        point_id: (payload["org_id"], payload["user_id"], payload["memory"])
        for point_id, payload in standin.points(SINGLE_VECTOR_COLLECTION_NAME).items()
    }
    records = driver.execute_query(
        "MATCH (m:Memory) RETURN m.memory_id AS id, m.org_id AS org, m.user_id AS user, "
        "m.memory AS memory"
    ).records
    assert held == {
        record["id"]: (record["org"], record["user"], record["memory"]) for record in records
    }
    assert sorted(memory for _, _, memory in held.values()) == sorted(map(fact, range(SAVES)))
    return wrong
