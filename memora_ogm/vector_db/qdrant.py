"""``QdrantDB`` (async, over ``qdrant_client.AsyncQdrantClient``): the public import path.

Defined in ``memora_ogm._async.qdrant``, from which the sync ``QdrantDB`` over
``qdrant_client.QdrantClient`` (exported by :mod:`memora_ogm.sync`) is generated.
"""

from memora_ogm._async.qdrant import QdrantDB
from memora_ogm.vector_db.hybrid import EmbedderUnavailableError
from memora_ogm.vector_db.layouts import MEMORA_COLLECTION_NAME, SINGLE_VECTOR_COLLECTION_NAME
from memora_ogm.vector_db.qdrant_common import InheritedEmbeddedStoreError

__all__ = [
    "MEMORA_COLLECTION_NAME",
    "SINGLE_VECTOR_COLLECTION_NAME",
    "EmbedderUnavailableError",
    "InheritedEmbeddedStoreError",
    "QdrantDB",
]
