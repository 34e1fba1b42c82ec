"""The public import path of the async ``QdrantDB`` (the sync one is in ``memora_ogm.sync``)."""

from memora_ogm._async.qdrant import QdrantDB
from memora_ogm.errors import EmbedderUnavailableError
from memora_ogm.vector_db.layouts import MEMORA_COLLECTION_NAME, SINGLE_VECTOR_COLLECTION_NAME
from memora_ogm.vector_db.qdrant_common import InheritedEmbeddedStoreError

__all__ = [
    "MEMORA_COLLECTION_NAME",
    "SINGLE_VECTOR_COLLECTION_NAME",
    "EmbedderUnavailableError",
    "InheritedEmbeddedStoreError",
    "QdrantDB",
]
