"""The synchronous API, for Django and Flask views, scripts and the Python shell.

Same classes, methods, arguments, return models and errors as the async API, generated
from it (``memora_ogm/_sync``, see ``scripts/generate_sync.py``) and built on neomodel's
synchronous ``db``::

    from memora_ogm.sync import Neo4jGraphInterface, QdrantDB

    memora = Neo4jGraphInterface(uri, username, password, database, QdrantDB(path="qdrant"))
    memora.setup()
    org = memora.create_organization("Acme")

``QdrantDB`` is imported on first use: qdrant-client imports fastembed and onnxruntime
when it is imported, and a process that has loaded onnxruntime 1.29 or later never
finishes exiting after ``os.fork()`` (see ``onnxruntime`` in pyproject.toml). An app
without a vector store keeps them out of its processes.
"""

from typing import TYPE_CHECKING, Any

from memora_ogm._sync.base import BaseGraphDB
from memora_ogm._sync.connection import point_neomodel
from memora_ogm._sync.interface import Neo4jGraphInterface
from memora_ogm._sync.vector_base import BaseVectorDB
from memora_ogm.vector_db.embedding import SyncEmbeddingFunction as EmbeddingFunction
from memora_ogm.vector_db.scope import MemorySearchScope

if TYPE_CHECKING:
    from memora_ogm._sync.edge import EdgeClient
    from memora_ogm._sync.qdrant import QdrantDB
    from memora_ogm._sync.transfer import move_organization


def __getattr__(name: str) -> Any:
    if name == "QdrantDB":
        from memora_ogm._sync.qdrant import QdrantDB

        return QdrantDB
    if name == "EdgeClient":  # the embedded store's client, for the vector commands
        from memora_ogm._sync.edge import EdgeClient

        return EdgeClient
    if name == "move_organization":
        from memora_ogm._sync.transfer import move_organization

        return move_organization
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "BaseGraphDB",
    "BaseVectorDB",
    "EdgeClient",
    "EmbeddingFunction",
    "MemorySearchScope",
    "Neo4jGraphInterface",
    "QdrantDB",
    "move_organization",
    "point_neomodel",
]
