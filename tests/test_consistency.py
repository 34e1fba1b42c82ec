"""``check_consistency``, ``repair`` and ``memora-ogm check`` on drift made each way it happens.

Real stores: Neo4j and qdrant-client's local mode in a folder, with the default offline
embedder. Each test makes the graph and the store drift apart (Memora's own graph layer
on its orphan paths, a point deleted or edited behind memora-ogm's back, an import with
the store detached, a memory id held by two tenants), then asserts the exact report, the
command's output and exit status, both stores after ``--repair``, and that a second
repair changes nothing. Both twins run every test (``twin``); the command runs the
sync twin in this process, on the same folder (the store is closed around it: a folder
opens in one client at a time).
"""

from __future__ import annotations

import inspect
import uuid
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, replace
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import qdrant_edge
from interaction_helpers import DAY, LATER, World, chat, conversation, make_world, save
from memora.graph_db.neo4j import Neo4jGraphInterface as MemoraGraph
from neo4j import Driver
from qdrant_client import models as qmodels
from sync_adapter import AwaitableTwin

from memora_ogm import sync
from memora_ogm._async import consistency as async_check
from memora_ogm._async import paging as async_paging
from memora_ogm._async.interface import Neo4jGraphInterface
from memora_ogm._sync import consistency as sync_check
from memora_ogm._sync import paging as sync_paging
from memora_ogm._sync.edge import EdgeClient
from memora_ogm.calls.consistency import (
    ClashingMemoryId,
    ConsistencyReport,
    FieldDifference,
    MissingPoint,
    OrphanPoint,
    WrongPayload,
)
from memora_ogm.cli import main
from memora_ogm.schema.models import Memory
from memora_ogm.server import Neo4jConnection
from memora_ogm.testing import clear_database
from memora_ogm.vector_db.embedding import HashingEmbedding
from memora_ogm.vector_db.hybrid import DENSE_VECTOR, SPARSE_VECTOR
from memora_ogm.vector_db.layouts import MEMORA_COLLECTION_NAME
from memora_ogm.vector_db.qdrant import QdrantDB
from memora_ogm.vector_db.scope import MemorySearchScope

Points = dict[str, tuple[dict[str, Any], list[float]]]
"""A store's points: id -> (payload, vector)."""


@dataclass
class Stores:
    """The facade of one twin with that twin's store on a folder, and the way to both."""

    twin: str
    memora: Any
    folder: Path
    conn: Neo4jConnection
    driver: Driver
    store: Any = None

    def open_store(self) -> None:
        # memora-ogm's earlier layout, whose payloads and vectors these tests spell out;
        # test_memoras_layout_is_checked_and_repaired_too runs the check on Memora's.
        store = QdrantDB if self.twin == "async" else sync.QdrantDB
        self.store = store(path=self.folder, embedding_function=HashingEmbedding())
        self.memora.associated_vector_db = self.store

    async def close_store(self) -> None:
        self.memora.associated_vector_db = None
        await _maybe(self.store.close())

    async def client_call(self, name: str, *args: Any, **kwargs: Any) -> Any:
        """A call on the store's own client (Qdrant Edge's adapter), behind memora-ogm's back."""
        client = self.store.async_client if self.twin == "async" else self.store.client
        return await _maybe(getattr(client, name)(self.store.collection_name, *args, **kwargs))

    async def behind_the_store(self, *operations: qdrant_edge.UpdateOperation) -> None:
        """Write to the store's Edge shard behind memora-ogm's back (qdrant-client's
        ``set_payload``, which the store never calls, has no twin in its Edge adapter)."""
        await self.close_store()
        shard = qdrant_edge.EdgeShard.load(str(self.folder / self.store.collection_name))
        try:
            for operation in operations:
                shard.update(operation)
        finally:
            shard.close()
        self.open_store()

    async def points(self) -> Points:
        found: Points = {}
        offset = None
        while True:
            page, offset = await self.client_call(
                "scroll", limit=100, offset=offset, with_payload=True, with_vectors=True
            )
            for point in page:
                found[str(point.id)] = (point.payload or {}, list(point.vector))
            if offset is None:
                return found

    async def cli(self, capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, list[str]]:
        """``memora-ogm check --qdrant-path FOLDER ARGS``: its exit status and output lines."""
        await self.close_store()
        capsys.readouterr()
        try:
            status = main(["check", "--qdrant-path", str(self.folder), *args])
        finally:
            self.open_store()
        return status, capsys.readouterr().out.splitlines()

    def graph_memories(self) -> list[tuple[str, str, str, str]]:
        records = self.driver.execute_query(
            "MATCH (m:Memory) RETURN m.org_id, m.user_id, m.memory_id, m.memory "
            "ORDER BY m.memory_id",
            database_=self.conn.database,
        ).records
        return [tuple(record) for record in records]


def set_payload(point_id: str, payload: dict[str, Any]) -> qdrant_edge.UpdateOperation:
    return qdrant_edge.UpdateOperation.set_payload([point_id], payload)


async def _maybe(value: Any) -> Any:
    return await value if inspect.isawaitable(value) else value


@pytest.fixture(params=["async", "sync"])
async def twin(
    request: pytest.FixtureRequest,
    neo4j_connection: Neo4jConnection,
    neo4j_driver: Driver,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> AsyncIterator[Stores]:
    clear_database(neo4j_driver, neo4j_connection.database)
    for name, value in neo4j_connection.env().items():
        monkeypatch.setenv(name, value)
    conn = neo4j_connection
    args = (conn.uri, conn.username, conn.password, conn.database)
    memora: Any = (
        Neo4jGraphInterface(*args)
        if request.param == "async"
        else AwaitableTwin(sync.Neo4jGraphInterface(*args), Neo4jGraphInterface)
    )
    stores = Stores(request.param, memora, tmp_path / "qdrant", conn, neo4j_driver)
    stores.open_store()
    await memora.setup()
    yield stores
    await stores.close_store()
    await memora.close()


def _memory(world: World, memory_id: str, text: str, when: datetime = DAY) -> Memory:
    return Memory(
        org_id=world.org_id,
        agent_id=world.agent_id,
        user_id=world.user_id,
        memory_id=memory_id,
        memory=text,
        obtained_at=when,
    )


async def _saved(stores: Stores, world: World, *texts: str, when: datetime = DAY) -> list[Memory]:
    """Memories saved through memora-ogm (so in both stores), in the order of ``texts``."""
    messages = chat("I live in Oslo", "Nice!")
    interaction_id = await save(
        stores.memora, world, conversation(messages, when, [(text, [0]) for text in texts])
    )
    found = await stores.memora.get_interaction(
        world.org_id, world.user_id, interaction_id, with_messages=False
    )
    by_text = {memory.memory: memory.memory_id for memory in found.memories}
    return [_memory(world, by_text[text], text, when) for text in texts]


async def _ids_by_text(stores: Stores) -> dict[str, str]:
    return {
        payload["memory"]: point_id for point_id, (payload, _) in (await stores.points()).items()
    }


def _lines(report: ConsistencyReport) -> list[str]:
    return [str(difference) for difference in report.differences()] + [report.summary()]


async def _repaired_twice(
    stores: Stores, capsys: pytest.CaptureFixture[str], found: ConsistencyReport, exit_after: int
) -> Points:
    """``--repair`` prints what the check found and mends it; a second repair (through the
    facade) finds nothing to mend and leaves both stores as they were. The points after."""
    graph = stores.graph_memories()
    status, out = await stores.cli(capsys, "--repair")
    assert (status, out) == (exit_after, _lines(replace(found, repaired=True)))
    points = await stores.points()
    again = await stores.memora.repair()
    assert again == ConsistencyReport(
        None,
        memories=found.memories,
        points=len(points),
        clashes=found.clashes,
        repaired=True,
    )
    assert await stores.points() == points
    assert stores.graph_memories() == graph
    return points


def _payload(memory: Memory) -> dict[str, Any]:
    return {
        "org_id": memory.org_id,
        "user_id": memory.user_id,
        "agent_id": memory.agent_id,
        "obtained_at": memory.obtained_at.isoformat(),
        "memory_id": memory.memory_id,
        "memory": memory.memory,
    }


def _same(points: Points, others: Points) -> bool:
    """The same ids, payloads and vectors (to float32 precision: the folder keeps float32)."""
    return _payloads(points) == _payloads(others) and all(
        np.allclose(vector, others[point_id][1], atol=1e-6)
        for point_id, (_, vector) in points.items()
    )


def _payloads(points: Points) -> dict[str, dict[str, Any]]:
    return {point_id: payload for point_id, (payload, _) in points.items()}


async def test_stores_in_step_agree(twin: Stores, capsys: pytest.CaptureFixture[str]) -> None:
    world = await make_world(twin.memora)
    saved = await _saved(twin, world, "lives in Oslo", "likes tea")

    report = await twin.memora.check_consistency()

    assert report == ConsistencyReport(None, memories=2, points=2)
    assert report.agree
    assert await twin.cli(capsys) == (
        0,
        ["2 memories, 2 points: found 0 missing, 0 orphan, 0 wrong payload, 0 clashing"],
    )
    assert _payloads(await twin.points()) == {m.memory_id: _payload(m) for m in saved}


async def test_memoras_own_layer_leaves_orphans_on_its_three_paths(
    twin: Stores, capsys: pytest.CaptureFixture[str]
) -> None:
    """memora-core 0.3.1's graph layer with memora-ogm's store attached: saving for a user
    that does not exist adds the points and no memory (SPEC 10.7); an update on a day
    without a Date node adds the point and drops the memory (10.16); ``delete_user``
    leaves the user's points (10.9)."""
    world = await make_world(twin.memora)
    (kept,) = await _saved(twin, world, "kept by memora-ogm")
    bob = await twin.memora.create_user(world.org_id, "Bob")
    await twin.close_store()
    conn = twin.conn
    vectors = QdrantDB(path=twin.folder, embedding_function=HashingEmbedding())
    # Memora's layer takes any store with Memora's BaseVectorDB methods (untyped here).
    memoras: Any = MemoraGraph(conn.uri, conn.username, conn.password, conn.database)
    memoras.associated_vector_db = vectors
    try:
        await memoras.save_interaction_with_memories(
            world.org_id, world.agent_id, "ghost", conversation(chat("Hi"), DAY, [("ghost's", [0])])
        )
        first = datetime(2025, 1, 10, 9, 0, tzinfo=timezone.utc)
        messages = chat("I like tea.", "Noted.")
        interaction_id, _ = await memoras.save_interaction_with_memories(
            world.org_id,
            world.agent_id,
            world.user_id,
            conversation(messages, first, [("m1", [0])]),
        )
        messages += chat("And coffee.")
        later = datetime(2025, 1, 12, 9, 0, tzinfo=timezone.utc)
        await memoras.update_interaction_and_memories(
            world.org_id,
            world.agent_id,
            world.user_id,
            interaction_id,
            conversation(messages, later, [("m2 on a new day", [2])]),
        )
        await memoras.save_interaction_with_memories(
            world.org_id,
            world.agent_id,
            bob.user_id,
            conversation(chat("Yo"), DAY, [("bob's", [0])]),
        )
        await memoras.delete_user(world.org_id, bob.user_id)
    finally:
        await memoras.close()
        await vectors.close()
    twin.open_store()
    ids = await _ids_by_text(twin)
    m1 = _memory(world, ids["m1"], "m1", first)
    org = world.org_id

    report = await twin.memora.check_consistency()

    expected = ConsistencyReport(
        None,
        memories=2,
        points=5,
        orphans=sorted(
            [
                OrphanPoint(ids["ghost's"], org, "ghost"),
                OrphanPoint(ids["m2 on a new day"], org, world.user_id),
                OrphanPoint(ids["bob's"], org, bob.user_id),
            ],
            key=lambda o: (o.org_id or "", o.user_id or "", o.memory_id),
        ),
    )
    assert report == expected
    assert await twin.cli(capsys) == (1, _lines(expected))
    assert await twin.cli(capsys, "--org", org) == (1, _lines(replace(expected, org_id=org)))
    points = await _repaired_twice(twin, capsys, expected, exit_after=0)
    assert _payloads(points) == {m.memory_id: _payload(m) for m in (kept, m1)}


async def test_a_point_deleted_behind_the_back_is_embedded_again(
    twin: Stores, capsys: pytest.CaptureFixture[str]
) -> None:
    world = await make_world(twin.memora)
    lost, kept = await _saved(twin, world, "resides in Oslo", "likes tea")
    other = await make_world(twin.memora, "Cy")
    (elsewhere,) = await _saved(twin, other, "plays chess")
    vectors = await twin.points()
    await twin.client_call("delete", points_selector=qmodels.PointIdsList(points=[lost.memory_id]))

    report = await twin.memora.check_consistency(world.org_id)

    expected = ConsistencyReport(world.org_id, memories=2, points=1, missing=[MissingPoint(lost)])
    assert report == expected
    assert await twin.cli(capsys, "--org", world.org_id) == (1, _lines(expected))
    assert (await twin.cli(capsys, "--org", other.org_id))[0] == 0
    whole = replace(expected, org_id=None, memories=3, points=2)
    points = await _repaired_twice(twin, capsys, whole, exit_after=0)
    assert _same(points, vectors)  # the same payload and embedding as first written
    found = await _maybe(
        twin.store.search_memory("Oslo", MemorySearchScope.USER, world.org_id, world.user_id)
    )
    assert [memory.memory_id for memory, _ in found][:1] == [lost.memory_id]
    assert {kept.memory_id, elsewhere.memory_id} < set(points)


async def test_edited_payloads_are_written_again_from_the_graph(
    twin: Stores, capsys: pytest.CaptureFixture[str]
) -> None:
    """A text and an agent edited, a timestamp moved, and a point filed under another
    organisation (a tenant the graph does not have: its point is still found by id)."""
    world = await make_world(twin.memora)
    edited, moved, refiled = await _saved(twin, world, "lives in Oslo", "likes tea", "runs")
    vectors = await twin.points()
    await twin.behind_the_store(
        set_payload(edited.memory_id, {"memory": "lives in Rome", "agent_id": "intruder"}),
        set_payload(moved.memory_id, {"obtained_at": LATER.isoformat()}),
        set_payload(refiled.memory_id, {"org_id": "elsewhere"}),
    )
    drifted, graph = await twin.points(), twin.graph_memories()

    report = await twin.memora.check_consistency()

    expected = ConsistencyReport(
        None,
        memories=3,
        points=3,
        wrong_payloads=[
            WrongPayload(
                edited,
                (
                    FieldDifference("text", "lives in Oslo", "lives in Rome"),
                    FieldDifference("agent_id", world.agent_id, "intruder"),
                ),
            ),
            WrongPayload(
                moved, (FieldDifference("obtained_at", DAY.isoformat(), LATER.isoformat()),)
            ),
            WrongPayload(refiled, (FieldDifference("org_id", world.org_id, "elsewhere"),)),
        ],
    )
    expected.sort()
    assert report == expected
    assert await twin.points() == drifted and twin.graph_memories() == graph  # only reads
    assert await twin.cli(capsys) == (1, _lines(expected))
    points = await _repaired_twice(twin, capsys, expected, exit_after=0)
    assert _same(points, vectors)


async def test_an_import_with_the_store_detached_is_embedded_by_repair(
    twin: Stores, capsys: pytest.CaptureFixture[str]
) -> None:
    world = await make_world(twin.memora)
    saved = await _saved(twin, world, "lives in Oslo", "likes tea")
    records = [record async for record in _records(twin.memora.export_organization(world.org_id))]
    await twin.memora.delete_organization(world.org_id)
    assert await twin.points() == {}
    store = twin.memora.associated_vector_db
    twin.memora.associated_vector_db = None
    await twin.memora.import_records(records)
    twin.memora.associated_vector_db = store

    report = await twin.memora.check_consistency()

    expected = ConsistencyReport(None, memories=2, missing=[MissingPoint(m) for m in saved])
    expected.sort()
    assert report == expected
    assert await twin.cli(capsys) == (1, _lines(expected))
    points = await _repaired_twice(twin, capsys, expected, exit_after=0)
    assert _payloads(points) == {m.memory_id: _payload(m) for m in saved}
    found = await _maybe(
        twin.store.search_memory("tea", MemorySearchScope.USER, world.org_id, world.user_id)
    )
    assert [memory.memory_id for memory, _ in found][:1] == [saved[1].memory_id]


async def _records(stream: Any) -> AsyncIterator[Any]:
    if hasattr(stream, "__aiter__"):
        async for record in stream:
            yield record
    else:
        for record in stream:
            yield record


async def test_a_memory_id_held_by_two_tenants_is_reported_and_left(
    twin: Stores, capsys: pytest.CaptureFixture[str]
) -> None:
    """The graph holds one memory id in two organisations (two graphs merged by hand):
    one point cannot stand for both. The memory that lost its own id leaves an orphan."""
    first = await make_world(twin.memora)
    (held,) = await _saved(twin, first, "lives in Oslo")
    second = await make_world(twin.memora, "Dee")
    (taken,) = await _saved(twin, second, "likes tea")
    twin.driver.execute_query(
        "MATCH (m:Memory {memory_id: $taken}) SET m.memory_id = $held",
        taken=taken.memory_id,
        held=held.memory_id,
        database_=twin.conn.database,
    )

    report = await twin.memora.check_consistency()

    expected = ConsistencyReport(
        None,
        memories=2,
        points=2,
        orphans=[OrphanPoint(taken.memory_id, second.org_id, second.user_id)],
        clashes=[
            ClashingMemoryId(
                held.memory_id,
                tuple(sorted([(first.org_id, first.user_id), (second.org_id, second.user_id)])),
            )
        ],
    )
    assert report == expected
    assert await twin.cli(capsys) == (1, _lines(expected))
    points = await _repaired_twice(twin, capsys, expected, exit_after=1)
    assert _payloads(points) == {held.memory_id: _payload(held)}


async def test_bad_input_and_errors(twin: Stores, capsys: pytest.CaptureFixture[str]) -> None:
    """A bad organisation id or no store: a clear error and nothing read or written; the
    command exits 2 on a missing folder or collection."""
    world = await make_world(twin.memora)
    await _saved(twin, world, "lives in Oslo")
    points = await twin.points()
    with pytest.raises(ValueError, match="org_id"):
        await twin.memora.repair("")
    store = twin.memora.associated_vector_db
    twin.memora.associated_vector_db = None
    with pytest.raises(ValueError, match="No vector store"):
        await twin.memora.repair()
    twin.memora.associated_vector_db = store
    assert await twin.points() == points
    await twin.close_store()
    try:
        assert main(["check", "--qdrant-path", str(twin.folder / "missing")]) == 2
        assert main(["check", "--qdrant-path", str(twin.folder), "--collection", "none"]) == 2
    finally:
        twin.open_store()
    assert "memora-ogm: no Qdrant folder" in capsys.readouterr().err
    assert _same(await twin.points(), points)


async def test_pages_of_one_find_what_one_page_finds(
    twin: Stores, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A crash between the stores leaves points of memories never committed; with
    points deleted and a payload edited beside them, the check in pages of one memory,
    one point and one unsettled id a round reports what it reports in whole pages."""
    world = await make_world(twin.memora)
    saved = await _saved(twin, world, *(f"memory {n}" for n in range(6)))
    crashed = sorted(str(uuid.uuid4()) for _ in range(2))
    await _maybe(
        twin.store.add_memories(
            world.org_id, world.user_id, world.agent_id, crashed, ["lost", "lost too"],
            DAY.isoformat(),
        )
    )  # fmt: skip
    await twin.client_call(
        "delete", points_selector=qmodels.PointIdsList(points=[saved[1].memory_id])
    )
    await twin.behind_the_store(set_payload(saved[4].memory_id, {"memory": "edited"}))
    expected = ConsistencyReport(
        None,
        memories=6,
        points=7,
        missing=[MissingPoint(saved[1])],
        orphans=[OrphanPoint(point_id, world.org_id, world.user_id) for point_id in crashed],
        wrong_payloads=[WrongPayload(saved[4], (FieldDifference("text", "memory 4", "edited"),))],
    )
    expected.sort()
    assert await twin.memora.check_consistency() == expected
    for module in (async_check, sync_check):
        monkeypatch.setattr(module, "CHECK_PAGE", 1)
        monkeypatch.setattr(module, "RESOLVE_BATCH", 1)
    for module in (async_paging, sync_paging):
        monkeypatch.setattr(module, "FIRST_PAGE", 1)
        monkeypatch.setattr(module, "PAGE_NODES", 1)
    progress: list[int] = []

    assert await twin.memora.check_consistency(progress=progress.append) == expected

    assert progress == list(range(1, 7))
    points = await _repaired_twice(twin, capsys, expected, exit_after=0)
    assert _payloads(points) == {m.memory_id: _payload(m) for m in saved}


def saved_then_drifted(
    connection: Neo4jConnection,
    driver: Driver,
    monkeypatch: pytest.MonkeyPatch,
    store: sync.QdrantDB,
    texts: list[str],
    drift: Callable[[qdrant_edge.EdgeShard, dict[str, str]], None],
) -> dict[str, str]:
    """Save one interaction with ``texts`` as memories through ``store`` (a folder), close
    it, then let ``drift`` write to the collection's Edge shard behind memora-ogm's back.
    The command's environment names the graph. Returns each text's memory id."""
    clear_database(driver, connection.database)
    for name, value in connection.env().items():
        monkeypatch.setenv(name, value)
    conn = connection
    with sync.Neo4jGraphInterface(
        conn.uri, conn.username, conn.password, conn.database, store
    ) as memora:
        memora.setup()
        world = sync_world(memora)
        memora.save_interaction_with_memories(
            world.org_id,
            world.agent_id,
            world.user_id,
            conversation(chat("Hi"), DAY, [(text, [0]) for text in texts]),
        )
        by_text = {
            m.memory: m.memory_id for m in memora.get_all_user_memories(world.org_id, world.user_id)
        }
    assert isinstance(store.client, EdgeClient)
    shard_folder = store.client.folder / store.collection_name
    store.close()
    shard = qdrant_edge.EdgeShard.load(str(shard_folder))
    try:
        drift(shard, by_text)
    finally:
        shard.close()
    return by_text


def test_the_command_detects_the_earlier_single_vector_layout(
    neo4j_connection: Neo4jConnection,
    neo4j_driver: Driver,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """A folder written by memora-ogm's earlier store (one unnamed 256-float vector in
    ``memora_ogm_memories``) is checked and repaired without ``--collection``: the command
    reads the layout from the collection and re-embeds by feature hashing of that size."""
    folder = tmp_path / "earlier"

    def delete(shard: qdrant_edge.EdgeShard, by_text: dict[str, str]) -> None:
        shard.update(qdrant_edge.UpdateOperation.delete_points([by_text["lives in Oslo"]]))

    by_text = saved_then_drifted(
        neo4j_connection,
        neo4j_driver,
        monkeypatch,
        sync.QdrantDB(path=folder, embedding_function=HashingEmbedding(256)),
        ["lives in Oslo"],
        delete,
    )

    assert main(["check", "--qdrant-path", str(folder)]) == 1
    lines = capsys.readouterr().out.splitlines()
    assert (
        lines[-1] == "1 memories, 0 points: found 1 missing, 0 orphan, 0 wrong payload, 0 clashing"
    )
    assert main(["check", "--qdrant-path", str(folder), "--repair"]) == 0
    capsys.readouterr()
    assert main(["check", "--qdrant-path", str(folder)]) == 0

    reopened = sync.QdrantDB(path=folder, embedding_function=HashingEmbedding(256))
    try:
        (point,) = reopened.client.retrieve(
            reopened.collection_name, [by_text["lives in Oslo"]], with_vectors=True
        )
        assert reopened.collection_name == "memora_ogm_memories"
        assert isinstance(point.vector, list)
        assert np.allclose(point.vector, HashingEmbedding(256).embed(["lives in Oslo"])[0])
        assert point.payload is not None and point.payload["memory"] == "lives in Oslo"
    finally:
        reopened.close()


def sync_world(memora: sync.Neo4jGraphInterface) -> World:
    org = memora.create_organization("Acme")
    user = memora.create_user(org.org_id, "Ann")
    agent = memora.create_agent(org.org_id, "Bot")
    return World(org.org_id, user.user_id, agent.agent_id)


def test_memoras_layout_is_checked_and_repaired_too(
    neo4j_connection: Neo4jConnection,
    neo4j_driver: Driver,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Memora's collection (named dense and sparse vectors, ``document`` in the payload),
    QdrantDB's default: a point deleted and a text edited behind memora-ogm's back are
    found, and the command (which reads the layout from the collection) puts both right
    with both vectors."""
    folder = tmp_path / "memora"

    def delete_and_edit(shard: qdrant_edge.EdgeShard, by_text: dict[str, str]) -> None:
        shard.update(qdrant_edge.UpdateOperation.delete_points([by_text["lives in Oslo"]]))
        shard.update(set_payload(by_text["likes tea"], {"document": "likes coffee"}))

    by_text = saved_then_drifted(
        neo4j_connection,
        neo4j_driver,
        monkeypatch,
        sync.QdrantDB(path=folder),
        ["lives in Oslo", "likes tea"],
        delete_and_edit,
    )

    assert main(["check", "--qdrant-path", str(folder)]) == 1
    lines = capsys.readouterr().out.splitlines()
    assert lines[-1] == (
        "2 memories, 1 points: found 1 missing, 0 orphan, 1 wrong payload, 0 clashing"
    )
    assert any("text: graph 'likes tea', store 'likes coffee'" in line for line in lines)
    assert main(["check", "--qdrant-path", str(folder), "--repair"]) == 0
    capsys.readouterr()
    assert main(["check", "--qdrant-path", str(folder)]) == 0

    reopened = sync.QdrantDB(path=folder)
    try:
        collection = reopened.collection_name
        points = reopened.client.retrieve(
            collection, list(by_text.values()), with_payload=True, with_vectors=True
        )
        assert collection == "memory_collection_v0_2"
        assert {str(p.id): (p.payload or {})["document"] for p in points} == {
            memory_id: text for text, memory_id in by_text.items()
        }
        for point in points:
            assert isinstance(point.vector, dict)
            assert set(point.vector) == {DENSE_VECTOR, SPARSE_VECTOR}
    finally:
        reopened.close()


def test_an_empty_collection_of_memoras_name_beside_ours_is_not_the_one_checked(
    neo4j_connection: Neo4jConnection,
    neo4j_driver: Driver,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Without ``--collection``, the command checks the collection that holds the points,
    not an empty one of Memora's name that something created beside it (issue 47)."""
    folder = tmp_path / "beside"
    saved_then_drifted(
        neo4j_connection,
        neo4j_driver,
        monkeypatch,
        sync.QdrantDB(path=folder, embedding_function=HashingEmbedding(256)),
        ["lives in Oslo", "plays the cello"],
        lambda shard, by_text: None,
    )
    beside = EdgeClient(folder)
    try:
        beside.create_collection(
            MEMORA_COLLECTION_NAME,
            vectors_config=qmodels.VectorParams(size=4, distance=qmodels.Distance.COSINE),
        )
    finally:
        beside.close()
    assert main(["check", "--qdrant-path", str(folder)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[-1].startswith("2 memories, 2 points: found 0 missing"), lines
