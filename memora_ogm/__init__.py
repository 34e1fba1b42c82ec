"""memora-ogm: Memora's Neo4j graph layer rebuilt on neomodel (an OGM).

``Neo4jGraphInterface`` is the async facade (Memora's API); ``memora_ogm.sync``
has its generated synchronous twin; ``memora_ogm.nodes`` the node classes.
"""

from importlib.metadata import PackageNotFoundError, version

from memora_ogm._async.interface import Neo4jGraphInterface
from memora_ogm.errors import (
    AgentNotFound,
    ConflictError,
    InteractionNotFound,
    MemoryNotFound,
    NotFoundError,
    OrganizationNotFound,
    OutcomeUnknown,
    RetriesExhausted,
    UserNotFound,
)

try:
    __version__ = version("memora-ogm")  # single source: pyproject.toml
except PackageNotFoundError:  # a source tree that was never installed
    __version__ = "0+unknown"

__all__ = [
    "AgentNotFound",
    "ConflictError",
    "InteractionNotFound",
    "MemoryNotFound",
    "Neo4jGraphInterface",
    "NotFoundError",
    "OrganizationNotFound",
    "OutcomeUnknown",
    "RetriesExhausted",
    "UserNotFound",
    "__version__",
]
