"""Memories: pages, single reads, contrary-update history, resolved fetches and deletes.

SPEC 10.3 and 10.4 are Memora v0.3.0 defects fixed here; their ``test_spec_10_*``
tests say in their docstrings how Memora fails them.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from interaction_helpers import (
    DAY,
    LATER,
    NO_MEMORY,
    World,
    chat,
    conversation,
    make_world,
    memory_ids,
    rows,
    save,
    saved_memory,
    snapshot,
    update,
    value,
    vector_ids,
    with_vectors,
)
from neo4j.exceptions import Neo4jError

from memora_ogm.errors import MemoryNotFound, UserNotFound

__all__ = ["with_vectors"]  # the fixture, imported so pytest finds it here

TWO = chat("I live in Oslo", "Nice!")


async def _chain(memora: Any, world: World, length: int) -> list[str]:
    """A CONTRARY_UPDATE chain of ``length`` memories a day apart, oldest first."""
    ids: list[str] = []
    for step in range(length):
        contrary = [(f"version {step}", [0], ids[-1])] if ids else []
        memories = [] if ids else [("version 0", [0])]
        data = conversation(
            TWO, when=DAY + timedelta(days=step), memories=memories, contrary=contrary
        )
        interaction_id = await save(memora, world, data)
        ids.append((await memory_ids(memora, world, interaction_id))[f"version {step}"])
    return ids


# -- get_all_user_memories -------------------------------------------------------------


async def test_get_all_user_memories_newest_first_with_pages(memora: Any) -> None:
    world = await make_world(memora)
    for day in (0, 3, 1):
        when = DAY + timedelta(days=day)
        memories = [(f"day {day} memory {k}", [k % 2]) for k in range(3)]
        await save(memora, world, conversation(TWO, when=when, memories=memories))

    everything = await memora.get_all_user_memories(world.org_id, world.user_id)

    keys = [(memory.obtained_at, memory.memory_id) for memory in everything]
    assert keys == sorted(keys, reverse=True)  # newest first, ties by memory_id
    assert [memory.memory[:5] for memory in everything] == ["day 3"] * 3 + ["day 1"] * 3 + [
        "day 0"
    ] * 3
    for size in (1, 2, 4, 9):
        pages = [
            await memora.get_all_user_memories(world.org_id, world.user_id, None, skip, size)
            for skip in range(0, 10, size)
        ]
        assert [memory for page in pages for memory in page] == everything
    first = everything[0]
    assert (first.org_id, first.user_id, first.agent_id) == (
        world.org_id,
        world.user_id,
        world.agent_id,
    )
    assert [source.content for source in first.message_sources] in (["I live in Oslo"], ["Nice!"])


async def test_get_all_user_memories_agent_filter(memora: Any) -> None:
    world = await make_world(memora)
    helper = await memora.create_agent(world.org_id, "Helper")
    await save(memora, world, conversation(TWO, memories=[("with Bot", [0])]))
    await memora.save_interaction_with_memories(
        world.org_id,
        helper.agent_id,
        world.user_id,
        conversation(TWO, when=LATER, memories=[("with Helper", [1])]),
    )

    by_bot = await memora.get_all_user_memories(world.org_id, world.user_id, world.agent_id)
    by_helper = await memora.get_all_user_memories(world.org_id, world.user_id, helper.agent_id)
    by_nobody = await memora.get_all_user_memories(world.org_id, world.user_id, "unknown")

    assert [memory.memory for memory in by_bot] == ["with Bot"]
    assert [memory.memory for memory in by_helper] == ["with Helper"]
    assert by_nobody == []


async def test_get_all_user_memories_tenants_and_errors(memora: Any) -> None:
    world = await make_world(memora)
    neighbour = await make_world(memora, org_id=world.org_id, user_name="Bob")
    await save(memora, neighbour, conversation(TWO, memories=[("Bob's", [0])]))

    assert await memora.get_all_user_memories(world.org_id, world.user_id) == []
    other_org = (await memora.create_organization("Other")).org_id
    with pytest.raises(UserNotFound):
        await memora.get_all_user_memories(other_org, neighbour.user_id)
    for bad in ({"agent_id": ""}, {"agent_id": 3}, {"skip": -2}, {"limit": 1.5}):
        with pytest.raises(ValueError):
            await memora.get_all_user_memories(world.org_id, world.user_id, **bad)


# -- get_user_memory -------------------------------------------------------------------


async def test_get_user_memory_returns_it_resolved_with_sources(memora: Any) -> None:
    world = await make_world(memora)
    interaction_id = await save(
        memora,
        world,
        conversation(
            TWO, memories=[(f"user_{world.user_id} talks to agent_{world.agent_id}", [1, 0])]
        ),
    )
    memory_id = (await memory_ids(memora, world, interaction_id))["Ann talks to Bot"]

    memory = await memora.get_user_memory(world.org_id, world.user_id, memory_id)

    assert memory.memory == "Ann talks to Bot"
    assert (memory.memory_id, memory.interaction_id, memory.obtained_at) == (
        memory_id,
        interaction_id,
        DAY,
    )
    assert [(s.msg_position, s.role, s.content) for s in memory.message_sources] == [
        (0, "user", "I live in Oslo"),
        (1, "assistant", "Nice!"),
    ]


async def test_get_user_memory_errors_and_tenants(memora: Any) -> None:
    world = await make_world(memora)
    other = await make_world(memora)
    _, theirs = await saved_memory(memora, other, "theirs")

    for org_id, user_id, memory_id in (
        (world.org_id, world.user_id, theirs),
        (other.org_id, world.user_id, theirs),
        (world.org_id, other.user_id, theirs),
        (other.org_id, other.user_id, NO_MEMORY),
    ):
        for read in (memora.get_user_memory, memora.get_user_memory_history):
            with pytest.raises(MemoryNotFound) as raised:
                await read(org_id, user_id, memory_id)
            assert isinstance(raised.value, Neo4jError) and memory_id in raised.value.message
    with pytest.raises(ValueError):
        await memora.get_user_memory(other.org_id, other.user_id, None)


async def test_spec_10_3_get_user_memory_without_message_sources(memora: Any) -> None:
    """Memora's query requires a MESSAGE_SOURCE, so a memory whose messages were truncated
    (or that never had any) is reported as missing."""
    world = await make_world(memora)
    interaction_id = await save(
        memora, world, conversation(TWO, memories=[("truncated away", [1]), ("never had any", [])])
    )
    await update(memora, world, interaction_id, conversation(TWO[:1], when=LATER))
    ids = await memory_ids(memora, world, interaction_id)

    for text in ("truncated away", "never had any"):
        memory = await memora.get_user_memory(world.org_id, world.user_id, ids[text])
        assert (memory.memory, memory.message_sources) == (text, [])


# -- history and resolved fetches ------------------------------------------------------


async def test_get_user_memory_history_is_newest_first(memora: Any, driver: Any) -> None:
    world = await make_world(memora)
    ids = await _chain(memora, world, 4)

    history = await memora.get_user_memory_history(world.org_id, world.user_id, ids[-1])
    middle = await memora.get_user_memory_history(world.org_id, world.user_id, ids[1])
    single = await memora.get_user_memory_history(world.org_id, world.user_id, ids[0])

    assert [memory.memory_id for memory in history] == ids[::-1]
    assert [memory.memory for memory in history] == [f"version {k}" for k in (3, 2, 1, 0)]
    assert [memory.obtained_at for memory in history] == [
        DAY + timedelta(days=k) for k in (3, 2, 1, 0)
    ]
    assert [memory.memory_id for memory in middle] == [ids[1], ids[0]]
    assert [memory.memory_id for memory in single] == [ids[0]]
    assert value(driver, "MATCH ()-[r:CONTRARY_UPDATE]->() RETURN count(r)") == 3


async def test_fetch_resolved_returns_the_newest_version_once(memora: Any) -> None:
    world = await make_world(memora)
    other = await make_world(memora)
    ids = await _chain(memora, world, 3)
    _, plain_id = await saved_memory(memora, world, "plain")
    _, theirs = await saved_memory(memora, other, "theirs")

    resolved = await memora.fetch_user_memories_resolved(
        [
            world.ids(plain_id),
            world.ids(ids[0]),
            world.ids(ids[1]),  # resolves to the same newest memory: given once
            world.ids(NO_MEMORY),
            world.ids(theirs),  # another user's memory under this user: left out
            {**other.ids(ids[2]), "org_id": world.org_id},
            world.ids(plain_id),
        ]
    )

    assert [memory.memory_id for memory in resolved] == [plain_id, ids[2]]
    assert [memory.memory for memory in resolved] == ["plain", "version 2"]
    assert resolved[1].message_sources[0].content == "I live in Oslo"


async def test_fetch_resolved_batch_keeps_input_order(memora: Any) -> None:
    world = await make_world(memora)
    other = await make_world(memora)
    ids = await _chain(memora, world, 2)
    _, other_id = await saved_memory(memora, other, "other user")

    batch = await memora.fetch_user_memories_resolved_batch(
        [
            [other.ids(other_id), world.ids(ids[0])],
            [],
            [world.ids(NO_MEMORY)],
            [world.ids(ids[1]), other.ids(other_id)],
        ]
    )

    assert [[memory.memory for memory in memories] for memories in batch] == [
        ["other user", "version 1"],
        [],
        [],
        ["version 1", "other user"],
    ]
    assert await memora.fetch_user_memories_resolved_batch([]) == []
    assert await memora.fetch_user_memories_resolved([]) == []


@pytest.mark.parametrize(
    "batch",
    [
        "not a list",
        [{"org_id": "o", "user_id": "u", "memory_id": "m"}],
        [["not a dict"]],
        [[{"org_id": "o", "user_id": "u"}]],
        [[{"org_id": "o", "user_id": 1, "memory_id": "m"}]],
        [[{"org_id": "", "user_id": "u", "memory_id": "m"}]],
    ],
)
async def test_fetch_resolved_batch_validates(memora: Any, batch: Any) -> None:
    with pytest.raises(ValueError):
        await memora.fetch_user_memories_resolved_batch(batch)


# -- deletes ---------------------------------------------------------------------------


async def test_delete_user_memory_removes_it_and_a_date_nothing_else_uses(
    memora: Any, driver: Any
) -> None:
    world = await make_world(memora)
    ids = await _chain(memora, world, 3)

    await memora.delete_user_memory(world.org_id, world.user_id, ids[1])

    remaining = value(driver, "MATCH (m:Memory) RETURN collect(m.memory_id)")
    assert sorted(remaining) == sorted([ids[0], ids[2]])
    assert value(driver, "MATCH ()-[r:CONTRARY_UPDATE]->() RETURN count(r)") == 0
    assert value(driver, "MATCH (d:Date) RETURN count(d)") == 3  # the interactions use them
    # A Date only the memory uses (as a migrated graph can have) goes with the memory.
    last_day = (DAY + timedelta(days=2)).date()
    driver.execute_query(
        "MATCH (:Interaction)-[r:HAS_OCCURRENCE_ON]->(:Date {date: $day}) DELETE r", day=last_day
    )
    await memora.delete_user_memory(world.org_id, world.user_id, ids[2])
    dates = value(driver, "MATCH (d:Date) RETURN collect(d.date)")
    assert sorted(day.to_native() for day in dates) == [DAY.date(), (DAY + timedelta(1)).date()]
    with pytest.raises(MemoryNotFound):
        await memora.delete_user_memory(world.org_id, world.user_id, ids[1])


async def test_memory_deletes_leave_other_tenants_untouched(memora: Any, driver: Any) -> None:
    world = await make_world(memora)
    other = await make_world(memora)
    _, theirs = await saved_memory(memora, other, "theirs")
    await saved_memory(memora, world, "mine")
    before_theirs = rows(driver, "MATCH (n {user_id: $u}) RETURN count(n) AS n", u=other.user_id)

    for org_id, user_id in ((world.org_id, world.user_id), (other.org_id, world.user_id)):
        with pytest.raises(MemoryNotFound):
            await memora.delete_user_memory(org_id, user_id, theirs)
    await memora.delete_all_user_memories(world.org_id, world.user_id)

    assert rows(driver, "MATCH (n {user_id: $u}) RETURN count(n) AS n", u=other.user_id) == (
        before_theirs
    )
    assert value(driver, "MATCH (m:Memory) RETURN collect(m.memory)") == ["theirs"]
    with pytest.raises(UserNotFound):
        await memora.delete_all_user_memories(world.org_id, other.user_id)


async def test_delete_all_user_memories_keeps_interactions(memora: Any, driver: Any) -> None:
    world = await make_world(memora)
    first = await save(memora, world, conversation(TWO, memories=[("a", [0]), ("b", [1])]))
    await _chain(memora, world, 2)
    before = snapshot(driver)

    await memora.delete_all_user_memories(world.org_id, world.user_id)

    assert await memora.get_all_user_memories(world.org_id, world.user_id) == []
    assert value(driver, "MATCH (m:Memory) RETURN count(m)") == 0
    assert len(await memora.get_all_user_interactions(world.org_id, world.user_id)) == 3
    found = await memora.get_interaction(world.org_id, world.user_id, first)
    assert (len(found.messages), found.memories) == (2, [])
    assert value(driver, "MATCH (d:Date) RETURN count(d)") == 2  # still used by interactions
    nodes_before, _ = before
    assert len(nodes_before) - len(snapshot(driver)[0]) == 4


async def test_memory_deletes_reach_the_vector_store(with_vectors: Any) -> None:
    memora, vectors = with_vectors
    world = await make_world(memora)
    interaction_id = await save(memora, world, conversation(TWO, memories=[("a", [0]), ("b", [1])]))
    ids = await memory_ids(memora, world, interaction_id)
    assert await vector_ids(vectors) == sorted(ids.values())

    await memora.delete_user_memory(world.org_id, world.user_id, ids["a"])
    assert await vector_ids(vectors) == [ids["b"]]
    await memora.delete_all_user_memories(world.org_id, world.user_id)
    assert await vector_ids(vectors) == []


# -- SPEC section 10 -------------------------------------------------------------------


async def test_spec_10_4_memories_of_a_deleted_agent_are_still_returned(memora: Any) -> None:
    """Memora MATCHes the memory's Agent, so every memory read drops the memories of a
    deleted agent (and the interaction reads fail model validation on a null text)."""
    world = await make_world(memora)
    text = f"user_{world.user_id} asked agent_{world.agent_id} for help"
    interaction_id = await save(memora, world, conversation(TWO, memories=[(text, [0])]))
    memory_id = (await memory_ids(memora, world, interaction_id))["Ann asked Bot for help"]
    await memora.delete_agent(world.org_id, world.agent_id)
    expected = f"Ann asked agent_{world.agent_id} for help"  # the placeholder stays

    reads = [
        [await memora.get_user_memory(world.org_id, world.user_id, memory_id)],
        await memora.get_user_memory_history(world.org_id, world.user_id, memory_id),
        await memora.get_all_user_memories(world.org_id, world.user_id),
        await memora.get_all_user_memories(world.org_id, world.user_id, world.agent_id),
        await memora.fetch_user_memories_resolved([world.ids(memory_id)]),
        (await memora.get_interaction(world.org_id, world.user_id, interaction_id)).memories,
        (await memora.get_all_user_interactions(world.org_id, world.user_id))[0].memories,
    ]
    for memories in reads:
        assert [(memory.memory_id, memory.memory) for memory in memories] == [(memory_id, expected)]
