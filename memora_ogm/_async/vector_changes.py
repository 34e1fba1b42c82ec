"""The vector store's half of a write: journalled and applied just before the graph
commits, undone if the commit did not land, pending until the graph settles it if the
commit's outcome is unknown; so that both stores change or neither does."""

from __future__ import annotations

import logging

from memora_ogm._async.vector_base import BaseVectorDB
from memora_ogm.engine.call import VectorChanges
from memora_ogm.schema.models import Memory as MemoryModel
from memora_ogm.vector_db.pending import Journal, Pending, journal_of

logger = logging.getLogger("memora_ogm")


async def add_to_vector_db(vector_db: BaseVectorDB, memories: list[MemoryModel]) -> None:
    """``add_memories`` takes one agent and one timestamp a call: group by them."""
    groups: dict[tuple[str, str, str, str], list[MemoryModel]] = {}
    for memory in memories:
        key = (memory.org_id, memory.user_id, memory.agent_id, memory.obtained_at.isoformat())
        groups.setdefault(key, []).append(memory)
    for (org_id, user_id, agent_id, obtained_at), group in groups.items():
        await vector_db.add_memories(
            org_id=org_id,
            user_id=user_id,
            agent_id=agent_id,
            memory_ids=[memory.memory_id for memory in group],
            memories=[memory.memory for memory in group],
            obtained_at=obtained_at,
        )


class VectorCommit:
    """The hook around one write's commit: the work records :attr:`changes`, journalled
    and applied before the commit (a refusal rolls the graph back), undone if the commit
    did not land, and held pending if its outcome is unknown (:mod:`pending`)."""

    def __init__(self, vector_db: BaseVectorDB | None) -> None:
        self.vector_db = vector_db
        self.changes = VectorChanges(tracked=vector_db is not None)
        #: The store's journal and this write's record in it, once journalled.
        self.journal: Journal | None = None
        self.record: Pending | None = None

    async def before_commit(self) -> None:
        """Journal the changes, then apply them; if that fails half-way, undo them and
        re-raise."""
        vector_db, changes = self.vector_db, self.changes
        if vector_db is None or not changes:
            return
        self.journal = journal_of(vector_db)
        self.record = self.journal.begin(
            [m.memory_id for m in (*changes.removed, *changes.added)],
            changes.purged_users,
            changes.purged_organizations,
        )
        try:
            if changes.removed:
                await vector_db.delete_memories([memory.memory_id for memory in changes.removed])
            for org_id, user_id in changes.purged_users:
                await vector_db.delete_all_user_memories(org_id, user_id)
            for org_id in changes.purged_organizations:
                await vector_db.delete_all_organization_memories(org_id)
            if changes.added:
                await add_to_vector_db(vector_db, changes.added)
        except BaseException:
            await self.commit_failed()
            raise

    def committed(self) -> None:
        """The commit landed: the changes stand."""
        if self.journal is not None and self.record is not None:
            self.journal.close(self.record)

    async def commit_failed(self) -> None:
        """Undo what :meth:`before_commit` applied (both are idempotent). A purge of a
        user's or an organisation's points, or an undo that fails, is left pending for
        the graph to settle: only the graph still knows the points to put back."""
        record, journal, changes = self.record, self.journal, self.changes
        vector_db = self.vector_db
        if record is None or journal is None or vector_db is None:
            return
        self.record = None
        undone = not (changes.purged_users or changes.purged_organizations)
        try:
            if changes.added:
                await vector_db.delete_memories([m.memory_id for m in changes.added])
            if changes.removed:
                await add_to_vector_db(vector_db, changes.removed)
        except Exception:
            logger.warning("could not undo the vector changes of a failed write", exc_info=True)
            undone = False
        if undone:
            journal.close(record)
        else:
            journal.hold(record)

    async def outcome_unknown(self) -> None:
        """The commit may or may not have landed: hold the changes pending. Until the graph
        settles them, the points they added are hidden (searches must not find a memory
        that may not exist) and the points they removed stay removed."""
        record, journal, vector_db = self.record, self.journal, self.vector_db
        if record is None or journal is None or vector_db is None:
            return
        self.record = None
        journal.hold(record)
        try:
            if self.changes.added:
                await vector_db.delete_memories([m.memory_id for m in self.changes.added])
        except Exception:
            logger.warning("could not hide the points of a pending write", exc_info=True)
