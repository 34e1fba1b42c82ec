"""The embedded vector store shared by threads, tasks and event loops, and across a fork.

Issue 20, item 2: one interface with ``QdrantDB(path=...)`` shared by 8 threads lost
saves (``SystemError``, sqlite "cannot start a transaction within a transaction") and
could leave the local collection unreadable. Here 8 workers save, update and delete
interactions with memories at once, on the sync twin (threads) and on the async facade
(tasks on one or two event loops); then the graph and the store must hold the same
memories with the right payloads, and the folder must read back whole.

A store on a Qdrant server (``url=``) serves any event loop (issue 20, item 3, for the
vector side): ``asyncio.run`` per call, two loops in two threads at once, ``close()`` from
a third loop; each loop's connections are closed with it. The server is
:mod:`qdrant_standin` (Qdrant's REST API over qdrant-client's local engine).

After ``os.fork()`` a child never uses the parent's connections to a Qdrant server (it
opens its own) and refuses an embedded store it inherited, without touching the parent's
folder or its lock.
"""

from __future__ import annotations

import asyncio
import os
import signal
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest
from interaction_helpers import LATER, World, chat, conversation, make_world, memory_ids, save
from interaction_helpers import update as update_interaction
from neo4j import Driver
from qdrant_client import AsyncQdrantClient, QdrantClient, models
from qdrant_standin import StandIn, qdrant_standin
from sync_adapter import AwaitableTwin

from memora_ogm import sync
from memora_ogm._async import compat
from memora_ogm._async.interface import Neo4jGraphInterface
from memora_ogm.errors import FolderInUseError
from memora_ogm.server import Neo4jConnection
from memora_ogm.testing import clear_database
from memora_ogm.vector_db.base import MemorySearchScope
from memora_ogm.vector_db.embedding import HashingEmbedding
from memora_ogm.vector_db.qdrant import SINGLE_VECTOR_COLLECTION_NAME, QdrantDB

WORKERS = 8
ROUNDS = 2
#: Memories a save extracts besides the two the churn updates and deletes.
FACTS = 6
OBTAINED_AT = "2024-06-01T08:30:00+00:00"


def dressed(store: sync.QdrantDB) -> Any:
    """The sync store dressed as the async one (its client too), so one test reads both."""
    return AwaitableTwin(store, QdrantDB, {"async_client": ("client", AsyncQdrantClient)})


async def churn(memora: Any, store: Any, world: World, worker: int) -> set[str]:
    """Save, update and delete as one user, searching as an agent does between turns.

    Returns the memory texts the user must keep. A save extracts many memories, as a long
    conversation does, so that the store's writes overlap.
    """
    kept: set[str] = set()
    for turn in range(ROUNDS):
        name = f"w{worker} r{turn}"
        facts = [f"{name} fact {n}" for n in range(FACTS)]
        first = conversation(
            chat(f"{name} hello", "hi"),
            memories=[
                (f"{name} likes tea", [0]),
                (f"{name} owns a bike", [1]),
                *((fact, []) for fact in facts),
            ],
        )
        interaction_id = await save(memora, world, first)
        await search(store, world, f"{name} likes tea")
        ids = await memory_ids(memora, world, interaction_id)
        second = conversation(
            chat(f"{name} hello", "hi", "I switched to coffee"),
            when=LATER,
            memories=[(f"{name} reads novels", [2])],
            contrary=[(f"{name} likes coffee", [2], ids[f"{name} likes tea"])],
        )
        await update_interaction(memora, world, interaction_id, second)
        await search(store, world, f"{name} likes coffee")
        await memora.delete_user_memory(world.org_id, world.user_id, ids[f"{name} owns a bike"])
        if turn % 2:
            await memora.delete_user_interaction_and_its_memories(
                world.org_id, world.user_id, interaction_id
            )
        else:
            kept |= {f"{name} {fact}" for fact in ("likes tea", "reads novels", "likes coffee")}
            kept |= set(facts)
    return kept


async def search(store: Any, world: World, text: str) -> None:
    """A search in the user's memories finds the memory just written first."""
    [(best, _), *_] = await store.search_memory(
        text, MemorySearchScope.USER, world.org_id, world.user_id
    )
    assert best.memory == text


async def make_worlds(memora: Any) -> list[World]:
    org_id = (await memora.create_organization("Acme")).org_id
    return [await make_world(memora, f"User{n}", f"Bot{n}", org_id) for n in range(WORKERS)]


def graph_memories(driver: Driver) -> dict[str, dict[str, Any]]:
    records, _, _ = driver.execute_query(
        "MATCH (m:Memory) RETURN m.memory_id AS id, m.org_id AS org_id, m.user_id AS user_id, "
        "m.agent_id AS agent_id, m.memory AS memory, m.obtained_at AS obtained_at"
    )
    return {
        record["id"]: {
            **{key: record[key] for key in ("org_id", "user_id", "agent_id", "memory")},
            "obtained_at": record["obtained_at"].to_native(),
        }
        for record in records
    }


async def points(store: Any) -> dict[str, dict[str, Any]]:
    """Every point by id, with the payload fields the graph also holds."""
    found: dict[str, dict[str, Any]] = {}
    offset: models.ExtendedPointId | None = None
    while True:
        batch, offset = await store.async_client.scroll(
            store.collection_name, limit=100, offset=offset, with_payload=True
        )
        for point in batch:
            payload = dict(point.payload or {})
            assert payload.pop("memory_id") == str(point.id)
            payload["obtained_at"] = datetime.fromisoformat(payload["obtained_at"])
            found[str(point.id)] = payload
        if offset is None:
            return found


def kept_texts(driver: Driver, world: World) -> set[str]:
    records, _, _ = driver.execute_query(
        "MATCH (m:Memory {org_id: $org, user_id: $user}) RETURN m.memory AS memory",
        org=world.org_id,
        user=world.user_id,
    )
    return {record["memory"] for record in records}


async def check_both_stores(
    driver: Driver,
    store: Any,
    reopen: Callable[[], Any],
    worlds: list[World],
    outcomes: list[Any],
) -> None:
    """No worker failed, the graph holds what they kept, the store exactly the graph's memories.

    Then a search finds a kept memory, and the folder, opened again, holds the same points.
    """
    failed = [repr(outcome) for outcome in outcomes if isinstance(outcome, BaseException)]
    assert failed == []
    assert [kept_texts(driver, world) for world in worlds] == outcomes
    in_graph = graph_memories(driver)
    assert len(in_graph) == WORKERS * len(range(0, ROUNDS, 2)) * (FACTS + 3)
    assert await points(store) == in_graph

    world = worlds[-1]
    [(text, memory_id)] = [
        (entry["memory"], memory_id)
        for memory_id, entry in in_graph.items()
        if entry["user_id"] == world.user_id and entry["memory"].endswith("r0 reads novels")
    ]
    results = await store.search_memory(text, MemorySearchScope.USER, world.org_id, world.user_id)
    assert results[0][0].memory_id == memory_id

    await store.close()
    reopened = reopen()
    try:
        assert await points(reopened) == in_graph
    finally:
        await reopened.close()


def run_loops(coroutines: list[Any]) -> list[Any]:
    """Run each coroutine to completion on its own event loop in its own thread, at once."""
    with ThreadPoolExecutor(max_workers=len(coroutines)) as pool:
        return list(pool.map(asyncio.run, coroutines))


async def test_eight_threads_share_the_sync_interface_and_its_embedded_store(
    tmp_path: Path, neo4j_connection: Neo4jConnection, neo4j_driver: Driver
) -> None:
    clear_database(neo4j_driver, neo4j_connection.database)
    conn = neo4j_connection
    folder = tmp_path / "qdrant"
    vectors = sync.QdrantDB(path=folder, embedding_function=HashingEmbedding())
    interface = sync.Neo4jGraphInterface(
        conn.uri, conn.username, conn.password, conn.database, vectors
    )
    memora = AwaitableTwin(interface, Neo4jGraphInterface)
    store = dressed(vectors)
    try:
        await memora.setup()
        worlds = await make_worlds(memora)

        async def worker(n: int) -> Any:
            # Each thread's own loop only drives the blocking sync calls of that thread.
            churning = churn(memora, store, worlds[n], n)
            return (await asyncio.gather(churning, return_exceptions=True))[0]

        outcomes = await asyncio.to_thread(run_loops, [worker(n) for n in range(WORKERS)])
    finally:
        interface.close()
    await check_both_stores(
        neo4j_driver,
        store,
        lambda: dressed(sync.QdrantDB(path=folder, embedding_function=HashingEmbedding())),
        worlds,
        outcomes,
    )


@pytest.mark.parametrize("loops", [1, 2])
async def test_eight_tasks_share_the_async_embedded_store_on_any_event_loop(
    loops: int, tmp_path: Path, neo4j_connection: Neo4jConnection, neo4j_driver: Driver
) -> None:
    """One async store for the process (a folder opens once); a facade per event loop."""
    clear_database(neo4j_driver, neo4j_connection.database)
    conn = neo4j_connection
    args = (conn.uri, conn.username, conn.password, conn.database)
    folder = tmp_path / "qdrant"
    vectors = QdrantDB(path=folder, embedding_function=HashingEmbedding())
    async with Neo4jGraphInterface(*args, vectors) as memora:
        await memora.setup()
        worlds = await make_worlds(memora)

    async def loop_share(first: int) -> list[Any]:
        async with Neo4jGraphInterface(*args, vectors) as memora:
            return await asyncio.gather(
                *(churn(memora, vectors, worlds[n], n) for n in range(first, WORKERS, loops)),
                return_exceptions=True,
            )

    shares = await asyncio.to_thread(run_loops, [loop_share(first) for first in range(loops)])
    outcomes = [shares[n % loops][n // loops] for n in range(WORKERS)]
    await check_both_stores(
        neo4j_driver,
        vectors,
        lambda: QdrantDB(path=folder, embedding_function=HashingEmbedding()),
        worlds,
        outcomes,
    )


def test_eight_threads_add_search_and_delete_on_one_edge_store(tmp_path: Path) -> None:
    """Qdrant Edge unguarded (the store takes no lock for it): each thread adds its user's
    memories in small batches, searches them, deletes some by id, and one thread in two
    deletes another user of its own wholesale; exactly the expected points are left, and
    read back the same after a reopen."""
    folder = tmp_path / "qdrant"
    store = sync.QdrantDB(path=folder, embedding_function=HashingEmbedding())
    store.setup()
    assert store._process_client.lock is None

    def work(n: int) -> set[str]:
        kept: set[str] = set()
        for round_ in range(10):
            ids = [str(uuid.uuid4()) for _ in range(4)]
            texts = [f"user_{n} round {round_} item {i}" for i in range(4)]
            store.add_memories("org", f"u{n}", "bot", ids, texts, OBTAINED_AT)
            if n % 2:
                gone = [str(uuid.uuid4())]
                store.add_memories("org", f"gone{n}", "bot", gone, texts[:1], OBTAINED_AT)
            found = store.search_memory(texts[0], MemorySearchScope.USER, "org", f"u{n}")
            assert found and found[0][0].memory_id == ids[0]
            store.delete_memories(ids[2:])
            kept.update(ids[:2])
        if n % 2:
            store.delete_all_user_memories("org", f"gone{n}")
        return kept

    with ThreadPoolExecutor(max_workers=WORKERS) as pool:
        expected = set().union(*pool.map(work, range(WORKERS)))
    assert store.tenants() == {("org", f"u{n}"): 20 for n in range(WORKERS)}
    store.close()

    reopened = sync.QdrantDB(path=folder, embedding_function=HashingEmbedding())
    found: set[str] = set()
    for n in range(WORKERS):
        page, _ = reopened.points_page("org", f"u{n}", None, 100)
        found.update(point_id for point_id, _ in page)
    assert found == expected
    reopened.close()


class FailingUpsertClient(QdrantClient):
    """A real in-memory client whose every third upsert fails, as a network error would."""

    def __init__(self) -> None:
        super().__init__(location=":memory:")
        self.upserts = 0

    def upsert(self, *args: Any, **kwargs: Any) -> models.UpdateResult:
        self.upserts += 1
        if self.upserts % 3 == 0:
            raise ConnectionError("injected upsert failure")
        return super().upsert(*args, **kwargs)


async def test_adds_failing_part_way_in_eight_threads_each_remove_what_they_wrote() -> None:
    """Every add is two upserts (256 points, then 44); a failed one leaves none of its points."""
    store = sync.QdrantDB(FailingUpsertClient(), embedding_function=HashingEmbedding())
    store.setup()

    def adds(worker: int) -> tuple[set[str], list[str]]:
        kept: set[str] = set()
        unexpected: list[str] = []
        for turn in range(4):
            ids = [str(uuid.uuid4()) for _ in range(300)]
            texts = [f"w{worker} t{turn} fact {n}" for n in range(300)]
            try:
                store.add_memories("org", f"u{worker}", "bot", ids, texts, OBTAINED_AT)
            except ConnectionError:
                continue
            except Exception as error:
                unexpected.append(repr(error))
                continue
            kept |= set(ids)
        return kept, unexpected

    with ThreadPoolExecutor(max_workers=WORKERS) as pool:
        outcomes = await asyncio.gather(
            *(asyncio.wrap_future(pool.submit(adds, n)) for n in range(WORKERS))
        )

    assert [unexpected for _, unexpected in outcomes] == [[]] * WORKERS
    kept = set().union(*(ids for ids, _ in outcomes))
    assert 0 < len(kept) < WORKERS * 4 * 300
    assert set(await points(dressed(store))) == kept
    found = await dressed(store).search_memory("fact 7", MemorySearchScope.ORGANIZATION, "org")
    assert found and {memory.memory_id for memory, _ in found} <= kept
    store.close()


async def test_a_task_cancelled_while_waiting_for_the_engine_leaves_it_free() -> None:
    """The async store waits for a busy embedded engine in a thread; giving up frees it."""
    lock = threading.Lock()
    lock.acquire()
    waiting = asyncio.ensure_future(compat.acquire(lock))
    await asyncio.sleep(0.05)
    waiting.cancel()
    with pytest.raises(asyncio.CancelledError):
        await waiting
    lock.release()
    # The thread that waited gets the lock once, sees it was abandoned, and gives it back.
    assert await asyncio.to_thread(lock.acquire, timeout=10)
    lock.release()


# Event loops ------------------------------------------------------------------------------


def held(standin: StandIn) -> dict[str, str]:
    """The points the server holds: memory id to text."""
    points = standin.points(SINGLE_VECTOR_COLLECTION_NAME)
    return {point_id: payload["memory"] for point_id, payload in points.items()}


def in_graph(driver: Driver) -> dict[str, str]:
    return {memory_id: entry["memory"] for memory_id, entry in graph_memories(driver).items()}


def open_connections(standin: StandIn, expected: int) -> set[int]:
    """The client ports of the server's open connections, once ``expected`` many remain
    (a client closing its socket reaches the server a moment later); else as they are."""
    deadline = time.monotonic() + 10
    while len(standin.open_connections) != expected and time.monotonic() < deadline:
        time.sleep(0.02)
    return set(standin.open_connections)


async def save_and_find(
    memora: Neo4jGraphInterface, store: QdrantDB, world: World, text: str
) -> str:
    """Save an interaction with the memory ``text``; what a search for it finds first."""
    data = conversation(chat(f"about {text}", "noted"), memories=[(text, [0])])
    await save(memora, world, data)
    [(best, _), *_] = await store.search_memory(
        text, MemorySearchScope.USER, world.org_id, world.user_id
    )
    return best.memory


async def test_a_server_store_serves_asyncio_run_per_call(
    neo4j_connection: Neo4jConnection, neo4j_driver: Driver, server: tuple[str, StandIn]
) -> None:
    """Every ``asyncio.run`` is a new loop: saves, searches and deletes through the
    interface each get a server client of their loop, closed when that loop shuts down."""
    clear_database(neo4j_driver, neo4j_connection.database)
    conn = neo4j_connection
    url, standin = server
    store = QdrantDB(url=url, embedding_function=HashingEmbedding())
    memora = Neo4jGraphInterface(conn.uri, conn.username, conn.password, conn.database, store)

    def calls() -> list[str]:
        asyncio.run(memora.setup())
        world = asyncio.run(make_world(memora))
        interactions, found = [], []
        for turn in range(4):
            data = conversation(
                chat(f"turn {turn}", "noted"),
                memories=[(f"Ann fact {turn}", [0]), (f"Ann habit {turn}", [])],
            )
            interactions.append(asyncio.run(save(memora, world, data)))
            [(best, _), *_] = asyncio.run(
                store.search_memory(
                    f"Ann fact {turn}", MemorySearchScope.USER, world.org_id, world.user_id
                )
            )
            found.append(best.memory)
            assert open_connections(standin, 0) == set(), "closed with its loop"
        ids = asyncio.run(memory_ids(memora, world, interactions[0]))
        asyncio.run(memora.delete_user_memory(world.org_id, world.user_id, ids["Ann habit 0"]))
        asyncio.run(
            memora.delete_user_interaction_and_its_memories(
                world.org_id, world.user_id, interactions[1]
            )
        )
        asyncio.run(store.close())
        asyncio.run(memora.close())
        return found

    assert await asyncio.to_thread(calls) == [f"Ann fact {turn}" for turn in range(4)]
    assert open_connections(standin, 0) == set()
    kept = {"Ann fact 0", "Ann fact 2", "Ann habit 2", "Ann fact 3", "Ann habit 3"}
    assert set(held(standin).values()) == kept
    assert held(standin) == in_graph(neo4j_driver)


async def test_a_server_store_serves_two_loops_at_once_and_closes_from_a_third(
    neo4j_connection: Neo4jConnection, neo4j_driver: Driver, server: tuple[str, StandIn]
) -> None:
    """Two threads, each with its own loop, save and search through one interface and
    store at the same time; then ``close()`` from a third loop closes the connection of
    the loop still running, there, and that loop's next call opens a new one."""
    clear_database(neo4j_driver, neo4j_connection.database)
    conn = neo4j_connection
    url, standin = server
    store = QdrantDB(url=url, embedding_function=HashingEmbedding())
    memora = Neo4jGraphInterface(conn.uri, conn.username, conn.password, conn.database, store)

    async def prepare() -> list[World]:
        await memora.setup()
        org_id = (await memora.create_organization("Acme")).org_id
        return [await make_world(memora, name, "Bot", org_id) for name in ("Bea", "Cy")]

    worlds = await asyncio.to_thread(asyncio.run, prepare())
    start = threading.Barrier(2)
    answered, stop = threading.Event(), threading.Event()

    async def session(world: World, label: str, linger: bool) -> list[str]:
        start.wait(timeout=60)
        found = [await save_and_find(memora, store, world, f"{label} fact {n}") for n in range(6)]
        if linger:
            answered.set()
            while not stop.is_set():
                await asyncio.sleep(0.05)  # keeps this loop, and its client, alive
            found.append(await save_and_find(memora, store, world, f"{label} fact after close"))
        return found

    def close_from_a_third_loop() -> None:
        asyncio.run(store.close())

    with ThreadPoolExecutor(2) as threads:
        lingering = threads.submit(asyncio.run, session(worlds[0], "Bea", linger=True))
        done = threads.submit(asyncio.run, session(worlds[1], "Cy", linger=False))
        try:
            assert done.result(timeout=120) == [f"Cy fact {n}" for n in range(6)]
            assert answered.wait(timeout=120)
            [still_open] = open_connections(standin, 1)
            assert still_open in standin.ports("POST", "/points/query/batch")
            await asyncio.to_thread(close_from_a_third_loop)
            assert open_connections(standin, 0) == set(), "closed on its own, running loop"
        finally:
            stop.set()  # never leave the lingering loop running
        assert lingering.result(timeout=120) == [
            *(f"Bea fact {n}" for n in range(6)),
            "Bea fact after close",
        ]
    await asyncio.to_thread(asyncio.run, memora.close())
    assert open_connections(standin, 0) == set()
    assert len(held(standin)) == 13
    assert held(standin) == in_graph(neo4j_driver)


# Fork ------------------------------------------------------------------------------------


def in_child(work: Callable[[], object]) -> str:
    """Run ``work`` in a forked child: ``"ok <result>"`` or ``"<error class>: <message>"``."""
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover (the child)
        os.close(read)
        signal.alarm(30)  # a child stuck on the parent's connection dies, and says nothing
        try:
            outcome = f"ok {work()!r}"
        except BaseException as error:
            outcome = f"{type(error).__name__}: {error}"
        os.write(write, outcome.encode())
        os._exit(0)
    os.close(write)
    with os.fdopen(read) as pipe:
        outcome = pipe.read()
    os.waitpid(pid, 0)
    return outcome


@pytest.fixture
def server() -> Iterator[tuple[str, StandIn]]:
    """A Qdrant server: its URL, and what it holds and saw."""
    with qdrant_standin() as running:
        yield running


@pytest.mark.parametrize("twin", ["async", "sync"])
async def test_a_forked_child_opens_its_own_server_connection(
    twin: str, server: tuple[str, StandIn]
) -> None:
    url, standin = server
    memory_id = str(uuid.uuid4())
    opened: Any = (
        QdrantDB(url=url, embedding_function=HashingEmbedding())
        if twin == "async"
        else sync.QdrantDB(url=url, embedding_function=HashingEmbedding())
    )
    store: Any = opened if twin == "async" else dressed(opened)

    def child_work() -> object:
        deleted = opened.delete_memory(memory_id)
        return asyncio.run(deleted) if twin == "async" else deleted

    try:
        await store.setup()
        await store.delete_memory(memory_id)
        # Forked from a thread with no running loop, as a prefork server's master is.
        assert await asyncio.to_thread(in_child, child_work) == "ok None"
        await store.delete_memory(memory_id)
    finally:
        await store.close()

    parent, child, parent_again = standin.ports("POST", "/points/delete")
    assert child != parent, "the child sent its request over the parent's pooled connection"
    assert parent_again == parent, "the parent lost its connection"


@pytest.mark.parametrize("location", ["folder", "memory"])
@pytest.mark.parametrize("twin", ["async", "sync"])
async def test_a_forked_child_refuses_the_embedded_store_it_inherited(
    twin: str, location: str, tmp_path: Path
) -> None:
    folder = tmp_path / "qdrant"
    where: dict[str, Any] = {"path": folder} if location == "folder" else {}
    opened: Any = (
        QdrantDB(**where, embedding_function=HashingEmbedding())
        if twin == "async"
        else sync.QdrantDB(**where, embedding_function=HashingEmbedding())
    )
    store: Any = opened if twin == "async" else dressed(opened)

    def run(called: Any) -> Any:
        return asyncio.run(called) if twin == "async" else called

    first, second, third = (str(uuid.uuid4()) for _ in range(3))

    def add(ids: list[str]) -> Any:
        return opened.add_memories(
            "org", "ann", "bot", ids, ["ann likes tea"] * len(ids), OBTAINED_AT
        )

    def child_work() -> str:
        try:
            run(add([second]))
        except Exception as error:
            refused = f"{type(error).__name__}: {error}"
        else:
            refused = "added"
        run(opened.close())  # must leave the parent's engine and folder lock alone
        return refused

    await store.setup()
    await store.add_memories("org", "ann", "bot", [first], ["ann likes tea"], OBTAINED_AT)
    outcome = await asyncio.to_thread(in_child, child_work)
    assert outcome.startswith("ok 'InheritedEmbeddedStoreError: ")
    assert "before it forked" in outcome

    await store.add_memories("org", "ann", "bot", [third], ["ann likes coffee"], OBTAINED_AT)
    assert set(await points(store)) == {first, third}
    if location == "folder":  # the child's close left the parent's lock alone
        with pytest.raises(FolderInUseError):
            QdrantDB(path=folder, embedding_function=HashingEmbedding())
    await store.close()
    if location == "folder":
        reopened = QdrantDB(path=folder, embedding_function=HashingEmbedding())
        assert set(await points(reopened)) == {first, third}
        await reopened.close()
