"""``BaseVectorDB`` (async) and ``MemorySearchScope``: the public import path of Memora's names.

``BaseVectorDB`` is defined in ``memora_ogm._async.vector_base``, from which its sync twin
(exported by :mod:`memora_ogm.sync`) is generated; both take the same ``MemorySearchScope``.
"""

from memora_ogm._async.vector_base import BaseVectorDB
from memora_ogm.vector_db.scope import MemorySearchScope

__all__ = ["BaseVectorDB", "MemorySearchScope"]
