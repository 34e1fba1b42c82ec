"""Every memory read racing a delete of the same memory (issue 12).

A memory deleted by a concurrent transaction while a read resolves its placeholders
must end as the read's ordinary outcome: the memory as it was, or not-found
(``MemoryNotFound`` for the reads of one memory, the memory left out of lists),
never a Cypher error. Each read runs in both placeholder modes (APOC on the server
and Python), on the async twin (tasks) and on the sync twin (threads).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest
from interaction_helpers import World, chat, conversation, make_world
from neo4j import Driver
from sync_adapter import AwaitableTwin

from memora_ogm import sync
from memora_ogm._async.interface import Neo4jGraphInterface
from memora_ogm.errors import MemoryNotFound
from memora_ogm.schema import models
from memora_ogm.server import Neo4jConnection
from memora_ogm.testing import clear_database

ROUNDS = 6
MEMORIES = 3

Seen = list[models.Memory]
"""The raced memory as a read returned it: once, or not at all."""

Read = Callable[[Any, World, str, str], Awaitable[Seen]]
"""A read of memory ``memory_id`` of interaction ``interaction_id``."""


async def single(memora: Any, world: World, memory_id: str, _: str) -> Seen:
    try:
        return [await memora.get_user_memory(world.org_id, world.user_id, memory_id)]
    except MemoryNotFound:
        return []


async def history(memora: Any, world: World, memory_id: str, _: str) -> Seen:
    try:
        found = await memora.get_user_memory_history(world.org_id, world.user_id, memory_id)
    except MemoryNotFound:
        return []
    assert len(found) == 1
    return list(found)


async def resolved(memora: Any, world: World, memory_id: str, _: str) -> Seen:
    return list(await memora.fetch_user_memories_resolved([world.ids(memory_id)]))


async def resolved_batch(memora: Any, world: World, memory_id: str, _: str) -> Seen:
    first, second = await memora.fetch_user_memories_resolved_batch(
        [[world.ids(memory_id)], [world.ids(memory_id)]]
    )
    assert [m.memory_id for m in first] in ([], [memory_id])
    return list(second)


def mine(memories: list[models.Memory] | None, memory_id: str) -> Seen:
    return [memory for memory in memories or [] if memory.memory_id == memory_id]


async def pages(memora: Any, world: World, memory_id: str, _: str) -> Seen:
    seen: Seen = []
    for skip in range(MEMORIES):
        page = await memora.get_all_user_memories(world.org_id, world.user_id, skip=skip, limit=1)
        seen.extend(mine(page, memory_id))
    assert len(seen) <= 1
    return seen


async def interaction(memora: Any, world: World, memory_id: str, interaction_id: str) -> Seen:
    found = await memora.get_interaction(world.org_id, world.user_id, interaction_id)
    return mine(found.memories, memory_id)


async def interactions(memora: Any, world: World, memory_id: str, _: str) -> Seen:
    page = await memora.get_all_user_interactions(world.org_id, world.user_id)
    return [memory for found in page for memory in mine(found.memories, memory_id)]


READS: dict[str, Read] = {
    "get_user_memory": single,
    "get_user_memory_history": history,
    "fetch_user_memories_resolved": resolved,
    "fetch_user_memories_resolved_batch": resolved_batch,
    "get_all_user_memories": pages,
    "get_interaction": interaction,
    "get_all_user_interactions": interactions,
}


def reading(
    read: Read, world: World, memory_id: str, interaction_id: str
) -> Callable[[Any], Awaitable[Seen]]:
    return lambda memora: read(memora, world, memory_id, interaction_id)


def deleting(world: World, memory_id: str) -> Callable[[Any], Awaitable[None]]:
    return lambda memora: memora.delete_user_memory(world.org_id, world.user_id, memory_id)


Runner = Callable[[Callable[[Any], Awaitable[Any]]], Awaitable[Any]]
"""Runs ``operation(memora)`` concurrently with the others: as a task or on a thread."""


@pytest.fixture(params=["async", "sync"])
async def racing(
    request: pytest.FixtureRequest, neo4j_connection: Neo4jConnection, neo4j_driver: Driver
) -> AsyncIterator[tuple[Any, Any, Runner]]:
    """``(interface, its graph, runner)``: async operations run as tasks, sync ones on threads."""
    conn = neo4j_connection
    clear_database(neo4j_driver, conn.database)
    args = (conn.uri, conn.username, conn.password, conn.database)
    if request.param == "async":
        memora = Neo4jGraphInterface(*args)
        await memora.setup()

        async def as_task(operation: Callable[[Any], Awaitable[Any]]) -> Any:
            return await operation(memora)

        yield memora, memora.graph, as_task
        await memora.close()
        return
    twin = sync.Neo4jGraphInterface(*args)
    twin.setup()
    dressed = AwaitableTwin(twin, Neo4jGraphInterface)
    with ThreadPoolExecutor(max_workers=2 * MEMORIES + MEMORIES) as pool:

        async def in_a_loop(operation: Callable[[Any], Awaitable[Any]]) -> Any:
            return await operation(dressed)

        def on_thread(operation: Callable[[Any], Awaitable[Any]]) -> Awaitable[Any]:
            loop = asyncio.get_running_loop()
            return loop.run_in_executor(pool, lambda: asyncio.run(in_a_loop(operation)))

        yield dressed, twin.graph, on_thread
    twin.close()


@pytest.mark.parametrize("apoc", [True, False], ids=["apoc", "python"])
@pytest.mark.parametrize("read", list(READS))
async def test_a_read_racing_a_delete_returns_the_memory_or_not_found(
    racing: tuple[Any, Any, Runner], read: str, apoc: bool, neo4j_driver: Driver
) -> None:
    memora, graph, run = racing
    graph.use_apoc = apoc
    world = await make_world(memora)
    outcomes = {"seen": 0, "gone": 0}
    for n in range(ROUNDS):
        texts = [f"user_{world.user_id} fact {n}.{k} by agent_x" for k in range(MEMORIES)]
        data = conversation(chat("hello", f"round {n}"), memories=[(t, [1]) for t in texts])
        interaction_id, _ = await memora.save_interaction_with_memories(
            world.org_id, world.agent_id, world.user_id, data
        )
        found = await memora.get_interaction(world.org_id, world.user_id, interaction_id)
        expected = {m.memory_id: m.memory for m in found.memories or []}
        assert sorted(expected.values()) == [f"Ann fact {n}.{k} by Bot" for k in range(MEMORIES)]

        operations = [
            *(reading(READS[read], world, memory_id, interaction_id) for memory_id in expected),
            *(deleting(world, memory_id) for memory_id in expected),
            *(reading(READS[read], world, memory_id, interaction_id) for memory_id in expected),
        ]
        results = await asyncio.gather(*(run(op) for op in operations), return_exceptions=True)
        errors = [result for result in results if isinstance(result, BaseException)]
        assert not errors, f"{read} racing a delete raised {errors[0]!r}"
        reads = [*results[:MEMORIES], *results[2 * MEMORIES :]]
        for seen, memory_id in zip(reads, [*expected, *expected], strict=True):
            assert isinstance(seen, list)
            as_read = [(m.memory_id, m.memory) for m in seen]
            assert as_read in ([], [(memory_id, expected[memory_id])])
            outcomes["seen" if seen else "gone"] += 1
        left = neo4j_driver.execute_query(
            "MATCH (m:Memory {org_id: $org}) WHERE m.memory_id IN $ids RETURN count(m) AS n",
            org=world.org_id,
            ids=list(expected),
        ).records[0]["n"]
        assert left == 0, "every raced memory was deleted"
    assert sum(outcomes.values()) == ROUNDS * 2 * MEMORIES
