"""Interactions: save, update (every chain case), read, paginate and delete, with the graph checked.

Tests named ``test_spec_10_<n>_...`` cover the defects of SPEC section 10 that
Memora v0.3.0 has; each would fail against Memora's behaviour (described in its
docstring).
"""

from __future__ import annotations

import uuid
from datetime import datetime, timedelta, timezone
from typing import Any
from zoneinfo import ZoneInfo

import pytest
from interaction_helpers import (
    DAY,
    LATER,
    World,
    as_pairs,
    chat,
    concurrently,
    conversation,
    make_world,
    memory_ids,
    rows,
    save,
    saved_memory,
    snapshot,
    sources,
    stored_chain,
    update,
    value,
    vector_ids,
    with_vectors,
)
from neo4j.exceptions import Neo4jError

from memora_ogm.errors import AgentNotFound, InteractionNotFound, MemoryNotFound, UserNotFound
from memora_ogm.schema.storage import ContraryMemoryToStore, MemoriesAndInteraction, MemoryToStore

__all__ = ["with_vectors"]  # the fixture, imported so pytest finds it here

FOUR = chat("I moved to Oslo", "Nice city!", "I adopted a cat", "What is its name?")


# -- save ------------------------------------------------------------------------------


async def test_save_stores_interaction_messages_memories_and_links(
    memora: Any, driver: Any
) -> None:
    world = await make_world(memora)
    data = conversation(
        FOUR,
        memories=[(f"user_{world.user_id} lives in Oslo", [0]), ("has a cat", [2, 3])],
    )
    interaction_id, created_at = await memora.save_interaction_with_memories(
        world.org_id, world.agent_id, world.user_id, data
    )

    assert isinstance(interaction_id, str) and len(interaction_id) == 22
    assert created_at == DAY and created_at.tzinfo is not None
    (interaction,) = rows(
        driver,
        "MATCH (:User {user_id: $u})-[:INTERACTIONS_IN]->(:InteractionCollection)"
        "-[:HAD_INTERACTION]->(i:Interaction)-[:HAS_OCCURRENCE_ON]->(d:Date) "
        "RETURN i {.*} AS i, valueType(i.created_at) AS t, d.date AS date, "
        "valueType(d.date) AS date_type, d {.org_id, .user_id} AS owner",
        u=world.user_id,
    )
    assert interaction["i"]["interaction_id"] == interaction_id
    assert set(interaction["i"]) == {
        "org_id",
        "user_id",
        "agent_id",
        "interaction_id",
        "created_at",
        "updated_at",
    }
    assert interaction["i"]["agent_id"] == world.agent_id
    assert interaction["i"]["created_at"].to_native() == DAY
    assert interaction["i"]["updated_at"].to_native() == DAY
    assert interaction["t"].startswith("ZONED DATETIME")
    assert interaction["date"].to_native() == DAY.date()
    assert interaction["date_type"].startswith("DATE")
    assert interaction["owner"] == {"org_id": world.org_id, "user_id": world.user_id}
    assert stored_chain(driver, interaction_id) == as_pairs(FOUR)

    memories = rows(
        driver,
        "MATCH (:User {user_id: $u})-[:HAS_MEMORIES]->(:MemoryCollection)-[:INCLUDES]->"
        "(m:Memory)-[:INTERACTION_SOURCE]->(:Interaction {interaction_id: $i}), "
        "(m)-[:DATE_OBTAINED]->(d:Date) "
        "RETURN m {.*} AS m, valueType(m.obtained_at) AS t, d.date AS date ORDER BY m.memory",
        u=world.user_id,
        i=interaction_id,
    )
    assert [record["m"]["memory"] for record in memories] == [
        "has a cat",
        f"user_{world.user_id} lives in Oslo",  # stored with its placeholder
    ]
    for record in memories:
        memory = record["m"]
        assert set(memory) == {
            "org_id",
            "user_id",
            "agent_id",
            "interaction_id",
            "memory_id",
            "memory",
            "obtained_at",
        }
        assert uuid.UUID(memory["memory_id"]).version == 4
        assert (memory["org_id"], memory["user_id"], memory["agent_id"]) == (
            world.org_id,
            world.user_id,
            world.agent_id,
        )
        assert memory["interaction_id"] == interaction_id
        assert memory["obtained_at"].to_native() == DAY
        assert record["t"].startswith("ZONED DATETIME")
        assert record["date"].to_native() == DAY.date()
    assert sources(driver, interaction_id) == {
        f"user_{world.user_id} lives in Oslo": [0],
        "has a cat": [2, 3],
    }
    assert value(driver, "MATCH (d:Date) RETURN count(d)") == 1


async def test_save_uses_the_calendar_day_of_the_date_in_its_own_offset(
    memora: Any, driver: Any
) -> None:
    world = await make_world(memora)
    late_evening = datetime(2024, 5, 1, 23, 30, tzinfo=timezone(timedelta(hours=-5)))
    await save(memora, world, conversation(chat("hi"), when=late_evening, memories=[("m", [0])]))

    dates = rows(driver, "MATCH (d:Date) RETURN d.date AS date")
    assert [record["date"].to_native() for record in dates] == [late_evening.date()]
    stored = value(driver, "MATCH (m:Memory) RETURN m.obtained_at")
    assert stored.to_native() == late_evening and stored.utcoffset() == timedelta(hours=-5)


async def test_each_timestamp_keeps_its_own_offset(memora: Any, driver: Any) -> None:
    """A save and an update send each distinct datetime once (``$times`` of the unit of
    work): every node still stores the offset of the datetime it was given (a named
    zone's offset there, not its name, see ``tests/test_datetimes.py``)."""
    world = await make_world(memora)
    interaction_id = await save(memora, world, conversation(chat("hi"), memories=[("a", [0])]))
    oslo = datetime(2024, 5, 3, 20, 15, tzinfo=ZoneInfo("Europe/Oslo"))
    await update(memora, world, interaction_id, conversation(chat("hi"), oslo, [("b", [0])]))

    stored = rows(
        driver,
        "MATCH (i:Interaction) RETURN i.created_at.timezone AS created, "
        "i.updated_at.timezone AS updated, i.updated_at AS at",
    )
    assert [(r["created"], r["updated"]) for r in stored] == [("Z", "+02:00")]
    assert stored[0]["at"].to_native() == oslo
    zones = rows(
        driver,
        "MATCH (m:Memory) RETURN m.memory AS text, m.obtained_at.timezone AS zone ORDER BY text",
    )
    assert [(r["text"], r["zone"]) for r in zones] == [("a", "Z"), ("b", "+02:00")]


async def test_save_refuses_a_message_cited_twice(memora: Any, driver: Any) -> None:
    world = await make_world(memora)
    before = snapshot(driver)
    with pytest.raises(ValueError, match="position 1 is given twice"):
        await save(memora, world, conversation(FOUR, memories=[("m", [1, 0, 1])]))

    assert snapshot(driver) == before


async def test_saves_on_one_day_share_its_date_node(memora: Any, driver: Any) -> None:
    world = await make_world(memora)
    for hour in (8, 12, 20):
        await save(memora, world, conversation(FOUR, when=DAY.replace(hour=hour)))

    assert value(driver, "MATCH (d:Date) RETURN count(d)") == 1
    assert value(driver, "MATCH (:Interaction)-[r:HAS_OCCURRENCE_ON]->(:Date) RETURN count(r)") == 3


async def test_concurrent_saves_on_a_new_day_make_one_date_node(memora: Any, driver: Any) -> None:
    world = await make_world(memora)
    calls = [
        (world.org_id, world.agent_id, world.user_id, conversation(FOUR, memories=[("m", [0])]))
        for _ in range(6)
    ]
    results = await concurrently(memora, "save_interaction_with_memories", calls)

    assert not [result for result in results if isinstance(result, BaseException)]
    assert value(driver, "MATCH (d:Date) RETURN count(d)") == 1
    assert value(driver, "MATCH (:Memory)-[r:DATE_OBTAINED]->(:Date) RETURN count(r)") == 6


def _bad_memory(**fields: Any) -> MemoryToStore:
    """A memory pydantic would refuse, as a caller mutating one could still pass it."""
    return MemoryToStore.model_construct(**{"memory": "m", "source_msg_block_pos": [0], **fields})


BAD_SAVES: dict[str, tuple[dict[str, Any], Any]] = {
    "empty org_id": ({"org_id": ""}, None),
    "whitespace user_id": ({"user_id": "   "}, None),
    "int agent_id": ({"agent_id": 7}, None),
    "not a MemoriesAndInteraction": ({}, {"interaction": []}),
    "message not a dict": (
        {},
        MemoriesAndInteraction.model_construct(
            interaction=["hello"], interaction_date=DAY, memories=[], contrary_memories=[]
        ),
    ),
    "message without role": (
        {},
        MemoriesAndInteraction.model_construct(
            interaction=[{"content": "hello"}],
            interaction_date=DAY,
            memories=[],
            contrary_memories=[],
        ),
    ),
    "content not a string": (
        {},
        MemoriesAndInteraction.model_construct(
            interaction=[{"role": "user", "content": 5}],
            interaction_date=DAY,
            memories=[],
            contrary_memories=[],
        ),
    ),
    "date not a datetime": (
        {},
        MemoriesAndInteraction.model_construct(
            interaction=[], interaction_date="2024-05-01", memories=[], contrary_memories=[]
        ),
    ),
    "position past the end": ({}, conversation(FOUR, memories=[("m", [4])])),
    "negative position": ({}, conversation(FOUR, memories=[("m", [-1])])),
    "position with no messages": ({}, conversation([], memories=[("m", [0])])),
    "bool position": (
        {},
        MemoriesAndInteraction(
            interaction=FOUR, memories=[_bad_memory(source_msg_block_pos=[True])]
        ),
    ),
    "str position": (
        {},
        MemoriesAndInteraction(
            interaction=FOUR, memories=[_bad_memory(source_msg_block_pos=["1"])]
        ),
    ),
    "empty memory text": ({}, conversation(FOUR, memories=[("", [0])])),
    "memory not a MemoryToStore": (
        {},
        MemoriesAndInteraction.model_construct(
            interaction=FOUR, interaction_date=DAY, memories=[{"memory": "m"}], contrary_memories=[]
        ),
    ),
    "contrary id not a string": (
        {},
        MemoriesAndInteraction(
            interaction=FOUR,
            contrary_memories=[
                ContraryMemoryToStore.model_construct(
                    memory="m", source_msg_block_pos=[0], existing_contrary_memory_id=5
                )
            ],
        ),
    ),
    "empty contrary id": ({}, conversation(FOUR, contrary=[("m", [0], "")])),
}


@pytest.mark.parametrize("ids, data", BAD_SAVES.values(), ids=BAD_SAVES.keys())
async def test_save_refuses_bad_input_before_writing(
    memora: Any, driver: Any, ids: Any, data: Any
) -> None:
    world = await make_world(memora)
    arguments = {"org_id": world.org_id, "agent_id": world.agent_id, "user_id": world.user_id}
    arguments.update(ids)
    before = snapshot(driver)

    with pytest.raises(ValueError):
        await memora.save_interaction_with_memories(
            memories_and_interaction=data if data is not None else conversation(FOUR),
            **arguments,
        )
    assert snapshot(driver) == before


async def test_save_for_a_missing_user_or_agent_raises_not_found(memora: Any, driver: Any) -> None:
    world = await make_world(memora)
    other = await make_world(memora)  # an agent of another organisation is missing here
    data = conversation(FOUR, memories=[("m", [0])])
    before = snapshot(driver)

    for error, user_id, agent_id in (
        (UserNotFound, "missing-user", world.agent_id),
        (AgentNotFound, world.user_id, "missing-agent"),
        (AgentNotFound, world.user_id, other.agent_id),
        (UserNotFound, other.user_id, world.agent_id),
    ):
        with pytest.raises(error) as raised:
            await memora.save_interaction_with_memories(world.org_id, agent_id, user_id, data)
        assert isinstance(raised.value, Neo4jError)
        assert (user_id if error is UserNotFound else agent_id) in str(raised.value)
    assert snapshot(driver) == before


# -- contrary memories -----------------------------------------------------------------


async def test_contrary_memory_is_linked_from_the_memory_it_supersedes(
    memora: Any, driver: Any
) -> None:
    world = await make_world(memora)
    _, old_id = await saved_memory(memora, world, "lives in Oslo", FOUR)
    second = await save(
        memora,
        world,
        conversation(
            chat("I moved to Rome"), when=LATER, contrary=[("lives in Rome", [0], old_id)]
        ),
    )
    new_id = (await memory_ids(memora, world, second))["lives in Rome"]

    links = rows(
        driver,
        "MATCH (old:Memory)-[:CONTRARY_UPDATE]->(new:Memory) "
        "RETURN old.memory_id AS old, new.memory_id AS new, COUNT { (new)-[:DATE_OBTAINED]->() } "
        "AS dated",
    )
    assert links == [{"old": old_id, "new": new_id, "dated": 1}]


async def test_contrary_memory_of_another_user_is_refused(memora: Any, driver: Any) -> None:
    """Superseding a memory the user does not own would link two tenants: refused, not written."""
    world = await make_world(memora)
    other = await make_world(memora, org_id=world.org_id, user_name="Bob")
    _, their_id = await saved_memory(memora, other, "Bob's fact")
    before = snapshot(driver)

    for memory_id in (their_id, str(uuid.uuid4())):
        with pytest.raises(MemoryNotFound) as raised:
            await save(memora, world, conversation(FOUR, contrary=[("mine", [0], memory_id)]))
        assert memory_id in str(raised.value)
    assert snapshot(driver) == before


# -- update ----------------------------------------------------------------------------

UPDATE_CASES: dict[str, tuple[list[dict[str, str]], list[dict[str, str]], int]] = {
    # name: (stored chain, new list, how many leading messages stay)
    "identical list": (FOUR, FOUR, 4),
    "longer list appends": (FOUR, FOUR + chat("Tom", "Cute")[::-1], 4),
    "difference at position 0": (FOUR, chat("Hello again", "Hi", "Weather?"), 0),
    "difference at position k": (FOUR, FOUR[:2] + chat("I adopted a dog", "Name?"), 2),
    "role differs at position k": (
        FOUR,
        FOUR[:1] + [{"role": "user", "content": FOUR[1]["content"]}] + FOUR[2:],
        1,
    ),
    "shorter list": (FOUR, FOUR[:2], 2),
    "empty new list": (FOUR, [], 0),
    "empty existing chain": ([], FOUR, 0),
}


def _message_ids(driver: Any, interaction_id: str) -> list[str]:
    return [
        record["id"]
        for record in rows(
            driver,
            "MATCH (:Interaction {interaction_id: $i})-[:FIRST_MESSAGE]->(f) "
            "MATCH path = (f)-[:IS_NEXT*0..]->(m) RETURN elementId(m) AS id ORDER BY length(path)",
            i=interaction_id,
        )
    ]


@pytest.mark.parametrize("stored, new, kept", UPDATE_CASES.values(), ids=UPDATE_CASES.keys())
async def test_update_rewrites_the_chain_from_the_first_difference(
    memora: Any, driver: Any, stored: Any, new: Any, kept: Any
) -> None:
    world = await make_world(memora)
    per_message = [(f"memory of message {p}", [p]) for p in range(len(stored))]
    interaction_id = await save(memora, world, conversation(stored, memories=per_message))
    before = _message_ids(driver, interaction_id)
    cited = [0, len(new) - 1] if new else []

    result = await update(
        memora,
        world,
        interaction_id,
        conversation(new, when=LATER, memories=[("added by the update", cited)]),
    )

    assert result == (interaction_id, LATER)
    assert stored_chain(driver, interaction_id) == as_pairs(new)
    after = _message_ids(driver, interaction_id)
    assert after[:kept] == before[:kept]  # the unchanged head is kept as it was
    assert not set(after[kept:]) & set(before)  # the rest is new
    expected_sources = {
        f"memory of message {p}": [p] if p < kept else [] for p in range(len(stored))
    }
    expected_sources["added by the update"] = sorted(set(cited))
    assert sources(driver, interaction_id) == expected_sources
    fetched = await memora.get_interaction(world.org_id, world.user_id, interaction_id)
    assert [(m.role, m.content, m.msg_position) for m in fetched.messages] == [
        (m["role"], m["content"], p) for p, m in enumerate(new)
    ]
    assert len(fetched.memories) == len(stored) + 1
    assert (fetched.updated_at, fetched.created_at) == (LATER, DAY)


async def test_update_sets_agent_and_date_and_links_the_new_day(memora: Any, driver: Any) -> None:
    world = await make_world(memora)
    other_agent = await memora.create_agent(world.org_id, "Other")
    interaction_id = await save(memora, world, conversation(FOUR))

    await memora.update_interaction_and_memories(
        world.org_id,
        other_agent.agent_id,
        world.user_id,
        interaction_id,
        conversation(FOUR, when=LATER, memories=[("new", [3])]),
    )

    (record,) = rows(
        driver,
        "MATCH (i:Interaction) RETURN i.agent_id AS agent, i.updated_at AS updated, "
        "i.created_at AS created, [(i)-[:HAS_OCCURRENCE_ON]->(d) | d.date] AS days",
    )
    assert record["agent"] == other_agent.agent_id
    assert (record["created"].to_native(), record["updated"].to_native()) == (DAY, LATER)
    assert sorted(day.to_native() for day in record["days"]) == [DAY.date(), LATER.date()]
    assert value(driver, "MATCH (m:Memory) RETURN m.agent_id") == other_agent.agent_id


async def test_update_of_a_missing_interaction_or_agent_raises_and_writes_nothing(
    memora: Any, driver: Any
) -> None:
    world = await make_world(memora)
    other = await make_world(memora)
    interaction_id = await save(memora, world, conversation(FOUR))
    theirs = await save(memora, other, conversation(FOUR))
    before = snapshot(driver)
    data = conversation(chat("new"), when=LATER, memories=[("m", [0])])

    for error, agent_id, interaction in (
        (InteractionNotFound, world.agent_id, "missing"),
        (InteractionNotFound, world.agent_id, theirs),  # another tenant's interaction
        (AgentNotFound, "missing", interaction_id),
    ):
        with pytest.raises(error):
            await memora.update_interaction_and_memories(
                world.org_id, agent_id, world.user_id, interaction, data
            )
    with pytest.raises(ValueError):
        await update(
            memora, world, interaction_id, conversation(chat("new"), memories=[("m", [1])])
        )
    assert snapshot(driver) == before


# -- get_interaction -------------------------------------------------------------------


async def test_get_interaction_returns_messages_and_memories_in_order(memora: Any) -> None:
    world = await make_world(memora)
    interaction_id = await save(
        memora, world, conversation(FOUR, memories=[("b", [3, 1]), ("a", [2])])
    )
    await update(
        memora, world, interaction_id, conversation(FOUR, when=LATER, memories=[("c", [])])
    )

    found = await memora.get_interaction(world.org_id, world.user_id, interaction_id)

    assert (found.org_id, found.user_id, found.agent_id, found.interaction_id) == (
        world.org_id,
        world.user_id,
        world.agent_id,
        interaction_id,
    )
    assert [m.msg_position for m in found.messages] == [0, 1, 2, 3]
    assert as_pairs([{"role": m.role, "content": m.content} for m in found.messages]) == as_pairs(
        FOUR
    )
    same_day = sorted(found.memories[:2], key=lambda memory: memory.memory_id)
    assert found.memories[:2] == same_day  # ties on obtained_at broken by memory_id
    assert [m.memory for m in found.memories][2] == "c"
    assert [m.obtained_at for m in found.memories] == [DAY, DAY, LATER]
    by_text = {memory.memory: memory for memory in found.memories}
    assert [s.msg_position for s in by_text["b"].message_sources] == [1, 3]
    assert by_text["a"].message_sources[0].content == FOUR[2]["content"]
    assert by_text["c"].message_sources == []
    assert {m.interaction_id for m in found.memories} == {interaction_id}


@pytest.mark.parametrize("with_messages", [True, False])
@pytest.mark.parametrize("with_memories", [True, False])
async def test_get_interaction_leaves_out_what_was_not_asked(
    memora: Any, with_messages: Any, with_memories: Any
) -> None:
    world = await make_world(memora)
    interaction_id = await save(memora, world, conversation(FOUR, memories=[("m", [0])]))

    found = await memora.get_interaction(
        world.org_id, world.user_id, interaction_id, with_messages, with_memories
    )

    assert len(found.messages) == (4 if with_messages else 0)
    assert len(found.memories) == (1 if with_memories else 0)
    assert found.created_at == DAY


async def test_get_interaction_errors(memora: Any) -> None:
    world = await make_world(memora)
    other = await make_world(memora)
    theirs = await save(memora, other, conversation(FOUR))

    for with_memories in (True, False):
        for org_id, user_id, interaction_id in (
            (world.org_id, world.user_id, "missing"),
            (world.org_id, world.user_id, theirs),
            (world.org_id, other.user_id, theirs),
        ):
            with pytest.raises(InteractionNotFound):
                await memora.get_interaction(
                    org_id, user_id, interaction_id, with_memories=with_memories
                )
    for bad in ({"interaction_id": ""}, {"with_messages": 1}, {"with_memories": None}):
        arguments: dict[str, Any] = {
            "org_id": other.org_id,
            "user_id": other.user_id,
            "interaction_id": theirs,
        }
        with pytest.raises(ValueError):
            await memora.get_interaction(**{**arguments, **bad})


# -- get_all_user_interactions ---------------------------------------------------------


async def _history(memora: Any, world: World) -> list[str]:
    """Seven interactions over several days, three updated later; newest update first."""
    ids = []
    for day in range(7):
        when = DAY + timedelta(days=day, hours=day)
        ids.append(await save(memora, world, conversation(chat(f"day {day}"), when=when)))
    for index, day in ((1, 9), (4, 8), (0, 8)):
        await update(
            memora,
            world,
            ids[index],
            conversation(chat(f"day {index}", "more"), when=DAY + timedelta(days=day, hours=index)),
        )
    return [ids[1], ids[4], ids[0], ids[6], ids[5], ids[3], ids[2]]


async def test_get_all_user_interactions_newest_update_first_each_once(memora: Any) -> None:
    world = await make_world(memora)
    expected = await _history(memora, world)

    everything = await memora.get_all_user_interactions(world.org_id, world.user_id)
    assert [i.interaction_id for i in everything] == expected
    updated = [i.updated_at for i in everything]
    assert updated == sorted(updated, reverse=True)
    for size in (1, 2, 3, 7, 10):
        pages = [
            await memora.get_all_user_interactions(
                world.org_id, world.user_id, False, False, skip, size
            )
            for skip in range(0, 8, size)
        ]
        assert [i.interaction_id for page in pages for i in page] == expected
    assert await memora.get_all_user_interactions(world.org_id, world.user_id, skip=7) == []
    assert await memora.get_all_user_interactions(world.org_id, world.user_id, limit=0) == []


async def test_get_all_user_interactions_returns_messages_and_memories(memora: Any) -> None:
    world = await make_world(memora)
    interaction_id = await save(
        memora, world, conversation(FOUR, memories=[(f"user_{world.user_id} is here", [1])])
    )

    (full,) = await memora.get_all_user_interactions(world.org_id, world.user_id)
    (bare,) = await memora.get_all_user_interactions(world.org_id, world.user_id, False, False)
    single = await memora.get_interaction(world.org_id, world.user_id, interaction_id)

    assert full == single
    assert [m.content for m in full.messages] == [m["content"] for m in FOUR]
    assert [m.memory for m in full.memories] == ["Ann is here"]
    assert full.memories[0].message_sources[0].msg_position == 1
    assert (bare.messages, bare.memories) == ([], [])
    assert bare.model_dump(exclude={"messages", "memories"}) == full.model_dump(
        exclude={"messages", "memories"}
    )


async def test_get_all_user_interactions_errors_and_tenants(memora: Any) -> None:
    world = await make_world(memora)
    other = await make_world(memora)
    await save(memora, other, conversation(FOUR))

    assert await memora.get_all_user_interactions(world.org_id, world.user_id) == []
    with pytest.raises(UserNotFound):
        await memora.get_all_user_interactions(world.org_id, other.user_id)
    for bad in ({"skip": -1}, {"limit": "10"}, {"skip": True}, {"with_their_messages": "yes"}):
        with pytest.raises(ValueError):
            await memora.get_all_user_interactions(world.org_id, world.user_id, **bad)


# -- deletes ---------------------------------------------------------------------------


async def test_delete_interaction_takes_messages_memories_and_unused_dates(
    memora: Any, driver: Any
) -> None:
    world = await make_world(memora)
    doomed = await save(memora, world, conversation(FOUR, memories=[("a", [0]), ("b", [])]))
    await update(memora, world, doomed, conversation(FOUR, when=LATER, memories=[("c", [1])]))
    kept = await save(memora, world, conversation(chat("other"), memories=[("d", [0])]))

    await memora.delete_user_interaction_and_its_memories(world.org_id, world.user_id, doomed)

    assert value(driver, "MATCH (i:Interaction) RETURN collect(i.interaction_id)") == [kept]
    assert value(driver, "MATCH (m:Memory) RETURN collect(m.memory)") == ["d"]
    assert stored_chain(driver, kept) == as_pairs(chat("other"))  # and no orphan messages
    assert value(driver, "MATCH (m:MessageBlock) RETURN count(m)") == 1
    # DAY is still used by the kept interaction; LATER was only the deleted one's.
    dates = value(driver, "MATCH (d:Date) RETURN collect(d.date)")
    assert [day.to_native() for day in dates] == [DAY.date()]


async def test_spec_10_8_delete_interaction_without_messages_removes_unused_dates(
    memora: Any, driver: Any
) -> None:
    """Memora matches the interaction through its FIRST_MESSAGE, so an interaction with no
    messages is never deleted, and its orphan check on Date can never be true."""
    world = await make_world(memora)
    interaction_id = await save(memora, world, conversation([], memories=[("m", [])]))

    await memora.delete_user_interaction_and_its_memories(
        world.org_id, world.user_id, interaction_id
    )

    for label in ("Interaction", "Memory", "Date", "MessageBlock"):
        assert value(driver, f"MATCH (n:{label}) RETURN count(n)") == 0


async def test_delete_interaction_errors_and_tenants(memora: Any, driver: Any) -> None:
    world = await make_world(memora)
    other = await make_world(memora)
    theirs = await save(memora, other, conversation(FOUR, memories=[("m", [0])]))
    before = snapshot(driver)

    for org_id, user_id, interaction_id in (
        (world.org_id, world.user_id, theirs),
        (world.org_id, other.user_id, theirs),
        (other.org_id, world.user_id, theirs),
        (other.org_id, other.user_id, "missing"),
    ):
        with pytest.raises(InteractionNotFound):
            await memora.delete_user_interaction_and_its_memories(org_id, user_id, interaction_id)
    with pytest.raises(ValueError):
        await memora.delete_user_interaction_and_its_memories(other.org_id, other.user_id, "")
    assert snapshot(driver) == before


async def test_delete_all_user_interactions_leaves_other_users(memora: Any, driver: Any) -> None:
    world = await make_world(memora)
    other = await make_world(memora, org_id=world.org_id, user_name="Bob")
    for when in (DAY, LATER):
        await save(memora, world, conversation(FOUR, when=when, memories=[("m", [0])]))
    theirs = await save(memora, other, conversation(FOUR, memories=[("theirs", [1])]))
    await save(memora, world, conversation([], memories=[("no messages", [])]))

    await memora.delete_all_user_interactions_and_their_memories(world.org_id, world.user_id)

    assert await memora.get_all_user_interactions(world.org_id, world.user_id) == []
    assert await memora.get_all_user_memories(world.org_id, world.user_id) == []
    assert value(driver, "MATCH (i:Interaction) RETURN collect(i.interaction_id)") == [theirs]
    assert value(driver, "MATCH (m:Memory) RETURN collect(m.memory)") == ["theirs"]
    assert value(driver, "MATCH (d:Date) RETURN collect(d.user_id)") == [other.user_id]
    assert stored_chain(driver, theirs) == as_pairs(FOUR)
    assert value(driver, "MATCH (:User {user_id: $u})--(c) RETURN count(c)", u=world.user_id) == 3
    with pytest.raises(UserNotFound):
        await memora.delete_all_user_interactions_and_their_memories(world.org_id, "missing")


async def test_deletes_remove_the_memories_from_the_vector_store(with_vectors: Any) -> None:
    memora, vectors = with_vectors
    world = await make_world(memora)
    doomed = await save(memora, world, conversation(FOUR, memories=[("a", [0]), ("b", [1])]))
    _, kept_id = await saved_memory(memora, world, "c")
    assert len(await vector_ids(vectors)) == 3

    await memora.delete_user_interaction_and_its_memories(world.org_id, world.user_id, doomed)
    assert await vector_ids(vectors) == [kept_id]
    await memora.delete_all_user_interactions_and_their_memories(world.org_id, world.user_id)
    assert await vector_ids(vectors) == []


# -- SPEC section 10 -------------------------------------------------------------------


async def test_spec_10_1_new_memories_are_linked_to_their_date(memora: Any, driver: Any) -> None:
    """Memora's save path never creates DATE_OBTAINED, so get_all_user_memories, which walks
    Date nodes, misses every memory saved after the v0.3.x migration."""
    world = await make_world(memora)
    interaction_id = await save(memora, world, conversation(FOUR, memories=[("saved", [0])]))
    await update(
        memora,
        world,
        interaction_id,
        conversation(
            FOUR,
            when=LATER,
            memories=[("updated", [1])],
            contrary=[
                ("contrary", [2], (await memory_ids(memora, world, interaction_id))["saved"])
            ],
        ),
    )

    links = rows(
        driver,
        "MATCH (m:Memory)-[:DATE_OBTAINED]->(d:Date) RETURN m.memory AS memory, d.date AS date "
        "ORDER BY memory",
    )
    assert [(r["memory"], r["date"].to_native()) for r in links] == [
        ("contrary", LATER.date()),
        ("saved", DAY.date()),
        ("updated", LATER.date()),
    ]
    found = await memora.get_all_user_memories(world.org_id, world.user_id)
    assert sorted(memory.memory for memory in found) == ["contrary", "saved", "updated"]


async def test_spec_10_5_save_without_messages_stores_memories_and_returns_a_datetime(
    memora: Any, driver: Any
) -> None:
    """Memora returns early when there are no messages: the memories are dropped and the date
    comes back as an ISO string."""
    world = await make_world(memora)
    result = await memora.save_interaction_with_memories(
        world.org_id,
        world.agent_id,
        world.user_id,
        conversation([], memories=[("a fact without sources", [])]),
    )

    interaction_id, created_at = result
    assert isinstance(interaction_id, str) and isinstance(created_at, datetime)
    assert created_at == DAY
    (record,) = rows(
        driver,
        "MATCH (:MemoryCollection)-[:INCLUDES]->(m:Memory)-[:INTERACTION_SOURCE]->"
        "(i:Interaction {interaction_id: $i}), (m)-[:DATE_OBTAINED]->(:Date) "
        "RETURN m.memory AS memory, COUNT { (m)-[:MESSAGE_SOURCE]->() } AS sources, "
        "COUNT { (i)-[:FIRST_MESSAGE]->() } AS messages",
        i=interaction_id,
    )
    assert record == {"memory": "a fact without sources", "sources": 0, "messages": 0}
    (memory,) = await memora.get_all_user_memories(world.org_id, world.user_id)
    assert memory.memory == "a fact without sources" and memory.message_sources == []


async def test_spec_10_6_update_of_interaction_without_messages_stores_memories(
    memora: Any, driver: Any
) -> None:
    """Memora's update silently drops the memories when neither side has messages."""
    world = await make_world(memora)
    interaction_id = await save(memora, world, conversation([]))

    await update(
        memora,
        world,
        interaction_id,
        conversation([], when=LATER, memories=[("added without messages", [])]),
    )

    assert sources(driver, interaction_id) == {"added without messages": []}
    found = await memora.get_interaction(world.org_id, world.user_id, interaction_id)
    assert [m.memory for m in found.memories] == ["added without messages"]
    assert found.messages == []


async def test_spec_10_7_save_for_missing_user_or_agent_writes_nothing_anywhere(
    with_vectors: Any, driver: Any
) -> None:
    """Memora matches the user in a MATCH that silently finds nothing, returns an id, writes
    nothing to the graph and still adds the memories to the vector store."""
    memora, vectors = with_vectors
    world = await make_world(memora)
    data = conversation(FOUR, memories=[("m", [0])])
    before = snapshot(driver)

    with pytest.raises(UserNotFound):
        await memora.save_interaction_with_memories(world.org_id, world.agent_id, "nobody", data)
    with pytest.raises(AgentNotFound):
        await memora.save_interaction_with_memories(world.org_id, "nobody", world.user_id, data)

    assert snapshot(driver) == before
    assert await vector_ids(vectors) == []
    await save(memora, world, data)
    assert len(await vector_ids(vectors)) == 1


async def test_spec_10_11_interaction_date_is_the_time_the_object_is_made(
    memora: Any, driver: Any
) -> None:
    """Memora's default is evaluated once, at import: every object shares one stale date."""
    world = await make_world(memora)
    before = datetime.now(timezone.utc)
    data = MemoriesAndInteraction(
        interaction=FOUR, memories=[MemoryToStore(memory="now", source_msg_block_pos=[0])]
    )
    after = datetime.now(timezone.utc)

    assert before <= data.interaction_date <= after
    assert MemoriesAndInteraction().interaction_date >= data.interaction_date
    _, created_at = await memora.save_interaction_with_memories(
        world.org_id, world.agent_id, world.user_id, data
    )
    assert created_at == data.interaction_date
    stored = value(driver, "MATCH (m:Memory) RETURN m.obtained_at").to_native()
    assert before <= stored <= after


async def test_spec_10_12_concurrent_updates_leave_one_of_the_updates(
    memora: Any, driver: Any
) -> None:
    """Memora reads the chain before its write transaction: concurrent updates interleave and
    leave forks, duplicate positions or orphaned messages."""
    world = await make_world(memora)
    interaction_id = await save(memora, world, conversation(FOUR))
    variants = [
        FOUR[: k % 3] + chat(*(f"variant {k} message {n}" for n in range(2 + k))) for k in range(8)
    ]
    calls = [
        (
            world.org_id,
            world.agent_id,
            world.user_id,
            interaction_id,
            conversation(messages, when=LATER, memories=[(f"variant {k}", [len(messages) - 1])]),
        )
        for k, messages in enumerate(variants)
    ]

    results = await concurrently(memora, "update_interaction_and_memories", calls)

    assert results == [(interaction_id, LATER)] * len(variants)
    final = stored_chain(driver, interaction_id)
    assert final in [as_pairs(messages) for messages in variants]
    assert len(sources(driver, interaction_id)) == len(variants)  # every update's memory
