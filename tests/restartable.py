"""An embedded Neo4j that tests stop, kill and start again where the facade expects it."""

from __future__ import annotations

import os
import signal
from pathlib import Path

from neo4j import Driver, GraphDatabase

from memora_ogm.server import LocalNeo4jServer, Neo4jConnection
from memora_ogm.server.local import free_port, generate_password


class RestartableServer:
    """One embedded Neo4j that keeps its port, data folder and password across restarts."""

    def __init__(self, data_dir: Path) -> None:
        self.port = free_port()
        self.data_dir = data_dir
        self.password = generate_password()
        self.server: LocalNeo4jServer | None = None
        self.connection: Neo4jConnection | None = None

    def start(self) -> Neo4jConnection:
        """Start (again) on the same port and data folder, with the same password."""
        self.server = LocalNeo4jServer(
            port=self.port,
            data_dir=self.data_dir,
            password=self.password,
            heap_mb=512,
            pagecache_mb=64,
        )
        self.connection = self.server.start()
        return self.connection

    def stop(self) -> None:
        """A clean shutdown."""
        if self.server is not None:
            self.server.stop()

    def crash(self) -> None:
        """SIGKILL: no shutdown, open transactions die with the process."""
        assert self.server is not None and self.server.pid is not None
        os.kill(self.server.pid, signal.SIGKILL)
        self.server.stop()  # reaps the process

    def driver(self) -> Driver:
        assert self.connection is not None
        return GraphDatabase.driver(self.connection.uri, auth=self.connection.auth)
