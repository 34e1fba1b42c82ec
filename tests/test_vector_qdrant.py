"""QdrantDB against real engines, no mocks: qdrant-client's local mode in memory, Qdrant Edge
in a folder."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from qdrant_client import AsyncQdrantClient, QdrantClient, models
from sync_adapter import AwaitableTwin

from memora_ogm import sync
from memora_ogm._async.edge import AsyncEdgeClient
from memora_ogm.errors import FolderInUseError, LocalModeFolderError
from memora_ogm.schema.models import Memory
from memora_ogm.vector_db.base import MemorySearchScope
from memora_ogm.vector_db.embedding import DEFAULT_DIMENSION, HashingEmbedding
from memora_ogm.vector_db.layouts import SINGLE_VECTOR_COLLECTION_NAME, vector_params
from memora_ogm.vector_db.qdrant import QdrantDB

OBTAINED_AT = "2024-06-01T08:30:00+00:00"
ORG = MemorySearchScope.ORGANIZATION
USER = MemorySearchScope.USER


def new_ids(count: int) -> list[str]:
    return [str(uuid.uuid4()) for _ in range(count)]


async def stored(db: QdrantDB) -> dict[str, dict[str, Any]]:
    """Every point of the collection as {point id: payload}, read by scrolling."""
    points: dict[str, dict[str, Any]] = {}
    offset: models.ExtendedPointId | None = None
    while True:
        batch, offset = await db.async_client.scroll(
            db.collection_name, limit=100, offset=offset, with_payload=True
        )
        points.update({str(point.id): dict(point.payload or {}) for point in batch})
        if offset is None:
            return points


async def add(
    db: QdrantDB, org: str, user: str, agent: str, texts: list[str], at: str = OBTAINED_AT
) -> list[str]:
    ids = new_ids(len(texts))
    await db.add_memories(org, user, agent, ids, texts, at)
    return ids


@pytest_asyncio.fixture(params=["async", "sync", "async-edge", "sync-edge"])
async def db(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[QdrantDB]:
    """The async store, or the generated sync one dressed as async, in memory (local mode)
    or in a folder (Qdrant Edge): every test runs on the four."""
    where: dict[str, Any] = {}
    engine: type = AsyncQdrantClient
    if request.param.endswith("-edge"):
        where, engine = {"path": tmp_path / "qdrant"}, AsyncEdgeClient
    store: Any = (
        QdrantDB(embedding_function=HashingEmbedding(), **where)
        if request.param.startswith("async")
        else AwaitableTwin(
            sync.QdrantDB(embedding_function=HashingEmbedding(), **where),
            QdrantDB,
            {"async_client": ("client", engine)},
        )
    )
    await store.setup()
    yield store
    await store.close()


@pytest.mark.asyncio
async def test_search_ranks_the_memory_sharing_words_first(db: QdrantDB) -> None:
    texts = [
        "user_a1 is allergic to peanuts",
        "user_a1 works as a software engineer at a bank",
        "user_a1's favourite colour is green",
        "user_a1 has a dog named Rex",
        "user_a1 plans to propose to Sarah next month",
        "user_a1 prefers green tea over coffee",
        "user_a1 lives in Berlin",
        "user_a1 is learning to play the piano",
    ]
    ids = await add(db, "org", "a1", "agent", texts)
    expected = {
        "what allergies does the user have?": 0,
        "software engineering job": 1,
        "favorite color": 2,
        "Tell me about the dog": 3,
        "coffee or tea in the morning?": 5,
        "which city does the user live in, Berlin?": 6,
        "does the user play an instrument like piano": 7,
    }
    for query, index in expected.items():
        results = await db.search_memory(query, USER, "org", user_id="a1")
        assert results, query
        assert results[0][0].memory_id == ids[index], query
        assert results[0][0].memory == texts[index]


@pytest.mark.asyncio
async def test_results_are_memories_best_first_with_their_metadata(db: QdrantDB) -> None:
    [memory_id] = await add(db, "org", "u1", "agent-7", ["user_u1 sails on Lake Constance"])
    await add(db, "org", "u1", "agent-7", ["user_u1 sails a small boat", "user_u1 likes lakes"])

    results = await db.search_memory("sails on the lake", ORG, "org")

    scores = [score for _, score in results]
    assert scores == sorted(scores, reverse=True)
    best, score = results[0]
    assert isinstance(best, Memory)
    assert (best.org_id, best.user_id, best.agent_id, best.memory_id) == (
        "org",
        "u1",
        "agent-7",
        memory_id,
    )
    assert best.memory == "user_u1 sails on Lake Constance"
    assert best.obtained_at == datetime.fromisoformat(OBTAINED_AT)
    assert best.interaction_id is None and best.message_sources is None
    assert 0 < score <= 1


@pytest.mark.asyncio
async def test_user_scope_and_org_scope_never_cross_tenants(db: QdrantDB) -> None:
    text = ["user_x keeps bees in the garden"]
    mine = await add(db, "org-1", "alice", "agent", text)
    colleague = await add(db, "org-1", "bob", "agent", text)
    other_org = await add(db, "org-2", "alice", "agent", text)  # same user id, other org

    user_hits = await db.search_memory("bees garden", USER, "org-1", user_id="alice")
    org_hits = await db.search_memory("bees garden", ORG, "org-1")
    other_hits = await db.search_memory("bees garden", ORG, "org-2", user_id="bob")

    assert [m.memory_id for m, _ in user_hits] == mine
    assert sorted(m.memory_id for m, _ in org_hits) == sorted(mine + colleague)
    # Organisation scope ignores a user_id, as Memora does.
    assert [m.memory_id for m, _ in other_hits] == other_org


@pytest.mark.asyncio
async def test_agent_filter_narrows_either_scope(db: QdrantDB) -> None:
    by_chef = await add(db, "org", "u1", "chef", ["user_u1 cooks risotto on sundays"])
    by_coach = await add(db, "org", "u1", "coach", ["user_u1 runs on sundays"])
    by_chef_other_user = await add(db, "org", "u2", "chef", ["user_u2 cooks on sundays"])

    user_chef = await db.search_memory("sundays", USER, "org", user_id="u1", agent_id="chef")
    org_chef = await db.search_memory("sundays", ORG, "org", agent_id="chef")
    org_coach = await db.search_memory("sundays", ORG, "org", agent_id="coach")

    assert [m.memory_id for m, _ in user_chef] == by_chef
    assert sorted(m.memory_id for m, _ in org_chef) == sorted(by_chef + by_chef_other_user)
    assert [m.memory_id for m, _ in org_coach] == by_coach


@pytest.mark.asyncio
async def test_search_memories_answers_each_query_in_order(db: QdrantDB) -> None:
    ids = await add(
        db, "org", "u1", "a", ["user_u1 drives a red tractor", "user_u1 collects stamps"]
    )
    queries = ["stamps collection", "tractor", "red tractor", "stamps"]

    batch = await db.search_memories(queries, USER, "org", user_id="u1")

    assert len(batch) == len(queries)
    assert [results[0][0].memory_id for results in batch] == [ids[1], ids[0], ids[0], ids[1]]
    for query, results in zip(queries, batch, strict=True):
        assert results == await db.search_memory(query, USER, "org", user_id="u1")


@pytest.mark.asyncio
async def test_scope_may_be_given_by_value(db: QdrantDB) -> None:
    ids = await add(db, "org", "u1", "a", ["user_u1 loves jazz"])
    hits = await db.search_memory("jazz", "user", "org", user_id="u1")  # type: ignore[arg-type]
    assert [m.memory_id for m, _ in hits] == ids


@pytest.mark.asyncio
async def test_search_limit_and_score_threshold() -> None:
    store = QdrantDB(embedding_function=HashingEmbedding(), search_limit=2, score_threshold=None)
    await store.setup()
    await add(store, "org", "u", "a", [f"user_u visited museum number {i}" for i in range(5)])
    await add(store, "org", "u", "a", ["user_u owns a kayak"])

    assert len(await store.search_memory("museum", ORG, "org")) == 2
    # Without a threshold even a memory sharing nothing with the query comes back.
    assert len(await store.search_memory("kayak", ORG, "org")) == 2
    await store.close()

    strict = QdrantDB(embedding_function=HashingEmbedding(), score_threshold=0.99)
    await strict.setup()
    await add(strict, "org", "u", "a", ["user_u owns a kayak"])
    assert await strict.search_memory("kayak trips", ORG, "org") == []
    await strict.close()


@pytest.mark.asyncio
async def test_obtained_at_is_normalised_to_aware_iso(db: QdrantDB) -> None:
    [naive] = await add(db, "org", "u", "a", ["user_u met Ann"], at="2024-01-02T03:04:05")
    [zulu] = await add(db, "org", "u", "a", ["user_u met Bo"], at="2024-01-02T03:04:05Z")
    [plus2] = await add(db, "org", "u", "a", ["user_u met Cy"], at="2024-01-02T05:04:05+02:00")

    points = await stored(db)
    assert points[naive]["obtained_at"] == "2024-01-02T03:04:05+00:00"
    assert points[zulu]["obtained_at"] == "2024-01-02T03:04:05+00:00"
    assert points[plus2]["obtained_at"] == "2024-01-02T05:04:05+02:00"
    memory = (await db.search_memory("Cy", ORG, "org"))[0][0]
    assert memory.memory_id == plus2
    assert memory.obtained_at.utcoffset() == timedelta(hours=2)


@pytest.mark.asyncio
async def test_payload_holds_owner_ids_text_and_date(db: QdrantDB) -> None:
    [memory_id] = await add(db, "o", "u", "a", ["user_u reads poetry"])
    assert await stored(db) == {
        memory_id: {
            "org_id": "o",
            "user_id": "u",
            "agent_id": "a",
            "memory_id": memory_id,
            "memory": "user_u reads poetry",
            "obtained_at": OBTAINED_AT,
        }
    }


@pytest.mark.asyncio
async def test_re_adding_the_same_ids_never_duplicates(db: QdrantDB) -> None:
    ids = new_ids(3)
    texts = ["user_u swims", "user_u climbs", "user_u cycles"]
    await db.add_memories("org", "u", "a", ids, texts, OBTAINED_AT)
    await db.add_memories("org", "u", "a", ids, texts, OBTAINED_AT)  # a retried transaction
    await db.add_memories("org", "u", "a", ids[:1], ["user_u swims daily"], OBTAINED_AT)

    points = await stored(db)
    assert sorted(points) == sorted(ids)
    assert points[ids[0]]["memory"] == "user_u swims daily"
    assert (await db.async_client.count(db.collection_name)).count == 3


@pytest.mark.asyncio
async def test_memory_ids_are_kept_as_given(db: QdrantDB) -> None:
    memory_id = str(uuid.uuid4()).upper()
    await db.add_memories("org", "u", "a", [memory_id], ["user_u paints"], OBTAINED_AT)
    [(memory, _)] = await db.search_memory("paints", ORG, "org")
    assert memory.memory_id == memory_id  # the graph's id, not Qdrant's canonical form
    await db.delete_memory(memory_id)
    assert await stored(db) == {}


@pytest.mark.asyncio
async def test_delete_one_and_many(db: QdrantDB) -> None:
    ids = await add(db, "org", "u", "a", [f"user_u fact {i}" for i in range(5)])

    await db.delete_memory(ids[0])
    await db.delete_memories([ids[1], ids[2]])
    await db.delete_memories([])  # nothing to do
    await db.delete_memory(str(uuid.uuid4()))  # absent: not an error
    await db.delete_memories([ids[1], str(uuid.uuid4())])

    assert sorted(await stored(db)) == sorted(ids[3:])


@pytest.mark.asyncio
async def test_delete_all_of_a_user_leaves_the_rest(db: QdrantDB) -> None:
    await add(db, "org-1", "alice", "a", ["user_alice one", "user_alice two"])
    bob = await add(db, "org-1", "bob", "a", ["user_bob one"])
    alice_elsewhere = await add(db, "org-2", "alice", "a", ["user_alice three"])

    await db.delete_all_user_memories("org-1", "alice")

    assert sorted(await stored(db)) == sorted(bob + alice_elsewhere)


@pytest.mark.asyncio
async def test_delete_all_of_an_organisation_leaves_the_rest(db: QdrantDB) -> None:
    await add(db, "org-1", "alice", "a", ["user_alice one"])
    await add(db, "org-1", "bob", "b", ["user_bob one"])
    kept = await add(db, "org-2", "alice", "a", ["user_alice two"])

    await db.delete_all_organization_memories("org-1")

    assert sorted(await stored(db)) == kept


VALID_ID = str(uuid.uuid4())
BAD_CALLS: list[tuple[str, tuple[Any, ...], dict[str, Any]]] = [
    ("add_memories", ("", "u", "a", [VALID_ID], ["m"], OBTAINED_AT), {}),
    ("add_memories", ("o", "   ", "a", [VALID_ID], ["m"], OBTAINED_AT), {}),
    ("add_memories", ("o", "u", None, [VALID_ID], ["m"], OBTAINED_AT), {}),
    ("add_memories", ("o", "u", "a", [VALID_ID], ["m", "n"], OBTAINED_AT), {}),
    ("add_memories", ("o", "u", "a", [VALID_ID, str(uuid.uuid4())], ["m"], OBTAINED_AT), {}),
    ("add_memories", ("o", "u", "a", [VALID_ID, VALID_ID], ["m", "n"], OBTAINED_AT), {}),
    ("add_memories", ("o", "u", "a", ["not-a-uuid"], ["m"], OBTAINED_AT), {}),
    ("add_memories", ("o", "u", "a", [42], ["m"], OBTAINED_AT), {}),
    ("add_memories", ("o", "u", "a", VALID_ID, ["m"], OBTAINED_AT), {}),
    ("add_memories", ("o", "u", "a", [VALID_ID], "m", OBTAINED_AT), {}),
    ("add_memories", ("o", "u", "a", [VALID_ID], [""], OBTAINED_AT), {}),
    ("add_memories", ("o", "u", "a", [VALID_ID], [None], OBTAINED_AT), {}),
    ("add_memories", ("o", "u", "a", [VALID_ID], ["m"], "yesterday"), {}),
    ("add_memories", ("o", "u", "a", [VALID_ID], ["m"], datetime.now(timezone.utc)), {}),
    ("search_memory", ("", ORG, "o"), {}),
    ("search_memory", (None, ORG, "o"), {}),
    ("search_memory", ("q", ORG, ""), {}),
    ("search_memory", ("q", USER, "o"), {}),
    ("search_memory", ("q", USER, "o"), {"user_id": ""}),
    ("search_memory", ("q", ORG, "o"), {"agent_id": 5}),
    ("search_memory", ("q", "everyone", "o"), {}),
    ("search_memory", ("q", None, "o"), {}),
    ("search_memories", ([], ORG, "o"), {}),
    ("search_memories", ("q", ORG, "o"), {}),
    ("search_memories", (["q", " "], ORG, "o"), {}),
    ("search_memories", (["q"], USER, "o"), {"user_id": None}),
    ("delete_memory", ("",), {}),
    ("delete_memory", ("not-a-uuid",), {}),
    ("delete_memory", (None,), {}),
    ("delete_memories", (VALID_ID,), {}),
    ("delete_memories", ([VALID_ID, "nope"],), {}),
    ("delete_all_user_memories", ("o", ""), {}),
    ("delete_all_user_memories", (None, "u"), {}),
    ("delete_all_organization_memories", ("",), {}),
    ("delete_all_organization_memories", (["o"],), {}),
]


@pytest.mark.asyncio
@pytest.mark.parametrize(("method", "args", "kwargs"), BAD_CALLS)
async def test_bad_input_raises_value_error_and_changes_nothing(
    db: QdrantDB, method: str, args: tuple[Any, ...], kwargs: dict[str, Any]
) -> None:
    await add(db, "o", "u", "a", ["user_u grows tomatoes", "user_u bakes bread"])
    before = await stored(db)

    with pytest.raises(ValueError):
        await getattr(db, method)(*args, **kwargs)

    assert await stored(db) == before


@pytest.mark.parametrize(
    ("store_class", "client_argument", "client_class"),
    [(QdrantDB, "async_client", AsyncQdrantClient), (sync.QdrantDB, "client", QdrantClient)],
    ids=["async", "sync"],
)
def test_constructor_validates_its_arguments(
    store_class: type[Any], client_argument: str, client_class: type[Any]
) -> None:
    def embed(texts: list[str]) -> list[list[float]]:
        return [[1.0] for _ in texts]

    bad: list[dict[str, Any]] = [
        {"url": "http://localhost:6333", "location": ":memory:"},
        {client_argument: client_class(":memory:"), "path": "/tmp/x"},
        {client_argument: "not a client"},
        {"api_key": "secret"},
        {"collection_name": ""},
        {"embedding_function": embed},
        {"embedding_function": "not callable", "embedding_dimension": 3},
        {"embedding_dimension": 0},
        {"embedding_dimension": True},
        {"embedding_dimension": 8},  # Memora's models have their own
        {"embedding_function": HashingEmbedding(), "embed_models_cache_dir": "cache"},
        {"search_limit": 0},
        {"score_threshold": float("nan")},
    ]
    for kwargs in bad:
        with pytest.raises(ValueError):
            store_class(**kwargs)


def test_a_store_refuses_the_client_of_its_twin() -> None:
    with pytest.raises(ValueError, match="AsyncQdrantClient"):
        QdrantDB(QdrantClient(":memory:"))  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="QdrantClient"):
        sync.QdrantDB(AsyncQdrantClient(":memory:"))  # type: ignore[arg-type]


def test_the_sync_store_takes_a_sync_embedding_function() -> None:
    calls: list[list[str]] = []
    inner = HashingEmbedding(16)

    def embed(texts: list[str]) -> list[list[float]]:
        calls.append(list(texts))
        return inner.embed(texts)

    store = sync.QdrantDB(embedding_function=embed, embedding_dimension=16)
    store.setup()
    [memory_id] = new_ids(1)
    store.add_memories("o", "u", "a", [memory_id], ["user_u plays the cello"], OBTAINED_AT)
    hits = store.search_memory("cello", USER, "o", user_id="u")

    assert calls == [["user_u plays the cello"], ["cello"]]
    assert [memory.memory_id for memory, _ in hits] == [memory_id]
    store.close()


@pytest.mark.asyncio
async def test_setup_is_idempotent_and_creates_a_cosine_collection() -> None:
    client = AsyncQdrantClient(location=":memory:")
    store = QdrantDB(client, collection_name="memories", embedding_function=HashingEmbedding())
    await store.setup()
    [memory_id] = await add(store, "o", "u", "a", ["user_u knits"])
    await store.setup()

    info = await client.get_collection("memories")
    assert isinstance(info.config.params.vectors, models.VectorParams)
    assert info.config.params.vectors.size == DEFAULT_DIMENSION
    assert info.config.params.vectors.distance == models.Distance.COSINE
    assert list(await stored(store)) == [memory_id]
    await store.close()


@pytest.mark.asyncio
async def test_setup_refuses_a_collection_with_other_vectors() -> None:
    client = AsyncQdrantClient(location=":memory:")
    await QdrantDB(client, embedding_function=HashingEmbedding(64)).setup()
    with pytest.raises(ValueError, match="64"):
        await QdrantDB(client, embedding_function=HashingEmbedding(128)).setup()
    await client.close()


@pytest.mark.asyncio
async def test_folder_mode_persists_across_clients(tmp_path: Path) -> None:
    first = QdrantDB(path=tmp_path / "qdrant", embedding_function=HashingEmbedding())
    await first.setup()
    ids = await add(first, "o", "u", "a", ["user_u speaks Portuguese"])
    await first.close()

    second = QdrantDB(path=str(tmp_path / "qdrant"), embedding_function=HashingEmbedding())
    await second.setup()
    hits = await second.search_memory("Portuguese", USER, "o", user_id="u")
    assert [m.memory_id for m, _ in hits] == ids
    await second.close()


@pytest.mark.asyncio
async def test_a_folder_is_a_qdrant_edge_shard_per_collection(tmp_path: Path) -> None:
    folder = tmp_path / "qdrant"
    store = QdrantDB(path=folder, embedding_function=HashingEmbedding())
    await store.setup()
    assert isinstance(store.async_client, AsyncEdgeClient)
    assert (folder / SINGLE_VECTOR_COLLECTION_NAME / "edge_config.json").is_file()
    await store.close()


@pytest.mark.asyncio
async def test_a_folder_has_one_opener(tmp_path: Path) -> None:
    """A second store on an open folder, in this process or another, fails at once and
    says why; closing the first frees the folder."""
    folder = tmp_path / "qdrant"
    first = QdrantDB(path=folder, embedding_function=HashingEmbedding())
    await first.setup()
    with pytest.raises(FolderInUseError, match="already open"):
        QdrantDB(path=folder, embedding_function=HashingEmbedding())
    other = subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys; from memora_ogm.sync import QdrantDB; QdrantDB(path=sys.argv[1])",
            str(folder),
        ],
        capture_output=True,
        text=True,
    )
    assert other.returncode != 0 and "FolderInUseError" in other.stderr
    await first.close()
    second = QdrantDB(path=folder, embedding_function=HashingEmbedding())
    await second.setup()
    await second.close()


@pytest.mark.asyncio
async def test_a_local_mode_folder_names_the_command_that_moves_it(tmp_path: Path) -> None:
    """A folder written by qdrant-client's local mode (the engine of path= before Qdrant
    Edge) must not open as an empty store: every memory would look missing."""
    folder = tmp_path / "qdrant"
    client = QdrantClient(path=str(folder))
    client.create_collection(SINGLE_VECTOR_COLLECTION_NAME, vectors_config=vector_params(8))
    client.close()
    with pytest.raises(LocalModeFolderError) as raised:
        QdrantDB(path=folder, embedding_function=HashingEmbedding())
    assert f"memora-ogm vectors migrate --qdrant-path {folder}" in str(raised.value)
    assert sorted(path.name for path in folder.iterdir()) == [".lock", "collection", "meta.json"]


@pytest.mark.parametrize("name", ["", "a/b", "..", ".hidden"])
def test_a_folder_store_refuses_a_collection_name_that_is_no_folder_name(
    tmp_path: Path, name: str
) -> None:
    with pytest.raises(ValueError, match="collection_name|cannot name a folder"):
        QdrantDB(path=tmp_path / "qdrant", collection_name=name)
    assert not (tmp_path / "qdrant").exists()


@pytest.mark.parametrize("path", [123, ""])
def test_a_path_that_is_no_folder_path_is_refused(path: Any) -> None:
    with pytest.raises(ValueError, match="`path` must be a folder's path"):
        QdrantDB(path=path)


def counting_embedding(
    calls: list[list[str]], dimension: int
) -> Callable[[list[str]], Awaitable[list[list[float]]]]:
    inner = HashingEmbedding(dimension)

    async def embed(texts: list[str]) -> list[list[float]]:
        calls.append(list(texts))
        return inner.embed(texts)

    return embed


@pytest.mark.asyncio
async def test_custom_embedding_function_is_used_in_batches() -> None:
    calls: list[list[str]] = []
    store = QdrantDB(embedding_function=counting_embedding(calls, 32), embedding_dimension=32)
    await store.setup()
    ids = await add(store, "o", "u", "a", ["user_u likes chess", "user_u likes go"])
    batch = await store.search_memories(["chess", "go"], ORG, "o")

    assert calls == [["user_u likes chess", "user_u likes go"], ["chess", "go"]]
    assert [results[0][0].memory_id for results in batch] == ids
    await store.close()


@pytest.mark.asyncio
async def test_a_faulty_embedding_function_writes_nothing() -> None:
    async def wrong_size(texts: list[str]) -> list[list[float]]:
        return [[0.5] * 7 for _ in texts]

    async def too_few(texts: list[str]) -> list[list[float]]:
        return [[0.5] * 8]

    async def not_finite(texts: list[str]) -> list[list[float]]:
        return [[float("inf")] * 8 for _ in texts]

    async def ragged(texts: list[str]) -> list[list[float]]:
        return [[0.5] * 8, [0.5] * 9]

    async def not_numbers(texts: list[str]) -> list[list[float]]:
        return [["a"] * 8 for _ in texts]  # type: ignore[list-item]

    client = AsyncQdrantClient(location=":memory:")
    await QdrantDB(client, embedding_function=HashingEmbedding(8)).setup()
    for embed in (wrong_size, too_few, not_finite, ragged, not_numbers):
        store = QdrantDB(client, embedding_function=embed, embedding_dimension=8)
        with pytest.raises(ValueError, match="embedding function"):
            await store.add_memories("o", "u", "a", new_ids(2), ["x", "y"], OBTAINED_AT)
        assert await stored(store) == {}
    await client.close()


@pytest.mark.asyncio
async def test_an_embedding_error_propagates_unchanged() -> None:
    async def offline_api(texts: list[str]) -> list[list[float]]:
        raise ConnectionError("embedding service unreachable")

    store = QdrantDB(embedding_function=offline_api, embedding_dimension=8)
    await store.setup()
    with pytest.raises(ConnectionError, match="unreachable"):
        await store.search_memory("anything", MemorySearchScope.ORGANIZATION, "o")
    await store.close()


class FailingUpsertClient(AsyncQdrantClient):
    """A real local client whose n-th upsert fails, as a network error would."""

    def __init__(self, fail_on_call: int) -> None:
        super().__init__(location=":memory:")
        self.fail_on_call = fail_on_call
        self.upserts = 0

    async def upsert(self, *args: Any, **kwargs: Any) -> models.UpdateResult:
        self.upserts += 1
        if self.upserts == self.fail_on_call:
            raise ConnectionError("injected upsert failure")
        return await super().upsert(*args, **kwargs)


@pytest.mark.asyncio
async def test_an_add_failing_part_way_removes_what_it_wrote() -> None:
    client = FailingUpsertClient(fail_on_call=3)
    store = QdrantDB(client, embedding_function=HashingEmbedding())
    await store.setup()
    kept = await add(store, "o", "u", "a", ["user_u was here before"])  # upsert 1

    with pytest.raises(ConnectionError):
        # 600 points go in batches: upsert 2 succeeds, upsert 3 fails.
        await add(store, "o", "u", "a", [f"user_u fact {i}" for i in range(600)])

    assert client.upserts == 3
    assert list(await stored(store)) == kept
    await store.close()


def test_embedding_is_deterministic_and_normalised() -> None:
    embedding = HashingEmbedding()
    texts = ["User_ABC likes Green tea", "user_abc likes green TEA", "", "日本語のテキスト"]
    first, again = embedding.embed(texts), embedding.embed(texts)

    assert first == again
    assert first[0] == first[1]  # case-insensitive
    assert first[2] == [0.0] * DEFAULT_DIMENSION
    for vector in (first[0], first[3]):
        assert len(vector) == DEFAULT_DIMENSION
        assert sum(value * value for value in vector) == pytest.approx(1.0)


def test_embedding_is_the_same_in_another_process() -> None:
    """blake2b, not Python's per-process salted hash: vectors survive restarts."""
    text = "user_x keeps bees and sells honey at the market"
    script = (
        "import json, sys; from memora_ogm.vector_db.embedding import HashingEmbedding; "
        "print(json.dumps(HashingEmbedding().embed([sys.argv[1]])[0]))"
    )
    env = {**os.environ, "PYTHONHASHSEED": "12345"}
    root = str(Path(__file__).resolve().parents[1])
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [root, env.get("PYTHONPATH")]))
    output = subprocess.run(
        [sys.executable, "-c", script, text], env=env, capture_output=True, text=True, check=True
    ).stdout
    assert json.loads(output) == HashingEmbedding().embed([text])[0]


@pytest.mark.asyncio
async def test_works_offline(monkeypatch: pytest.MonkeyPatch) -> None:
    """The default store and embedding open no connection at all."""

    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("network access attempted")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)
    store = QdrantDB(embedding_function=HashingEmbedding())
    await store.setup()
    ids = await add(store, "o", "u", "a", ["user_u repairs old clocks"])
    hits = await store.search_memory("clock repair", USER, "o", user_id="u")
    assert [m.memory_id for m, _ in hits] == ids
    await store.close()
