"""Statements per call: every public method costs a fixed number of round trips (issue 11).

A save is one statement, an update one (it compares the stored chain with the new
messages on the server), a delete of one memory two (a locking statement, then the one
that deletes), any other delete one per batch (one for anything smaller than a batch), a
read one, not-found included; none of these depends on how many messages
or memories a call carries. ``Graph.statements`` counts every statement the facade
runs (``Graph.query`` for the calls of one statement, run as auto-commit
transactions, and ``Graph.cypher`` inside explicit ones).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

import neo4j
import pytest
from interaction_helpers import (
    DAY,
    LATER,
    NO_MEMORY,
    World,
    chat,
    concurrently,
    conversation,
    make_world,
    save,
    vector_ids,
    with_vectors,
)

from memora_ogm.errors import (
    AgentNotFound,
    InteractionNotFound,
    MemoryNotFound,
    NotFoundError,
    OrganizationNotFound,
    UserNotFound,
)

__all__ = ["with_vectors"]  # the fixture, imported so pytest finds it here


async def statements(memora: Any, call: Callable[[], Awaitable[Any]]) -> int:
    """How many statements ``call`` ran (not-found errors are part of the call)."""
    before = memora.graph.statements
    try:
        await call()
    except NotFoundError:
        pass
    return int(memora.graph.statements - before)


def big_conversation(size: int, when: Any = DAY, contrary: str | None = None) -> Any:
    """``size`` messages and ``size // 2`` memories (one superseding ``contrary``)."""
    messages = chat(*(f"message {n}" for n in range(size)))
    memories = [(f"memory {n}", [n, n + 1]) for n in range(size // 2)]
    return conversation(
        messages,
        when=when,
        memories=memories,
        contrary=[("instead", [0] if size else [], contrary)] if contrary else [],
    )


async def memory_ids(memora: Any, world: World) -> list[str]:
    return [m.memory_id for m in await memora.get_all_user_memories(world.org_id, world.user_id)]


@pytest.fixture
async def world(memora: Any) -> World:
    world = await make_world(memora)
    # The first memory read asks the server once whether it has APOC: not counted below.
    await memora.get_all_user_memories(world.org_id, world.user_id)
    return world


@pytest.mark.parametrize("size", [2, 40])
async def test_a_save_is_one_statement_whatever_its_size(
    memora: Any, world: World, size: int
) -> None:
    first = await save(memora, world, big_conversation(4))
    del first
    old = (await memory_ids(memora, world))[0]
    who = (world.org_id, world.agent_id, world.user_id)
    assert (
        await statements(
            memora,
            lambda: memora.save_interaction_with_memories(
                *who, big_conversation(size, contrary=old)
            ),
        )
        == 1
    )
    # Not found (user, agent, superseded memory) is the same statement, which writes nothing.
    for args, error in (
        ((world.org_id, world.agent_id, "nobody"), UserNotFound),
        ((world.org_id, "no agent", world.user_id), AgentNotFound),
    ):
        with pytest.raises(error):
            await memora.save_interaction_with_memories(*args, big_conversation(size))

        def missing(args: tuple[str, str, str] = args) -> Awaitable[Any]:
            return memora.save_interaction_with_memories(*args, big_conversation(size))  # type: ignore[no-any-return]

        assert await statements(memora, missing) == 1
    with pytest.raises(MemoryNotFound):
        await memora.save_interaction_with_memories(
            *who, big_conversation(size, contrary=NO_MEMORY)
        )


@pytest.mark.parametrize(("stored", "updated"), [(4, 40), (40, 4), (40, 41), (10, 0)])
async def test_an_update_is_one_statement_whatever_its_size(
    memora: Any, world: World, stored: int, updated: int
) -> None:
    interaction_id = await save(memora, world, big_conversation(stored))
    old = (await memory_ids(memora, world))[0]
    who = (world.org_id, world.agent_id, world.user_id, interaction_id)
    count = await statements(
        memora,
        lambda: memora.update_interaction_and_memories(
            *who, big_conversation(updated, when=LATER, contrary=old)
        ),
    )
    assert count == 1
    missing = (world.org_id, world.agent_id, world.user_id, "no such interaction")
    with pytest.raises(InteractionNotFound):
        await memora.update_interaction_and_memories(*missing, big_conversation(updated))
    assert (
        await statements(
            memora, lambda: memora.update_interaction_and_memories(*missing, big_conversation(2))
        )
        == 1
    )


async def test_every_delete_smaller_than_a_batch_is_at_most_two_statements(
    memora: Any, world: World
) -> None:
    org, user = world.org_id, world.user_id
    for _ in range(3):
        await save(memora, world, big_conversation(20))
    interactions = await memora.get_all_user_interactions(org, user)
    memory = (await memory_ids(memora, world))[0]
    deletes: list[tuple[Callable[[], Awaitable[Any]], int]] = [
        (lambda: memora.delete_user_memory(org, user, memory), 2),
        (lambda: memora.delete_user_memory(org, user, memory), 1),  # gone: not found
        (
            lambda: memora.delete_user_interaction_and_its_memories(
                org, user, interactions[0].interaction_id
            ),
            1,
        ),
        (lambda: memora.delete_all_user_memories(org, user), 1),
        (lambda: memora.delete_all_user_interactions_and_their_memories(org, user), 1),
        (lambda: memora.delete_agent(org, world.agent_id), 1),
        (lambda: memora.delete_user(org, user), 1),
        (lambda: memora.delete_user(org, user), 1),  # gone: not found
        (lambda: memora.delete_organization(org), 1),
        (lambda: memora.delete_organization(org), 1),
    ]
    assert [await statements(memora, call) for call, _ in deletes] == [
        count for _, count in deletes
    ]


async def test_a_full_user_smaller_than_a_batch_goes_in_one_statement(
    memora: Any, world: World
) -> None:
    for n in range(5):
        await save(memora, world, big_conversation(30, when=DAY.replace(day=n + 1)))
    assert await statements(memora, lambda: memora.delete_user(world.org_id, world.user_id)) == 1
    with pytest.raises(UserNotFound):
        await memora.get_user(world.org_id, world.user_id)


async def test_every_read_is_one_statement_found_or_not(memora: Any, world: World) -> None:
    org, user, agent = world.org_id, world.user_id, world.agent_id
    interaction_id = await save(memora, world, big_conversation(10))
    memory = (await memory_ids(memora, world))[0]
    ids = {"org_id": org, "user_id": user, "memory_id": memory}
    reads: list[Callable[[], Awaitable[Any]]] = [
        lambda: memora.get_organization(org),
        lambda: memora.get_all_organizations(),
        lambda: memora.get_all_org_users(org),
        lambda: memora.get_user(org, user),
        lambda: memora.get_agent(org, agent),
        lambda: memora.get_all_org_agents(org),
        lambda: memora.get_all_user_agents(org, user),
        lambda: memora.get_interaction(org, user, interaction_id),
        lambda: memora.get_interaction(org, user, interaction_id, with_memories=False),
        lambda: memora.get_interaction(org, user, interaction_id, False, False),
        lambda: memora.get_all_user_interactions(org, user),
        lambda: memora.get_all_user_interactions(org, user, False, False, skip=1, limit=5),
        lambda: memora.get_all_user_memories(org, user),
        lambda: memora.get_user_memory(org, user, memory),
        lambda: memora.get_user_memory_history(org, user, memory),
        lambda: memora.fetch_user_memories_resolved([ids]),
        lambda: memora.fetch_user_memories_resolved_batch([[ids], [ids, ids]]),
        # Not found: the same single statement.
        lambda: memora.get_organization("no org"),
        lambda: memora.get_all_org_users("no org"),
        lambda: memora.get_all_org_agents("no org"),
        lambda: memora.get_user(org, "nobody"),
        lambda: memora.get_all_user_agents(org, "nobody"),
        lambda: memora.get_agent(org, "no agent"),
        lambda: memora.get_interaction(org, user, "none"),
        lambda: memora.get_interaction(org, user, "none", with_memories=False),
        lambda: memora.get_all_user_interactions(org, "nobody"),
        lambda: memora.get_all_user_memories(org, "nobody"),
        lambda: memora.get_user_memory(org, user, NO_MEMORY),
        lambda: memora.get_user_memory_history(org, user, NO_MEMORY),
    ]
    assert [await statements(memora, read) for read in reads] == [1] * len(reads)


async def test_creates_and_renames_are_one_statement(memora: Any, world: World) -> None:
    org, user = world.org_id, world.user_id
    writes: list[Callable[[], Awaitable[Any]]] = [
        lambda: memora.create_organization("Other"),
        lambda: memora.create_user(org, "Bea"),
        lambda: memora.create_agent(org, "Helper"),
        lambda: memora.create_agent(org, "Personal", user),
        lambda: memora.update_organization(org, "Acme 2"),
        lambda: memora.update_user(org, user, "Ann 2"),
        lambda: memora.update_agent(org, world.agent_id, "Bot 2"),
        # Not found: the same single statement, nothing written.
        lambda: memora.create_user("no org", "Cid"),
        lambda: memora.create_agent(org, "Personal", "nobody"),
        lambda: memora.update_user(org, "nobody", "x"),
        lambda: memora.update_agent(org, "no agent", "x"),
    ]
    assert [await statements(memora, write) for write in writes] == [1] * len(writes)
    with pytest.raises(OrganizationNotFound):
        await memora.create_user("no org", "Cid")


@pytest.fixture
def transactions(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The access mode of every explicit transaction begun, by either twin's driver."""
    begun: list[str] = []
    for session_class in (neo4j.Session, neo4j.AsyncSession):
        real = session_class.begin_transaction

        def begin(self: Any, *args: Any, _real: Any = real, **kwargs: Any) -> Any:
            begun.append(self._config.default_access_mode)
            return _real(self, *args, **kwargs)

        monkeypatch.setattr(session_class, "begin_transaction", begin)
    return begun


async def test_a_call_of_one_statement_begins_no_transaction(
    memora: Any, world: World, transactions: list[str]
) -> None:
    """One statement is atomic on its own: it runs as an auto-commit transaction, one
    round trip, with no BEGIN and COMMIT around it."""
    interaction_id = await save(memora, world, big_conversation(4))
    await memora.update_interaction_and_memories(
        world.org_id, world.agent_id, world.user_id, interaction_id, big_conversation(6, LATER)
    )
    await memora.get_user(world.org_id, world.user_id)
    await memora.get_all_user_interactions(world.org_id, world.user_id)
    await memora.create_agent(world.org_id, "Helper")
    assert transactions == []
    await memora.delete_user_interaction_and_its_memories(
        world.org_id, world.user_id, interaction_id
    )
    assert transactions == [neo4j.WRITE_ACCESS]  # a delete: a batch per transaction


async def test_a_write_with_a_vector_store_is_one_transaction(
    with_vectors: Any, transactions: list[str]
) -> None:
    """With a vector store the graph write waits in its transaction for the vector write,
    so that both stores change or neither."""
    memora, vectors = with_vectors
    world = await make_world(memora)
    await save(memora, world, big_conversation(4))
    assert transactions == [neo4j.WRITE_ACCESS]
    assert len(await vector_ids(vectors)) == 2


async def test_under_load_coalesced_saves_share_a_transaction(
    memora: Any, world: World, transactions: list[str]
) -> None:
    """With ``coalesce_writes``, six saves waiting at the in-flight limit go as one
    statement in one transaction: a sixth of a statement and of a transaction per save
    (a save alone stays one auto-commit statement, above)."""
    memora.coalesce_writes = True
    coalescer = memora.graph.coalescer
    coalescer.in_flight = coalescer.limit  # every slot taken: the saves queue
    before = memora.graph.statements
    who = (world.org_id, world.agent_id, world.user_id)
    running = asyncio.ensure_future(
        concurrently(
            memora,
            "save_interaction_with_memories",
            [(*who, big_conversation(4)) for _ in range(6)],
        )
    )
    for _ in range(500):
        if len(coalescer.queue) == 6:
            break
        await asyncio.sleep(0.01)
    coalescer._release([])
    answers = await running
    assert all(isinstance(answer, tuple) for answer in answers), answers
    saves, sent = len(answers), memora.graph.statements - before
    assert (sent / saves, len(transactions) / saves) == (1 / 6, 1 / 6)
