"""Memora v0.3.x: memories are paged through their Date nodes.

Before v0.3 a memory was not linked to the day it was obtained; v0.3's
``get_all_user_memories`` walks ``(Date)<-[:DATE_OBTAINED]-(Memory)``, so every
memory gets that link. The ``interaction_updated_timestamp_index`` index on
``Interaction(updated_at)`` is dropped: Neo4j does not use it for the
date-ordered pagination.
"""

from memora_ogm.calls.migration import DropIndex, LinkMemoriesToDates, Migration

MIGRATION = Migration(
    version="0001",
    name="memora_v0_3_x",
    operations=(LinkMemoriesToDates(), DropIndex("interaction_updated_timestamp_index")),
)
