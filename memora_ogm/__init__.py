"""memora-ogm: Memora's Neo4j graph layer rebuilt on neomodel (an OGM).

Where to import the public names from:

================================  ================================================
``memora_ogm``                    ``Neo4jGraphInterface`` (the async facade), the
                                  errors, ``__version__``
``memora_ogm.sync``               the sync facade (same name), ``QdrantDB``,
                                  ``BaseVectorDB``, ``MemorySearchScope``
``memora_ogm.nodes``              the node and relationship classes (sync; ``Async``
                                  prefix for the async twins)
``memora_ogm.base``               ``BaseGraphDB``, Memora's abstract graph layer
``memora_ogm.vector_db.qdrant``   the async ``QdrantDB``
``memora_ogm.vector_db.base``     the async ``BaseVectorDB``, ``MemorySearchScope``
``memora_ogm.schema``             return models (``models``), input models (``storage``)
``memora_ogm.errors``             every error, the not-found ones included
``memora_ogm.contrib.django``     ``get_interface``, ``get_async_interface``
``memora_ogm.contrib.flask``      ``MemoraOGM``
``memora_ogm.contrib.fastapi``    ``lifespan``, ``get_interface``
``memora_ogm.mcp``                the MCP server (extra ``memora-ogm[mcp]``)
================================  ================================================
"""

from memora_ogm._async.interface import Neo4jGraphInterface
from memora_ogm._version import __version__
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
