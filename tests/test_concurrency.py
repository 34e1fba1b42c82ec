"""Concurrent writers on one interaction, one user and one day (issue 6, SPEC 10.12 and 10.15).

Real concurrency only: asyncio tasks on the async facade (neomodel keeps each
task's session and transaction in its own context), threads on the sync twin,
and separate processes each with its own facade and driver, released together by
a barrier. Every test ends with the invariants of :mod:`invariants`.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from datetime import datetime, timezone
from typing import Any

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
    save,
    saved_memory,
    stored_chain,
    value,
)
from invariants import all_violations
from neo4j import Driver
from process_race import Call, Outcome, outcome_of, race_in_processes
from test_vector_consistency import Stores, stores

from memora_ogm.errors import NotFoundError, RetriesExhausted
from memora_ogm.server import Neo4jConnection

__all__ = ["stores"]  # the fixture, imported so pytest finds it here

NEW_DAY = datetime(2031, 2, 3, 12, 0, tzinfo=timezone.utc)


async def race(memora: Any, calls: Sequence[Call]) -> list[Outcome]:
    """Run every call at the same time in this process (tasks, or threads for the sync twin)."""
    results = await asyncio.gather(
        *(concurrently(memora, method, [arguments]) for method, arguments in calls)
    )
    return [outcome_of(result) for (result,) in results]


async def run_race(
    mode: str, memora: Any, conn: Neo4jConnection, calls: Sequence[Call]
) -> list[Outcome]:
    """``mode`` "local": tasks or threads in this process; "processes": spawned processes."""
    if mode == "processes":
        return await asyncio.to_thread(race_in_processes, conn, calls)
    return await race(memora, calls)


#: The local race runs on both twins; the processes run the async facade (each its own).
MODES = pytest.mark.parametrize(
    ("mode", "memora"),
    [("local", "async"), ("local", "sync"), ("processes", "async")],
    indirect=["memora"],
)


def failures(
    calls: Sequence[Call], outcomes: Sequence[Outcome], allowed: tuple[type[Exception], ...]
) -> list[tuple[str, Outcome]]:
    """The calls (by method) whose outcome is neither a success nor an ``allowed`` clean error."""
    names: set[str] = set()
    classes = list(allowed)
    while classes:  # the allowed classes and their subclasses, by name
        cls = classes.pop()
        names.add(cls.__name__)
        classes.extend(cls.__subclasses__())
    return [
        (method, outcome)
        for (method, _), outcome in zip(calls, outcomes, strict=True)
        if outcome[0] != "ok" and outcome[0] not in names
    ]


async def assert_invariants(driver: Driver, vector_store: Any = None) -> None:
    assert await all_violations(driver, vector_store) == []


# -- 20 updates of one interaction --------------------------------------------------------


def _variants(count: int) -> list[list[dict[str, str]]]:
    """Message lists that share 0-3 leading messages with the stored chain, of many lengths.

    One is empty (every message deleted); no two are equal.
    """
    stored = chat("I moved to Oslo", "Nice city!", "I adopted a cat", "What is its name?")
    return [[]] + [
        stored[: k % 4] + chat(*(f"variant {k} message {n}" for n in range(k % 5 + 1)))
        for k in range(1, count)
    ]


@MODES
async def test_20_concurrent_updates_of_one_interaction_leave_one_of_them(
    memora: Any, driver: Driver, neo4j_connection: Neo4jConnection, mode: str
) -> None:
    world = await make_world(memora)
    interaction_id, first_memory = await saved_memory(
        memora, world, "moved to Oslo", chat("I moved to Oslo", "Nice city!", "I adopted a cat")
    )
    variants = _variants(20)
    calls: list[Call] = [
        (
            "update_interaction_and_memories",
            (
                world.org_id,
                world.agent_id,
                world.user_id,
                interaction_id,
                conversation(
                    messages,
                    when=LATER,
                    memories=[(f"variant {k}", [len(messages) - 1] if messages else [])],
                ),
            ),
        )
        for k, messages in enumerate(variants)
    ]

    outcomes = await run_race(mode, memora, neo4j_connection, calls)

    assert failures(calls, outcomes, (RetriesExhausted,)) == []
    succeeded = {k for k, outcome in enumerate(outcomes) if outcome[0] == "ok"}
    assert succeeded, "no update went through"
    assert all(outcomes[k][1] == (interaction_id, LATER) for k in succeeded)
    assert stored_chain(driver, interaction_id) in [as_pairs(variants[k]) for k in succeeded]
    # Every update that succeeded added its memory once; a failed one left none.
    texts = value(
        driver,
        "MATCH (m:Memory {interaction_id: $id}) RETURN collect(m.memory)",
        id=interaction_id,
    )
    assert sorted(texts) == sorted(["moved to Oslo", *(f"variant {k}" for k in succeeded)])
    assert value(driver, "MATCH (m:Memory {memory_id: $id}) RETURN count(m)", id=first_memory) == 1
    await assert_invariants(driver)


# -- 50 saves for one user on a new day ----------------------------------------------------


@MODES
async def test_50_concurrent_saves_on_a_new_day_share_one_date_node(
    memora: Any, driver: Driver, neo4j_connection: Neo4jConnection, mode: str
) -> None:
    world = await make_world(memora)
    await save(memora, world, conversation(chat("an older day"), when=DAY, memories=[("m", [0])]))
    calls: list[Call] = [
        (
            "save_interaction_with_memories",
            (
                world.org_id,
                world.agent_id,
                world.user_id,
                conversation(
                    chat(f"save {n}", "noted"),
                    when=NEW_DAY.replace(minute=n),
                    memories=[(f"save {n} a", [0]), (f"save {n} b", [0, 1])],
                ),
            ),
        )
        for n in range(50)
    ]

    outcomes = await run_race(mode, memora, neo4j_connection, calls)

    assert [outcome for outcome in outcomes if outcome[0] != "ok"] == []
    new_day: dict[str, Any] = {"org": world.org_id, "user": world.user_id, "day": NEW_DAY.date()}
    assert (
        value(
            driver,
            "MATCH (d:Date {org_id: $org, user_id: $user, date: $day}) RETURN count(d)",
            **new_day,
        )
        == 1
    )
    linked = (
        "MATCH (d:Date {org_id: $org, user_id: $user, date: $day}) "
        "RETURN COUNT { (:Memory)-[:DATE_OBTAINED]->(d) } AS memories, "
        "COUNT { (:Interaction)-[:HAS_OCCURRENCE_ON]->(d) } AS interactions"
    )
    counts = driver.execute_query(linked, **new_day).records[0]
    assert (counts["memories"], counts["interactions"]) == (100, 50)
    assert value(driver, "MATCH (d:Date) RETURN count(d)") == 2
    await assert_invariants(driver)


# -- deletes racing saves and updates of the same user ------------------------------------


async def _user_with_history(memora: Any, org_id: str | None = None) -> tuple[World, list[str]]:
    """A user with three interactions of two memories each; returns it and the interactions."""
    world = await make_world(memora, org_id=org_id)
    interactions = [
        await save(
            memora,
            world,
            conversation(
                chat(f"old {n}", "ok", "more"), memories=[(f"old {n}", [0]), (f"old {n}+", [2])]
            ),
        )
        for n in range(3)
    ]
    return world, interactions


def _writes(world: World, interactions: list[str], memory_id: str) -> list[Call]:
    """Saves (one superseding ``memory_id``) and updates of every interaction of ``world``."""
    who = (world.org_id, world.agent_id, world.user_id)
    saves: list[Call] = [
        (
            "save_interaction_with_memories",
            (
                *who,
                conversation(
                    chat(f"new {n}", "ok"),
                    when=LATER,
                    memories=[(f"new {n}", [1])],
                    contrary=[(f"instead {n}", [0], memory_id)] if n == 0 else [],
                ),
            ),
        )
        for n in range(6)
    ]
    updates: list[Call] = [
        (
            "update_interaction_and_memories",
            (
                *who,
                interaction_id,
                conversation(
                    chat(f"old {n}", "changed"), when=LATER, memories=[(f"update {n}", [1])]
                ),
            ),
        )
        for n, interaction_id in enumerate(interactions)
    ]
    return saves + updates


Deletes = Callable[[World, list[str], str], list[Call]]
"""The deletes of one race, given the user, its interactions and one of its memory ids."""

DELETES: dict[str, Deletes] = {
    "delete_user": lambda w, i, m: [("delete_user", (w.org_id, w.user_id))],
    "delete_all_interactions": lambda w, i, m: [
        ("delete_all_user_interactions_and_their_memories", (w.org_id, w.user_id))
    ],
    "delete_all_memories": lambda w, i, m: [("delete_all_user_memories", (w.org_id, w.user_id))],
    "delete_one_of_each": lambda w, i, m: [
        ("delete_user_memory", (w.org_id, w.user_id, m)),
        ("delete_user_interaction_and_its_memories", (w.org_id, w.user_id, i[1])),
    ],
}


@pytest.mark.parametrize("delete", sorted(DELETES))
async def test_deletes_racing_saves_and_updates_keep_both_stores_whole(
    stores: Stores, neo4j_driver: Driver, delete: str
) -> None:
    """Writes that lose the race fail with not-found; nothing is half-deleted or out of step."""
    org_id = (await stores.graph.create_organization("Acme")).org_id
    for _ in range(3):  # three rounds: three interleavings
        world, interactions = await _user_with_history(stores.graph, org_id)
        memory_id = value(
            neo4j_driver,
            "MATCH (m:Memory {memory: 'old 0'}) WHERE m.user_id = $u RETURN m.memory_id",
            u=world.user_id,
        )
        deletes = DELETES[delete](world, interactions, memory_id)
        calls = _writes(world, interactions, memory_id)
        calls[len(calls) // 2 : len(calls) // 2] = deletes  # in the middle of the writes

        outcomes = await race(stores.graph, calls)

        assert failures(calls, outcomes, (NotFoundError,)) == []
        await assert_invariants(neo4j_driver, stores.vectors)
        if delete == "delete_user":
            assert (
                value(
                    neo4j_driver,
                    "MATCH (n) WHERE n.user_id = $u AND NOT n:Agent RETURN count(n)",
                    u=world.user_id,
                )
                == 0
            )


@pytest.mark.parametrize("memora", ["async"], indirect=True)
async def test_delete_user_racing_writes_from_processes_leaves_nothing_of_the_user(
    neo4j_connection: Neo4jConnection, driver: Driver, memora: Any
) -> None:
    world, interactions = await _user_with_history(memora)
    memory_id = value(driver, "MATCH (m:Memory {memory: 'old 0'}) RETURN m.memory_id")
    calls = _writes(world, interactions, memory_id)
    calls.insert(len(calls) // 2, ("delete_user", (world.org_id, world.user_id)))

    outcomes = await asyncio.to_thread(race_in_processes, neo4j_connection, calls)

    assert failures(calls, outcomes, (NotFoundError,)) == []
    assert (
        value(
            driver,
            "MATCH (n) WHERE n.user_id = $u AND NOT n:Agent RETURN count(n)",
            u=world.user_id,
        )
        == 0
    )
    await assert_invariants(driver)


async def test_delete_organization_racing_writes_leaves_nothing_of_it(
    stores: Stores, neo4j_driver: Driver
) -> None:
    """Saves and updates of its users, new users and new agents race the organisation's
    deletion: whatever wins, nothing of the organisation is left in either store."""
    world, interactions = await _user_with_history(stores.graph)
    second, _ = await _user_with_history(stores.graph, world.org_id)
    memory_id = value(
        neo4j_driver,
        "MATCH (m:Memory {memory: 'old 0', user_id: $u}) RETURN m.memory_id",
        u=world.user_id,
    )
    calls = _writes(world, interactions, memory_id) + _writes(second, [], memory_id)
    calls += [("create_user", (world.org_id, f"late {n}")) for n in range(3)]
    calls += [("create_agent", (world.org_id, "late", world.user_id)) for n in range(2)]
    calls.insert(len(calls) // 3, ("delete_organization", (world.org_id,)))

    outcomes = await race(stores.graph, calls)

    assert failures(calls, outcomes, (NotFoundError,)) == []
    left = "MATCH (n) WHERE n.org_id = $org RETURN count(n)"
    assert value(neo4j_driver, left, org=world.org_id) == 0
    await assert_invariants(neo4j_driver, stores.vectors)
