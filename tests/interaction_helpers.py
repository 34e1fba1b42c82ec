"""Shared by the interaction, memory and placeholder tests: tenants, conversations, graph checks."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any

import pytest
from sync_adapter import AwaitableTwin

from memora_ogm._async.interface import Neo4jGraphInterface
from memora_ogm.schema.storage import ContraryMemoryToStore, MemoriesAndInteraction, MemoryToStore
from memora_ogm.testing import clear_database
from memora_ogm.vector_db.embedding import HashingEmbedding
from memora_ogm.vector_db.qdrant import QdrantDB

DAY = datetime(2024, 5, 1, 9, 30, tzinfo=timezone.utc)
#: A well-formed memory id (a canonical UUID) of no memory: not found, where a memory id
#: of another spelling is a ValueError.
NO_MEMORY = "0d5e6c8a-9b1f-4c2e-8a7d-3f4b5c6d7e8f"
LATER = datetime(2024, 5, 3, 18, 0, tzinfo=timezone.utc)

Memories = Sequence[tuple[str, Sequence[int]]]
"""``(text, source positions)`` of memories to store."""


@dataclass
class World:
    """One organisation with a user and an agent, as the tests see them."""

    org_id: str
    user_id: str
    agent_id: str

    def ids(self, memory_id: str) -> dict[str, str]:
        return {"org_id": self.org_id, "user_id": self.user_id, "memory_id": memory_id}


async def make_world(
    memora: Any, user_name: str = "Ann", agent_label: str = "Bot", org_id: str | None = None
) -> World:
    if org_id is None:
        org_id = (await memora.create_organization("Acme")).org_id
    user = await memora.create_user(org_id, user_name)
    agent = await memora.create_agent(org_id, agent_label)
    return World(org_id, user.user_id, agent.agent_id)


def chat(*contents: str) -> list[dict[str, str]]:
    """Messages alternating user and assistant."""
    return [
        {"role": "user" if index % 2 == 0 else "assistant", "content": content}
        for index, content in enumerate(contents)
    ]


def conversation(
    messages: list[dict[str, str]],
    when: datetime = DAY,
    memories: Memories = (),
    contrary: Sequence[tuple[str, Sequence[int], str]] = (),
) -> MemoriesAndInteraction:
    return MemoriesAndInteraction(
        interaction=messages,
        interaction_date=when,
        memories=[MemoryToStore(memory=text, source_msg_block_pos=list(p)) for text, p in memories],
        contrary_memories=[
            ContraryMemoryToStore(
                memory=text, source_msg_block_pos=list(p), existing_contrary_memory_id=old
            )
            for text, p, old in contrary
        ],
    )


async def save(memora: Any, world: World, data: MemoriesAndInteraction) -> str:
    interaction_id, _ = await memora.save_interaction_with_memories(
        world.org_id, world.agent_id, world.user_id, data
    )
    return str(interaction_id)


async def update(
    memora: Any, world: World, interaction_id: str, data: MemoriesAndInteraction
) -> tuple[str, datetime]:
    """Update the interaction as the world's user with the world's agent."""
    result: tuple[str, datetime] = await memora.update_interaction_and_memories(
        world.org_id, world.agent_id, world.user_id, interaction_id, data
    )
    return result


async def saved_memory(
    memora: Any, world: World, text: str, messages: list[dict[str, str]] | None = None
) -> tuple[str, str]:
    """Save an interaction with one memory citing its first message: its and the memory's id."""
    data = conversation(messages or chat("I live in Oslo", "Nice!"), memories=[(text, [0])])
    interaction_id = await save(memora, world, data)
    return interaction_id, (await memory_ids(memora, world, interaction_id))[text]


async def memory_ids(memora: Any, world: World, interaction_id: str) -> dict[str, str]:
    """The memories of an interaction, text -> memory_id (as stored, placeholders resolved)."""
    found = await memora.get_interaction(
        world.org_id, world.user_id, interaction_id, with_messages=False
    )
    return {memory.memory: memory.memory_id for memory in found.memories}


def rows(driver: Any, query: str, **params: Any) -> list[dict[str, Any]]:
    return [record.data() for record in driver.execute_query(query, **params).records]


def value(driver: Any, query: str, **params: Any) -> Any:
    return driver.execute_query(query, **params).records[0][0]


def _canonical(value: Any) -> Any:
    """``value`` with every map's entries in key order: the order a server returns a
    node's properties in follows the order they were written, which means nothing."""
    if isinstance(value, dict):
        return sorted((key, _canonical(item)) for key, item in value.items())
    if isinstance(value, list):
        return [_canonical(item) for item in value]
    return value


def snapshot(driver: Any) -> tuple[list[str], list[str]]:
    """Every node with its properties and every relationship: equal snapshots, equal graphs."""
    nodes = rows(driver, "MATCH (n) RETURN labels(n) AS labels, properties(n) AS properties")
    relationships = rows(
        driver,
        "MATCH (a)-[r]->(b) RETURN type(r) AS type, properties(a) AS a, properties(b) AS b",
    )
    return (
        sorted(repr(_canonical(node)) for node in nodes),
        sorted(repr(_canonical(relationship)) for relationship in relationships),
    )


def stored_chain(driver: Any, interaction_id: str) -> list[tuple[str, str]]:
    """The interaction's messages as (role, content), after checking the chain is well formed.

    Positions are 0..n-1 in chain order with INTEGER type, one FIRST_MESSAGE at most,
    no message has two successors or two predecessors, and no MessageBlock anywhere
    is cut off from an interaction.
    """
    records = rows(
        driver,
        """
        MATCH (i:Interaction {interaction_id: $id})
        OPTIONAL MATCH (i)-[:FIRST_MESSAGE]->(first:MessageBlock)
        OPTIONAL MATCH path = (first)-[:IS_NEXT*0..]->(m:MessageBlock)
        RETURN COUNT { (i)-[:FIRST_MESSAGE]->() } AS firsts, length(path) AS hop,
               m.msg_position AS position, valueType(m.msg_position) AS type,
               m.role AS role, m.content AS content,
               COUNT { (m)-[:IS_NEXT]->() } AS successors,
               COUNT { ()-[:IS_NEXT]->(m) } AS predecessors
        ORDER BY hop
        """,
        id=interaction_id,
    )
    assert records and records[0]["firsts"] <= 1
    chain = [record for record in records if record["hop"] is not None]
    assert [record["hop"] for record in chain] == list(range(len(chain)))
    assert [record["position"] for record in chain] == list(range(len(chain)))
    assert all(record["type"] == "INTEGER NOT NULL" for record in chain)
    assert all(record["successors"] <= 1 for record in chain)
    assert [record["predecessors"] for record in chain] == [
        min(hop, 1) for hop in range(len(chain))
    ]
    orphans = value(
        driver,
        "MATCH (m:MessageBlock) WHERE NOT EXISTS "
        "{ (:Interaction)-[:FIRST_MESSAGE]->(:MessageBlock)-[:IS_NEXT*0..]->(m) } "
        "RETURN count(m)",
    )
    assert orphans == 0
    return [(record["role"], record["content"]) for record in chain]


def as_pairs(messages: list[dict[str, str]]) -> list[tuple[str, str]]:
    return [(message["role"], message["content"]) for message in messages]


def sources(driver: Any, interaction_id: str) -> dict[str, list[int]]:
    """Each memory of the interaction (raw text) with the positions of its MESSAGE_SOURCEs."""
    records = rows(
        driver,
        "MATCH (m:Memory {interaction_id: $id}) OPTIONAL MATCH (m)-[:MESSAGE_SOURCE]->(s) "
        "WITH m, s ORDER BY s.msg_position "
        "RETURN m.memory AS memory, collect(s.msg_position) AS positions",
        id=interaction_id,
    )
    return {record["memory"]: record["positions"] for record in records}


async def concurrently(memora: Any, method: str, calls: list[tuple[Any, ...]]) -> list[Any]:
    """Run ``method`` with each argument tuple at the same time (threads for the sync twin)."""
    if isinstance(memora, AwaitableTwin):
        blocking = getattr(memora._twin, method)
        running = [asyncio.to_thread(blocking, *arguments) for arguments in calls]
    else:
        running = [getattr(memora, method)(*arguments) for arguments in calls]
    return await asyncio.gather(*running, return_exceptions=True)


@pytest.fixture
async def with_vectors(
    neo4j_connection: Any, neo4j_driver: Any
) -> AsyncIterator[tuple[Neo4jGraphInterface, QdrantDB]]:
    """The async facade with qdrant-client's in-memory store associated, on an emptied graph."""
    clear_database(neo4j_driver, neo4j_connection.database)
    vectors = QdrantDB(location=":memory:", embedding_function=HashingEmbedding())
    conn = neo4j_connection
    graph = Neo4jGraphInterface(conn.uri, conn.username, conn.password, conn.database, vectors)
    await graph.setup()
    yield graph, vectors
    await graph.close()


async def vector_ids(vectors: QdrantDB) -> list[str]:
    """The memory ids the vector store holds."""
    points, _ = await vectors.async_client.scroll(
        vectors.collection_name, limit=10_000, with_payload=True
    )
    return sorted(point.payload["memory_id"] for point in points if point.payload)
