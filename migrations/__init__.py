"""memora-ogm's schema and data migrations, oldest first (installed as ``memora_ogm.migrations``).

Add a migration as a new module ``mNNNN_<name>.py`` defining ``MIGRATION`` and
list it below; versions are applied in order and recorded in the graph, so each
runs once per database. ``memora-ogm migrate`` applies the pending ones.
"""

from memora_ogm.calls.migration import Migration

from .m0001_memora_v0_3_x import MIGRATION as M0001

MIGRATIONS: tuple[Migration, ...] = (M0001,)

__all__ = ["MIGRATIONS"]
