"""The public import path of Memora's names ``BaseVectorDB`` (async) and ``MemorySearchScope``."""

from memora_ogm._async.vector_base import BaseVectorDB
from memora_ogm.vector_db.scope import MemorySearchScope

__all__ = ["BaseVectorDB", "MemorySearchScope"]
