"""``BaseGraphDB``, the async interface Memora programs against (the public import path).

Defined in ``memora_ogm._async.base``, from which ``memora_ogm._sync.base`` (the base of
the sync facade, exported by :mod:`memora_ogm.sync`) is generated.
"""

from memora_ogm._async.base import BaseGraphDB

__all__ = ["BaseGraphDB"]
