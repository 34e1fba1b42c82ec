"""memora_ogm.contrib.django in a Django process: settings, management commands, system
checks, the shell's auto-imports; and the example project's own tests (the fixture and
the mixin) in a pytest of their own.

Django runs here on the example project's settings (``django_setup``); each test points
``MEMORA_OGM`` at the test server and a vector store folder of its own. Exit statuses
are also checked where users see them, from ``manage.py`` in a shell.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from django_quickstart import project_env, quickstart_project
from django_setup import EXAMPLE, example_project
from neo4j import Driver
from qdrant_standin import qdrant_standin
from web_servers import free_port, serve

from memora_ogm import sync
from memora_ogm.schema.storage import MemoriesAndInteraction, MemoryToStore
from memora_ogm.server import Neo4jConnection

MEMORY = "Ann likes green tea"


@pytest.fixture(scope="module")
def django_project(neo4j_connection: Neo4jConnection) -> None:
    example_project(neo4j_connection)


@pytest.fixture
def memora_settings(
    django_project: None, neo4j_connection: Neo4jConnection, tmp_path: Path, clean_neo4j: Driver
) -> Iterator[dict[str, Any]]:
    """``MEMORA_OGM`` on the test server's empty graph and a new embedded vector store."""
    from django.test import override_settings

    chosen = {**neo4j_connection.env(), "QDRANT_PATH": str(tmp_path / "vectors")}
    with override_settings(MEMORA_OGM=chosen):
        yield chosen


def run(*argv: str) -> int:
    """A management command's exit status, as ``manage.py`` makes it."""
    from django.core.management import CommandError, call_command

    try:
        call_command(*argv)
    except CommandError as error:
        return int(error.returncode)
    return 0


@pytest.fixture
def saved(memora_settings: dict[str, Any]) -> dict[str, str]:
    """Schema, collection and migrations installed by the commands, then one memory saved
    through a facade of the settings (graph and vector store); its ids."""
    from memora_ogm.contrib.django import memora_config

    assert run("memora_setup") == 0
    assert run("memora_migrate") == 0
    with memora_config().open_sync() as memora:
        org = memora.create_organization("Acme")
        agent = memora.create_agent(org.org_id, "Helper")
        user = memora.create_user(org.org_id, "Ann")
        conversation = MemoriesAndInteraction(
            interaction=[{"role": "user", "content": "I drink green tea"}],
            memories=[MemoryToStore(memory=MEMORY, source_msg_block_pos=[0])],
        )
        memora.save_interaction_with_memories(
            org.org_id, agent.agent_id, user.user_id, conversation
        )
        (memory,) = memora.get_all_user_memories(org.org_id, user.user_id)
        memora.get_associated_vector_db().close()  # type: ignore[union-attr]
    return {"org_id": org.org_id, "user_id": user.user_id, "memory_id": memory.memory_id}


def stores(driver: Driver) -> tuple[int, dict[tuple[str, str], int]]:
    """What the graph (its node count) and ``MEMORA_OGM``'s vector store (points per
    tenant) hold."""
    from memora_ogm.contrib.django import memora_config

    nodes = driver.execute_query("MATCH (n) RETURN count(n) AS nodes").records[0]["nodes"]
    store = sync.QdrantDB(**memora_config().store_options())
    try:
        return nodes, store.tenants()
    finally:
        store.close()


# --------------------------------------------------------------------------- settings


def test_django_neomodel_settings_reach_neomodel_and_name_the_server(
    django_project: None, neo4j_connection: Neo4jConnection, monkeypatch: pytest.MonkeyPatch
) -> None:
    from django.test import override_settings
    from neomodel import get_config

    from memora_ogm.contrib.django.conf import apply_neomodel_settings, memora_config

    neomodel = get_config()
    changed = ("database_url", "force_timezone", "max_connection_pool_size", "encrypted")
    before = {field: getattr(neomodel, field) for field in changed}
    monkeypatch.delenv("NEO4J_URI", raising=False)
    django_neomodel = {
        "NEOMODEL_NEO4J_BOLT_URL": neo4j_connection.neomodel_url,
        "NEOMODEL_FORCE_TIMEZONE": True,
        "NEOMODEL_MAX_CONNECTION_POOL_SIZE": 7,
        "NEOMODEL_ENCRYPTED_CONNECTION": False,
    }
    try:
        with override_settings(MEMORA_OGM={}, **django_neomodel):
            apply_neomodel_settings()
            assert (
                neomodel.database_url,
                neomodel.force_timezone,
                neomodel.max_connection_pool_size,
                neomodel.encrypted,
            ) == (neo4j_connection.neomodel_url, True, 7, False)
            config = memora_config()  # the server from NEOMODEL_NEO4J_BOLT_URL alone
            with config.open_sync() as memora:
                org = memora.create_organization("From django_neomodel's settings")
                assert memora.get_organization(org.org_id).org_name == org.org_name
    finally:
        neomodel.update(**before)
    assert config.neo4j.env() == neo4j_connection.env()


# --------------------------------------------------------------------------- commands


def test_setup_migrate_inspect_and_check_succeed(
    saved: dict[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    assert run("memora_migrate", "--list") == 0
    assert run("memora_inspect", "--org", saved["org_id"]) == 0
    assert run("memora_check") == 0  # the store from MEMORA_OGM
    out = capsys.readouterr().out
    assert "[X] 0001_memora_v0_3_x" in out
    assert "Ann  user_id " + saved["user_id"] in out and "memories 1 (0 superseded)" in out
    assert "1 memories, 1 points: found 0 missing, 0 orphan" in out


def test_setup_makes_the_collection_the_projects_embedder_writes(
    memora_settings: dict[str, Any], clean_neo4j: Driver
) -> None:
    from django.test import override_settings

    from memora_ogm.contrib.django import memora_config

    hashing = {**memora_settings, "EMBEDDER": "hashing"}
    with override_settings(MEMORA_OGM=hashing):
        assert run("memora_setup") == 0
        store = sync.QdrantDB(**memora_config().store_options())
        try:
            assert store.client.collection_exists(store.collection_name)
        finally:
            store.close()
        before = stores(clean_neo4j)
        assert run("memora_setup", "--embedder", "no_such_module.embed") == 2
        assert stores(clean_neo4j) == before


def test_check_exits_1_on_drift_and_repair_mends_it(
    saved: dict[str, str], memora_settings: dict[str, Any], clean_neo4j: Driver
) -> None:
    store = sync.QdrantDB(path=memora_settings["QDRANT_PATH"])
    store.delete_memory(saved["memory_id"])  # the graph keeps it: drift
    store.close()
    assert run("memora_check") == 1
    assert run("memora_check", "--repair") == 0
    assert run("memora_check") == 0
    assert stores(clean_neo4j)[1] == {(saved["org_id"], saved["user_id"]): 1}


def test_export_and_import_round_trip_with_their_exit_statuses(
    saved: dict[str, str], memora_settings: dict[str, Any], clean_neo4j: Driver, tmp_path: Path
) -> None:
    exported = tmp_path / "acme.jsonl"
    assert run("memora_export", "--org", saved["org_id"], "-o", str(exported)) == 0
    assert run("memora_export", "--org", "nowhere", "-o", str(tmp_path / "none.jsonl")) == 1
    assert run("memora_import", str(exported)) == 1  # everything exists already: conflict
    assert run("memora_import", str(exported), "--on-conflict", "skip") == 0

    before = stores(clean_neo4j)
    malformed = tmp_path / "malformed.jsonl"
    malformed.write_text(exported.read_text().splitlines()[0] + "\n{not json\n")
    assert run("memora_import", str(malformed)) == 2
    assert run("memora_import", str(tmp_path / "missing.jsonl")) == 2
    assert run("memora_export", "--org", saved["org_id"], "-o", str(tmp_path / "no/dir.jsonl")) == 2
    assert run("memora_check", "--qdrant-path", str(tmp_path / "no-store")) == 2
    assert run("memora_inspect", "--user", saved["user_id"]) == 2  # --user needs --org
    assert stores(clean_neo4j) == before
    assert json.loads(exported.read_text().splitlines()[1])  # a record after the header


def test_check_without_a_vector_store_names_the_settings(
    memora_settings: dict[str, Any],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Nothing to compare the graph with: exit 2, saying which settings name a store."""
    from django.test import override_settings

    for name in ("QDRANT_URL", "QDRANT_PATH"):
        monkeypatch.delenv(name, raising=False)
    with override_settings(MEMORA_OGM=saved_settings()):
        assert run("memora_check") == 2
    assert (
        "no vector store to compare the graph with: name one with "
        "MEMORA_OGM['QDRANT_URL'] or MEMORA_OGM['QDRANT_PATH']"
    ) in capsys.readouterr().err


def test_exit_statuses_reach_the_shell(
    saved: dict[str, str],
    memora_settings: dict[str, Any],
    neo4j_connection: Neo4jConnection,
    clean_neo4j: Driver,
    tmp_path: Path,
) -> None:
    """From ``manage.py`` of the quick start's project (its store given by option)."""
    store = sync.QdrantDB(path=memora_settings["QDRANT_PATH"])
    store.delete_memory(saved["memory_id"])
    store.close()
    before = stores(clean_neo4j)
    bad_file = tmp_path / "bad.jsonl"
    bad_file.write_text("not json\n")
    folder = quickstart_project(neo4j_connection)
    commands = {
        ("memora_check", "--qdrant-path", memora_settings["QDRANT_PATH"]): 1,  # drift
        ("memora_import", str(bad_file)): 2,
        ("memora_inspect", "--limit", "0"): 2,
        ("memora_setup", "--qdrant-path", "a", "--qdrant-url", "http://b"): 2,
        ("memora_migrate", "--list", "extra"): 2,
        ("memora_export",): 2,  # --org is required
    }

    def manage(argv: tuple[str, ...]) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "manage.py", *argv],
            cwd=folder,
            env=project_env(neo4j_connection),
            capture_output=True,
            text=True,
        )

    with ThreadPoolExecutor(3) as pool:
        ran = dict(zip(commands, pool.map(manage, commands), strict=True))
    assert {argv: done.returncode for argv, done in ran.items()} == commands, {
        argv: done.stderr[-600:] for argv, done in ran.items()
    }
    assert stores(clean_neo4j) == before


# --------------------------------------------------------------------------- checks


#: What ``manage.py check --database default`` passes the checks.
DATABASES = {"databases": ["default"]}


def messages(*checks: Any) -> list[str]:
    return [message.id for check in checks for message in check(**DATABASES)]


def test_checks_are_silent_on_a_good_setup(saved: dict[str, str]) -> None:
    from django.core.checks import run_checks

    from memora_ogm.contrib.django.checks import TAG

    assert [m.id for m in run_checks(tags=[TAG], **DATABASES)] == []
    with qdrant_standin() as (url, _):
        from django.test import override_settings

        from memora_ogm.contrib.django.checks import check_vector_store

        with override_settings(MEMORA_OGM={**saved_settings(), "QDRANT_URL": url}):
            assert check_vector_store(**DATABASES) == []


def saved_settings() -> dict[str, Any]:
    from django.conf import settings

    return {k: v for k, v in settings.MEMORA_OGM.items() if k != "QDRANT_PATH"}


@pytest.mark.parametrize(
    ("change", "check", "expected"),
    [
        ({"NEO4J_URI": "", "NEO4J_PASSWORD": None}, "check_settings", "memora_ogm.E001"),
        ({"NEO4J_URI": "bolt://127.0.0.1:{port}"}, "check_graph", "memora_ogm.E002"),
        ({"NEO4J_PASSWORD": "not-the-password"}, "check_graph", "memora_ogm.E003"),
        (
            {"QDRANT_PATH": None, "QDRANT_URL": "http://127.0.0.1:{port}"},
            "check_vector_store",
            "memora_ogm.E004",
        ),
        ({"QDRANT_PATH": "{file}/vectors"}, "check_settings", "memora_ogm.E004"),
    ],
    ids=["no-settings", "unreachable", "credentials", "qdrant-down", "qdrant-folder"],
)
def test_each_error_fires_on_its_broken_setup(
    memora_settings: dict[str, Any],
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    change: dict[str, str | None],
    check: str,
    expected: str,
) -> None:
    from django.test import override_settings

    from memora_ogm.contrib.django import checks

    monkeypatch.delenv("NEO4J_URI", raising=False)
    a_file = tmp_path / "a-file"
    a_file.write_text("")
    broken = dict(memora_settings)
    for name, value in change.items():
        if value is None:
            broken.pop(name)
        else:
            broken[name] = value.format(port=free_port(), file=a_file)
    with override_settings(MEMORA_OGM=broken):
        (found,) = getattr(checks, check)(**DATABASES)
        if check != "check_settings":  # a server is asked only with --database
            assert getattr(checks, check)() == []
    assert found.id == expected
    assert found.hint  # each says the fix


def test_only_check_database_waits_on_a_stopped_server(tmp_path: Path) -> None:
    """The example project on a Neo4j that is not running (a closed port): ``runserver``
    starts and answers, ``check`` and ``makemigrations --check`` pass as usual, and only
    ``check --database default`` asks the server, reporting memora_ogm.E002."""
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith(("NEO4J_", "QDRANT_"))},
        "NEO4J_URI": f"bolt://127.0.0.1:{free_port()}",
        "NEO4J_PASSWORD": "stopped",
        "QDRANT_PATH": str(tmp_path / "vectors"),
        "DJANGO_SETTINGS_MODULE": "django_project.settings",
    }

    def manage(*argv: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "manage.py", *argv],
            cwd=EXAMPLE,
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )

    runserver = [sys.executable, "manage.py", "runserver", "--noreload", "127.0.0.1:{port}"]
    with serve(runserver, env, "/", cwd=EXAMPLE), ThreadPoolExecutor(3) as pool:
        commands = [("check",), ("makemigrations", "--check"), ("check", "--database", "default")]
        plain, migrations, database = pool.map(lambda argv: manage(*argv), commands)
    assert plain.returncode == 0 and "no issues" in plain.stdout, plain.stderr
    assert migrations.returncode == 0 and "No changes detected" in migrations.stdout
    assert database.returncode == 1 and "(memora_ogm.E002) Neo4j is not reachable" in (
        database.stderr
    ), database.stderr


def test_constraints_and_migrations_warnings_fire_until_the_commands_ran(
    memora_settings: dict[str, Any], clean_neo4j: Driver
) -> None:
    from memora_ogm.contrib.django.checks import check_graph

    assert run("memora_setup") == 0
    clean_neo4j.execute_query("DROP CONSTRAINT unique_org_id")
    assert messages(check_graph) == ["memora_ogm.W002", "memora_ogm.W003"]  # new graph
    assert run("memora_setup") == 0
    assert messages(check_graph) == ["memora_ogm.W003"]
    assert run("memora_migrate") == 0
    assert messages(check_graph) == []


def test_no_apoc_warns_of_the_python_fallback(
    memora_settings: dict[str, Any], neo4j_connection: Neo4jConnection
) -> None:
    """A server without APOC is the facade with ``use_apoc = False``: what it then does
    (resolve placeholders in Python) is what the warning names."""
    from memora_ogm.contrib.django.checks import schema_findings

    assert run("memora_setup") == 0 and run("memora_migrate") == 0
    with sync.Neo4jGraphInterface.from_connection(neo4j_connection) as memora:
        assert schema_findings(memora) == []
        memora.graph.use_apoc = False
        (warning,) = schema_findings(memora)
    assert warning.id == "memora_ogm.W001"
    assert "memora_ogm.placeholders" in warning.msg


def test_embedded_store_is_a_deploy_warning(memora_settings: dict[str, Any]) -> None:
    from django.core.checks import run_checks
    from django.test import override_settings

    from memora_ogm.contrib.django.checks import TAG

    assert run("memora_setup") == 0 and run("memora_migrate") == 0
    assert [m.id for m in run_checks(tags=[TAG])] == []
    deployed = [m for m in run_checks(tags=[TAG], include_deployment_checks=True)]
    assert [m.id for m in deployed] == ["memora_ogm.W004"] and "QDRANT_URL" in deployed[0].hint
    with override_settings(MEMORA_OGM={**saved_settings(), "QDRANT_URL": "http://q:6333"}):
        from memora_ogm.contrib.django.checks import check_embedded_store_deployed

        assert check_embedded_store_deployed() == []


# --------------------------------------------------------------------------- shell, testing


def test_shell_has_the_facade_and_the_node_classes(
    saved: dict[str, str], neo4j_connection: Neo4jConnection
) -> None:
    folder = quickstart_project(neo4j_connection)
    code = "print(sorted(o.org_name for o in memora.get_all_organizations()), User.__name__)"
    shell = subprocess.run(
        [sys.executable, "manage.py", "shell", "-c", code],
        cwd=folder,
        env=project_env(neo4j_connection),
        capture_output=True,
        text=True,
    )
    assert shell.returncode == 0, shell.stderr
    assert shell.stdout.splitlines()[-1] == "['Acme'] User"


def test_the_example_projects_tests_pass_on_the_fixture_and_the_mixin(
    neo4j_connection: Neo4jConnection, tmp_path: Path
) -> None:
    """``examples/django_project``'s tests, in a pytest of their own (pytest-django takes
    one settings module per process), on this session's server."""
    env = {**project_env(neo4j_connection), "QDRANT_PATH": str(tmp_path / "vectors")}
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "memory_api/tests.py"],
        cwd=EXAMPLE,
        env=env,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stdout[-3000:]
    assert "4 passed" in done.stdout
