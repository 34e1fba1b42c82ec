"""Memories: reads with placeholders resolved (by APOC on the server, or here when
``graph.use_apoc`` is off), contrary-update history, deletes (vector store included).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar, cast

from memora_ogm.engine import convert, queries
from memora_ogm.engine.call import Batches, Call, Landed, Query, Row, nothing
from memora_ogm.engine.erasure import (
    FINISHED,
    MEMORY_ID_NAMES,
    Erasure,
    batches,
    erase,
    per_batch,
    removed_memories,
    room,
    user_collection_batch,
)
from memora_ogm.engine.nodes import Nodes
from memora_ogm.engine.projection import reading
from memora_ogm.engine.unit_of_work import UnitOfWork
from memora_ogm.errors import MemoryNotFound, UserNotFound
from memora_ogm.placeholders import PLACEHOLDER_PATTERN
from memora_ogm.schema import models
from memora_ogm.schema.validation import check_ids, check_memory_id, check_page

T = TypeVar("T")

MemoryKey = tuple[str, str, str]
"""``(org_id, user_id, memory_id)``: a memory's identity across tenants."""


@dataclass(frozen=True)
class Reads:
    """One call's read classes (looked up once) and whether APOC resolves placeholders."""

    apoc: bool
    interaction: type
    memory: type
    message: type

    @classmethod
    def of(cls, nodes: Nodes, apoc: bool) -> Reads:
        return cls(
            apoc, reading(nodes.Interaction), reading(nodes.Memory), reading(nodes.MessageBlock)
        )

    def query(self, query: str, **params: Any) -> Query:
        text = queries.statement(query, self.apoc, self.interaction, self.memory, self.message)
        return Query(text, {"placeholder_pattern": PLACEHOLDER_PATTERN, **params})

    def memory_of(self, row: Mapping[str, Any]) -> models.Memory:
        return convert.resolved_memory(row, not self.apoc, self.memory, self.message)

    def interaction_of(self, details: Mapping[str, Any]) -> models.Interaction:
        memories = [self.memory_of(memory) for memory in details["memories"]]
        return convert.interaction(
            details, details["messages"], memories, self.interaction, self.message
        )


def user_page(
    nodes: Nodes,
    apoc: bool,
    query: str,
    column: str,
    item: Callable[[Reads, dict[str, Any]], T],
    org_id: str,
    user_id: str,
    **params: Any,
) -> Call[list[T]]:
    """One page of ``query``'s ``column``, each entry as ``item(reads, entry)``."""
    reads = Reads.of(nodes, apoc)

    def page(rows: list[Row]) -> list[T]:
        if not rows[0]["found"]:
            raise UserNotFound(org_id, user_id)
        return [item(reads, entry) for entry in rows[0]["page"]]

    statement = reads.query(
        queries.of_existing_user(query, column), org_id=org_id, user_id=user_id, **params
    )
    return Call(statement, page)


def check_memory_key(org_id: Any, user_id: Any, memory_id: Any) -> None:
    """A non-canonical ``memory_id`` is a ``ValueError``: no stored memory can have it."""
    check_ids(org_id=org_id, user_id=user_id)
    check_memory_id("memory_id", memory_id)


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
            check_memory_key(org_id, user_id, memory_id)
            keys[-1].append(cast(MemoryKey, (org_id, user_id, memory_id)))
    return keys


def get_all_user_memories(
    nodes: Nodes,
    apoc: bool,
    org_id: str,
    user_id: str,
    agent_id: str | None = None,
    skip: int = 0,
    limit: int = 1000,
) -> Call[list[models.Memory]]:
    """The user's memories, newest first; ``agent_id`` filters on the memories' own field,
    so a deleted agent's memories are found too."""
    check_ids(org_id=org_id, user_id=user_id)
    if agent_id is not None:
        check_ids(agent_id=agent_id)
    check_page(skip, limit)
    return user_page(
        nodes,
        apoc,
        queries.MEMORIES_PAGE,
        "memory",
        Reads.memory_of,
        org_id,
        user_id,
        agent_id=agent_id,
        skip=skip,
        limit=limit,
    )


def _about_memory(
    nodes: Nodes, apoc: bool, query: str, org_id: str, user_id: str, memory_id: str
) -> Call[list[models.Memory]]:
    """A query about one memory; no row at all means the memory does not exist."""
    check_memory_key(org_id, user_id, memory_id)
    reads = Reads.of(nodes, apoc)

    def found(rows: list[Row]) -> list[models.Memory]:
        if not rows:
            raise MemoryNotFound(org_id, user_id, memory_id)
        return [reads.memory_of(row["memory"]) for row in rows]

    return Call(reads.query(query, org_id=org_id, user_id=user_id, memory_id=memory_id), found)


def get_user_memory(
    nodes: Nodes, apoc: bool, org_id: str, user_id: str, memory_id: str
) -> Call[models.Memory]:
    about = _about_memory(nodes, apoc, queries.USER_MEMORY, org_id, user_id, memory_id)
    return Call(about.statement, lambda rows: about.result(rows)[0])


def get_user_memory_history(
    nodes: Nodes, apoc: bool, org_id: str, user_id: str, memory_id: str
) -> Call[list[models.Memory]]:
    """The memory, then each older memory it superseded, newest first."""
    return _about_memory(nodes, apoc, queries.MEMORY_HISTORY, org_id, user_id, memory_id)


def fetch_user_memories_resolved(
    nodes: Nodes, apoc: bool, org_user_mem_ids: list[dict[str, str]]
) -> Call[list[models.Memory]]:
    batch = fetch_user_memories_resolved_batch(nodes, apoc, [org_user_mem_ids])
    return Call(batch.statement, lambda rows: batch.result(rows)[0])


def fetch_user_memories_resolved_batch(
    nodes: Nodes, apoc: bool, batch_org_user_mem_ids: list[list[dict[str, str]]]
) -> Call[list[list[models.Memory]]]:
    """For each list of ids, each memory's newest version (end of its ``CONTRARY_UPDATE``
    chain), once, at the first id's place; unknown ids left out. One query in all."""
    requested = _requested_keys(batch_org_user_mem_ids)
    keys = list(dict.fromkeys(key for ids in requested for key in ids))
    reads = Reads.of(nodes, apoc)

    def current(rows: list[Row]) -> list[list[models.Memory]]:
        resolved = {
            cast(MemoryKey, tuple(row["requested"][name] for name in MEMORY_ID_NAMES)): (
                reads.memory_of(row["memory"])
            )
            for row in rows
        }
        results = []
        for ids in requested:
            latest: dict[MemoryKey, models.Memory] = {}
            for key in ids:
                memory = resolved.get(key)
                if memory is not None:
                    latest.setdefault((memory.org_id, memory.user_id, memory.memory_id), memory)
            results.append(list(latest.values()))
        return results

    if not keys:
        return Call(None, lambda _: [[] for _ in requested])
    requested_maps = [dict(zip(MEMORY_ID_NAMES, key, strict=True)) for key in keys]
    return Call(reads.query(queries.RESOLVED_MEMORIES, requested=requested_maps), current)


def delete_user_memory(
    nodes: Nodes, erasure: Erasure, org_id: str, user_id: str, memory_id: str
) -> Call[None]:
    """Delete one memory from the graph and the vector store.

    A first statement locks its interaction, the memory collection and the memory, in the
    writers' order: a write superseding it either finished first or finds it gone.
    """
    check_memory_key(org_id, user_id, memory_id)
    key: dict[str, Any] = {"org_id": org_id, "user_id": user_id, "memory_id": memory_id}

    def missing() -> MemoryNotFound:
        return MemoryNotFound(org_id, user_id, memory_id)

    lock = UnitOfWork()
    memory = lock.match(nodes.Memory, missing, **key)
    user = lock.match(nodes.User, org_id=org_id, user_id=user_id)
    collection = lock.match_related(user, nodes.User.has_memories)
    for ref in (lock.reachable(memory, nodes.Memory.interaction_source), collection, memory):
        lock.lock(ref)
    work = UnitOfWork()
    erase(nodes, work, erasure.size, erasure.vectors, work.match(nodes.Memory, missing, **key))

    return Call(
        work,
        nothing,
        write=True,
        vectors=lambda row, changes: changes.remove(removed_memories(nodes, row)),
        landed=Landed(nodes.Memory, key, present=False),
        before=(lock,),
        log=f"deleted memory {memory_id}",
    )


def delete_all_user_memories(nodes: Nodes, erasure: Erasure, org_id: str, user_id: str) -> Batches:
    """Delete the user's memories in batches, each locking the memory collection first;
    interactions and messages stay."""
    size = erasure.size
    work = user_collection_batch(nodes, org_id, user_id, nodes.User.has_memories)
    memories = work.nodes(nodes.Memory, per_batch(size), org_id=org_id, user_id=user_id)
    room(work, erase(nodes, work, size, erasure.vectors, memories), FINISHED)
    return batches(nodes, work, log=f"deleted all memories of user {user_id}")
