"""A clean graph per test on the real Neo4j of memora-ogm's pytest plugin, for Django.

Register the ``memora_graph`` fixture (with pytest-django) with
``pytest_plugins = ["memora_ogm.contrib.django.testing"]`` in a ``conftest.py``; views
under test (``client``) and the test itself then see the same clean graph.
``MemoraGraphMixin`` does the same for ``SimpleTestCase`` subclasses run by pytest.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import pytest
from django.conf import settings as django_settings
from django.test import override_settings

from memora_ogm.contrib.django import interfaces
from memora_ogm.server import Neo4jConnection
from memora_ogm.testing import clear_database

if TYPE_CHECKING:
    from neo4j import Driver

    from memora_ogm import sync


def _reopen_interfaces() -> None:
    """Close this process's facades: the next use opens them on the settings now in force."""
    interfaces._sync_interfaces.close()
    interfaces._async_interfaces.close()


def _test_settings(conn: Neo4jConnection) -> dict[str, Any]:
    """The project's ``MEMORA_OGM`` (vector store, embedder) on the test server."""
    return {**getattr(django_settings, "MEMORA_OGM", {}), **conn.env()}


def _clean_graph(conn: Neo4jConnection, driver: Driver) -> sync.Neo4jGraphInterface:
    _reopen_interfaces()
    clear_database(driver, conn.database)
    memora = interfaces.get_interface()
    memora.setup()
    return memora


@pytest.fixture
def memora_graph(
    settings: Any, neo4j_connection: Neo4jConnection, neo4j_driver: Driver
) -> Iterator[sync.Neo4jGraphInterface]:
    """This process's sync facade on an empty graph of the test server."""
    settings.MEMORA_OGM = _test_settings(neo4j_connection)
    yield _clean_graph(neo4j_connection, neo4j_driver)
    _reopen_interfaces()  # the next test's settings may differ


class MemoraGraphMixin:
    """Mix into a Django ``SimpleTestCase`` (or ``TestCase``) run by pytest: each test
    starts on an empty graph of the test server, its facade in ``self.memora``."""

    memora: sync.Neo4jGraphInterface

    @pytest.fixture(autouse=True)
    def _memora_graph(
        self, neo4j_connection: Neo4jConnection, neo4j_driver: Driver
    ) -> Iterator[None]:
        with override_settings(MEMORA_OGM=_test_settings(neo4j_connection)):
            self.memora = _clean_graph(neo4j_connection, neo4j_driver)
            yield
        _reopen_interfaces()
