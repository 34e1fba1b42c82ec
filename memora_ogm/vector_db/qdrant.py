"""``QdrantDB`` (async, over ``qdrant_client.AsyncQdrantClient``): the public import path.

Defined in ``memora_ogm._async.qdrant``, from which the sync ``QdrantDB`` over
``qdrant_client.QdrantClient`` (exported by :mod:`memora_ogm.sync`) is generated.
"""

from memora_ogm._async.qdrant import QdrantDB
from memora_ogm.vector_db.qdrant_common import (
    DEFAULT_COLLECTION_NAME,
    InheritedEmbeddedStoreError,
)

__all__ = ["DEFAULT_COLLECTION_NAME", "InheritedEmbeddedStoreError", "QdrantDB"]
