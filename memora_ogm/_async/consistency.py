"""``check_consistency`` and ``repair``: do the graph's memories and the store's points agree?

Per tenant, memory pages are fetched from the store by id; its points are scrolled only
when the store counts more (a scroll per tenant is quadratic in the embedded engine).
Unsettled ids are resolved against both whole stores: a misfiled point is no orphan.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any, Protocol, runtime_checkable

from memora_ogm import observe
from memora_ogm._async.component import GraphComponent
from memora_ogm._async.graph import Graph
from memora_ogm._async.paging import memory_of, memory_pages, tenants
from memora_ogm._async.vector_base import BaseVectorDB
from memora_ogm._async.vector_changes import write_points
from memora_ogm.calls.consistency import (
    ConsistencyReport,
    Progress,
    Tenant,
    payload_differences,
    payload_tenant,
    settle,
)
from memora_ogm.schema.validation import check_ids
from memora_ogm.transfer.importing import memories_with_ids

CHECK_PAGE = 1_000
#: Unsettled ids resolved per round (a pass over the Memory label).
RESOLVE_BATCH = 10_000
DELETE_BATCH = 1_000


@runtime_checkable
class CheckableStore(Protocol):
    """What the check reads of a vector store, besides ``BaseVectorDB``."""

    async def tenants(self, org_id: str | None = None) -> dict[tuple[str, str], int]: ...

    async def points_page(
        self, org_id: str, user_id: str, offset: str | None, limit: int
    ) -> tuple[list[tuple[str, dict[str, Any]]], str | None]: ...

    async def payloads(self, memory_ids: list[str]) -> dict[str, dict[str, Any]]: ...


def _checkable(store: BaseVectorDB | None) -> BaseVectorDB:
    if store is None:
        raise ValueError("No vector store is attached: there is nothing to check against.")
    if not isinstance(store, CheckableStore):
        raise TypeError(
            f"{type(store).__name__} cannot list its points by tenant; the check needs "
            "memora-ogm's QdrantDB (or a store with tenants, points_page and payloads)."
        )
    return store


async def _point_ids(store: Any, tenant: Tenant) -> AsyncIterator[str]:
    offset: str | None = None
    while True:
        points, offset = await store.points_page(*tenant, offset, CHECK_PAGE)
        for point_id, _ in points:
            yield point_id
        if offset is None:
            return


class _Check:
    def __init__(
        self, graph: Graph, store: Any, org_id: str | None, progress: Progress | None
    ) -> None:
        self.graph = graph
        self.store = store
        self.progress = progress
        self.report = ConsistencyReport(org_id)
        self.unsettled: set[str] = set()
        self.resolved: set[str] = set()

    async def compare(self) -> ConsistencyReport:
        org_id = self.report.org_id
        counts = await self.store.tenants(org_id)
        self.report.points = sum(counts.values())
        owners = await tenants(self.graph, org_id) | set(counts)
        for tenant in sorted(owners):
            if await self._memories_by_id(tenant) != counts.get(tenant, 0):
                await self._points_not_memories(tenant)
        await self._resolve()
        self.report.sort()
        return self.report

    async def _memories_by_id(self, tenant: Tenant) -> int:
        """Check the tenant's memories against their points; how many are filed under it."""
        filed = 0
        async for page in memory_pages(self.graph, tenant):
            for start in range(0, len(page), CHECK_PAGE):
                memories = page[start : start + CHECK_PAGE]
                payloads = await self.store.payloads([m.memory_id for m in memories])
                for memory in memories:
                    payload = payloads.get(memory.memory_id)
                    if payload is None or payload_differences(memory, payload):
                        await self._unsettled(memory.memory_id)
                    if payload is not None and payload_tenant(payload) == tenant:
                        filed += 1
            self.report.memories += len(page)
            if self.progress is not None:
                self.progress(self.report.memories)
        return filed

    async def _points_not_memories(self, tenant: Tenant) -> None:
        """A point with no memory of the tenant (both read in id order) is unsettled."""
        read = memory_pages(self.graph, tenant)
        memory_ids = (memory.memory_id async for page in read for memory in page)
        memory_id = await anext(memory_ids, None)
        async for point_id in _point_ids(self.store, tenant):
            while memory_id is not None and memory_id < point_id:
                memory_id = await anext(memory_ids, None)
            if memory_id != point_id:
                await self._unsettled(point_id)

    async def _unsettled(self, memory_id: str) -> None:
        if memory_id not in self.resolved:
            self.unsettled.add(memory_id)
            if len(self.unsettled) >= RESOLVE_BATCH:
                await self._resolve()

    async def _resolve(self) -> None:
        ids = sorted(self.unsettled)
        self.unsettled.clear()
        if not ids:
            return
        found = await self.graph.execute(memories_with_ids, ids)
        settle(self.report, ids, [memory_of(row) for row in found], await self.store.payloads(ids))
        self.resolved.update(ids)


class Neo4jConsistency(GraphComponent):
    @observe.observed("neo4j")
    async def check_consistency(
        self, org_id: str | None = None, progress: Progress | None = None
    ) -> ConsistencyReport:
        """Compare the graph's memories with the vector store's points, of one organisation
        or all; only reads. Reports missing points, orphans, wrong payloads (text, tenant,
        agent, ``obtained_at``) and clashing ids; ``progress`` gets memories compared.
        Run it while nothing writes: a write under way can show as a difference. An
        organisation the graph lost is checked too (its points are orphans).
        """
        if org_id is not None:
            check_ids(org_id=org_id)
        store = _checkable(self.graph.vector_db)
        return await _Check(self.graph, store, org_id, progress).compare()

    @observe.observed("neo4j")
    async def repair(
        self, org_id: str | None = None, progress: Progress | None = None
    ) -> ConsistencyReport:
        """Settle the pending vector changes, check, then add the missing memories, delete
        the orphans and rewrite the wrong payloads; clashing ids are left to a person.
        Idempotent; the report is ``repaired``."""
        store = _checkable(self.graph.vector_db)
        await self.graph.settle_pending()
        report = await self.check_consistency(org_id, progress)
        orphans = [orphan.memory_id for orphan in report.orphans]
        for start in range(0, len(orphans), DELETE_BATCH):
            await store.delete_memories(orphans[start : start + DELETE_BATCH])
        rewritten = [d.memory for d in report.missing] + [d.memory for d in report.wrong_payloads]
        await write_points(store, rewritten, self.graph.memory_ids_held)
        report.repaired = True
        return report

    @observe.observed("neo4j")
    async def settle_pending(self) -> int:
        """Decide the vector store's pending changes by the graph, as it is now: the points
        of memories it holds are written (again), the others removed; a purged user or
        organisation the graph still holds gets its points back. Runs on connecting, after
        a write and in ``repair``; returns how many changes were settled."""
        return await self.graph.settle_pending()
