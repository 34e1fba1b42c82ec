"""``memora_ogm.contrib.flask``: the extension on real apps, a real Neo4j and a Qdrant server.

The prefork server test (gunicorn ``--preload -w 4``, six tenants, 3,000 requests, SIGTERM)
is in ``test_fork_and_loops.py``; this module covers ``init_app`` (two apps, the app
factory, the error naming it), the shell context, what an app context binds and undoes
(also for apps on two servers behind one threaded server), and every ``flask memora-ogm``
command on success, on drift and on bad input.
"""

from __future__ import annotations

import json
import os
import threading
import urllib.request
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from click.testing import Result
from docs_blocks import follow
from flask import Flask
from neo4j import Driver
from qdrant_standin import StandIn
from werkzeug.middleware.dispatcher import DispatcherMiddleware
from werkzeug.serving import make_server

from memora_ogm import nodes
from memora_ogm._sync.connection import unit_driver
from memora_ogm.config import ConfigurationError
from memora_ogm.contrib.flask import MemoraOGM, state
from memora_ogm.schema.storage import MemoriesAndInteraction, MemoryToStore
from memora_ogm.server import Neo4jConnection
from memora_ogm.testing import clear_database
from memora_ogm.vector_db.embedding import HashingEmbedding
from memora_ogm.vector_db.qdrant import SINGLE_VECTOR_COLLECTION_NAME
from memora_ogm.vector_db.scope import MemorySearchScope

COLLECTION = SINGLE_VECTOR_COLLECTION_NAME  # the hashing embedder's layout


def settings(conn: Neo4jConnection, **more: str) -> dict[str, str]:
    """The app config keys for ``conn`` and ``more`` (``QDRANT_URL="..."``)."""
    values = {**conn.env(), "EMBEDDER": "hashing", **more}
    return {f"MEMORA_OGM_{name}": value for name, value in values.items()}


def make_app(config: dict[str, Any], ext: MemoraOGM | None = None) -> Flask:
    app = Flask(__name__)
    app.config.update(config)
    (ext or MemoraOGM()).init_app(app)
    return app


@pytest.fixture
def app(
    neo4j_connection: Neo4jConnection, clean_neo4j: Driver, qdrant_server: tuple[str, StandIn]
) -> Iterator[Flask]:
    """An app on the test server and the Qdrant stand-in; what it opened closed after."""
    made = make_app(settings(neo4j_connection, QDRANT_URL=qdrant_server[0]))
    yield made
    state(made).close()


def flask_cli(app: Flask, *args: str) -> Result:
    return app.test_cli_runner().invoke(args=["memora-ogm", *args])


def constraints(driver: Driver) -> set[str]:
    return {record["name"] for record in driver.execute_query("SHOW CONSTRAINTS").records}


def graph_counts(driver: Driver) -> tuple[int, int]:
    """Nodes and relationships in the graph."""
    (row,) = driver.execute_query(
        "MATCH (n) OPTIONAL MATCH (n)-[r]->() RETURN count(DISTINCT n) AS nodes, count(r) AS rels"
    ).records
    return row["nodes"], row["rels"]


def a_user_with_a_memory(app: Flask, memory: str = "likes green tea") -> tuple[str, str, str]:
    """org_id, user_id and memory_id of a user saved through the app's facade."""
    with app.app_context():
        memora = state(app).interface.get()
        org = memora.create_organization("Acme")
        user = memora.create_user(org.org_id, "Ann")
        agent = memora.create_agent(org.org_id, "Helper")
        memora.save_interaction_with_memories(
            org.org_id,
            agent.agent_id,
            user.user_id,
            MemoriesAndInteraction(
                interaction=[{"role": "user", "content": "I like green tea"}],
                memories=[MemoryToStore(memory=memory, source_msg_block_pos=[0])],
            ),
        )
        (found,) = memora.get_all_user_memories(org.org_id, user.user_id)
    return org.org_id, user.user_id, found.memory_id


# --------------------------------------------------------------------------- init_app


def test_one_extension_serves_two_apps_each_on_its_own_database(
    neo4j_connection: Neo4jConnection, clean_neo4j: Driver
) -> None:
    """An app factory's extension, given two apps in one process: each app has its own
    state and facade; the second app's database does not exist, so its calls fail while
    the first app's run, and neither app's settings leak into the other."""
    ext = MemoraOGM()
    first = make_app(settings(neo4j_connection), ext)
    second = make_app({**settings(neo4j_connection), "MEMORA_OGM_NEO4J_DATABASE": "elsewhere"}, ext)
    try:
        with first.app_context():
            org = ext.interface.create_organization("Acme")
            assert ext.config().neo4j.database == neo4j_connection.database
            first_interface = ext.interface
        with second.app_context():
            assert ext.interface is not first_interface
            assert ext.interface.database == "elsewhere"
            with pytest.raises(Exception, match="elsewhere"):
                ext.interface.get_organization(org.org_id)
        with first.app_context():
            assert ext.interface is first_interface, "one facade per app and process"
            assert ext.interface.get_organization(org.org_id).org_name == "Acme"
    finally:
        state(first).close()
        state(second).close()
    names = clean_neo4j.execute_query("MATCH (o:Org) RETURN o.org_name AS name").records
    assert [record["name"] for record in names] == ["Acme"]


def test_the_app_given_to_the_constructor_is_set_up_and_settings_fall_back_to_the_environment(
    neo4j_connection: Neo4jConnection, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``MemoraOGM(app)`` sets the app up at once; ``NEO4J_*`` fill what the config omits,
    a missing ``NEO4J_URI`` is an error, and a second ``init_app`` of one app is refused."""
    for name, value in neo4j_connection.env().items():
        monkeypatch.setenv(name, value)
    app = Flask(__name__)
    ext = MemoraOGM(app)
    assert ext.config(app).neo4j.uri == neo4j_connection.uri
    monkeypatch.delenv("NEO4J_URI")
    with pytest.raises(ConfigurationError, match="NEO4J_URI"):
        MemoraOGM(Flask(__name__))
    with pytest.raises(RuntimeError, match="already set up"):
        ext.init_app(app)


def test_an_app_never_given_to_the_extension_names_init_app() -> None:
    ext = MemoraOGM()
    stranger = Flask("stranger")
    with stranger.app_context(), pytest.raises(RuntimeError, match=r"init_app\(app\)") as raised:
        _ = ext.interface
    assert "'stranger'" in str(raised.value)


def test_the_shell_has_the_facade_and_the_node_classes(app: Flask) -> None:
    """``flask shell``'s context: the app's facade as ``memora``, its store as ``vectors``,
    the node classes, on the same server the facade writes to."""
    with app.app_context():
        context = app.make_shell_context()
        assert context["memora"] is state(app).interface.get()
        assert context["vectors"] is context["memora"].get_associated_vector_db() is not None
        assert context["User"] is nodes.User and context["Memory"] is nodes.Memory
        org = context["memora"].create_organization("Acme")
        assert context["Org"].nodes.get(org_id=org.org_id).org_name == "Acme"


def test_an_app_context_binds_the_node_classes_to_its_app_and_teardown_undoes_it(
    app: Flask, neo4j_connection: Neo4jConnection
) -> None:
    """In an app context neomodel reads the app's server on this process's driver for the
    app; the binding is undone when the context ends (nothing is left bound in this
    thread), and the driver is this process's, closed by ``close()``."""
    assert unit_driver.get() is None
    with app.app_context():
        driver = unit_driver.get()
        assert driver is state(app).driver.get()
        org = state(app).interface.get().create_organization("Acme")
        assert nodes.Org.nodes.get(org_id=org.org_id).org_name == "Acme"
        with app.test_request_context("/"):  # the same app's context: no second binding
            assert unit_driver.get() is driver
    assert unit_driver.get() is None, "teardown_appcontext undid the binding"
    state(app).close()
    with pytest.raises(Exception, match="closed"):
        driver.verify_connectivity()


#: The threaded server test's requests, and the client threads sending them.
REQUESTS = 300
CLIENTS = 16
MISSING = "no database elsewhere"


def answer(read: Callable[[], str]) -> str:
    """What ``read`` returned, or :data:`MISSING` for the missing database's error."""
    try:
        return read()
    except Exception as error:
        return MISSING if "elsewhere" in str(error) else repr(error)


def test_one_threaded_server_keeps_each_apps_requests_on_its_own_database(
    neo4j_connection: Neo4jConnection,
    clean_neo4j: Driver,
    second_neo4j_connection: Neo4jConnection,
    second_neo4j_driver: Driver,
) -> None:
    """Three apps of one extension behind one threaded werkzeug server (a thread per
    request): on the test server, on a second server, and on a database the test server
    lacks (Community has one user database: the name shows this way). 16 client threads
    send 300 requests; each view reads the facade and the node classes, and every answer
    is its own app's. (With neomodel 5's process-wide ``db._database_name`` in place of
    neomodel 7's per-context one, about 4 answers in 10 came from another app's.)"""
    clear_database(second_neo4j_driver, second_neo4j_connection.database)
    ext = MemoraOGM()
    apps = {
        "first": make_app(settings(neo4j_connection), ext),
        "second": make_app(settings(second_neo4j_connection), ext),
        "missing": make_app(settings(neo4j_connection, NEO4J_DATABASE="elsewhere"), ext),
    }
    org_ids: dict[str, str] = {}
    for name in ("first", "second"):
        with apps[name].app_context():
            org_ids[name] = ext.interface.create_organization(name).org_id
    org_ids["missing"] = org_ids["first"]  # on the server, in the database it does not use
    expected = {name: {"nodes": name, "facade": name} for name in org_ids}
    expected["missing"] = {"nodes": MISSING, "facade": MISSING}

    def read(org_id: str) -> dict[str, str]:
        """The facade's read first: another request binds meanwhile, if binding can leak."""
        return {
            "facade": answer(lambda: ext.interface.get_organization(org_id).org_name),
            "nodes": answer(lambda: ",".join(org.org_name for org in nodes.Org.nodes.all())),
        }

    for app in apps.values():
        app.add_url_rule("/<org_id>", view_func=read)
    mounted = DispatcherMiddleware(Flask(__name__), {f"/{name}": app for name, app in apps.items()})
    server = make_server("127.0.0.1", 0, mounted, threaded=True)
    serving = threading.Thread(target=server.serve_forever)
    serving.start()

    def ask(name: str) -> tuple[str, dict[str, str]]:
        url = f"http://127.0.0.1:{server.port}/{name}/{org_ids[name]}"
        with urllib.request.urlopen(url, timeout=30) as response:
            return name, json.load(response)

    try:
        with ThreadPoolExecutor(CLIENTS) as clients:
            answers = list(clients.map(ask, list(apps) * (REQUESTS // len(apps))))
    finally:
        server.shutdown()
        serving.join()
        server.server_close()
        for app in apps.values():
            state(app).close()
    wrong = [(name, got) for name, got in answers if got != expected[name]]
    assert len(answers) == REQUESTS and not wrong, f"{len(wrong)} wrong, first: {wrong[:3]}"


# --------------------------------------------------------------------------- commands


def test_setup_on_bad_input_exits_2_and_changes_nothing_then_sets_up_both_stores(
    app: Flask, clean_neo4j: Driver, qdrant_server: tuple[str, StandIn]
) -> None:
    from test_schema_setup import _drop_all_constraints

    _drop_all_constraints(clean_neo4j)
    bad = flask_cli(app, "setup", "--qdrant-url", qdrant_server[0], "--qdrant-path", "/tmp/x")
    assert bad.exit_code == 2 and "name two vector stores" in bad.stderr
    assert constraints(clean_neo4j) == set()
    assert not qdrant_server[1].engine.collection_exists(COLLECTION)

    done = flask_cli(app, "setup")  # the app's Qdrant server and embedder by default
    assert done.exit_code == 0, done.output
    assert "collection ready" in done.stdout
    assert {"unique_org_id", "unique_org_user", "unique_user_memory"} <= constraints(clean_neo4j)
    assert qdrant_server[1].engine.collection_exists(COLLECTION)
    assert flask_cli(app, "setup").exit_code == 0, "idempotent"


def test_migrate_lists_applies_and_refuses_unknown_options(app: Flask, clean_neo4j: Driver) -> None:
    clean_neo4j.execute_query("MATCH (m:MemoraMigration) DETACH DELETE m")
    pending = flask_cli(app, "migrate", "--list")
    assert pending.exit_code == 0 and pending.stdout.startswith(" [ ]")
    bad = flask_cli(app, "migrate", "--everything")
    assert bad.exit_code == 2 and "--everything" in bad.stderr
    assert flask_cli(app, "migrate", "--list").stdout == pending.stdout, "nothing applied"
    applied = flask_cli(app, "migrate")
    assert applied.exit_code == 0 and applied.stdout.startswith("applied:")
    listed = flask_cli(app, "migrate", "--list")
    assert listed.exit_code == 0 and " [ ]" not in listed.stdout and " [X]" in listed.stdout
    assert flask_cli(app, "migrate").stdout == "already up to date\n"


def test_check_agrees_finds_drift_repairs_it_and_fails_on_a_missing_store(
    neo4j_connection: Neo4jConnection, clean_neo4j: Driver, tmp_path: Path
) -> None:
    """On an app with an embedded store (``check`` reads its folder once the app's facade
    let go of it): agree 0, a point deleted behind the graph's back 1, a folder that is
    not there 2 (nothing mended), ``--repair`` puts the point back, 0 again."""
    from memora_ogm.sync import QdrantDB

    app = make_app(settings(neo4j_connection, QDRANT_PATH=str(tmp_path)))
    assert flask_cli(app, "setup").exit_code == 0
    org_id, _, memory_id = a_user_with_a_memory(app)
    state(app).close()
    agree = flask_cli(app, "check")
    assert agree.exit_code == 0, agree.output

    def points() -> list[str]:
        store = QdrantDB(path=tmp_path, embedding_function=HashingEmbedding())
        try:
            return [
                memory.memory_id
                for memory, _ in store.search_memory(
                    "green tea", MemorySearchScope.ORGANIZATION, org_id
                )
            ]
        finally:
            store.close()

    store = QdrantDB(path=tmp_path, embedding_function=HashingEmbedding())
    store.delete_memory(memory_id)
    store.close()
    drift = flask_cli(app, "check", "--org", org_id)
    assert drift.exit_code == 1 and memory_id in drift.stdout

    missing = flask_cli(app, "check", "--qdrant-path", str(tmp_path / "nothing"))
    assert missing.exit_code == 2 and "no Qdrant folder" in missing.stderr
    assert points() == [], "a failed check mends nothing"

    repaired = flask_cli(app, "check", "--repair")
    assert repaired.exit_code == 0, repaired.output
    assert points() == [memory_id]
    assert flask_cli(app, "check").exit_code == 0


def test_check_without_a_vector_store_names_the_settings_to_set(
    neo4j_connection: Neo4jConnection,
    clean_neo4j: Driver,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Nothing to compare the graph with: exit 2, naming the app's config keys (and, for
    ``memora-ogm check``, its options); the options are click's own (``--help``)."""
    from memora_ogm import cli

    for name in ("QDRANT_URL", "QDRANT_PATH"):
        monkeypatch.delenv(name, raising=False)
    app = make_app(settings(neo4j_connection))
    try:
        done = flask_cli(app, "check")
    finally:
        state(app).close()
    assert done.exit_code == 2
    assert (
        "no vector store to compare the graph with: name one with "
        "MEMORA_OGM_QDRANT_URL or MEMORA_OGM_QDRANT_PATH"
    ) in done.stderr
    assert "--repair" in flask_cli(app, "check", "--help").stdout

    capsys.readouterr()
    assert cli.main(["check"], environ=neo4j_connection.env()) == 2
    assert "name one with --qdrant-url or --qdrant-path" in capsys.readouterr().err


def test_export_import_and_inspect_with_their_exit_codes(
    app: Flask, clean_neo4j: Driver, qdrant_server: tuple[str, StandIn], tmp_path: Path
) -> None:
    assert flask_cli(app, "setup").exit_code == 0
    org_id, user_id, _ = a_user_with_a_memory(app)
    exported = tmp_path / "acme.jsonl"
    done = flask_cli(app, "export", "--org", org_id, "-o", str(exported))
    assert done.exit_code == 0, done.output
    kinds = [json.loads(line)["type"] for line in exported.read_text().splitlines()]
    assert "memory" in kinds and "user" in kinds
    assert flask_cli(app, "export").exit_code == 2, "--org is required"

    shown = flask_cli(app, "inspect", "--org", org_id, "--user", user_id)
    assert shown.exit_code == 0 and "Acme" in shown.stdout and "likes green tea" in shown.stdout
    assert flask_cli(app, "inspect", "--user", user_id).exit_code == 2, "--user needs --org"
    assert flask_cli(app, "inspect", "--org", "nowhere").exit_code == 1

    before, points = graph_counts(clean_neo4j), qdrant_server[1].points(COLLECTION)
    malformed = tmp_path / "bad.jsonl"
    malformed.write_text(exported.read_text().replace('"memory"', '"memroy"', 1) + "{not json\n")
    bad = flask_cli(app, "import", str(malformed))
    assert bad.exit_code == 2, bad.output
    conflict = flask_cli(app, "import", str(exported))
    assert conflict.exit_code == 1 and org_id in conflict.stderr
    assert graph_counts(clean_neo4j) == before and qdrant_server[1].points(COLLECTION) == points

    with app.app_context():
        state(app).interface.get().delete_organization(org_id)
    assert graph_counts(clean_neo4j) == (0, 0)
    restored = flask_cli(app, "import", str(exported))
    assert restored.exit_code == 0, restored.output
    assert graph_counts(clean_neo4j) == before


@pytest.mark.parametrize("page", ["flask.md", "fastapi.md"])
def test_the_docs_quick_start_saves_and_reads_an_interaction_with_memories(
    page: str, neo4j_connection: Neo4jConnection, clean_neo4j: Driver, tmp_path: Path
) -> None:
    """``docs/flask.md`` and ``docs/fastapi.md`` followed in an empty folder, with the
    environment their first step sets: the last step prints the interaction's messages and
    memories, read back."""
    env = {**os.environ, **neo4j_connection.env(), "QDRANT_PATH": "qdrant"}
    *_, last = follow(page, tmp_path, env)
    assert "['drinks green tea', 'lives in Oslo']" in last.stdout
    memories = clean_neo4j.execute_query("MATCH (m:Memory) RETURN m.memory AS text").records
    assert sorted(record["text"] for record in memories) == ["drinks green tea", "lives in Oslo"]
