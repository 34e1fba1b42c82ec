"""The local server lets nobody else in: no login but its own password at any time, a
private store and state, and no JVM or store left behind by a parent that was killed."""

from __future__ import annotations

import json
import os
import shutil
import signal
import stat
import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

import neo4j
import pytest
from neo4j import GraphDatabase

import memora_ogm
from memora_ogm.server.connection import Neo4jConnection
from memora_ogm.server.local import (
    LocalNeo4jServer,
    free_port,
    pid_running,
    stop_process,
)
from memora_ogm.server.state import PID_FILE, STATE_FILE, ServerState, read_state, write_state

DEFAULT_LOGIN = ("neo4j", "neo4j")
# Neo4j locks a user for a few seconds after repeated wrong passwords.
RATE_LIMITED = "Neo.ClientError.Security.AuthenticationRateLimit"
ORPHAN_DEADLINE = 120.0  # a clean shutdown of the store, on a loaded machine


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.lstat().st_mode)


class LoginHammer:
    """Tries every login in ``auths`` against ``port`` in a loop, from another thread.

    ``accepted`` lists the logins the server took; ``refused`` counts the times it was
    listening and said no, so that a run which never reached the server shows up.
    """

    def __init__(self, port: int, auths: Sequence[tuple[str, str]]) -> None:
        self.uri = f"bolt://127.0.0.1:{port}"
        self.auths = list(auths)
        self.accepted: list[tuple[str, str]] = []
        self.refused = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.is_set():
            for auth in self.auths:
                driver = GraphDatabase.driver(self.uri, auth=auth, connection_timeout=2.0)
                try:
                    if driver.verify_authentication():
                        self.accepted.append(auth)
                    else:
                        self.refused += 1
                except neo4j.exceptions.AuthError:
                    self.refused += 1
                except (neo4j.exceptions.ServiceUnavailable, OSError):
                    pass  # not listening yet
                except neo4j.exceptions.Neo4jError as exc:
                    if exc.code == RATE_LIMITED:
                        self.refused += 1
                    else:
                        # past authentication (a login that must change the password,
                        # a database not up yet): the credentials were taken
                        self.accepted.append(auth)
                finally:
                    driver.close()

    @contextmanager
    def running(self) -> Iterator[LoginHammer]:
        self._thread.start()
        try:
            yield self
        finally:
            self._stop.set()
            self._thread.join(30)

    def keep_on_until_refused(self, times: int, timeout: float = 30.0) -> None:
        """Go on past the server's ready line until it refused ``times`` logins."""
        target = self.refused + times
        deadline = time.monotonic() + timeout
        while self.refused < target and time.monotonic() < deadline:
            time.sleep(0.05)


def _logged_in(conn: Neo4jConnection) -> neo4j.Driver:
    """A driver that logged in with ``conn``'s password, once the hammer's lock ran out."""
    driver = GraphDatabase.driver(conn.uri, auth=conn.auth)
    deadline = time.monotonic() + 30
    while True:
        try:
            driver.verify_connectivity()
            return driver
        except neo4j.exceptions.Neo4jError as exc:
            if exc.code != RATE_LIMITED or time.monotonic() > deadline:
                driver.close()
                raise
            time.sleep(0.5)


@pytest.mark.local_server
def test_only_the_new_password_logs_in_while_the_server_starts(tmp_path: Path) -> None:
    data = tmp_path / "data"
    data.mkdir()
    os.chmod(data, 0o755)  # a kept folder that others could enter is tightened
    port = free_port()

    first = LocalNeo4jServer(port=port, data_dir=data)
    try:
        with LoginHammer(port, [DEFAULT_LOGIN]).running() as hammer:
            conn = first.start()
            hammer.keep_on_until_refused(20)
        assert hammer.accepted == []
        assert hammer.refused >= 20
        with _logged_in(conn) as driver:
            driver.execute_query("CREATE (:KeptAcrossStarts {n: 1})", database_=conn.database)
    finally:
        first.stop()

    assert _mode(data) == 0o700
    store_files = [p for p in data.rglob("*") if not p.is_symlink()]
    assert len(store_files) > 10
    assert [p for p in store_files if _mode(p) & 0o077] == []

    previous = conn.auth
    second = LocalNeo4jServer(port=port, data_dir=data)
    try:
        with LoginHammer(port, [DEFAULT_LOGIN, previous]).running() as hammer:
            again = second.start()
            hammer.keep_on_until_refused(20)
        assert hammer.accepted == []
        assert hammer.refused >= 20
        assert again.password != conn.password
        with _logged_in(again) as driver:
            records, _, _ = driver.execute_query(
                "MATCH (n:KeptAcrossStarts) RETURN n.n AS n", database_=again.database
            )
        assert [r["n"] for r in records] == [1]
    finally:
        second.stop()


def _state(pid: int) -> ServerState:
    return ServerState(
        pid=pid,
        uri="bolt://127.0.0.1:7687",
        username="neo4j",
        password="a-password-nobody-else-reads",
        database="neo4j",
        data_dir="/nowhere/data",
        log_path="/nowhere/server.log",
        neo4j_version="5.26.19",
    )


def test_state_files_are_private(tmp_path: Path) -> None:
    home = tmp_path / "home"
    write_state(home, _state(1))
    assert _mode(home) == 0o700
    assert _mode(home / STATE_FILE) == 0o600
    assert _mode(home / PID_FILE) == 0o600

    # an existing file's looser mode is not kept
    os.chmod(home / STATE_FILE, 0o644)
    os.chmod(home / PID_FILE, 0o644)
    write_state(home, _state(2))
    assert _mode(home / STATE_FILE) == 0o600
    assert _mode(home / PID_FILE) == 0o600
    assert read_state(home) == _state(2)
    assert sorted(p.name for p in home.iterdir()) == sorted([STATE_FILE, PID_FILE])


def test_state_files_follow_no_link(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir(mode=0o700)
    victims = {}
    # the state file, the pid file, and the fixed temporary name older versions used
    for name in (STATE_FILE, PID_FILE, STATE_FILE + ".tmp"):
        victim = tmp_path / f"victim-{name}"
        victim.write_text("untouched\n")
        os.chmod(victim, 0o644)
        (home / name).symlink_to(victim)
        victims[name] = victim

    write_state(home, _state(3))

    for victim in victims.values():
        assert victim.read_text() == "untouched\n"
        assert _mode(victim) == 0o644
    for name in (STATE_FILE, PID_FILE):
        assert not (home / name).is_symlink()
        assert _mode(home / name) == 0o600
    assert read_state(home) == _state(3)
    assert (home / PID_FILE).read_text() == "3\n"
    leftovers = {p.name for p in home.iterdir()} - {STATE_FILE, PID_FILE, STATE_FILE + ".tmp"}
    assert leftovers == set()


PARENT_SCRIPT = textwrap.dedent(
    """
    import json, os, sys, time
    from memora_ogm.server.local import LocalNeo4jServer

    server = LocalNeo4jServer()
    conn = server.start()
    child = os.fork()
    if child == 0:
        sys.exit(0)  # a normal exit runs the atexit hook inherited from the parent
    os.waitpid(child, 0)
    started = {"jvm": server.pid, "tmp": str(server.data_dir.parent), "uri": conn.uri}
    print(json.dumps({**started, "password": conn.password}), flush=True)
    time.sleep(600)
    """
)


def _wait_until(condition: Callable[[], bool], timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.2)
    return bool(condition())


@pytest.mark.local_server
def test_an_attached_server_dies_with_a_killed_parent_not_with_a_forked_child() -> None:
    env = dict(os.environ)
    package_root = str(Path(memora_ogm.__file__).resolve().parent.parent)
    env["PYTHONPATH"] = os.pathsep.join([package_root, env.get("PYTHONPATH", "")])
    parent = subprocess.Popen(  # noqa: S603 - fixed argv
        [sys.executable, "-c", PARENT_SCRIPT],
        env=env,
        stdout=subprocess.PIPE,
        text=True,
    )
    jvm: int | None = None
    tmp: Path | None = None
    try:
        assert parent.stdout is not None
        line = parent.stdout.readline()  # the child's own start timeout bounds this
        assert line, "the parent could not start its server"
        started = json.loads(line)
        jvm, tmp = int(started["jvm"]), Path(started["tmp"])
        time.sleep(1.0)  # what a forked child's exit might have set off
        assert pid_running(jvm) and tmp.is_dir()
        with GraphDatabase.driver(started["uri"], auth=("neo4j", started["password"])) as driver:
            driver.verify_connectivity()

        parent.send_signal(signal.SIGKILL)
        parent.wait(30)

        assert _wait_until(lambda: not pid_running(jvm), ORPHAN_DEADLINE), "the JVM outlived"
        assert _wait_until(lambda: not tmp.exists(), 10.0), f"{tmp} was left behind"
    finally:
        if parent.poll() is None:
            parent.kill()
            parent.wait(30)
        if jvm is not None and pid_running(jvm):
            stop_process(jvm)
        if tmp is not None:
            shutil.rmtree(tmp, ignore_errors=True)
