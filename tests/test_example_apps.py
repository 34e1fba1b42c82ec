"""The Flask and Django example apps, each driven by its framework's test client, on Neo4j.

One scenario (create a user, post conversations, list memories, page through
interactions, delete) runs against both apps through a two-line adapter per framework;
another reads a user's timeline, a view each app builds on the node classes.
"""

from __future__ import annotations

import json
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import pytest
from neo4j import Driver
from web_servers import example

from memora_ogm import sync
from memora_ogm.server import Neo4jConnection
from memora_ogm.vector_db.scope import MemorySearchScope

Call = Callable[[str, str, dict[str, Any] | None], tuple[int, Any]]


@dataclass
class App:
    """An example app as the scenario sees it: HTTP calls, and its interface for checks."""

    call: Call
    memora: sync.Neo4jGraphInterface


def flask_app(conn: Neo4jConnection) -> Iterator[App]:
    """``examples/flask_app.py`` with an embedded vector store, set up by its command."""
    create_app = example("flask_app").create_app
    with tempfile.TemporaryDirectory() as qdrant:
        app = create_app(
            {
                "TESTING": True,
                **{f"MEMORA_OGM_{name}": value for name, value in conn.env().items()},
                "MEMORA_OGM_QDRANT_PATH": qdrant,
                "MEMORA_OGM_EMBEDDER": "hashing",
            }
        )
        setup = app.test_cli_runner().invoke(args=["memora-ogm", "setup"])
        assert setup.exit_code == 0, setup.output
        client = app.test_client()

        def call(method: str, url: str, body: dict[str, Any] | None = None) -> tuple[int, Any]:
            response = client.open(url, method=method, json=body)
            return response.status_code, response.get_json(silent=True)

        state = app.extensions["memora_ogm"]
        yield App(call, state.interface.get())
        state.close()


def django_app(conn: Neo4jConnection) -> Iterator[App]:
    from django_setup import example_project

    example_project(conn)
    from django.test import Client

    from memora_ogm.contrib.django import get_interface

    client = Client()

    def call(method: str, url: str, body: dict[str, Any] | None = None) -> tuple[int, Any]:
        data = json.dumps(body) if body is not None else ""
        response = client.generic(method, url, data, content_type="application/json")
        return response.status_code, json.loads(response.content) if response.content else None

    memora = get_interface()  # the process's interface stays open, as in a server
    memora.setup()
    yield App(call, memora)


@pytest.fixture(params=[flask_app, django_app], ids=["flask", "django"])
def app(
    request: pytest.FixtureRequest, neo4j_connection: Neo4jConnection, clean_neo4j: Driver
) -> Iterator[App]:
    yield from request.param(neo4j_connection)


def conversation(agent_id: str, day: int, said: str, memory: str) -> dict[str, Any]:
    return {
        "agent_id": agent_id,
        "interaction": [
            {"role": "user", "content": said},
            {"role": "assistant", "content": "Noted."},
        ],
        "interaction_date": f"2024-05-0{day}T10:00:00Z",
        "memories": [{"memory": memory, "source_msg_block_pos": [0]}],
    }


def test_users_conversations_memories_pages_and_deletes(app: App) -> None:
    status, org = app.call("POST", "/orgs", {"org_name": "Acme"})
    assert status == 201
    orgs = f"/orgs/{org['org_id']}"
    _, agent = app.call("POST", f"{orgs}/agents", {"agent_label": "Helper"})
    status, user = app.call("POST", f"{orgs}/users", {"user_name": "Ann"})
    assert status == 201 and user["user_name"] == "Ann"
    users = f"{orgs}/users/{user['user_id']}"
    assert app.call("GET", users, None) == (200, user)

    placeholder = f"user_{user['user_id']}"
    said = [
        ("I drink green tea", "likes green tea"),
        ("I run", "runs"),
        ("I moved", "lives in Oslo"),
    ]
    ids = []
    for day, (text, fact) in enumerate(said, start=1):
        status, saved = app.call(
            "POST",
            f"{users}/interactions",
            conversation(agent["agent_id"], day, text, f"{placeholder} {fact}"),
        )
        assert status == 201
        ids.append(saved["interaction_id"])

    status, memories = app.call("GET", f"{users}/memories", None)
    assert status == 200
    tea_id = memories[-1]["memory_id"]
    assert [m["memory"] for m in memories] == [
        "Ann lives in Oslo",
        "Ann runs",
        "Ann likes green tea",
    ]

    _, first_page = app.call("GET", f"{users}/interactions?skip=0&limit=2", None)
    _, second_page = app.call("GET", f"{users}/interactions?skip=2&limit=2", None)
    assert [i["interaction_id"] for i in first_page + second_page] == ids[::-1]
    assert [m["content"] for m in first_page[0]["messages"]] == ["I moved", "Noted."]

    assert app.call("DELETE", f"{users}/interactions/{ids[0]}", None)[0] == 204
    _, memories = app.call("GET", f"{users}/memories", None)
    assert [m["memory"] for m in memories] == ["Ann lives in Oslo", "Ann runs"]
    vectors = app.memora.get_associated_vector_db()
    assert vectors is not None
    hits = vectors.search_memory(
        "green tea", MemorySearchScope.USER, org["org_id"], user["user_id"]
    )
    assert tea_id not in [memory.memory_id for memory, _ in hits], "gone from the vectors too"

    assert app.call("DELETE", users, None)[0] == 204
    status, error = app.call("GET", users, None)
    assert status == 404 and user["user_id"] in error["error"]


def test_errors_are_http_statuses(app: App) -> None:
    _, org = app.call("POST", "/orgs", {"org_name": "Acme"})
    users = f"/orgs/{org['org_id']}/users"
    _, user = app.call("POST", users, {"user_name": "Ann"})

    assert app.call("POST", users, {"user_name": ""})[0] == 400
    assert app.call("POST", users, {"name": "Ann"})[0] == 400
    assert app.call("GET", f"{users}/{user['user_id']}/interactions?limit=ten", None)[0] == 400
    assert app.call("GET", f"{users}/{user['user_id']}/interactions?skip=-1", None)[0] == 400
    assert (
        app.call("POST", f"{users}/{user['user_id']}/interactions", {"interaction": []})[0] == 400
    )
    status, error = app.call("GET", f"/orgs/{org['org_id']}/users/nobody/memories", None)
    assert status == 404 and "nobody" in error["error"]
    assert app.call("POST", "/orgs/nowhere/users", {"user_name": "Bob"})[0] == 404


def test_timeline_read_through_the_node_classes(app: App) -> None:
    _, org = app.call("POST", "/orgs", {"org_name": "Acme"})
    orgs = f"/orgs/{org['org_id']}"
    _, agent = app.call("POST", f"{orgs}/agents", {"agent_label": "Helper"})
    _, user = app.call("POST", f"{orgs}/users", {"user_name": "Ann"})
    users = f"{orgs}/users/{user['user_id']}"
    ids = []
    for day, said, fact in [(1, "I run", "runs"), (1, "I swim", "swims"), (3, "I ski", "skis")]:
        body = conversation(agent["agent_id"], day, said, fact)
        ids.append(app.call("POST", f"{users}/interactions", body)[1]["interaction_id"])

    status, timeline = app.call("GET", f"{users}/timeline", None)
    assert status == 200
    assert timeline == [
        {"date": "2024-05-03", "interactions": [ids[2]]},
        {"date": "2024-05-01", "interactions": sorted(ids[:2])},
    ]
    # The facade, next to the node classes, sees the same days.
    found = app.memora.get_all_user_interactions(org["org_id"], user["user_id"])
    days = {i.interaction_id: i.created_at.date().isoformat() for i in found}
    assert {day["date"] for day in timeline} == set(days.values())
    assert all(days[i] == day["date"] for day in timeline for i in day["interactions"])

    status, error = app.call("GET", f"{orgs}/users/nobody/timeline", None)
    assert status == 404 and "nobody" in error["error"]
