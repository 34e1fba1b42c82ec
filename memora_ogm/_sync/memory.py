# Generated from memora_ogm/_async by scripts/generate_sync.py: do not edit.
"""Memories: reads with placeholders resolved, contrary-update history, deletes.

Reads run the memory queries of :mod:`memora_ogm.queries`; their placeholders are
resolved on the server with APOC, or here with :mod:`memora_ogm.placeholders`
when the server has no APOC (``graph.has_apoc()``; tests force the fallback with
``graph.use_apoc = False``). Deletes go through the node classes and take the memories
out of the associated vector store in the same unit of work.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, cast

from memora_ogm import convert, queries
from memora_ogm._sync.component import GraphComponent, get_user, locked_user
from memora_ogm._sync.graph import Graph, VectorChanges
from memora_ogm._sync.nodes import MemoraNode, Memory, MemoryCollection, User
from memora_ogm._sync.ogm import delete_nodes, delete_unlinked, reachable
from memora_ogm.errors import MemoryNotFound, UserNotFound
from memora_ogm.placeholders import PLACEHOLDER_PATTERN
from memora_ogm.schema import models
from memora_ogm.validation import check_ids, check_page

MemoryKey = tuple[str, str, str]
"""``(org_id, user_id, memory_id)``: a memory's identity across tenants."""

MEMORY_ID_NAMES = ("org_id", "user_id", "memory_id")


def resolving_read(graph: Graph, query: str, apoc: bool, **params: Any) -> list[dict[str, Any]]:
    """Run a read of :mod:`memora_ogm.queries` that resolves placeholders, in the current
    transaction: on the server when ``apoc``, else its memories need
    ``convert.resolved_memory(..., resolve_here=True)``."""
    return graph.cypher(
        queries.with_resolution(query, apoc), placeholder_pattern=PLACEHOLDER_PATTERN, **params
    )


def delete_memories(
    memories: Sequence[Memory],
    changes: VectorChanges,
    others: Sequence[MemoraNode] = (),
    days: Sequence[MemoraNode] = (),
) -> None:
    """Delete ``memories`` (with ``others``) from both stores, then the days nothing uses any more.

    ``days`` are further Date nodes that may have lost their last link; the
    memories' own days are found here.
    """
    obtained_on = [day for _, day in reachable(memories, Memory.date_obtained)]
    changes.remove(convert.memory_for_vector(node) for node in memories)
    delete_nodes([*memories, *others])
    delete_unlinked([*obtained_on, *days])


def collection_of(user: User, rel: Any) -> Any:
    """The user's collection along ``rel`` (``User.interactions_in`` or ``User.has_memories``)."""
    found = reachable([user], rel)
    if not found:
        raise UserNotFound(user.org_id, user.user_id)
    return found[0][1]


def _requested_keys(batch: Any) -> list[list[MemoryKey]]:
    """Validate ``fetch_user_memories_resolved_batch``'s argument into id triples."""
    if not isinstance(batch, (list, tuple)):
        raise ValueError("`batch_org_user_mem_ids` must be a list of lists of id dicts.")
    keys: list[list[MemoryKey]] = []
    for ids in batch:
        if not isinstance(ids, (list, tuple)):
            raise ValueError("each item of `batch_org_user_mem_ids` must be a list of id dicts.")
        keys.append([])
        for entry in ids:
            if not isinstance(entry, Mapping):
                raise ValueError("each memory must be given as a dict of its ids.")
            org_id, user_id, memory_id = (entry.get(name) for name in MEMORY_ID_NAMES)
            check_ids(org_id=org_id, user_id=user_id, memory_id=memory_id)
            keys[-1].append(cast(MemoryKey, (org_id, user_id, memory_id)))
    return keys


class Neo4jMemory(GraphComponent):
    def get_all_user_memories(
        self,
        org_id: str,
        user_id: str,
        agent_id: str | None = None,
        skip: int = 0,
        limit: int = 1000,
    ) -> list[models.Memory]:
        """The user's memories, newest ``obtained_at`` first, of one agent when ``agent_id``.

        The agent filter works on the memories' ``agent_id``, so it still finds the
        memories of a deleted agent. A missing user raises ``UserNotFound``.
        """
        check_ids(org_id=org_id, user_id=user_id)
        if agent_id is not None:
            check_ids(agent_id=agent_id)
        check_page(skip, limit)
        apoc = self.graph.has_apoc()

        def work() -> list[models.Memory]:
            get_user(org_id, user_id)
            rows = resolving_read(
                self.graph,
                queries.MEMORIES_PAGE,
                apoc,
                org_id=org_id,
                user_id=user_id,
                agent_id=agent_id,
                skip=skip,
                limit=limit,
            )
            return [convert.resolved_memory(row["memory"], not apoc) for row in rows]

        return self.graph.read(work)

    def get_user_memory(self, org_id: str, user_id: str, memory_id: str) -> models.Memory:
        """One memory, with or without message sources; ``MemoryNotFound`` when it is not there."""
        check_ids(org_id=org_id, user_id=user_id, memory_id=memory_id)
        found = self._about_memory(queries.USER_MEMORY, org_id, user_id, memory_id)
        return found[0]

    def get_user_memory_history(
        self, org_id: str, user_id: str, memory_id: str
    ) -> list[models.Memory]:
        """The memory, then each older memory it superseded (``CONTRARY_UPDATE``), newest first."""
        check_ids(org_id=org_id, user_id=user_id, memory_id=memory_id)
        return self._about_memory(queries.MEMORY_HISTORY, org_id, user_id, memory_id)

    def _about_memory(
        self, query: str, org_id: str, user_id: str, memory_id: str
    ) -> list[models.Memory]:
        """Run a query about one memory; no row at all means the memory does not exist."""
        apoc = self.graph.has_apoc()

        def work() -> list[models.Memory]:
            rows = resolving_read(
                self.graph, query, apoc, org_id=org_id, user_id=user_id, memory_id=memory_id
            )
            if not rows:
                raise MemoryNotFound(org_id, user_id, memory_id)
            return [convert.resolved_memory(row["memory"], not apoc) for row in rows]

        return self.graph.read(work)

    def fetch_user_memories_resolved(
        self, org_user_mem_ids: list[dict[str, str]]
    ) -> list[models.Memory]:
        """:meth:`fetch_user_memories_resolved_batch` for one list."""
        results = self.fetch_user_memories_resolved_batch([org_user_mem_ids])
        return results[0]

    def fetch_user_memories_resolved_batch(
        self, batch_org_user_mem_ids: list[list[dict[str, str]]]
    ) -> list[list[models.Memory]]:
        """For each list of ``{org_id, user_id, memory_id}``, the current version of each memory.

        Each memory is replaced by the newest memory at the end of its
        ``CONTRARY_UPDATE`` chain; two ids resolving to one memory give it once (at
        the first one's place); ids that do not exist for that org and user are
        left out. One query for the whole batch.
        """
        requested = _requested_keys(batch_org_user_mem_ids)
        keys = list(dict.fromkeys(key for ids in requested for key in ids))
        if not keys:
            return [[] for _ in requested]
        apoc = self.graph.has_apoc()

        def work() -> dict[MemoryKey, models.Memory]:
            rows = resolving_read(
                self.graph,
                queries.RESOLVED_MEMORIES,
                apoc,
                requested=[dict(zip(MEMORY_ID_NAMES, key, strict=True)) for key in keys],
            )
            return {
                cast(MemoryKey, tuple(row["requested"][name] for name in MEMORY_ID_NAMES)): (
                    convert.resolved_memory(row["memory"], not apoc)
                )
                for row in rows
            }

        resolved = self.graph.read(work)
        results = []
        for ids in requested:
            current: dict[MemoryKey, models.Memory] = {}
            for key in ids:
                memory = resolved.get(key)
                if memory is not None:
                    current.setdefault((memory.org_id, memory.user_id, memory.memory_id), memory)
            results.append(list(current.values()))
        return results

    def delete_user_memory(self, org_id: str, user_id: str, memory_id: str) -> None:
        """Delete one memory from the graph and the vector store; ``MemoryNotFound`` if absent."""
        check_ids(org_id=org_id, user_id=user_id, memory_id=memory_id)

        def missing() -> MemoryNotFound:
            return MemoryNotFound(org_id, user_id, memory_id)

        def work(changes: VectorChanges) -> None:
            locked_user(org_id, user_id, missing)
            memory = Memory.nodes.get_or_none(org_id=org_id, user_id=user_id, memory_id=memory_id)
            if memory is None:
                raise missing()
            delete_memories([memory], changes)

        self.graph.write(work)
        self.logger.info("deleted memory %s", memory_id)

    def delete_all_user_memories(self, org_id: str, user_id: str) -> None:
        """Delete every memory of the user from the graph and the vector store.

        Interactions and messages stay; a Date node goes when nothing links to it.
        """
        check_ids(org_id=org_id, user_id=user_id)

        def work(changes: VectorChanges) -> None:
            collection = collection_of(locked_user(org_id, user_id), User.has_memories)
            memories = reachable([collection], MemoryCollection.includes)
            delete_memories([memory for _, memory in memories], changes)

        self.graph.write(work)
        self.logger.info("deleted all memories of user %s", user_id)
