"""Memora's own agent (``memora.Memora`` of memora-core 0.3.1) running on memora-ogm, unchanged.

Set up exactly as Memora's README does: the vector store and the graph are built apart,
``setup()`` is called on each, and ``Memora(vector_db=..., graph_db=..., ...)`` associates
them by assigning ``graph_db.associated_vector_db``. The models are
:class:`memora_llm.ScriptedLLM`, so every memory the agent stores is known in advance.
One story drives every flow of the agent (each step names what it checks); the graph
and Qdrant must hold exactly the same memory ids after every step.

Memora's agent is async only (it has no sync path); the sync twin is checked here for
what the agent relies on: Memora's storage objects and a store assigned after
construction.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from types import SimpleNamespace
from typing import Any

import pytest
from memora import Memora
from memora.schema import storage_schema as memora_storage
from memora.vector_db.base import MemorySearchScope as MemoraScope
from memora_llm import Fact, ScriptedLLM, Topic
from neo4j import Driver
from neomodel import adb, db
from qdrant_client import AsyncQdrantClient, models

from memora_ogm import sync
from memora_ogm._async.interface import Neo4jGraphInterface
from memora_ogm.server import Neo4jConnection
from memora_ogm.testing import clear_database
from memora_ogm.vector_db.embedding import HashingEmbedding
from memora_ogm.vector_db.qdrant import QdrantDB

TOPICS = (
    Topic("home", ("live", "living", "home"), "Where does the user live"),
    Topic("sister", ("sister", "siblings"), "sister of the user"),
    Topic("diet", ("cook", "dinner", "eat"), "food the user eats, vegetarian"),
    Topic("pet", ("pet", "pets", "dog"), "dog of the user"),
    Topic("marathon", ("marathon", "training"), "marathon training"),
)
PARIS = Fact("home", "#user_#id# lives in Paris", ("I live in Paris",))
BERLIN = Fact("home", "#user_#id# lives in Berlin", ("I moved to Berlin",))
SISTER = Fact(
    "sister", "#user_#id# has a sister called Ana", ("I have a sister", "She is called Ana")
)
MARATHON = Fact(
    "marathon",
    "#user_#id# asked #agent_#id# to train them for a marathon",
    ("train me for a marathon",),
)
DOG = Fact("pet", "#user_#id# has a dog called Rex", ("my dog Rex",))
VEGETARIAN = Fact("diet", "#user_#id# is vegetarian", ("I am vegetarian",))
FACTS = (PARIS, BERLIN, SISTER, MARATHON, DOG, VEGETARIAN)

DAY_1 = datetime(2025, 3, 1, 9, 0, tzinfo=timezone.utc)
DAY_2 = datetime(2025, 3, 2, 18, 30, tzinfo=timezone.utc)
DAY_3 = datetime(2025, 3, 3, 8, 0, tzinfo=timezone.utc)
NAIVE_DAY_5 = datetime(2025, 3, 5, 12, 0)  # no tzinfo: taken as UTC

FIRST_CHAT = [
    {"role": "user", "content": "Hi Coach! I live in Paris and I have a sister."},
    {"role": "assistant", "content": "Nice to meet you. What is your sister's name?"},
    {"role": "user", "content": "She is called Ana. Please train me for a marathon."},
    {"role": "assistant", "content": "Gladly, we start on Monday."},
]
FOLLOW_UP = [
    {"role": "user", "content": "Update: I moved to Berlin, together with my dog Rex."},
    {"role": "assistant", "content": "Berlin is lovely for long runs."},
]
EDITED = [
    {"role": "user", "content": "Update: I moved to Berlin."},
    {"role": "assistant", "content": "Berlin is lovely for long runs."},
]
NOTHING = [
    {"role": "user", "content": "Thanks, talk tomorrow."},
    {"role": "assistant", "content": "Bye!"},
]
CHEF_CHAT = [
    {"role": "user", "content": "I moved to Berlin recently and I am vegetarian."},
    {"role": "assistant", "content": "Noted, no meat in your recipes."},
]
BOB_CHAT = [
    {"role": "user", "content": "Hello, I live in Paris."},
    {"role": "assistant", "content": "Bonjour Bob!"},
]


@dataclass
class Agent:
    """Memora's agent on memora-ogm, its two scripted models and its stores."""

    memora: Memora
    graph: Neo4jGraphInterface
    vectors: QdrantDB
    search_model: ScriptedLLM
    extraction_model: ScriptedLLM
    driver: Driver


@pytest.fixture
async def agent(neo4j_connection: Neo4jConnection, neo4j_driver: Driver) -> AsyncIterator[Agent]:
    clear_database(neo4j_driver, neo4j_connection.database)
    conn = neo4j_connection
    # Memora's README, with memora-ogm's classes and Qdrant's local mode.
    vector_db = QdrantDB(
        async_client=AsyncQdrantClient(location=":memory:"), embedding_function=HashingEmbedding()
    )
    graph_db = Neo4jGraphInterface(
        uri=conn.uri, username=conn.username, password=conn.password, database=conn.database
    )
    await vector_db.setup()
    await graph_db.setup()
    search_model = ScriptedLLM(FACTS, TOPICS)
    extraction_model = ScriptedLLM(FACTS, TOPICS)
    # memora-ogm implements Memora's BaseVectorDB/BaseGraphDB by their methods, not by
    # subclassing them; Memora never checks the class.
    memora = Memora(
        vector_db=vector_db,  # type: ignore[arg-type]
        graph_db=graph_db,  # type: ignore[arg-type]
        memory_search_model=search_model,
        extraction_model=extraction_model,
    )
    yield Agent(memora, graph_db, vector_db, search_model, extraction_model, neo4j_driver)
    await memora.close()


def graph_memory_ids(driver: Driver, org_id: str) -> set[str]:
    records = driver.execute_query(
        "MATCH (m:Memory {org_id: $org_id}) RETURN m.memory_id AS id", org_id=org_id
    ).records
    return {record["id"] for record in records}


async def vector_memory_ids(vectors: QdrantDB, org_id: str) -> set[str]:
    points, _ = await vectors.async_client.scroll(
        vectors.collection_name,
        scroll_filter=models.Filter(
            must=[models.FieldCondition(key="org_id", match=models.MatchValue(value=org_id))]
        ),
        limit=10_000,
        with_payload=True,
    )
    return {(point.payload or {})["memory_id"] for point in points}


async def same_ids_in_both(agent: Agent, org_id: str) -> set[str]:
    """The org's memory ids, after checking that the graph and Qdrant hold the same ones."""
    in_graph = graph_memory_ids(agent.driver, org_id)
    assert await vector_memory_ids(agent.vectors, org_id) == in_graph
    return in_graph


def by_text(memories: Sequence[Any]) -> dict[str, Any]:
    """Memories (memora-ogm's, or Memora's from its agent) by text, which must be unique."""
    texts = [memory.memory for memory in memories]
    assert len(texts) == len(set(texts)), f"duplicates in {texts}"
    return {memory.memory: memory for memory in memories}


def sources(memory: Any) -> list[tuple[int, str | None]]:
    return [(block.msg_position, block.content) for block in memory.message_sources or []]


async def test_memoras_agent_stores_recalls_and_deletes_through_memora_ogm(agent: Agent) -> None:
    memora, graph = agent.memora, agent.graph
    # Memora.__init__ assigned the store after the graph was built: it is the live one.
    assert graph.associated_vector_db is agent.vectors
    assert graph.get_associated_vector_db() is agent.vectors

    org = await graph.create_organization("Acme")
    org_id = org.org_id
    alice = (await graph.create_user(org_id, "Alice")).user_id
    bob = (await graph.create_user(org_id, "Bob")).user_id
    coach = (await graph.create_agent(org_id, "Coach", user_id=alice)).agent_id
    chef = (await graph.create_agent(org_id, "Chef")).agent_id

    # 1. First conversation: three memories, one from two messages, one naming the agent.
    interaction_id, created_at = await memora.save_or_update_interaction_and_memories(
        org_id=org_id,
        user_id=alice,
        agent_id=coach,
        interaction=FIRST_CHAT,
        current_datetime=DAY_1,
    )
    assert created_at == DAY_1
    assert agent.extraction_model.kinds() == ["extraction"], "nothing stored yet to compare"
    stored = await graph.get_interaction(org_id, alice, interaction_id)
    assert [(m.msg_position, m.role, m.content) for m in stored.messages or []] == [
        (i, m["role"], m["content"]) for i, m in enumerate(FIRST_CHAT)
    ]
    first = by_text(stored.memories or [])
    assert set(first) == {
        "Alice lives in Paris",
        "Alice has a sister called Ana",
        "Alice asked Coach to train them for a marathon",
    }
    assert sources(first["Alice has a sister called Ana"]) == [
        (0, FIRST_CHAT[0]["content"]),
        (2, FIRST_CHAT[2]["content"]),
    ]
    assert sources(first["Alice asked Coach to train them for a marathon"]) == [
        (2, FIRST_CHAT[2]["content"])
    ]
    paris_id = first["Alice lives in Paris"].memory_id
    sister_id = first["Alice has a sister called Ana"].memory_id
    # The vector store holds the unresolved text with Memora's placeholders.
    paris_point = await agent.vectors.async_client.retrieve(
        agent.vectors.collection_name, [paris_id], with_payload=True
    )
    assert (paris_point[0].payload or {})["memory"] == f"user_{alice} lives in Paris"
    assert len(await same_ids_in_both(agent, org_id)) == 3

    # 2. Follow-up appending messages: a contradiction (Berlin supersedes Paris) and a
    # new memory; the comparison step saw the stored Paris memory.
    _, updated_at = await memora.save_or_update_interaction_and_memories(
        org_id=org_id,
        user_id=alice,
        agent_id=coach,
        interaction=FIRST_CHAT + FOLLOW_UP,
        interaction_id=interaction_id,
        current_datetime=DAY_2,
    )
    assert updated_at == DAY_2
    assert agent.extraction_model.kinds()[-2:] == ["extraction_update", "comparison"]
    comparison = agent.extraction_model.calls[-1].answer
    assert [m.contradicted_memory_id for m in comparison.contrary_memories] == [paris_id]  # type: ignore[union-attr]
    stored = await graph.get_interaction(org_id, alice, interaction_id)
    assert [m.content for m in stored.messages or []] == [
        m["content"] for m in FIRST_CHAT + FOLLOW_UP
    ]
    everything = await graph.get_all_user_memories(org_id, alice)
    ids = {memory.memory_id for memory in everything}
    assert len(ids) == 5 and ids == await same_ids_in_both(agent, org_id)
    (berlin,) = [m for m in everything if m.memory_id != paris_id and "Berlin" in m.memory]
    berlin_id = berlin.memory_id
    dog_id = next(m.memory_id for m in everything if m.memory == "Alice has a dog called Rex")
    # Newest version and full history of the contradicted memory.
    (resolved,) = await graph.fetch_user_memories_resolved(
        [{"org_id": org_id, "user_id": alice, "memory_id": paris_id}]
    )
    assert resolved.memory == "Alice lives in Berlin"
    history = await graph.get_user_memory_history(org_id, alice, berlin_id)
    assert [m.memory for m in history] == ["Alice lives in Berlin", "Alice lives in Paris"]
    assert [m.memory_id for m in history] == [berlin_id, paris_id]
    assert [m.obtained_at for m in history] == [DAY_2, DAY_1]

    # 3. An edit of an earlier message: the chain is truncated there and replaced; the
    # memories of the replaced message stay, without their source; nothing new to store.
    await memora.save_or_update_interaction_and_memories(
        org_id=org_id,
        user_id=alice,
        agent_id=coach,
        interaction=FIRST_CHAT + EDITED,
        interaction_id=interaction_id,
        current_datetime=DAY_3,
    )
    assert agent.extraction_model.kinds()[-1] == "extraction_update"
    stored = await graph.get_interaction(org_id, alice, interaction_id)
    assert [m.content for m in stored.messages or []] == [m["content"] for m in FIRST_CHAT + EDITED]
    for lost_source in (berlin_id, dog_id):
        assert sources(await graph.get_user_memory(org_id, alice, lost_source)) == []
    assert len(sources(await graph.get_user_memory(org_id, alice, sister_id))) == 2
    assert await same_ids_in_both(agent, org_id) == ids

    # 4. Messages with nothing to remember are appended; no memory is added.
    await memora.save_or_update_interaction_and_memories(
        org_id=org_id,
        user_id=alice,
        agent_id=coach,
        interaction=FIRST_CHAT + EDITED + NOTHING,
        interaction_id=interaction_id,
        current_datetime=DAY_3,
    )
    stored = await graph.get_interaction(org_id, alice, interaction_id)
    assert len(stored.messages or []) == 8
    assert stored.updated_at == DAY_3
    assert await same_ids_in_both(agent, org_id) == ids

    # 5. Another agent, a naive datetime, and a duplicate the comparison step drops.
    chef_interaction, chef_created = await memora.save_or_update_interaction_and_memories(
        org_id=org_id,
        user_id=alice,
        agent_id=chef,
        interaction=CHEF_CHAT,
        current_datetime=NAIVE_DAY_5,
    )
    assert chef_created.replace(tzinfo=None) == NAIVE_DAY_5
    comparison = agent.extraction_model.calls[-1].answer
    assert agent.extraction_model.kinds()[-1] == "comparison"
    assert [m.memory for m in comparison.new_memories] == [f"user_{alice} is vegetarian"]  # type: ignore[union-attr]
    assert comparison.contrary_memories == []  # type: ignore[union-attr]
    chef_memories = (await graph.get_interaction(org_id, alice, chef_interaction)).memories
    (vegetarian,) = chef_memories or []
    assert (vegetarian.memory, vegetarian.agent_id) == ("Alice is vegetarian", chef)
    assert vegetarian.obtained_at == NAIVE_DAY_5.replace(tzinfo=timezone.utc)
    everything = await graph.get_all_user_memories(org_id, alice)
    assert set(by_text(everything)) == {  # each memory once, each as it was stored
        "Alice lives in Paris",
        "Alice lives in Berlin",
        "Alice has a sister called Ana",
        "Alice asked Coach to train them for a marathon",
        "Alice has a dog called Rex",
        "Alice is vegetarian",
    }
    berlin_points = [
        point
        for point in (await agent.vectors.async_client.scroll(agent.vectors.collection_name))[0]
        if (point.payload or {})["memory"] == f"user_{alice} lives in Berlin"
    ]
    assert len(berlin_points) == 1, "the duplicate was not stored"
    ids |= {vegetarian.memory_id}
    assert await same_ids_in_both(agent, org_id) == ids

    # 6. A second user: only his own memories are compared and stored.
    await memora.save_or_update_interaction_and_memories(
        org_id=org_id, user_id=bob, agent_id=chef, interaction=BOB_CHAT, current_datetime=DAY_3
    )
    (bob_paris,) = await graph.get_all_user_memories(org_id, bob)
    assert bob_paris.memory == "Bob lives in Paris"
    assert {m.memory_id for m in await graph.get_all_user_memories(org_id, alice)} == ids
    assert await same_ids_in_both(agent, org_id) == ids | {bob_paris.memory_id}

    # 7. Recall, across agents: the newest home, each memory once, no other user's.
    recalled, recalled_ids = await memora.recall_memories_for_message(
        org_id, alice, latest_msg="Where do I live these days?", current_datetime=DAY_3
    )
    assert agent.search_model.calls[-1].answer == (
        "&& MEMORY_SEARCH &&\n    << Where does the user live >>\n"
    )
    texts = by_text(recalled or [])
    assert "Alice lives in Berlin" in texts and "Alice lives in Paris" not in texts
    assert recalled_ids == [m.memory_id for m in recalled or []]
    assert {m.user_id for m in recalled or []} == {alice}
    # ... with the filter model: only what the message is about.
    filtered, filtered_ids = await memora.recall_memories_for_message(
        org_id,
        alice,
        latest_msg="Where do I live these days?",
        current_datetime=DAY_3,
        enable_final_model_based_memory_filter=True,
    )
    assert agent.search_model.kinds()[-2:] == ["search_queries", "filter"]
    assert [m.memory for m in filtered or []] == ["Alice lives in Berlin"]
    assert filtered_ids == [texts["Alice lives in Berlin"].memory_id]
    # ... for one agent only.
    chef_only, _ = await memora.recall_memories_for_message(
        org_id,
        alice,
        latest_msg="What should I cook for dinner?",
        agent_id=chef,
        search_memories_across_agents=False,
    )
    assert [m.memory for m in chef_only or []] == ["Alice is vegetarian"]
    across, _ = await memora.recall_memories_for_message(
        org_id, alice, latest_msg="What should I cook for dinner?", agent_id=chef
    )
    assert "Alice is vegetarian" in by_text(across or [])
    # ... with no search query: the message itself is the query.
    from_message, _ = await memora.recall_memories_for_message(
        org_id, alice, latest_msg="Is Ana coming to visit?"
    )
    assert agent.search_model.calls[-1].answer == "&& MEMORY_SEARCH &&\n"
    assert "Alice has a sister called Ana" in by_text(from_message or [])
    # ... and the filter model deciding nothing is relevant.
    assert await memora.recall_memories_for_message(
        org_id,
        alice,
        latest_msg="Is Ana coming to visit?",
        enable_final_model_based_memory_filter=True,
    ) == (None, None)

    # 8. Searches: as one with a filtered-out id, as a batch per scope (Memora's enum).
    as_one = await memora.search_memories_as_one(
        org_id,
        alice,
        ["sister called Ana", "lives in Berlin"],
        filter_out_memory_ids_set={sister_id},
    )
    assert sister_id not in {m.memory_id for m in as_one}
    assert "Alice lives in Berlin" in by_text(as_one)
    user_batch = await memora.search_memories_as_batch(
        org_id,
        ["lives in Paris", "vegetarian"],
        user_id=bob,
        memory_search_scope=MemoraScope.USER,
    )
    # One result list per query, only Bob's memories (a hashed query scores near 0, not 0).
    assert len(user_batch) == 2
    assert [m.memory for m in user_batch[0]] == ["Bob lives in Paris"]
    assert {m.user_id for result in user_batch for m in result} == {bob}
    org_batch = await memora.search_memories_as_batch(
        org_id, ["lives in Paris"], memory_search_scope=MemoraScope.ORGANIZATION
    )
    (org_result,) = org_batch
    assert {m.user_id for m in org_result} == {alice, bob}
    assert {"Bob lives in Paris", "Alice lives in Berlin"} <= set(by_text(org_result))

    # 9. Deletes empty both stores for that user or organisation only.
    other = (await graph.create_organization("Globex")).org_id
    carol = (await graph.create_user(other, "Carol")).user_id
    helper = (await graph.create_agent(other, "Helper")).agent_id
    await memora.save_or_update_interaction_and_memories(
        org_id=other,
        user_id=carol,
        agent_id=helper,
        interaction=BOB_CHAT,
        current_datetime=DAY_3,
    )
    others = await same_ids_in_both(agent, other)
    assert len(others) == 1
    await graph.delete_user(org_id, bob)
    assert await same_ids_in_both(agent, org_id) == ids
    await graph.delete_organization(org_id)
    assert await same_ids_in_both(agent, org_id) == set()
    assert await same_ids_in_both(agent, other) == others


def memora_objects(date: datetime, memory: str, positions: list[int]) -> Any:
    """What Memora's agent passes: its own ``storage_schema`` classes."""
    return memora_storage.MemoriesAndInteraction(
        interaction=[{"role": "user", "content": "hi"}, {"role": "assistant", "content": "yo"}],
        interaction_date=date,
        memories=[memora_storage.MemoryToStore(memory=memory, source_msg_block_pos=positions)],
        contrary_memories=[],
    )


def look_alike(date: datetime, memory: str, positions: tuple[int, ...]) -> Any:
    """Any object with the same fields will do, tuples included."""
    return SimpleNamespace(
        interaction=({"role": "user", "content": "hi"},),
        interaction_date=date,
        memories=(SimpleNamespace(memory=memory, source_msg_block_pos=positions),),
        contrary_memories=(),
    )


@pytest.mark.parametrize("make", ["constructor", "from_neomodel"])
@pytest.mark.parametrize("twin", ["async", "sync"])
async def test_a_store_assigned_after_construction_is_the_one_written(
    twin: str, make: str, neo4j_connection: Neo4jConnection, neo4j_driver: Driver
) -> None:
    """``associated_vector_db`` is live in both twins; assigning ``None`` detaches it."""
    clear_database(neo4j_driver, neo4j_connection.database)
    conn = neo4j_connection
    args = (conn.uri, conn.username, conn.password, conn.database)
    if make == "from_neomodel":  # neomodel connected the way an application does it
        if twin == "async":
            await adb.set_connection(url=conn.neomodel_url)
        else:
            db.set_connection(url=conn.neomodel_url)
    if twin == "async":
        graph: Any = (
            Neo4jGraphInterface(*args)
            if make == "constructor"
            else Neo4jGraphInterface.from_neomodel(conn.database)
        )
        store: Any = QdrantDB(location=":memory:", embedding_function=HashingEmbedding())
        await store.setup()
    else:
        graph = (
            sync.Neo4jGraphInterface(*args)
            if make == "constructor"
            else sync.Neo4jGraphInterface.from_neomodel(conn.database)
        )
        store = sync.QdrantDB(location=":memory:", embedding_function=HashingEmbedding())
        store.setup()

    async def call(method: str, *arguments: Any) -> Any:
        result = getattr(graph, method)(*arguments)
        return await result if twin == "async" else result

    async def points() -> set[str]:
        client = store.async_client if twin == "async" else store.client
        found = client.scroll(store.collection_name, with_payload=True)
        page, _ = await found if twin == "async" else found
        return {(point.payload or {})["memory_id"] for point in page}

    assert graph.get_associated_vector_db() is None
    graph.associated_vector_db = store  # what Memora.__init__ does
    assert graph.associated_vector_db is store
    assert graph.get_associated_vector_db() is store
    org = (await call("create_organization", "Acme")).org_id
    user = (await call("create_user", org, "Ann")).user_id
    agent = (await call("create_agent", org, "Bot")).agent_id
    await call(
        "save_interaction_with_memories", org, agent, user, memora_objects(DAY_1, "a", [0, 1])
    )
    await call(
        "save_interaction_with_memories", org, agent, user, look_alike(NAIVE_DAY_5, "b", (0,))
    )
    stored = await call("get_all_user_memories", org, user)
    assert sorted((m.memory, m.obtained_at) for m in stored) == [
        ("a", DAY_1),
        ("b", NAIVE_DAY_5.replace(tzinfo=timezone.utc)),
    ]
    assert await points() == {m.memory_id for m in stored}

    graph.associated_vector_db = None
    assert graph.get_associated_vector_db() is None
    await call("save_interaction_with_memories", org, agent, user, memora_objects(DAY_3, "c", [0]))
    assert len(await call("get_all_user_memories", org, user)) == 3
    assert await points() == {m.memory_id for m in stored}, "a detached store is not written"
    await call("close")
    if make == "from_neomodel":
        if twin == "async":
            await adb.close_connection()
        else:
            db.close_connection()


@pytest.mark.parametrize(
    "data",
    [
        memora_objects(DAY_1, "m", [2]),  # Memora's pydantic allows any int
        memora_objects(DAY_1, "m", [0, 0]),
        memora_objects(DAY_1, " ", [0]),
        look_alike(DAY_1, "m", ("0",)),  # type: ignore[arg-type]
        SimpleNamespace(interaction=[], memories=[], contrary_memories=[]),  # no date
        memora_storage.MemoriesAndInteraction(
            contrary_memories=[
                memora_storage.ContraryMemoryToStore(
                    memory="m", source_msg_block_pos=[], existing_contrary_memory_id=""
                )
            ]
        ),
    ],
    ids=[
        "position-outside",
        "position-twice",
        "blank-memory",
        "string-position",
        "no-date",
        "blank-contradicted-id",
    ],
)
async def test_bad_objects_of_memoras_classes_are_refused_and_write_nothing(
    data: Any, memora: Any, driver: Driver
) -> None:
    org = (await memora.create_organization("Acme")).org_id
    user = (await memora.create_user(org, "Ann")).user_id
    agent = (await memora.create_agent(org, "Bot")).agent_id
    with pytest.raises(ValueError):
        await memora.save_interaction_with_memories(org, agent, user, data)
    assert driver.execute_query("MATCH (n:Interaction|Memory|MessageBlock) RETURN n").records == []
