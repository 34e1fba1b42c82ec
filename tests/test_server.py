"""The Neo4j that tests and the demo run against is real (SPEC section 8)."""

from __future__ import annotations

import json
import os
import re
import socket
import stat
import subprocess
import sys
import threading
import time
from importlib.metadata import entry_points
from pathlib import Path

import neo4j
import pytest
from neo4j import GraphDatabase
from neomodel.async_.database import AsyncDatabase
from neomodel.sync_.database import Database

from memora_ogm.server import (
    Backend,
    DockerNeo4jError,
    EnvironmentFacts,
    LocalNeo4jError,
    LocalNeo4jServer,
    Neo4jConnection,
    Neo4jSettingsError,
    NoNeo4jAvailableError,
    build,
    connection_from_env,
    docker_available,
    docker_neo4j,
    find_java_tools,
    gather_facts,
    select_backend,
)
from memora_ogm.server.docker import container_environment, ping_docker_socket
from memora_ogm.server.local import (
    ENV_SETTINGS,
    free_port,
    parse_java_major,
    pid_running,
    pom_neo4j_version,
)
from memora_ogm.testing import clear_database

APOC_REPLACE = 'RETURN apoc.text.replace($text, "(?i)user_[a-z0-9-]+", "Ann") AS replaced'


def _version_tuple(version: str) -> tuple[int, ...]:
    return tuple(int(part) for part in re.findall(r"\d+", version)[:3])


# --------------------------------------------------------------------------- the server


def test_query_through_the_driver(
    neo4j_driver: neo4j.Driver, neo4j_connection: Neo4jConnection
) -> None:
    records, _, _ = neo4j_driver.execute_query(
        "UNWIND range(1, 4) AS x RETURN sum(x) AS total", database_=neo4j_connection.database
    )
    assert records[0]["total"] == 10


def test_query_through_neomodel(neomodel_db: Database) -> None:
    rows, columns = neomodel_db.cypher_query("RETURN 40 + 2 AS answer")
    assert rows == [[42]]
    assert list(columns) == ["answer"]


async def test_query_through_async_neomodel(neomodel_adb: AsyncDatabase) -> None:
    rows, columns = await neomodel_adb.cypher_query("RETURN toUpper($s) AS up", {"s": "async"})
    assert rows == [["ASYNC"]]
    assert list(columns) == ["up"]


def test_apoc_text_replace(neo4j_driver: neo4j.Driver, neo4j_connection: Neo4jConnection) -> None:
    records, _, _ = neo4j_driver.execute_query(
        APOC_REPLACE, text="user_ab's car", database_=neo4j_connection.database
    )
    assert records[0]["replaced"] == "Ann's car"


def test_edition_and_version(neo4j_driver: neo4j.Driver, neo4j_connection: Neo4jConnection) -> None:
    records, _, _ = neo4j_driver.execute_query(
        "CALL dbms.components() YIELD name, versions, edition RETURN name, versions, edition"
    )
    kernel = next(r for r in records if r["name"] == "Neo4j Kernel")
    version = kernel["versions"][0]
    assert _version_tuple(version) >= (5, 26)
    if neo4j_connection.backend == Backend.MAVEN.value:
        assert kernel["edition"] == "community"
        assert version.startswith("5.26.")
        expected = os.environ.get("MEMORA_OGM_NEO4J_VERSION") or pom_neo4j_version()
        assert version == expected


def test_wrong_password_is_refused(neo4j_connection: Neo4jConnection) -> None:
    wrong = (neo4j_connection.username, neo4j_connection.password + "-wrong")
    with GraphDatabase.driver(neo4j_connection.uri, auth=wrong) as driver:
        with pytest.raises(neo4j.exceptions.AuthError):
            driver.verify_connectivity()


def test_clean_neo4j_deletes_data_in_batches_and_keeps_the_schema(
    clean_neo4j: neo4j.Driver, neo4j_connection: Neo4jConnection
) -> None:
    db = neo4j_connection.database
    name = "memora_ogm_test_server_clean"
    clean_neo4j.execute_query(
        f"CREATE CONSTRAINT {name} IF NOT EXISTS FOR (n:MemoraOgmServerTest) REQUIRE n.k IS UNIQUE",
        database_=db,
    )
    try:
        clean_neo4j.execute_query(
            "UNWIND range(1, 25) AS k CREATE (a:MemoraOgmServerTest {k: k})-[:NEXT]->(:Other)",
            database_=db,
        )
        # A hub linked to more nodes than a batch holds: relationships go in batches
        # before any node, so no batch detaches a node of higher degree than the batch.
        clean_neo4j.execute_query(
            "CREATE (hub:Other) WITH hub MATCH (a:MemoraOgmServerTest) CREATE (a)-[:AT]->(hub)",
            database_=db,
        )
        assert clear_database(clean_neo4j, db, batch_size=7) == 51
        count, _, _ = clean_neo4j.execute_query(
            "RETURN COUNT { MATCH (n) } AS c, COUNT { ()-[]->() } AS r", database_=db
        )
        assert (count[0]["c"], count[0]["r"]) == (0, 0)
        constraints, _, _ = clean_neo4j.execute_query(
            "SHOW CONSTRAINTS YIELD name WHERE name = $name RETURN name", name=name, database_=db
        )
        assert len(constraints) == 1
    finally:
        clean_neo4j.execute_query(f"DROP CONSTRAINT {name} IF EXISTS", database_=db)


def test_the_session_server_comes_from_the_chain(neo4j_connection: Neo4jConnection) -> None:
    facts = gather_facts()
    assert neo4j_connection.backend == select_backend(facts).value


# --------------------------------------------------------------------------- settings


def test_connection_from_env_defaults_and_neomodel_url() -> None:
    assert connection_from_env({}) is None
    assert connection_from_env({"NEO4J_URI": "  "}) is None
    conn = connection_from_env({"NEO4J_URI": "bolt://db.example:7687", "NEO4J_PASSWORD": "pw:x@y"})
    assert conn == Neo4jConnection("bolt://db.example:7687", "neo4j", "pw:x@y", "neo4j", "env")
    # neomodel splits at the last "@" and the first ":" without unquoting
    assert conn.neomodel_url == "bolt://neo4j:pw:x@y@db.example:7687/neo4j"
    aura = Neo4jConnection("neo4j+s://abc.databases.neo4j.io", "u", "p", "memora")
    assert aura.neomodel_url == "neo4j+s://u:p@abc.databases.neo4j.io/memora"
    with pytest.raises(ValueError, match="neomodel"):
        _ = Neo4jConnection("bolt://h:1", "neo4j", "a/b").neomodel_url
    assert "export NEO4J_PASSWORD='a b'" in Neo4jConnection("bolt://h:1", "u", "a b").export_lines()
    assert "a b" not in repr(Neo4jConnection("bolt://h:1", "u", "a b"))


def test_incomplete_env_settings_are_an_error() -> None:
    with pytest.raises(Neo4jSettingsError, match="NEO4J_PASSWORD"):
        connection_from_env({"NEO4J_URI": "bolt://h:7687"})
    with pytest.raises(Neo4jSettingsError, match="not a URI"):
        connection_from_env({"NEO4J_URI": "localhost", "NEO4J_PASSWORD": "x"})


# --------------------------------------------------------------------------- the chain

ENV_CONN = Neo4jConnection("bolt://elsewhere:7687", "neo4j", "secret")


def with_java(**facts: object) -> EnvironmentFacts:
    """Facts of a machine with Java 17, javac and Maven, plus ``facts``."""
    return EnvironmentFacts(java_major=17, javac=True, mvn=True, **facts)  # type: ignore[arg-type]


def test_env_wins_over_docker_and_maven() -> None:
    facts = with_java(env_connection=ENV_CONN, docker=True)
    assert select_backend(facts) is Backend.ENV
    facts = with_java(env_connection=ENV_CONN, forced_backend="maven")
    assert select_backend(facts) is Backend.ENV


def test_docker_comes_before_maven() -> None:
    assert select_backend(with_java(docker=True)) is Backend.DOCKER
    assert select_backend(EnvironmentFacts(docker=True)) is Backend.DOCKER


def test_maven_when_there_is_no_docker() -> None:
    assert select_backend(with_java(docker=False)) is Backend.MAVEN
    assert select_backend(EnvironmentFacts(java_major=21, javac=True, mvn=True)) is Backend.MAVEN


def test_a_forced_backend_skips_the_other() -> None:
    assert select_backend(with_java(docker=True, forced_backend="maven")) is (Backend.MAVEN)
    with pytest.raises(NoNeo4jAvailableError, match="skipped"):
        select_backend(with_java(docker=False, forced_backend="docker"))
    with pytest.raises(NoNeo4jAvailableError, match="expected 'docker' or 'maven'"):
        select_backend(with_java(forced_backend="podman"))


def test_nothing_available_names_what_is_missing() -> None:
    with pytest.raises(NoNeo4jAvailableError) as info:
        select_backend(EnvironmentFacts())
    message = str(info.value)
    for needle in ("NEO4J_URI", "NEO4J_PASSWORD", "Docker", "Java 17+", "javac", "mvn"):
        assert needle in message
    assert "Aura" in message
    with pytest.raises(NoNeo4jAvailableError, match=r"found Java 11"):
        select_backend(EnvironmentFacts(java_major=11, javac=True, mvn=True))
    with pytest.raises(NoNeo4jAvailableError) as info:
        select_backend(EnvironmentFacts(java_major=17, javac=True, mvn=False))
    assert "Maven" in str(info.value) and "javac" not in str(info.value).split("missing")[1]


def test_gather_facts_probes_nothing_once_neo4j_uri_is_set() -> None:
    facts = gather_facts({"NEO4J_URI": "bolt://h:7687", "NEO4J_PASSWORD": "p", "PATH": ""})
    assert facts == EnvironmentFacts(env_connection=Neo4jConnection("bolt://h:7687", "neo4j", "p"))


def test_gather_facts_without_tools(tmp_path: Path) -> None:
    env = {"PATH": str(tmp_path), "HOME": str(tmp_path), "DOCKER_HOST": f"unix://{tmp_path}/no"}
    facts = gather_facts(env)
    assert facts == EnvironmentFacts(docker=False, java_major=None, javac=False, mvn=False)
    with pytest.raises(NoNeo4jAvailableError):
        select_backend(facts)


def test_java_version_parsing_and_tools() -> None:
    assert parse_java_major('openjdk version "17.0.15" 2025-04-15') == 17
    assert parse_java_major('java version "1.8.0_392"') == 8
    assert parse_java_major('openjdk version "21" 2023-09-19') == 21
    assert parse_java_major("no java here") is None
    tools = find_java_tools()
    facts = gather_facts()
    if facts.env_connection is None:
        assert facts.java_major == (tools.java_major if tools.java else None)


# --------------------------------------------------------------------------- docker probe


def _fake_docker_socket(path: str, status: bytes) -> threading.Thread:
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(path)
    server.listen(1)

    def answer() -> None:
        with server:
            conn, _ = server.accept()
            with conn:
                conn.recv(1024)
                conn.sendall(b"HTTP/1.1 " + status + b"\r\nContent-Length: 2\r\n\r\nOK")

    thread = threading.Thread(target=answer, daemon=True)
    thread.start()
    return thread


def test_docker_probe_talks_to_the_engine_api(tmp_path: Path) -> None:
    assert ping_docker_socket(str(tmp_path / "missing.sock")) is False
    good = str(tmp_path / "good.sock")
    thread = _fake_docker_socket(good, b"200 OK")
    assert docker_available({"DOCKER_HOST": f"unix://{good}", "HOME": str(tmp_path)}) is True
    thread.join(5)
    bad = str(tmp_path / "bad.sock")
    thread = _fake_docker_socket(bad, b"500 Internal Server Error")
    assert ping_docker_socket(bad) is False
    thread.join(5)


def test_docker_probe_on_this_machine(neo4j_connection: Neo4jConnection) -> None:
    started = time.monotonic()
    available = docker_available()
    assert time.monotonic() - started < 10
    if neo4j_connection.backend == Backend.MAVEN.value and not os.environ.get(
        "MEMORA_OGM_NEO4J_BACKEND"
    ):
        assert available is False  # otherwise the chain would have picked Docker


def test_docker_path_runs_neo4j_with_apoc_or_says_docker_is_missing() -> None:
    assert container_environment()["NEO4J_PLUGINS"] == '["apoc"]'
    if docker_available():
        with docker_neo4j() as conn, GraphDatabase.driver(conn.uri, auth=conn.auth) as driver:
            records, _, _ = driver.execute_query(APOC_REPLACE, text="user_ab's car")
            assert records[0]["replaced"] == "Ann's car"
            assert conn.backend == "docker"
    else:
        with pytest.raises(DockerNeo4jError, match="Docker engine"):
            with docker_neo4j():
                pass


# --------------------------------------------------------------------------- Maven path


@pytest.mark.local_server
def test_the_maven_build_is_cached() -> None:
    started = time.monotonic()
    first = build()
    second = build()
    assert time.monotonic() - started < 10
    assert first == second
    assert first.stamp.is_file()
    assert any(first.plugins_dir.glob("apoc-core-*.jar"))
    assert any(first.plugins_dir.glob("apoc-common-*.jar"))
    assert (first.classes_dir / "LocalNeo4j.class").is_file()


@pytest.mark.local_server
def test_local_server_refuses_a_busy_port() -> None:
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen(1)
        port = busy.getsockname()[1]
        with pytest.raises(LocalNeo4jError, match="already in use"):
            LocalNeo4jServer(port=port).start()


@pytest.mark.local_server
def test_local_server_failure_shows_the_log() -> None:
    server = LocalNeo4jServer(heap_mb=1)  # the JVM refuses to start with 1 MiB of heap
    with pytest.raises(LocalNeo4jError, match="(?s)exited before it was ready.*heap"):
        server.start()
    assert not server.running


@pytest.mark.local_server
def test_local_server_applies_neo4j_settings_and_names_a_bad_one() -> None:
    no_value = {**os.environ, ENV_SETTINGS: "db.logs.query.enabled"}
    with pytest.raises(LocalNeo4jError, match="'db.logs.query.enabled' is not name=value"):
        LocalNeo4jServer(environ=no_value).start()
    unknown = {**os.environ, ENV_SETTINGS: "db.no_such_setting=1"}
    with pytest.raises(LocalNeo4jError, match="(?s)exited before it was ready.*db.no_such_setting"):
        LocalNeo4jServer(environ=unknown).start()
    settings = "dbms.cypher.min_replan_interval=7m 'db.logs.query.enabled = OFF'"
    with LocalNeo4jServer(environ={**os.environ, ENV_SETTINGS: settings}) as conn:
        with GraphDatabase.driver(conn.uri, auth=conn.auth) as driver:
            records, _, _ = driver.execute_query(
                "SHOW SETTINGS YIELD name, value WHERE name IN $names RETURN name, value",
                names=["dbms.cypher.min_replan_interval", "db.logs.query.enabled"],
            )
    assert {r["name"]: r["value"] for r in records} == {
        "dbms.cypher.min_replan_interval": "7m",
        "db.logs.query.enabled": "OFF",
    }


def _cli(*args: str, env: dict[str, str], timeout: float = 300) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "memora_ogm.cli", *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def _exports(stdout: str) -> dict[str, str]:
    out = {}
    for line in stdout.splitlines():
        match = re.fullmatch(r"export (NEO4J_[A-Z]+)=(\S+)", line.strip())
        if match:
            out[match.group(1)] = match.group(2).strip("'")
    return out


@pytest.mark.local_server
def test_cli_server_start_status_demo_stop(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("NEO4J_")}
    env["MEMORA_OGM_HOME"] = str(tmp_path / "home")
    port = free_port()
    pid = None
    try:
        started = _cli("server", "start", "--port", str(port), env=env)
        assert started.returncode == 0, started.stderr
        exports = _exports(started.stdout)
        assert exports["NEO4J_URI"] == f"bolt://127.0.0.1:{port}"
        state = json.loads((tmp_path / "home" / "server.json").read_text())
        pid = int(state["pid"])
        home = tmp_path / "home"
        modes = {p.name: stat.S_IMODE(p.stat().st_mode) for p in home.iterdir()}
        assert modes == {
            "data": 0o700,
            "server.json": 0o600,
            "server.pid": 0o600,
            "server.log": 0o600,
        }
        assert stat.S_IMODE(home.stat().st_mode) == 0o700
        assert (tmp_path / "home" / "server.pid").read_text().strip() == str(pid)
        assert pid_running(pid)

        auth = (exports["NEO4J_USERNAME"], exports["NEO4J_PASSWORD"])
        with GraphDatabase.driver(exports["NEO4J_URI"], auth=auth) as driver:
            records, _, _ = driver.execute_query("RETURN 1 AS one", database_="neo4j")
            assert records[0]["one"] == 1

        again = _cli("server", "start", env=env)
        assert again.returncode == 0 and "already running" in again.stderr
        assert _exports(again.stdout) == exports

        status = _cli("server", "status", env=env)
        assert status.returncode == 0 and _exports(status.stdout) == exports

        demo = _cli("demo", env=env)
        assert demo.returncode == 0, demo.stderr
        assert "embedder: feature hashing (offline" in demo.stdout
        assert re.search(r"Neo4j Kernel 5\.26\.\d+ community edition", demo.stdout)
        assert f"127.0.0.1:{port}" in demo.stdout

        stopped = _cli("server", "stop", env=env)
        assert stopped.returncode == 0, stopped.stderr
        assert not pid_running(pid)
        assert not (tmp_path / "home" / "server.json").exists()
        assert _cli("server", "status", env=env).returncode == 3
        assert _cli("server", "stop", env=env).returncode == 0
    finally:
        if pid is not None and pid_running(pid):
            from memora_ogm.server import stop_process

            stop_process(pid)


def test_the_package_registers_its_command_and_pytest_plugin() -> None:
    scripts = entry_points(group="console_scripts", name="memora-ogm")
    assert [ep.value for ep in scripts] == ["memora_ogm.cli:main"]
    plugins = entry_points(group="pytest11", name="memora_ogm")
    assert [ep.value for ep in plugins] == ["memora_ogm.testing"]
