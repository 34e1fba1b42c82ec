# Generated from memora_ogm/_async by scripts/generate_sync.py: do not edit.
"""The vector store's half of a write: applied just before the graph commits, undone if
the commit fails, so that both stores change or neither does."""

from __future__ import annotations

import logging

from memora_ogm._sync.vector_base import BaseVectorDB
from memora_ogm.calls import VectorChanges
from memora_ogm.schema.models import Memory as MemoryModel

logger = logging.getLogger("memora_ogm")


def add_to_vector_db(vector_db: BaseVectorDB, memories: list[MemoryModel]) -> None:
    """``add_memories`` takes one agent and one timestamp a call: group by them."""
    groups: dict[tuple[str, str, str, str], list[MemoryModel]] = {}
    for memory in memories:
        key = (memory.org_id, memory.user_id, memory.agent_id, memory.obtained_at.isoformat())
        groups.setdefault(key, []).append(memory)
    for (org_id, user_id, agent_id, obtained_at), group in groups.items():
        vector_db.add_memories(
            org_id=org_id,
            user_id=user_id,
            agent_id=agent_id,
            memory_ids=[memory.memory_id for memory in group],
            memories=[memory.memory for memory in group],
            obtained_at=obtained_at,
        )


class VectorCommit:
    """The hook around one write's commit: the work records :attr:`changes`, applied
    before the commit (a refusal rolls the graph back), undone if the commit fails."""

    def __init__(self, vector_db: BaseVectorDB | None) -> None:
        self.vector_db = vector_db
        self.changes = VectorChanges(tracked=vector_db is not None)
        self.applied = False

    def before_commit(self) -> None:
        """Apply the changes; if that fails half-way, undo them and re-raise."""
        vector_db, changes = self.vector_db, self.changes
        if vector_db is None or not changes:
            return
        self.applied = True
        try:
            if changes.removed:
                vector_db.delete_memories([memory.memory_id for memory in changes.removed])
            for org_id, user_id in changes.purged_users:
                vector_db.delete_all_user_memories(org_id, user_id)
            for org_id in changes.purged_organizations:
                vector_db.delete_all_organization_memories(org_id)
            if changes.added:
                add_to_vector_db(vector_db, changes.added)
        except BaseException:
            self.commit_failed()
            raise

    def commit_failed(self) -> None:
        """Undo what :meth:`before_commit` applied, best effort (both are idempotent)."""
        if not self.applied or self.vector_db is None:
            return
        self.applied = False
        try:
            if self.changes.added:
                self.vector_db.delete_memories([m.memory_id for m in self.changes.added])
            if self.changes.removed:
                add_to_vector_db(self.vector_db, self.changes.removed)
        except Exception:  # pragma: no cover - reported, the original error matters more
            logger.exception("could not undo vector store changes after a failed write")
