"""Which Neo4j to use (SPEC section 8): ``NEO4J_URI`` & co., else a Docker engine's
``neo4j:5.26`` with APOC, else the embedded server (Java 17+ and Maven), else an error.

:func:`select_backend` decides from :class:`EnvironmentFacts` alone, so tests can drive it
without probing the machine (:func:`gather_facts` probes).
"""

from __future__ import annotations

import enum
import os
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from memora_ogm.server.connection import ENV_URI, Neo4jConnection, connection_from_env
from memora_ogm.server.docker import docker_available, docker_neo4j
from memora_ogm.server.local import MIN_JAVA, LocalNeo4jServer, find_java_tools, maven_missing

# "docker" or "maven" skips the steps before it (NEO4J_URI still wins).
ENV_BACKEND = "MEMORA_OGM_NEO4J_BACKEND"


class Backend(str, enum.Enum):
    ENV = "env"
    DOCKER = "docker"
    MAVEN = "maven"


class NoNeo4jAvailableError(RuntimeError):
    """No configured server and no way to start one."""


@dataclass(frozen=True)
class EnvironmentFacts:
    """What the selection chain needs to know about the machine."""

    env_connection: Neo4jConnection | None = None
    docker: bool = False
    java_major: int | None = None  # None: no java found
    javac: bool = False
    mvn: bool = False
    forced_backend: str | None = None  # $MEMORA_OGM_NEO4J_BACKEND


def select_backend(facts: EnvironmentFacts) -> Backend:
    """The first usable step of the chain; raises NoNeo4jAvailableError if none is."""
    if facts.env_connection is not None:
        return Backend.ENV
    forced = (facts.forced_backend or "").strip().lower() or None
    if forced not in (None, Backend.DOCKER.value, Backend.MAVEN.value):
        raise NoNeo4jAvailableError(f"{ENV_BACKEND}={forced!r}: expected 'docker' or 'maven'")
    if forced in (None, Backend.DOCKER.value) and facts.docker:
        return Backend.DOCKER
    missing = maven_missing(facts.java_major, facts.javac, facts.mvn)
    if forced in (None, Backend.MAVEN.value) and not missing:
        return Backend.MAVEN
    skipped = f"skipped ({ENV_BACKEND}={forced})"  # a Docker engine found would have been taken
    docker = skipped if forced == Backend.MAVEN.value else "not reachable"
    java = skipped if forced == Backend.DOCKER.value else "missing " + ", ".join(missing)
    lines = [
        "No Neo4j server is available. memora-ogm looked for, in order:",
        f"  1. {ENV_URI} (with NEO4J_USERNAME, NEO4J_PASSWORD, NEO4J_DATABASE): not set",
        f"  2. a Docker engine for testcontainers: {docker}",
        f"  3. Java and Maven to build a local Neo4j Community: {java}",
        "To use an existing Neo4j 5.26+ with APOC core (your own server or Aura), set",
        "  export NEO4J_URI=bolt://host:7687   # or neo4j+s://<id>.databases.neo4j.io",
        "  export NEO4J_USERNAME=neo4j NEO4J_PASSWORD=... NEO4J_DATABASE=neo4j",
        f"or install Docker, or a JDK {MIN_JAVA}+ and Maven so memora-ogm can start a local "
        "Neo4j itself.",
    ]
    raise NoNeo4jAvailableError("\n".join(lines))


def gather_facts(environ: Mapping[str, str] = os.environ) -> EnvironmentFacts:
    """Probe the machine (lazily: nothing else is probed once NEO4J_URI is set)."""
    env_connection = connection_from_env(environ)
    if env_connection is not None:
        return EnvironmentFacts(env_connection=env_connection)
    forced = environ.get(ENV_BACKEND) or None
    docker = False if forced == Backend.MAVEN.value else docker_available(environ)
    tools = find_java_tools(environ)
    javac, mvn = tools.javac is not None, tools.mvn is not None
    return EnvironmentFacts(None, docker, tools.java_major, javac, mvn, forced)


@contextmanager
def connect_or_start(
    environ: Mapping[str, str] = os.environ, **local_options: Any
) -> Iterator[Neo4jConnection]:
    """Yield a connection from the chain; stop whatever was started on exit.

    ``local_options`` go to :class:`LocalNeo4jServer` on the Maven path."""
    facts = gather_facts(environ)
    backend = select_backend(facts)
    if backend is Backend.ENV:
        assert facts.env_connection is not None
        yield facts.env_connection
    elif backend is Backend.DOCKER:
        with docker_neo4j() as conn:
            yield conn
    else:
        with LocalNeo4jServer(environ=environ, **local_options) as conn:
            yield conn
