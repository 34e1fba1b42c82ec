"""The synchronous API, for Django and Flask views, scripts and the Python shell.

Same classes, methods, arguments, return models and errors as the async API, generated
from it (``memora_ogm/_sync``, see ``scripts/generate_sync.py``) and built on neomodel's
synchronous ``db``::

    from memora_ogm.sync import Neo4jGraphInterface, QdrantDB

    memora = Neo4jGraphInterface(uri, username, password, database, QdrantDB(path="qdrant"))
    memora.setup()
    org = memora.create_organization("Acme")
"""

from memora_ogm._sync.base import BaseGraphDB
from memora_ogm._sync.interface import Neo4jGraphInterface
from memora_ogm._sync.qdrant import QdrantDB
from memora_ogm._sync.vector_base import BaseVectorDB
from memora_ogm.vector_db.embedding import SyncEmbeddingFunction as EmbeddingFunction
from memora_ogm.vector_db.scope import MemorySearchScope

__all__ = [
    "BaseGraphDB",
    "BaseVectorDB",
    "EmbeddingFunction",
    "MemorySearchScope",
    "Neo4jGraphInterface",
    "QdrantDB",
]
