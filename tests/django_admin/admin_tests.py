"""memora-ogm's pages in Django's admin, through Django's test client, on the real Neo4j
of the session (``NEO4J_*``) and an embedded vector store (``QDRANT_PATH``).

Run by ``tests/test_contrib_django_admin.py`` in a pytest of its own.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest
from django.contrib.admin.models import DELETION, LogEntry
from django.contrib.auth.models import Permission, User
from django.test import Client
from neo4j import Driver

from memora_ogm import sync
from memora_ogm.calls import browse
from memora_ogm.schema.storage import (
    ContraryMemoryToStore,
    MemoriesAndInteraction,
    MemoryToStore,
)

BASE = "/admin/memora_ogm/memorygraph/"

pytestmark = pytest.mark.django_db


@dataclass
class Tenant:
    org_id: str
    user_id: str
    agent_id: str
    interaction_ids: list[str]
    memory_ids: list[str]

    @property
    def user(self) -> str:
        return f"{BASE}org/{self.org_id}/user/{self.user_id}/"


def save(memora: sync.Neo4jGraphInterface, t: Tenant, said: str, learnt: list[str]) -> None:
    data = MemoriesAndInteraction(
        interaction=[{"role": "user", "content": said}, {"role": "assistant", "content": "Ok."}],
        memories=[MemoryToStore(memory=text, source_msg_block_pos=[0]) for text in learnt],
    )
    interaction_id, _ = memora.save_interaction_with_memories(t.org_id, t.agent_id, t.user_id, data)
    t.interaction_ids.append(interaction_id)
    found = memora.get_interaction(t.org_id, t.user_id, interaction_id)
    t.memory_ids.extend(m.memory_id for m in found.memories or [])


def tenant(memora: sync.Neo4jGraphInterface, org: str, user: str) -> Tenant:
    org_id = memora.create_organization(org).org_id
    agent_id = memora.create_agent(org_id, "assistant").agent_id
    user_id = memora.create_user(org_id, user).user_id
    return Tenant(org_id, user_id, agent_id, [], [])


@pytest.fixture
def acme(memora_graph: sync.Neo4jGraphInterface) -> Tenant:
    """Ann of Acme with three conversations; the third contradicts the first's memory."""
    t = tenant(memora_graph, "Acme", "Ann")
    save(memora_graph, t, "I drink green tea", ["Ann likes green tea"])
    save(memora_graph, t, "I live in Lyon", ["Ann lives in Lyon", "Ann travels by train"])
    data = MemoriesAndInteraction(
        interaction=[{"role": "user", "content": "Now I prefer coffee"}],
        memories=[],
        contrary_memories=[
            ContraryMemoryToStore(
                memory="Ann prefers coffee",
                source_msg_block_pos=[0],
                existing_contrary_memory_id=t.memory_ids[0],
            )
        ],
    )
    interaction_id, _ = memora_graph.save_interaction_with_memories(
        t.org_id, t.agent_id, t.user_id, data
    )
    t.interaction_ids.append(interaction_id)
    found = memora_graph.get_interaction(t.org_id, t.user_id, interaction_id)
    t.memory_ids.extend(m.memory_id for m in found.memories or [])
    tenant(memora_graph, "Globex", "Bob")
    return t


def staff(name: str, *permissions: str) -> User:
    user = User.objects.create_user(name, password="pw", is_staff=True)
    for codename in permissions:
        user.user_permissions.add(Permission.objects.get(codename=codename))
    return user


def logged_in(user: User, csrf: bool = False) -> Client:
    client = Client(enforce_csrf_checks=csrf)
    client.force_login(user)
    return client


@pytest.fixture
def viewer() -> Client:
    return logged_in(staff("viewer", "view_memorygraph"))


@pytest.fixture
def operator() -> Client:
    return logged_in(
        staff("operator", "view_memorygraph", "delete_memorygraph", "erase_user"), csrf=True
    )


def text(response: Any) -> str:
    return str(response.content.decode())


@pytest.fixture
def sent(memora_graph: sync.Neo4jGraphInterface) -> Iterator[list[tuple[str, dict[str, Any]]]]:
    """The statements this process's facade sends, with their parameters (it still sends
    them)."""
    from memora_ogm.contrib.django import get_interface

    graph = get_interface().graph
    seen: list[tuple[str, dict[str, Any]]] = []
    send = graph._send

    def recorded(runner: Any, query: str, params: dict[str, Any]) -> Any:
        seen.append((query, params))
        return send(runner, query, params)

    graph._send = recorded  # type: ignore[method-assign]
    yield seen
    del graph._send


def test_the_migration_makes_the_permissions_and_no_table() -> None:
    from django.db import connection

    found = set(
        Permission.objects.filter(content_type__app_label="memora_ogm").values_list(
            "codename", flat=True
        )
    )
    assert found == {"view_memorygraph", "delete_memorygraph", "erase_user"}
    assert not any("memorygraph" in name for name in connection.introspection.table_names())


def test_an_anonymous_visitor_is_sent_to_the_login_page(acme: Tenant) -> None:
    for url in (BASE, acme.user, f"{acme.user}export/"):
        response = Client().get(url)
        assert response.status_code == 302
        assert response["Location"].startswith("/admin/login/?next=")


def test_staff_without_the_permission_get_403_and_no_entry(acme: Tenant) -> None:
    client = logged_in(staff("clerk"))
    for url in (BASE, f"{BASE}org/{acme.org_id}/", acme.user, f"{acme.user}export/"):
        assert client.get(url).status_code == 403
    assert "memorygraph" not in text(client.get("/admin/"))


def test_a_viewer_sees_every_page_and_no_destructive_link(
    acme: Tenant, viewer: Client, memora_graph: sync.Neo4jGraphInterface
) -> None:
    index = text(viewer.get("/admin/"))
    assert f'href="{BASE}"' in index
    organizations = text(viewer.get(BASE))
    assert 'id="changelist"' in organizations and 'id="result_list"' in organizations
    assert "Acme" in organizations and "Globex" in organizations
    acme_row = re.search(
        r"Acme</a></th>\s*<td>[^<]*</td>\s*((?:<td>\d+</td>\s*){4})", organizations
    )
    assert acme_row is not None
    assert re.findall(r"<td>(\d+)</td>", acme_row[1]) == ["1", "1", "3", "4"]
    org = text(viewer.get(f"{BASE}org/{acme.org_id}/"))
    assert "Ann" in org and "assistant" in org
    assert "1 user, 1 agent, 3 interactions, 4 memories." in " ".join(org.split())
    assert re.search(r"\b1 user\s*</p>", org) and re.search(r"\b1 agent\s*</p>", org)
    user = text(viewer.get(acme.user))
    for shown in ("Ann likes green tea", "Ann prefers coffee", "Ann lives in Lyon", "superseded"):
        assert shown in user
    assert acme.interaction_ids[0] in user and "Export" in user
    assert "3 interactions, 4 memories." in user
    assert "Erase this user" not in user and "erase/" not in user
    memory = text(viewer.get(f"{acme.user}memory/{acme.memory_ids[-1]}/"))
    assert "Ann prefers coffee" in memory and "Ann likes green tea" in memory  # its history
    assert "Now I prefer coffee" in memory  # its source message
    assert "Delete this memory" not in memory
    older = text(viewer.get(f"{acme.user}memory/{acme.memory_ids[0]}/"))
    assert "Superseded" in older and "Ann prefers coffee" in older
    interaction = text(viewer.get(f"{acme.user}interaction/{acme.interaction_ids[1]}/"))
    assert "I live in Lyon" in interaction and "Ann travels by train" in interaction
    assert "Delete this interaction" not in interaction
    assert "<iframe" in text(viewer.get(f"{acme.user}picture/"))
    assert "Ann" in text(viewer.get(f"{acme.user}picture/page/"))
    for destructive in (
        f"{acme.user}erase/",
        f"{acme.user}memory/{acme.memory_ids[0]}/delete/",
        f"{acme.user}interaction/{acme.interaction_ids[0]}/delete/",
    ):
        assert viewer.get(destructive).status_code == 403
    assert memora_graph.get_user(acme.org_id, acme.user_id).user_name == "Ann"


def test_agents_are_named_and_marked_organisation_wide_or_one_users(
    acme: Tenant, viewer: Client, memora_graph: sync.Neo4jGraphInterface
) -> None:
    """Ann's rows name the organisation-wide assistant that wrote them; her agents are
    hers and the organisation's, each marked; another user's agent is not hers."""
    coach = memora_graph.create_agent(acme.org_id, "Ann's coach", user_id=acme.user_id)
    cid = memora_graph.create_user(acme.org_id, "Cid")
    tutor = memora_graph.create_agent(acme.org_id, "Cid's tutor", user_id=cid.user_id)
    user = text(viewer.get(acme.user))
    # 4 memory rows and 3 interaction rows, each naming its agent by its label
    assert user.count("<td>assistant</td>") == 7
    agents = re.findall(
        r'<tr><th>([^<]+)</th><td>([^<]+)</td><td><span class="memora-scope">([^<]+)</span>',
        user,
    )
    assert agents == [
        ("Ann&#x27;s coach", coach.agent_id, "this user only"),
        ("assistant", acme.agent_id, "organisation-wide"),
    ]
    assert "Cid" not in user and tutor.agent_id not in user
    memory = text(viewer.get(f"{acme.user}memory/{acme.memory_ids[0]}/"))
    assert f"by agent assistant (<code>{acme.agent_id}</code>)" in memory
    interaction = text(viewer.get(f"{acme.user}interaction/{acme.interaction_ids[0]}/"))
    assert f"With agent assistant (<code>{acme.agent_id}</code>)" in interaction
    org = text(viewer.get(f"{BASE}org/{acme.org_id}/"))
    assert re.search(
        rf"<th>assistant</th><td>{acme.agent_id}</td>\s*"
        r'<td><span class="memora-scope">organisation-wide</span>',
        org,
    )
    assert re.search(
        rf"<th>Cid&#x27;s tutor</th><td>{tutor.agent_id}</td>\s*"
        r'<td><span class="memora-scope">one user</span> '
        rf'<a href="{BASE}org/{acme.org_id}/user/{cid.user_id}/">{cid.user_id}</a>',
        org,
    )


def test_the_pages_work_on_another_admin_site(acme: Tenant, viewer: Client) -> None:
    page = text(viewer.get(acme.user.replace("/admin/", "/other-admin/")))
    assert "Ann prefers coffee" in page
    assert 'href="/other-admin/memora_ogm/memorygraph/org/' in page


def test_the_export_is_the_packages_format_as_a_download(acme: Tenant, viewer: Client) -> None:
    response = viewer.get(f"{acme.user}export/")
    assert response.status_code == 200
    assert "attachment" in response["Content-Disposition"]
    records = [json.loads(line) for line in b"".join(response.streaming_content).splitlines()]
    kinds = [record["type"] for record in records]
    assert kinds[0] == "header" and kinds[-1] == "end"
    assert kinds.count("memory") == 4 and kinds.count("interaction") == 3


def test_search_finds_organisations_users_and_memories(acme: Tenant, viewer: Client) -> None:
    found = text(viewer.get(BASE, {"q": "acm"}))
    assert "Acme" in found and "Globex" not in found
    assert "Acme" in text(viewer.get(BASE, {"q": acme.org_id}))
    assert "Ann" not in text(viewer.get(f"{BASE}org/{acme.org_id}/", {"q": "zed"}))
    assert "Ann" in text(viewer.get(f"{BASE}org/{acme.org_id}/", {"q": "an"}))
    # with a vector store (this project's QDRANT_PATH): its hybrid search
    memories = text(viewer.get(acme.user, {"q": "Lyon"}))
    assert "closest in meaning" in memories
    assert re.findall(r'class="[^"]*">([^<]+)</a></th>', memories)[0] == "Ann lives in Lyon"


def test_without_a_vector_store_the_search_matches_the_text(
    acme: Tenant, memora_graph: sync.Neo4jGraphInterface
) -> None:
    """The text match the page falls back to, a page of it at a time."""
    graph = memora_graph.graph
    args = (graph.has_apoc(), acme.org_id, acme.user_id)
    found = graph.execute(browse.memories_matching, *args, "IN LY", 0, 50)
    assert [m.memory for m in found] == ["Ann lives in Lyon"]
    found = graph.execute(browse.memories_matching, *args, "ann", 1, 2)
    # newest first: the coffee is skipped, the second interaction's two come next
    assert {m.memory for m in found} == {"Ann travels by train", "Ann lives in Lyon"}
    with pytest.raises(ValueError, match="search"):
        graph.execute(browse.memories_matching, *args, " ", 0, 50)


def test_a_page_reads_only_its_rows(
    memora_graph: sync.Neo4jGraphInterface,
    viewer: Client,
    sent: list[tuple[str, dict[str, Any]]],
) -> None:
    t = tenant(memora_graph, "Initech", "Peter")
    for n in range(6):
        save(memora_graph, t, f"day {n}", [f"memory {n}.{k}" for k in range(20)])
    for n in range(120):
        memora_graph.create_organization(f"Org {n:03}")
    sent.clear()
    page = text(viewer.get(t.user, {"p": "2"}))
    statements = len(sent)
    memories = [(q, p) for q, p in sent if "DATE_OBTAINED" in q and "SKIP $skip" in q]
    assert len(memories) == 1
    assert (memories[0][1]["skip"], memories[0][1]["limit"]) == (50, 50)
    shown = re.findall(r"memory (\d+)\.(\d+)</a>", page)
    assert len(shown) == 50  # 120 memories: the second page is full
    sent.clear()
    orgs = text(viewer.get(BASE, {"p": "3"}))
    assert len(sent) == 1 and (sent[0][1]["skip"], sent[0][1]["limit"]) == (100, 50)
    # 121 organisations by name, Initech first: the third page has the last 21
    assert re.findall(r"Org (\d{3})</a>", orgs) == [f"{n:03}" for n in range(99, 120)]
    # the statements of a user's page do not grow with the user
    for n in range(6, 12):
        save(memora_graph, t, f"day {n}", [f"memory {n}.{k}" for k in range(20)])
    sent.clear()
    viewer.get(t.user, {"p": "4"})
    assert len(sent) == statements


def test_erase_removes_the_user_from_both_stores_and_is_logged(
    acme: Tenant, operator: Client, memora_graph: sync.Neo4jGraphInterface, neo4j_driver: Driver
) -> None:
    store = memora_graph.associated_vector_db
    assert isinstance(store, sync.QdrantDB)

    def points() -> int:
        return int(store.tenants().get((acme.org_id, acme.user_id), 0))

    def nodes() -> int:
        records, _, _ = neo4j_driver.execute_query(
            "MATCH (n {org_id: $org_id, user_id: $user_id}) RETURN count(n) AS n",
            org_id=acme.org_id,
            user_id=acme.user_id,
        )
        return int(records[0]["n"])

    assert points() == 4 and nodes() > 0
    confirm = operator.get(f"{acme.user}erase/")
    page = text(confirm)
    assert "3 interactions with their messages" in page and "4 memories, from the graph" in page
    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page)
    assert token is not None
    url = f"{acme.user}erase/confirmed/"
    assert operator.get(url).status_code == 405
    assert operator.post(url).status_code == 403  # no CSRF token
    assert nodes() > 0 and points() == 4
    done = operator.post(url, {"csrfmiddlewaretoken": token[1]})
    assert done.status_code == 302 and done["Location"].endswith(f"org/{acme.org_id}/")
    assert nodes() == 0 and points() == 0
    entry = LogEntry.objects.get()
    assert entry.action_flag == DELETION and entry.object_id == f"{acme.org_id}/{acme.user_id}"
    assert "3 interactions, 4 memories" in entry.change_message
    assert operator.get(acme.user).status_code == 404


def test_delete_a_memory_and_an_interaction(
    acme: Tenant, operator: Client, memora_graph: sync.Neo4jGraphInterface
) -> None:
    confirmed: list[str] = []

    def post(url: str) -> Any:
        page = text(operator.get(url))
        confirmed.append(page)
        token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page)
        assert token is not None
        return operator.post(f"{url}confirmed/", {"csrfmiddlewaretoken": token[1]})

    memory_id = acme.memory_ids[2]  # Ann travels by train
    assert post(f"{acme.user}memory/{memory_id}/delete/").status_code == 302
    left = memora_graph.get_all_user_memories(acme.org_id, acme.user_id)
    assert memory_id not in {m.memory_id for m in left} and len(left) == 3
    interaction = acme.interaction_ids[1]  # Lyon, one memory left
    assert post(f"{acme.user}interaction/{interaction}/delete/").status_code == 302
    left = memora_graph.get_all_user_memories(acme.org_id, acme.user_id)
    assert {m.memory for m in left} == {"Ann likes green tea", "Ann prefers coffee"}
    # Django's plurals: one memory was left of the two, the interaction had two messages
    assert "with its 2 messages" in confirmed[1] and "1 memory taken from it" in confirmed[1]
    assert LogEntry.objects.count() == 2


def test_with_neo4j_down_the_index_loads_and_the_pages_say_so(
    viewer: Client, settings: Any
) -> None:
    from memora_ogm.contrib.django.testing import _reopen_interfaces

    settings.MEMORA_OGM = {**settings.MEMORA_OGM, "NEO4J_URI": "bolt://127.0.0.1:9"}
    _reopen_interfaces()
    try:
        assert viewer.get("/admin/").status_code == 200
        response = viewer.get(BASE)
        assert response.status_code == 503
        page = text(response)
        assert "Neo4j is not reachable" in page and "bolt://127.0.0.1:9" in page
        assert "Traceback" not in page
    finally:
        _reopen_interfaces()
