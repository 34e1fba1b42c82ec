"""The Docker path: a ``neo4j:5.26`` container with APOC, through testcontainers."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import urlsplit

from memora_ogm.server.connection import DEFAULT_USERNAME, Neo4jConnection
from memora_ogm.server.local import generate_password

DOCKER_IMAGE = "neo4j:5.26"


class DockerNeo4jError(RuntimeError):
    """The Docker path could not provide a Neo4j container."""


def docker_socket_candidates(environ: Mapping[str, str] = os.environ) -> list[str]:
    """Unix sockets where a Docker engine usually listens, most specific first."""
    out = []
    host = environ.get("DOCKER_HOST", "")
    if host.startswith("unix://"):
        out.append(host[len("unix://") :])
    out.append("/var/run/docker.sock")
    if environ.get("XDG_RUNTIME_DIR"):
        out.append(str(Path(environ["XDG_RUNTIME_DIR"]) / "docker.sock"))
    home = Path(environ.get("HOME") or Path.home())
    out += [
        str(home / ".docker" / "run" / "docker.sock"),
        str(home / ".docker" / "desktop" / "docker.sock"),
    ]
    return list(dict.fromkeys(out))


def _ping(sock: socket.socket) -> bool:
    sock.sendall(b"GET /_ping HTTP/1.0\r\nHost: docker\r\n\r\n")
    status = sock.recv(64).split(b"\r\n", 1)[0]
    return status.startswith(b"HTTP/") and b" 200" in status


def ping_docker_socket(path: str, timeout: float = 2.0) -> bool:
    """True when a Docker engine answers ``GET /_ping`` on the unix socket ``path``."""
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
            sock.settimeout(timeout)
            sock.connect(path)
            return _ping(sock)
    except OSError:
        return False


def docker_available(environ: Mapping[str, str] = os.environ, timeout: float = 2.0) -> bool:
    """Whether a Docker engine answers, quickly and without side effects.

    Remote setups other than plain ``tcp://`` (TLS, ssh, contexts) are left to ``docker info``.
    """
    host = environ.get("DOCKER_HOST", "")
    if host and not host.startswith("unix://"):
        parts = urlsplit(host)
        if parts.scheme == "tcp" and not environ.get("DOCKER_TLS_VERIFY") and parts.hostname:
            try:
                with socket.create_connection(
                    (parts.hostname, parts.port or 2375), timeout=timeout
                ) as sock:
                    return _ping(sock)
            except OSError:
                return False
        docker = shutil.which("docker", path=environ.get("PATH"))
        if docker is None:
            return False
        info = [docker, "info", "--format", "{{.ServerVersion}}"]
        try:
            done = subprocess.run(info, capture_output=True, timeout=max(timeout, 5.0), env=environ)
        except (OSError, subprocess.SubprocessError):
            return False
        return done.returncode == 0
    return any(ping_docker_socket(path, timeout) for path in docker_socket_candidates(environ))


def container_environment() -> dict[str, str]:
    """Extra container settings: the APOC plugin, with its procedures unrestricted."""
    return {
        "NEO4J_PLUGINS": '["apoc"]',
        "NEO4J_dbms_security_procedures_unrestricted": "apoc.*",
    }


@contextmanager
def docker_neo4j(
    image: str = DOCKER_IMAGE, password: str | None = None
) -> Iterator[Neo4jConnection]:
    """Run ``image`` with APOC via testcontainers; yields its connection, removes it after."""
    try:
        from testcontainers.community.neo4j import Neo4jContainer
    except ImportError:  # testcontainers < 4.14
        try:
            from testcontainers.neo4j import Neo4jContainer
        except ImportError as exc:
            raise DockerNeo4jError(
                "the Docker path needs testcontainers: pip install 'testcontainers[neo4j]' "
                "(or memora-ogm[test])"
            ) from exc
    password = password or generate_password()
    try:
        container = Neo4jContainer(image, password=password)
    except Exception as exc:  # docker.errors.DockerException and friends
        raise DockerNeo4jError(f"cannot reach the Docker engine: {exc}") from exc
    for key, value in container_environment().items():
        container.with_env(key, value)
    with container:
        uri = container.get_connection_url()
        yield Neo4jConnection(uri, DEFAULT_USERNAME, password, backend="docker")
