"""The vector store's half of a write: journalled and applied just before the graph
commits, undone if the commit did not land, pending until the graph settles it
(:func:`settle_journal`) if the commit's outcome is unknown; so that both stores change or
neither does.

Points are removed before the commit and again after it, and a point written from what
the graph held is checked against the graph once written (:func:`write_points`): so no
write-back, however it interleaves with a delete in any process, leaves the point of a
deleted memory (docs/vector-store.md#pending-changes).
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable

from memora_ogm._async.paging import Reader, memory_of, memory_pages, tenants
from memora_ogm._async.vector_base import BaseVectorDB
from memora_ogm.calls.consistency import Tenant
from memora_ogm.calls.user import tenant_exists
from memora_ogm.engine.call import VectorChanges
from memora_ogm.schema.models import Memory as MemoryModel
from memora_ogm.transfer.importing import memories_with_ids
from memora_ogm.vector_db.pending import Journal, Pending

logger = logging.getLogger("memora_ogm")

#: The ids of those given that the graph holds now (:meth:`Graph.memory_ids_held`).
HeldIds = Callable[[list[str]], Awaitable[set[str]]]


async def add_to_vector_db(vector_db: BaseVectorDB, memories: list[MemoryModel]) -> None:
    """``add_memories`` takes one agent and one timestamp a call: group by them. Memories
    of several groups (a batch of saves) go in one write where the store can (memora-ogm's
    ``QdrantDB.add_memory_models``): the embedded store flushes each write."""
    groups: dict[tuple[str, str, str, str], list[MemoryModel]] = {}
    for memory in memories:
        key = (memory.org_id, memory.user_id, memory.agent_id, memory.obtained_at.isoformat())
        groups.setdefault(key, []).append(memory)
    add_all = getattr(vector_db, "add_memory_models", None)
    if len(groups) > 1 and add_all is not None:
        await add_all(memories)
        return
    for (org_id, user_id, agent_id, obtained_at), group in groups.items():
        await vector_db.add_memories(
            org_id=org_id,
            user_id=user_id,
            agent_id=agent_id,
            memory_ids=[memory.memory_id for memory in group],
            memories=[memory.memory for memory in group],
            obtained_at=obtained_at,
        )


async def write_points(vector_db: BaseVectorDB, memories: list[MemoryModel], held: HeldIds) -> None:
    """Write the points of ``memories`` (read from the graph a moment ago), then remove
    those whose memories the graph no longer holds.

    A delete removes its points before its commit and again after it. If it committed
    before the check, the check sees the memory gone; if after, its second removal comes
    after this write. Either way no point of a deleted memory is left.
    """
    if not memories:
        return
    await add_to_vector_db(vector_db, memories)
    ids = [memory.memory_id for memory in memories]
    gone = set(ids) - await held(ids)
    if gone:
        await vector_db.delete_memories(sorted(gone))


async def _any_point(vector_db: BaseVectorDB, memory_ids: list[str]) -> bool:
    """Whether any of ``memory_ids`` has a point, if the store can tell without writing
    (memora-ogm's ``QdrantDB.payloads``); else assumed so."""
    payloads = getattr(vector_db, "payloads", None)
    return payloads is None or bool(await payloads(memory_ids))


class VectorCommit:
    """The hook around one write's commit: the work records :attr:`changes`, journalled
    and applied before the commit (a refusal rolls the graph back), undone if the commit
    did not land, and held pending if its outcome is unknown (:mod:`pending`)."""

    def __init__(
        self, vector_db: BaseVectorDB | None, journal: Journal | None, held: HeldIds
    ) -> None:
        self.vector_db = vector_db
        self.journal = journal
        self.held = held
        self.changes = VectorChanges(tracked=vector_db is not None)
        #: This write's record in the store's journal, once journalled.
        self.record: Pending | None = None
        #: Whether the undo of :meth:`commit_failed` failed (its record left pending).
        self.left_pending = False

    async def before_commit(self) -> None:
        """Journal the changes, then apply them; if that fails half-way, undo them and
        re-raise."""
        vector_db, journal, changes = self.vector_db, self.journal, self.changes
        if vector_db is None or journal is None or not changes:
            return
        self.record = journal.begin(
            [m.memory_id for m in (*changes.removed, *changes.added)],
            changes.purged_users,
            changes.purged_organizations,
        )
        try:
            await self._remove()
            if changes.added:
                await add_to_vector_db(vector_db, changes.added)
        except BaseException:
            await self.commit_failed()
            raise

    async def committed(self) -> None:
        """The commit landed: the changes stand. Removals are applied again, now that no
        reader of the graph can find what they removed (a write-back that read it before
        the commit may have put a point back since); if that fails, the record is left
        for the graph to settle."""
        record, journal, vector_db = self.record, self.journal, self.vector_db
        if record is None or journal is None or vector_db is None:
            return
        try:
            await self._remove(again=True)
        except BaseException as error:
            journal.hold(record)
            if not isinstance(error, Exception):
                raise  # cancelled: the commit stands, the graph settles the rest
            logger.warning("could not remove deleted points after a commit", exc_info=True)
            return
        journal.close(record)

    async def _remove(self, again: bool = False) -> None:
        """Apply the removals; ``again`` after the commit, when points are seldom back:
        ids are looked up first where the store can (a delete is a write, and the embedded
        store flushes each)."""
        vector_db, changes = self.vector_db, self.changes
        assert vector_db is not None
        removed = [memory.memory_id for memory in changes.removed]
        if removed and (not again or await _any_point(vector_db, removed)):
            await vector_db.delete_memories(removed)
        for org_id, user_id in changes.purged_users:
            await vector_db.delete_all_user_memories(org_id, user_id)
        for org_id in changes.purged_organizations:
            await vector_db.delete_all_organization_memories(org_id)

    async def commit_failed(self) -> None:
        """Undo what :meth:`before_commit` applied (both are idempotent). Removed points
        are written back as a settler writes them, checked against the graph (a delete
        may have taken them since). A purge of a user's or an organisation's points, or
        an undo that fails, is left pending for the graph to settle: only the graph still
        knows the points to put back."""
        record, journal, changes = self.record, self.journal, self.changes
        vector_db = self.vector_db
        if record is None or journal is None or vector_db is None:
            return
        self.record = None
        undone = not (changes.purged_users or changes.purged_organizations)
        try:
            if changes.added:
                await vector_db.delete_memories([m.memory_id for m in changes.added])
            await write_points(vector_db, changes.removed, self.held)
        except Exception:
            logger.warning("could not undo the vector changes of a failed write", exc_info=True)
            undone = False
            self.left_pending = True
        if undone:
            journal.close(record)
        else:
            journal.hold(record)

    async def outcome_unknown(self) -> None:
        """The commit may or may not have landed: hold the changes pending. Until the graph
        settles them, the points they added are hidden (searches must not find a memory
        that may not exist) and the points they removed stay removed.

        Held only once hidden: a settler (another caller's) that took the record earlier
        could write the points of a commit that landed back before the hiding removed
        them, and close the record on points that are gone (issue 48)."""
        record, journal, vector_db = self.record, self.journal, self.vector_db
        if record is None or journal is None or vector_db is None:
            return
        self.record = None
        try:
            if self.changes.added:
                await vector_db.delete_memories([m.memory_id for m in self.changes.added])
        except Exception:
            logger.warning("could not hide the points of a pending write", exc_info=True)
        finally:
            journal.hold(record)


async def settle_journal(graph: Reader, store: BaseVectorDB, journal: Journal) -> int:
    """Decide the journal's pending changes by the graph as it is now (the facade's
    ``settle_pending``), each record by one settler, held again if that fails; how many."""
    records = journal.take()
    for index, record in enumerate(records):
        try:
            await _settle(graph, store, record)
        except BaseException:
            for left in records[index:]:
                journal.hold(left)
            raise
        journal.close(record)
    if records:
        logger.info("settled %d pending vector changes", len(records))
    return len(records)


async def _settle(graph: Reader, store: BaseVectorDB, record: Pending) -> None:
    if record.memory_ids:
        found = await graph.run(memories_with_ids(graph.nodes, record.memory_ids))
        kept = [memory_of(values) for values in found]
        gone = set(record.memory_ids) - {memory.memory_id for memory in kept}
        if gone:
            await store.delete_memories(sorted(gone))
        await write_points(store, kept, graph.memory_ids_held)
    for org_id, user_id in record.users:
        if await graph.run(tenant_exists(graph.nodes, org_id, user_id)):
            await _rewrite(graph, store, {(org_id, user_id)})
        else:
            await store.delete_all_user_memories(org_id, user_id)
    for org_id in record.organizations:
        if await graph.run(tenant_exists(graph.nodes, org_id)):
            await _rewrite(graph, store, await tenants(graph, org_id))
        else:
            await store.delete_all_organization_memories(org_id)


async def _rewrite(graph: Reader, store: BaseVectorDB, owners: set[Tenant]) -> None:
    """Write the points of every memory of ``owners`` (a purge that may not have landed:
    the graph's memories are all the points there should be), each page checked against
    the graph once written."""
    for tenant in sorted(owners):
        async for page in memory_pages(graph, tenant):
            await write_points(store, page, graph.memory_ids_held)
