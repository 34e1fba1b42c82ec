"""Erasure of any size completes (issue 20, item 4): in bounded batches, each committed with
its vector changes; an interrupted erasure leaves a readable graph and a second call
finishes; a transaction that outgrew the server's memory is not retried.

The batches are made small (``erase_batch_size``) so that a few dozen nodes take many of
them. Both stores are real: Neo4j and qdrant-client's local mode (see
``test_vector_consistency``), for the async facade and the sync twin.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from typing import Any

import pytest
from neo4j import AsyncTransaction, Driver
from neo4j.exceptions import TransientError
from test_vector_consistency import (
    FlakyVectorDB,
    InjectedFault,
    Stores,
    _graph_ids,
    _vector_ids,
    patch_commit,
    stores,
)

from memora_ogm._async.graph import Work
from memora_ogm._async.interface import Neo4jGraphInterface
from memora_ogm.engine.call import Query
from memora_ogm.schema.storage import MemoriesAndInteraction, MemoryToStore
from memora_ogm.server import Neo4jConnection

__all__ = ["stores"]  # the fixture, shared with test_vector_consistency

#: Memories and messages per batch in these tests; interactions and users take a quarter.
BATCH = 4
#: The code of the server's transaction memory running out.
OUT_OF_MEMORY = "Neo.TransientError.General.MemoryPoolOutOfMemoryError"


def _conversation(messages: int, memories: int, day: int) -> MemoriesAndInteraction:
    return MemoriesAndInteraction(
        interaction=[
            {"role": "user" if n % 2 == 0 else "assistant", "content": f"message {n}"}
            for n in range(messages)
        ],
        interaction_date=datetime(2026, 11, 1, 9, 30, tzinfo=timezone.utc) + timedelta(days=day),
        memories=[
            MemoryToStore(memory=f"user_x fact {n}", source_msg_block_pos=[n % messages])
            for n in range(memories)
        ],
    )


@dataclass
class World:
    org: str
    ann: str
    bob: str
    other_org: str
    long_interaction: str
    #: The long interaction's messages, as saved.
    long_messages: list[tuple[str, str]]


async def _world(graph: Any) -> World:
    """Ann (the one erased) has five short interactions over three days and a long one;
    Bob in the same organisation and a user of another organisation must be left alone."""
    org = await graph.create_organization("Acme")
    ann = await graph.create_user(org.org_id, "Ann")
    bob = await graph.create_user(org.org_id, "Bob")
    agent = await graph.create_agent(org.org_id, "Bot")
    for n in range(5):
        await graph.save_interaction_with_memories(
            org.org_id, agent.agent_id, ann.user_id, _conversation(4, 3, n % 3)
        )
    long = _conversation(30, 10, 0)
    long_id, _ = await graph.save_interaction_with_memories(
        org.org_id, agent.agent_id, ann.user_id, long
    )
    await graph.save_interaction_with_memories(
        org.org_id, agent.agent_id, bob.user_id, _conversation(3, 2, 0)
    )
    other = await graph.create_organization("Other")
    carl = await graph.create_user(other.org_id, "Carl")
    other_agent = await graph.create_agent(other.org_id, "Bot")
    await graph.save_interaction_with_memories(
        other.org_id, other_agent.agent_id, carl.user_id, _conversation(3, 2, 0)
    )
    return World(
        org.org_id,
        ann.user_id,
        bob.user_id,
        other.org_id,
        long_id,
        [(m["role"], m["content"]) for m in long.interaction],
    )


def _census(driver: Driver) -> Counter[tuple[str, str, str]]:
    """Every node as (label, org_id, user_id), messages as their interaction's owner's."""
    records = driver.execute_query(
        "MATCH (n) WHERE NOT n:MessageBlock "
        "RETURN labels(n)[0] AS label, n.org_id AS org, coalesce(n.user_id, '') AS user "
        "UNION ALL "
        "MATCH (i:Interaction)-[:FIRST_MESSAGE]->(:MessageBlock)-[:IS_NEXT*0..]->(m) "
        "RETURN 'MessageBlock' AS label, i.org_id AS org, i.user_id AS user"
    ).records
    return Counter((r["label"], r["org"], r["user"]) for r in records)


def _messages(driver: Driver) -> int:
    return int(driver.execute_query("MATCH (m:MessageBlock) RETURN count(m)").records[0][0])


Erasure = Callable[[Any, World], Awaitable[Any]]
#: Each erasure, and what of Ann's (or Acme's) nodes it leaves: a predicate on a census key.
ERASURES: dict[str, tuple[Erasure, Callable[[tuple[str, str, str], World], bool]]] = {
    "delete_user": (
        lambda g, w: g.delete_user(w.org, w.ann),
        lambda key, w: key[2] != w.ann,
    ),
    "delete_all_user_interactions_and_their_memories": (
        lambda g, w: g.delete_all_user_interactions_and_their_memories(w.org, w.ann),
        lambda key, w: (
            key[2] != w.ann or key[0] in {"User", "InteractionCollection", "MemoryCollection"}
        ),
    ),
    "delete_all_user_memories": (
        lambda g, w: g.delete_all_user_memories(w.org, w.ann),
        lambda key, w: key[2] != w.ann or key[0] != "Memory",
    ),
    "delete_user_interaction_and_its_memories": (
        lambda g, w: g.delete_user_interaction_and_its_memories(w.org, w.ann, w.long_interaction),
        lambda key, w: True,  # checked by counts below
    ),
    "delete_organization": (
        lambda g, w: g.delete_organization(w.org),
        lambda key, w: key[1] != w.org,
    ),
}


def _expected(before: Counter[tuple[str, str, str]], name: str, world: World) -> Counter[Any]:
    keeps = ERASURES[name][1]
    expected = Counter({key: n for key, n in before.items() if keeps(key, world)})
    if name == "delete_user_interaction_and_its_memories":
        for label, erased in (("Interaction", 1), ("MessageBlock", 30), ("Memory", 10)):
            expected[(label, world.org, world.ann)] -= erased
    return +expected


class Recorded:
    """The vector store's deletes (how many memories each removed) and the graph's commits."""

    def __init__(self, stores: Stores, monkeypatch: pytest.MonkeyPatch) -> None:
        self.deletes: list[int] = []
        self.commits = 0
        self.fail_commit: int | None = None
        vectors = stores.vectors
        original = FlakyVectorDB.__getattr__

        def recording(self_: FlakyVectorDB, name: str) -> Any:
            method = original(self_, name)
            if name != "delete_memories":
                return method

            def delete(memory_ids: list[str]) -> Any:
                self.deletes.append(len(memory_ids))
                return method(memory_ids)

            return delete

        monkeypatch.setattr(FlakyVectorDB, "__getattr__", recording)
        assert vectors is not None

        def commit() -> Exception | None:
            self.commits += 1
            if self.commits == self.fail_commit:
                return InjectedFault(f"commit {self.commits} failed")
            return None

        patch_commit(monkeypatch, stores.connection, commit)


def _facade(stores: Stores) -> Any:
    """The interface itself (the sync twin is dressed as async in ``stores.graph``)."""
    return getattr(stores.graph, "_twin", stores.graph)


async def _check_readable(graph: Any, world: World, name: str) -> None:
    """Every read of what is left works, and each chain is a prefix of what was saved."""
    if name == "delete_organization":
        await graph.get_organization(world.org)
        users = [user.user_id for user in await graph.get_all_org_users(world.org)]
    else:
        users = [world.ann]
        await graph.get_user(world.org, world.ann)
    for user in users:
        await graph.get_all_user_memories(world.org, user)
        for interaction in await graph.get_all_user_interactions(world.org, user):
            again = await graph.get_interaction(world.org, user, interaction.interaction_id)
            positions = [message.msg_position for message in again.messages]
            assert positions == list(range(len(positions)))
            if interaction.interaction_id == world.long_interaction:
                kept = [(m.role, m.content) for m in again.messages]
                assert kept == world.long_messages[: len(kept)]


@pytest.mark.parametrize("name", sorted(ERASURES))
async def test_an_erasure_larger_than_a_batch_runs_in_bounded_batches(
    stores: Stores, neo4j_driver: Driver, monkeypatch: pytest.MonkeyPatch, name: str
) -> None:
    world = await _world(stores.graph)
    before = _census(neo4j_driver)
    messages_before = _messages(neo4j_driver)
    _facade(stores).erase_batch_size = BATCH
    recorded = Recorded(stores, monkeypatch)

    await ERASURES[name][0](stores.graph, world)

    after = _census(neo4j_driver)
    assert after == _expected(before, name, world)
    # No message is left outside a chain.
    assert _messages(neo4j_driver) == sum(n for key, n in after.items() if key[0] == "MessageBlock")
    assert _messages(neo4j_driver) < messages_before or name == "delete_all_user_memories"
    assert await _vector_ids(stores.vectors) == _graph_ids(neo4j_driver)
    # Batch by batch: many commits, none removing more than a batch of memories.
    assert recorded.commits > 3
    assert recorded.deletes and max(recorded.deletes) <= BATCH


@pytest.mark.parametrize("name", sorted(ERASURES))
async def test_an_interrupted_erasure_leaves_a_readable_graph_and_a_second_call_finishes(
    stores: Stores, neo4j_driver: Driver, monkeypatch: pytest.MonkeyPatch, name: str
) -> None:
    world = await _world(stores.graph)
    before = _census(neo4j_driver)
    memories_before = len(_graph_ids(neo4j_driver))
    _facade(stores).erase_batch_size = BATCH
    recorded = Recorded(stores, monkeypatch)
    recorded.fail_commit = 3
    erasure = ERASURES[name][0]

    with pytest.raises(InjectedFault):
        await erasure(stores.graph, world)

    # The two batches that committed stay done, in both stores; the third left nothing.
    left = _graph_ids(neo4j_driver)
    assert 0 < memories_before - len(left) <= 2 * BATCH
    assert await _vector_ids(stores.vectors) == left
    await _check_readable(stores.graph, world, name)

    await erasure(stores.graph, world)
    assert _census(neo4j_driver) == _expected(before, name, world)
    assert await _vector_ids(stores.vectors) == _graph_ids(neo4j_driver)


@pytest.fixture
async def graph(neo4j_connection: Neo4jConnection) -> AsyncIterator[Any]:
    conn = neo4j_connection
    interface = Neo4jGraphInterface(conn.uri, conn.username, conn.password, conn.database)
    yield interface.graph
    await interface.close()


async def test_running_out_of_transaction_memory_is_not_retried(graph: Any) -> None:
    """A real ``MemoryPoolOutOfMemoryError``: a statement collecting far more than the
    server's transaction memory (70% of its heap by default) surfaces after one attempt."""
    attempts = []

    async def work(transaction: Work) -> None:
        attempts.append(1)
        statement = (
            "UNWIND range(1, $rows) AS n WITH collect(toString(n) + $pad) AS padded "
            "RETURN size(padded) AS size"
        )
        await transaction.send(Query(statement, {"rows": 10_000_000, "pad": "x" * 2_000}))

    with pytest.raises(TransientError) as raised:
        await graph.transaction(work, write=False)
    assert raised.value.code == OUT_OF_MEMORY
    assert len(attempts) == 1


#: Per erasure: statements that leave Ann's (or Acme's) nodes unlinked from the hubs an
#: erasure could walk from (collections, users, days, the organisation) but not deleted,
#: as an erasure that detaches before it deletes, a crash of such one, or another writer
#: of the same graph could leave them. A rerun must find them by their keys.
UNLINKED = {
    "delete_user": [
        "MATCH (:InteractionCollection {user_id: $ann})-[r:HAD_INTERACTION]->() DELETE r",
        "MATCH (:MemoryCollection {user_id: $ann})-[r:INCLUDES]->() DELETE r",
        "MATCH (:Interaction {user_id: $ann})-[r:HAS_OCCURRENCE_ON]->() DELETE r",
        "MATCH (:Memory {user_id: $ann})-[r:DATE_OBTAINED]->() DELETE r",
    ],
    "delete_all_user_interactions_and_their_memories": [
        "MATCH (:InteractionCollection {user_id: $ann})-[r:HAD_INTERACTION]->() DELETE r",
    ],
    "delete_all_user_memories": [
        "MATCH (:MemoryCollection {user_id: $ann})-[r:INCLUDES]->() DELETE r",
    ],
    "delete_organization": [
        "MATCH (:Org {org_id: $org})<-[r:BELONGS_TO]-(:User {user_id: $bob}) DELETE r",
        "MATCH (:Org {org_id: $org})-[r:HAS_AGENT]->() DELETE r",
        "MATCH (:InteractionCollection {user_id: $ann})-[r:HAD_INTERACTION]->() DELETE r",
        "MATCH (:MemoryCollection {user_id: $ann})-[r:INCLUDES]->() DELETE r",
        "MATCH (:Interaction {user_id: $bob})-[r:HAS_OCCURRENCE_ON]->() DELETE r",
        "MATCH (:Memory {user_id: $bob})-[r:DATE_OBTAINED]->() DELETE r",
    ],
}


@pytest.mark.parametrize("name", sorted(UNLINKED))
async def test_a_rerun_erases_what_an_interrupted_erasure_left_unlinked_from_its_hubs(
    stores: Stores, neo4j_driver: Driver, name: str
) -> None:
    world = await _world(stores.graph)
    before = _census(neo4j_driver)
    _facade(stores).erase_batch_size = BATCH
    for statement in UNLINKED[name]:
        neo4j_driver.execute_query(statement, org=world.org, ann=world.ann, bob=world.bob)
    messages = _messages(neo4j_driver)
    assert _census(neo4j_driver) == before  # unlinked, not deleted: still there to find

    await ERASURES[name][0](stores.graph, world)

    after = _census(neo4j_driver)
    assert after == _expected(before, name, world)
    # Every message of an erased interaction went with it (none left out of a chain).
    erased = sum(n for key, n in before.items() if key[0] == "MessageBlock") - sum(
        n for key, n in after.items() if key[0] == "MessageBlock"
    )
    assert _messages(neo4j_driver) == messages - erased
    assert await _vector_ids(stores.vectors) == _graph_ids(neo4j_driver)


def _db_hits(plan: dict[str, Any]) -> int:
    return int(plan.get("dbHits", 0)) + sum(_db_hits(child) for child in plan.get("children", []))


async def _chain_erasure_hits(
    interface: Neo4jGraphInterface, monkeypatch: pytest.MonkeyPatch, messages: int
) -> list[int]:
    """The server's db hits of each batch deleting one interaction of ``messages`` messages
    (each batch's statement run with PROFILE)."""
    org = await interface.create_organization("Acme")
    user = await interface.create_user(org.org_id, "Ann")
    agent = await interface.create_agent(org.org_id, "Bot")
    interaction_id, _ = await interface.save_interaction_with_memories(
        org.org_id, agent.agent_id, user.user_id, _conversation(messages, 3, 0)
    )
    hits: list[int] = []

    async def profiled(
        runner: AsyncTransaction, query: str, params: dict[str, Any]
    ) -> list[dict[str, Any]]:
        result = await runner.run("PROFILE " + query, params)
        rows = [record.data() async for record in result]
        hits.append(_db_hits((await result.consume()).profile or {}))
        return rows

    with monkeypatch.context() as patch:
        patch.setattr(interface.graph, "_send", profiled)  # where every statement leaves
        await interface.delete_user_interaction_and_its_memories(
            org.org_id, user.user_id, interaction_id
        )
    await interface.delete_organization(org.org_id)
    return hits


async def test_a_long_chain_is_erased_in_batches_whose_cost_does_not_grow_with_its_length(
    neo4j_connection: Neo4jConnection, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each batch after the first walks back from where the one before stopped, instead of
    walking the chain from its start again (quadratic in its length): the batches of a
    chain of 6,250 messages cost what those of one of 1,250 do."""
    conn = neo4j_connection
    interface = Neo4jGraphInterface(conn.uri, conn.username, conn.password, conn.database)
    interface.erase_batch_size = 500
    try:
        short = await _chain_erasure_hits(interface, monkeypatch, 1_250)
        long = await _chain_erasure_hits(interface, monkeypatch, 6_250)
    finally:
        await interface.close()

    # 500 messages a batch; the last one also takes the interaction.
    assert (len(short), len(long)) == (3, 13)
    # The first batch finds the chain's end from its start.
    middle = [sum(batches[1:]) / len(batches[1:]) for batches in (short, long)]
    assert middle[1] < 1.5 * middle[0], (short, long)


async def test_an_interaction_of_exactly_whole_batches_is_erased(
    stores: Stores, neo4j_driver: Driver
) -> None:
    """The batch that takes the last messages (a full batch) also takes the interaction:
    the erasure ends there, instead of looking for the interaction once more."""
    world = await _world(stores.graph)
    _facade(stores).erase_batch_size = BATCH
    whole = _conversation(2 * BATCH, 0, 0)
    interaction_id, _ = await stores.graph.save_interaction_with_memories(
        world.org, (await stores.graph.get_all_org_agents(world.org))[0].agent_id, world.ann, whole
    )
    before = _census(neo4j_driver)

    await stores.graph.delete_user_interaction_and_its_memories(
        world.org, world.ann, interaction_id
    )

    expected = before.copy()
    expected[("Interaction", world.org, world.ann)] -= 1
    expected[("MessageBlock", world.org, world.ann)] -= 2 * BATCH
    assert _census(neo4j_driver) == +expected
    assert await _vector_ids(stores.vectors) == _graph_ids(neo4j_driver)
