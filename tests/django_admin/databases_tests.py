"""Two databases in ``MEMORA_OGM``, named as Django's ``DATABASES`` names them, and the
admin on each: two Neo4j servers, as a project on Neo4j Community (one database a server)
has them; ``NEO4J_*`` is the default database's, ``SECOND_NEO4J_*`` the archive's.

Run by ``tests/test_contrib_django_admin.py`` in a pytest of its own.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from typing import Any

import pytest
from admin_tests import BASE, Tenant, logged_in, save, staff, tenant, text
from django.contrib.admin.models import LogEntry
from django.test import Client
from neo4j import GraphDatabase

from memora_ogm import sync
from memora_ogm.config import ConfigurationError
from memora_ogm.contrib.django import get_interface, memora_config
from memora_ogm.contrib.django.testing import _reopen_interfaces
from memora_ogm.testing import clear_database

pytestmark = pytest.mark.django_db

ARCHIVE = f"{BASE}db/archive/"


def archive_settings() -> dict[str, str]:
    """The second server's ``NEO4J_*``, from ``SECOND_NEO4J_*``."""
    return {
        name: os.environ[f"SECOND_{name}"]
        for name in ("NEO4J_URI", "NEO4J_USERNAME", "NEO4J_PASSWORD", "NEO4J_DATABASE")
    }


@pytest.fixture
def archive(settings: Any, memora_graph: sync.Neo4jGraphInterface) -> Iterator[Tenant]:
    """``MEMORA_OGM`` with a ``default`` database (Acme's Ann, on the test server) and an
    ``archive`` (Initech's Peter, on the second server, emptied first)."""
    second = archive_settings()
    with GraphDatabase.driver(
        second["NEO4J_URI"], auth=(second["NEO4J_USERNAME"], second["NEO4J_PASSWORD"])
    ) as driver:
        clear_database(driver, second["NEO4J_DATABASE"])
    settings.MEMORA_OGM = {
        "default": dict(settings.MEMORA_OGM),
        "archive": {**second, "EMBEDDER": "hashing"},
    }
    _reopen_interfaces()
    save(memora_graph, tenant(memora_graph, "Acme", "Ann"), "I drink tea", ["Ann likes tea"])
    kept = get_interface("archive")
    kept.setup()
    peter = tenant(kept, "Initech", "Peter")
    save(kept, peter, "I like staplers", ["Peter likes his red stapler"])
    yield peter
    _reopen_interfaces()


def test_each_database_has_its_pages_and_links_stay_in_it(archive: Tenant) -> None:
    viewer = logged_in(staff("viewer", "view_memorygraph"))
    default = text(viewer.get(BASE))
    assert "Acme" in default and "Initech" not in default
    assert f'<a href="{ARCHIVE}">archive</a>' in default and "<strong>default</strong>" in default
    listed = text(viewer.get(ARCHIVE))
    assert "Initech" in listed and "Acme" not in listed
    assert f'<a href="{ARCHIVE}org/{archive.org_id}/">Initech</a>' in listed
    assert "<strong>archive</strong>" in listed
    user = text(viewer.get(f"{ARCHIVE}org/{archive.org_id}/user/{archive.user_id}/"))
    assert "Peter likes his red stapler" in user
    rows = re.findall(r'<a href="([^"]+)" class="memora-memory', user)
    assert rows == [
        f"{ARCHIVE}org/{archive.org_id}/user/{archive.user_id}/memory/{archive.memory_ids[0]}/"
    ]
    assert f'<a href="{ARCHIVE}">archive</a>' in user  # the crumb of the database shown
    memory = text(viewer.get(rows[0]))
    assert "I like staplers" in memory
    # the archive's ids are not the default database's
    assert viewer.get(f"{BASE}org/{archive.org_id}/").status_code == 404


def test_an_unknown_database_is_a_clear_404(archive: Tenant) -> None:
    viewer = logged_in(staff("viewer", "view_memorygraph"))
    response = viewer.get(f"{BASE}db/nowhere/")
    assert response.status_code == 404
    assert "MEMORA_OGM has no database &#x27;nowhere&#x27;" in text(response)
    with pytest.raises(ConfigurationError, match="no database 'nowhere'.*'default', 'archive'"):
        get_interface("nowhere")


def test_erasing_in_the_archive_leaves_the_default_database(
    archive: Tenant, memora_graph: sync.Neo4jGraphInterface
) -> None:
    operator = logged_in(staff("operator", "view_memorygraph", "erase_user"), csrf=True)
    user = f"{ARCHIVE}org/{archive.org_id}/user/{archive.user_id}/"
    page = text(operator.get(f"{user}erase/"))
    assert "1 interaction with their messages" in page and "1 memory, from the graph" in page
    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page)
    assert token is not None
    done = operator.post(f"{user}erase/confirmed/", {"csrfmiddlewaretoken": token[1]})
    assert done.status_code == 302 and done["Location"] == f"{ARCHIVE}org/{archive.org_id}/"
    assert get_interface("archive").get_all_org_users(archive.org_id) == []
    assert [
        u.user_name
        for o in memora_graph.get_all_organizations()
        for u in memora_graph.get_all_org_users(o.org_id)
    ] == ["Ann"]
    assert "in database 'archive'" in LogEntry.objects.get().change_message


def test_the_settings_name_their_databases_default_first(settings: Any) -> None:
    """Each database but the default names its server itself: the environment's
    ``NEO4J_URI`` is the default's alone."""
    assert os.environ["NEO4J_URI"]
    settings.MEMORA_OGM = {"default": {}, "archive": {"EMBEDDER": "hashing"}}
    assert memora_config().neo4j.uri == os.environ["NEO4J_URI"]
    with pytest.raises(ConfigurationError, match="NEO4J_URI is not set"):
        memora_config("archive")
    settings.MEMORA_OGM = {"main": {}, "archive": {}}
    with pytest.raises(ConfigurationError, match="'archive', 'main'.*one must be 'default'"):
        memora_config()
    settings.MEMORA_OGM = {"EMBEDDER": "hashing"}  # one database, as before
    assert memora_config().neo4j.uri == os.environ["NEO4J_URI"]


def test_a_page_of_the_default_database_has_no_selector_with_one_database(
    memora_graph: sync.Neo4jGraphInterface,
) -> None:
    viewer: Client = logged_in(staff("viewer", "view_memorygraph"))
    assert 'id="databases"' not in text(viewer.get(BASE))


def test_the_checks_name_a_database_whose_settings_are_unusable(settings: Any) -> None:
    from memora_ogm.contrib.django.checks import check_settings

    settings.MEMORA_OGM = {"default": {}, "archive": {"EMBEDDER": "hashing"}}
    (error,) = check_settings()
    assert error.id == "memora_ogm.E001"
    assert "of the database 'archive'" in error.msg and "NEO4J_URI is not set" in error.msg
    assert "MEMORA_OGM['archive']['NEO4J_URI']" in error.hint
    settings.MEMORA_OGM = {"default": {}, "archive": archive_settings()}
    assert check_settings() == []
