"""Graph and vector store change together or not at all (SPEC section 6, 10.9 and 10.13).

Each write path that touches memories runs three times against real stores
(Neo4j and qdrant-client's local mode): with the vector store failing, with the
graph commit failing after the vector write, and with one transient commit
failure that is retried. Afterwards both stores must hold the same memory ids:
those from before the call when it failed, those it promised when it succeeded.
"""

from __future__ import annotations

import inspect
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any

import pytest
from neo4j import Driver
from neo4j.exceptions import DatabaseError, TransientError
from sync_adapter import AwaitableTwin

from memora_ogm import sync
from memora_ogm._async.interface import Neo4jGraphInterface
from memora_ogm.schema.storage import ContraryMemoryToStore, MemoriesAndInteraction, MemoryToStore
from memora_ogm.server import Neo4jConnection
from memora_ogm.testing import clear_database
from memora_ogm.vector_db.embedding import HashingEmbedding
from memora_ogm.vector_db.qdrant import QdrantDB


class InjectedFault(RuntimeError):
    """The failure a test asked for."""


class FlakyVectorDB:
    """A real QdrantDB, async or sync, that fails the next call of the named methods, on demand.

    The wrappers return whatever the store's method returns (a coroutine for the async
    store), so one class serves both twins.
    """

    MUTATORS = frozenset(
        {
            "add_memories",
            "delete_memory",
            "delete_memories",
            "delete_all_user_memories",
            "delete_all_organization_memories",
        }
    )

    def __init__(self, inner: QdrantDB | sync.QdrantDB) -> None:
        self.inner = inner
        self.fail_on: set[str] = set()
        #: Mutating calls made; a commit fault waits for one.
        self.writes = 0

    def __getattr__(self, name: str) -> Any:
        method = getattr(self.inner, name)
        if name not in self.MUTATORS:
            return method
        if name in self.fail_on:
            raise InjectedFault(f"vector store refused {name}")

        def counted(*args: Any, **kwargs: Any) -> Any:
            self.writes += 1
            return method(*args, **kwargs)

        return counted


@dataclass
class Stores:
    graph: Any  # the async facade, or the sync one dressed as async
    vectors: FlakyVectorDB
    #: The facade's ``Graph`` (async or sync twin): where a commit fault is injected.
    connection: Any


@pytest.fixture(params=["async", "sync"])
async def stores(
    request: pytest.FixtureRequest, neo4j_connection: Neo4jConnection, neo4j_driver: Driver
) -> AsyncIterator[Stores]:
    found = await open_stores(request.param, neo4j_connection, neo4j_driver)
    yield found
    await found.graph.close()


async def open_stores(twin: str, conn: Neo4jConnection, driver: Driver) -> Stores:
    """The ``twin`` facade, set up on an emptied graph, with a vector store in memory."""
    clear_database(driver, conn.database)
    args = (conn.uri, conn.username, conn.password, conn.database)
    if twin == "async":
        vectors = FlakyVectorDB(
            QdrantDB(location=":memory:", embedding_function=HashingEmbedding())
        )
        interface = Neo4jGraphInterface(*args, vectors)  # type: ignore[arg-type]
        found = Stores(interface, vectors, interface.graph)
    else:
        vectors = FlakyVectorDB(
            sync.QdrantDB(location=":memory:", embedding_function=HashingEmbedding())
        )
        facade = sync.Neo4jGraphInterface(*args, vectors)  # type: ignore[arg-type]
        found = Stores(AwaitableTwin(facade, Neo4jGraphInterface), vectors, facade.graph)
    await found.graph.setup()
    return found


def patch_commit(
    monkeypatch: pytest.MonkeyPatch, connection: Any, fault: Callable[[], Exception | None]
) -> None:
    """Make the facade's commit roll back and raise ``fault()`` whenever that is not None."""
    real_commit = connection.commit

    async def async_commit(transaction: Any) -> Any:
        if (error := fault()) is None:
            return await real_commit(transaction)
        await transaction.rollback()
        raise error

    def sync_commit(transaction: Any) -> Any:
        if (error := fault()) is None:
            return real_commit(transaction)
        transaction.rollback()
        raise error

    is_async = inspect.iscoroutinefunction(real_commit)
    monkeypatch.setattr(connection, "commit", async_commit if is_async else sync_commit)


async def _vector_ids(vectors: FlakyVectorDB) -> list[str]:
    inner = vectors.inner
    client = inner.async_client if isinstance(inner, QdrantDB) else inner.client
    ids: list[str] = []
    offset = None
    while True:
        page = client.scroll(inner.collection_name, limit=256, offset=offset, with_payload=True)
        points, offset = await page if inspect.isawaitable(page) else page
        ids.extend((point.payload or {})["memory_id"] for point in points)
        if offset is None:
            return sorted(ids)


def _graph_ids(driver: Driver) -> list[str]:
    return sorted(r[0] for r in driver.execute_query("MATCH (m:Memory) RETURN m.memory_id").records)


def _conversation(
    *texts: str, contrary: list[ContraryMemoryToStore] | None = None
) -> MemoriesAndInteraction:
    return MemoriesAndInteraction(
        interaction=[
            {"role": "user", "content": "I moved to Oslo and adopted a cat."},
            {"role": "assistant", "content": "Congratulations!"},
        ],
        interaction_date=datetime(2026, 11, 1, 9, 30, tzinfo=timezone.utc),
        memories=[MemoryToStore(memory=text, source_msg_block_pos=[0]) for text in texts],
        contrary_memories=contrary or [],
    )


async def _world(graph: Neo4jGraphInterface) -> dict[str, str]:
    org = await graph.create_organization("Acme")
    ann = await graph.create_user(org.org_id, "Ann")
    bob = await graph.create_user(org.org_id, "Bob")
    agent = await graph.create_agent(org.org_id, "Bot")
    ids = {"org": org.org_id, "ann": ann.user_id, "bob": bob.user_id, "agent": agent.agent_id}
    ids["interaction"], _ = await graph.save_interaction_with_memories(
        org.org_id,
        agent.agent_id,
        ann.user_id,
        _conversation("user_x lives in Oslo", "user_x has a cat"),
    )
    await graph.save_interaction_with_memories(
        org.org_id, agent.agent_id, bob.user_id, _conversation("user_x likes jazz")
    )
    memories = await graph.get_all_user_memories(org.org_id, ann.user_id)
    ids["memory"] = memories[0].memory_id
    return ids


Call = Callable[[Neo4jGraphInterface, dict[str, str]], Awaitable[Any]]

PATHS: dict[str, tuple[Call, str]] = {
    "save": (
        lambda g, i: g.save_interaction_with_memories(
            i["org"], i["agent"], i["ann"], _conversation("user_x drinks tea")
        ),
        "add_memories",
    ),
    "update": (
        lambda g, i: g.update_interaction_and_memories(
            i["org"],
            i["agent"],
            i["ann"],
            i["interaction"],
            _conversation(
                "user_x plays chess",
                contrary=[
                    ContraryMemoryToStore(
                        memory="user_x lives in Bergen",
                        source_msg_block_pos=[0],
                        existing_contrary_memory_id=i["memory"],
                    )
                ],
            ),
        ),
        "add_memories",
    ),
    "delete_memory": (
        lambda g, i: g.delete_user_memory(i["org"], i["ann"], i["memory"]),
        "delete_memories",
    ),
    "delete_interaction": (
        lambda g, i: g.delete_user_interaction_and_its_memories(
            i["org"], i["ann"], i["interaction"]
        ),
        "delete_memories",
    ),
    "delete_all_interactions": (
        lambda g, i: g.delete_all_user_interactions_and_their_memories(i["org"], i["ann"]),
        "delete_memories",
    ),
    "delete_all_memories": (
        lambda g, i: g.delete_all_user_memories(i["org"], i["ann"]),
        "delete_memories",
    ),
    "delete_user": (lambda g, i: g.delete_user(i["org"], i["ann"]), "delete_all_user_memories"),
    "delete_organization": (
        lambda g, i: g.delete_organization(i["org"]),
        "delete_memories",
    ),
}


@pytest.mark.parametrize("path", sorted(PATHS))
async def test_failed_vector_write_leaves_both_stores_unchanged(
    stores: Stores, neo4j_driver: Driver, path: str
) -> None:
    graph, vectors = stores.graph, stores.vectors
    ids = await _world(graph)
    before = _graph_ids(neo4j_driver)
    assert await _vector_ids(vectors) == before

    call, vector_method = PATHS[path]
    vectors.fail_on = {vector_method}
    with pytest.raises(InjectedFault):
        await call(graph, ids)

    assert _graph_ids(neo4j_driver) == before
    assert await _vector_ids(vectors) == before


@pytest.mark.parametrize("path", sorted(PATHS))
async def test_failed_graph_commit_after_vector_write_is_undone(
    stores: Stores, neo4j_driver: Driver, monkeypatch: pytest.MonkeyPatch, path: str
) -> None:
    graph, vectors = stores.graph, stores.vectors
    ids = await _world(graph)
    before = _graph_ids(neo4j_driver)

    vectors.writes = 0
    # Only the commit that follows a vector write fails.
    patch_commit(
        monkeypatch,
        stores.connection,
        lambda: (
            DatabaseError("injected: the commit did not go through") if vectors.writes else None
        ),
    )
    call, _ = PATHS[path]
    with pytest.raises(DatabaseError, match="injected"):
        await call(graph, ids)
    monkeypatch.undo()

    assert _graph_ids(neo4j_driver) == before
    assert await _vector_ids(vectors) == before


@pytest.mark.parametrize("path", sorted(PATHS))
async def test_retried_commit_leaves_no_duplicates(
    stores: Stores, neo4j_driver: Driver, monkeypatch: pytest.MonkeyPatch, path: str
) -> None:
    graph, vectors = stores.graph, stores.vectors
    ids = await _world(graph)
    failures = [TransientError("injected: deadlock detected")]
    vectors.writes = 0

    patch_commit(
        monkeypatch,
        stores.connection,
        lambda: failures.pop() if failures and vectors.writes else None,
    )
    call, _ = PATHS[path]
    await call(graph, ids)
    monkeypatch.undo()

    assert not failures, "the injected failure was never hit"
    after = _graph_ids(neo4j_driver)
    vector_ids = await _vector_ids(vectors)
    assert vector_ids == after
    assert len(set(vector_ids)) == len(vector_ids)
