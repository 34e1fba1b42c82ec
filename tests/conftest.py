"""Project-specific test setup.

The fixtures (neo4j_connection, neo4j_driver, neomodel_db, neomodel_adb,
clean_neo4j) come from the memora_ogm.testing pytest plugin, which installing
the package registers (entry point ``pytest11``). Running from a checkout that
was not installed still gets them:
"""

from __future__ import annotations

import pytest

# The facade fixtures (`memora`, parametrised async/sync, and `driver`).
from graph_fixtures import driver, memora  # noqa: F401


def pytest_configure(config: pytest.Config) -> None:
    if not config.pluginmanager.has_plugin("memora_ogm"):
        config.pluginmanager.import_plugin("memora_ogm.testing")
