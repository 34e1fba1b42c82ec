"""A real Neo4j 5.26 with APOC for tests, the demo and development (SPEC section 8):
``with connect_or_start() as conn`` gives one, found or started."""

from memora_ogm.server.chain import (
    Backend,
    EnvironmentFacts,
    NoNeo4jAvailableError,
    connect_or_start,
    gather_facts,
    select_backend,
)
from memora_ogm.server.connection import Neo4jConnection, Neo4jSettingsError, connection_from_env
from memora_ogm.server.docker import DockerNeo4jError, docker_available, docker_neo4j
from memora_ogm.server.local import (
    LocalNeo4jError,
    LocalNeo4jServer,
    build,
    find_java_tools,
    stop_process,
)

__all__ = [
    "Backend",
    "DockerNeo4jError",
    "EnvironmentFacts",
    "LocalNeo4jError",
    "LocalNeo4jServer",
    "Neo4jConnection",
    "Neo4jSettingsError",
    "NoNeo4jAvailableError",
    "build",
    "connect_or_start",
    "connection_from_env",
    "docker_available",
    "docker_neo4j",
    "find_java_tools",
    "gather_facts",
    "select_backend",
    "stop_process",
]
