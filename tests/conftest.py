"""Project-specific test setup.

The fixtures (neo4j_connection, neo4j_driver, neomodel_db, neomodel_adb,
clean_neo4j) come from the memora_ogm.testing pytest plugin, which installing
the package registers (entry point ``pytest11``). Running from a checkout that
was not installed still gets them:
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

# The facade fixtures (`memora`, parametrised async/sync, and `driver`).
from graph_fixtures import driver, memora  # noqa: F401
from lost_replies import ReplyLosingProxy
from qdrant_standin import StandIn, qdrant_standin
from restartable import RestartableServer
from xdist.remote import Producer
from xdist.scheduler import LoadFileScheduling

from memora_ogm.engine import plan
from memora_ogm.server import Neo4jConnection

# Every statement the suite takes from the cache is laid out again and compared: a
# declaration step whose shape leaves out something its text depends on fails its test.
plan.check_cached = True

#: The modules that take longest (servers started, killed and restarted, web servers,
#: a wheel and a venv built), first in the run, so that the two workers of
#: ``scripts/test.sh`` (a module at a time) end together instead of one idling while the
#: other finishes a long module. The rest keep their order.
LONGEST_FIRST = (
    "test_local_server_security.py",
    "test_crash_writers.py",
    "test_server_faults.py",
    "test_server.py",
    "test_memora_interop.py",
    "test_contrib_django_servers.py",
    "test_wheel.py",
    "test_bad_input.py",
    "test_transfer_move.py",
    "test_isolation.py",
    "test_mcp.py",
    "test_picture_install.py",
    "test_pending_vectors.py",
    "test_docs.py",
    "test_fork_and_loops.py",
    "test_contrib_django.py",
    "test_contrib_flask.py",
    "test_contrib_fastapi.py",
)


#: Servers a run starts once, and the modules that use them. Under ``scripts/test.sh``
#: each group is one unit of work for one worker, so that only that worker starts (and
#: warms up) the server. A module using one of these fixtures that is not listed here
#: stops the run at collection.
SHARED_SERVERS = {
    "second_neo4j_connection": (
        "test_transfer_move.py",
        "test_isolation.py",
        "test_contrib_flask.py",
        "test_contrib_django_admin.py",
    ),
    "restartable_neo4j": ("test_crash_writers.py", "test_server_faults.py", "test_mcp_clients.py"),
}
WORK_UNIT = {module: fixture for fixture, modules in SHARED_SERVERS.items() for module in modules}


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    rank = {name: position for position, name in enumerate(LONGEST_FIRST)}
    items.sort(key=lambda item: rank.get(item.path.name, len(rank)))
    for item in items:
        for fixture, modules in SHARED_SERVERS.items():
            if fixture in getattr(item, "fixturenames", ()) and item.path.name not in modules:
                raise pytest.UsageError(
                    f"{item.path.name} uses {fixture}: add it to SHARED_SERVERS in "
                    "tests/conftest.py, or a second worker starts that server again"
                )


class SharedServerScheduling(LoadFileScheduling):
    """pytest-xdist's ``--dist loadfile``, with each group of ``SHARED_SERVERS`` one unit."""

    def _split_scope(self, nodeid: str) -> str:
        module = super()._split_scope(nodeid)
        return WORK_UNIT.get(Path(module).name, module)


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log: Producer) -> LoadFileScheduling | None:
    if config.getoption("dist") != "loadfile":
        return None  # xdist's own scheduler for another --dist
    return SharedServerScheduling(config, log)


def pytest_configure(config: pytest.Config) -> None:
    if not config.pluginmanager.has_plugin("memora_ogm"):
        config.pluginmanager.import_plugin("memora_ogm.testing")
    _offline_models()


def _offline_models() -> None:
    """Memora's two fastembed models as tiny stand-ins, for every store and subprocess.

    ``QdrantDB``'s default embedding finds them in fastembed's default cache folder
    (``FASTEMBED_CACHE_PATH``), as it would find the downloaded models; the hub is never
    asked (``HF_HUB_OFFLINE``). Built in milliseconds, so per run.
    """
    from fastembed_standins import build_cache, model_sources

    folder = Path(tempfile.mkdtemp(prefix="memora-ogm-fastembed-"))
    os.environ["FASTEMBED_CACHE_PATH"] = str(build_cache(folder, model_sources()))
    os.environ["HF_HUB_OFFLINE"] = "1"


@pytest.fixture
def qdrant_server() -> Iterator[tuple[str, StandIn]]:
    """A Qdrant server (the stand-in) that processes share: its URL, and what it holds."""
    with qdrant_standin() as running:
        yield running


@pytest.fixture(scope="session")
def restartable_neo4j(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RestartableServer]:
    """An embedded Neo4j of the tests' own, to stop, kill and start again (a JVM start
    and warm-up is the dearest set-up there is: the modules that do so share one)."""
    restartable = RestartableServer(tmp_path_factory.mktemp("neo4j-restartable"))
    restartable.start()
    try:
        yield restartable
    finally:
        restartable.stop()


@pytest.fixture(scope="module")
def proxy(neo4j_connection: Neo4jConnection) -> Iterator[ReplyLosingProxy]:
    """A Bolt proxy to the test server that loses commits or their answers on demand."""
    losing = ReplyLosingProxy(neo4j_connection.uri)
    yield losing
    losing.close()
