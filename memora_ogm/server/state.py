"""Where ``memora-ogm server start`` records the background server it started."""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from pathlib import Path

from memora_ogm.server.chain import NoNeo4jAvailableError
from memora_ogm.server.connection import Neo4jConnection, connection_from_env
from memora_ogm.server.local import is_local_neo4j, pid_running
from memora_ogm.server.private import make_private_dir, write_private_file

ENV_HOME = "MEMORA_OGM_HOME"
STATE_FILE = "server.json"
PID_FILE = "server.pid"


def memora_home(environ: Mapping[str, str] = os.environ) -> Path:
    """``$MEMORA_OGM_HOME``, else ``~/.memora-ogm``."""
    return Path(environ.get(ENV_HOME) or Path.home() / ".memora-ogm").expanduser()


@dataclass(frozen=True)
class ServerState:
    pid: int
    uri: str
    username: str
    password: str
    database: str
    data_dir: str
    log_path: str
    neo4j_version: str

    def connection(self) -> Neo4jConnection:
        return Neo4jConnection(self.uri, self.username, self.password, self.database, "state")

    @property
    def alive(self) -> bool:
        return pid_running(self.pid) and is_local_neo4j(self.pid)


def read_state(home: Path) -> ServerState | None:
    try:
        return ServerState(**json.loads((home / STATE_FILE).read_text(encoding="utf-8")))
    except (OSError, ValueError, TypeError):
        return None


def write_state(home: Path, state: ServerState) -> None:
    """Write the state (it holds a password: readable by the owner only) and the pidfile."""
    make_private_dir(home)
    write_private_file(home / STATE_FILE, json.dumps(asdict(state), indent=1))
    write_private_file(home / PID_FILE, f"{state.pid}\n")


def clear_state(home: Path) -> None:
    for name in (STATE_FILE, PID_FILE):
        with contextlib.suppress(FileNotFoundError):
            (home / name).unlink()


#: What to tell a user whose command needs a server that is already there.
NO_SERVER_HINT = (
    "set NEO4J_URI, NEO4J_USERNAME and NEO4J_PASSWORD (and NEO4J_DATABASE) "
    "or start a server with `memora-ogm server start`."
)


def existing_connection(environ: Mapping[str, str] = os.environ) -> Neo4jConnection | None:
    """``NEO4J_URI`` & co., else the server ``memora-ogm server start`` runs, else None (for
    commands that work on data already there, so never start a server)."""
    conn = connection_from_env(environ)
    if conn is not None:
        return conn
    state = read_state(memora_home(environ))
    return state.connection() if state is not None and state.alive else None


def required_connection(environ: Mapping[str, str], purpose: str) -> Neo4jConnection:
    """:func:`existing_connection`, or an error that says how to give one."""
    conn = existing_connection(environ)
    if conn is None:
        raise NoNeo4jAvailableError(f"nothing to {purpose}: {NO_SERVER_HINT}")
    return conn
