"""QdrantDB's default: Memora's models through fastembed, Memora's collection, hybrid RRF search.

fastembed's own code runs on the offline stand-ins of ``fastembed_standins`` (installed for
the whole run by ``conftest.py``): dense search knows the stand-in's synonyms
(``lives``/``resides``/``home``), sparse search only shared words.
"""

from __future__ import annotations

import os
import select
import signal
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import pytest_asyncio
from qdrant_client import AsyncQdrantClient, models
from sync_adapter import AwaitableTwin

from memora_ogm import sync
from memora_ogm._async.edge import AsyncEdgeClient
from memora_ogm.vector_db import hybrid
from memora_ogm.vector_db.base import MemorySearchScope
from memora_ogm.vector_db.embedding import HashingEmbedding
from memora_ogm.vector_db.hybrid import HybridEmbedding, HybridVectors
from memora_ogm.vector_db.qdrant import (
    MEMORA_COLLECTION_NAME,
    SINGLE_VECTOR_COLLECTION_NAME,
    EmbedderUnavailableError,
    QdrantDB,
)

ORG = MemorySearchScope.ORGANIZATION
USER = MemorySearchScope.USER
OBTAINED_AT = "2024-06-01T08:30:00+00:00"
DENSE = "fast-paraphrase-multilingual-minilm-l12-v2"
SPARSE = "fast-sparse-splade_pp_en_v1"


def new_ids(count: int) -> list[str]:
    return [str(uuid.uuid4()) for _ in range(count)]


@pytest_asyncio.fixture(params=["async", "sync", "async-edge", "sync-edge"])
async def db(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[QdrantDB]:
    """The default store, async or its sync twin dressed as async, in memory (qdrant-client's
    local mode) or in a folder (Qdrant Edge)."""
    where: dict[str, Any] = {}
    engine: type = AsyncQdrantClient
    if request.param.endswith("-edge"):
        where, engine = {"path": tmp_path / "qdrant"}, AsyncEdgeClient
    store: Any = (
        QdrantDB(**where)
        if request.param.startswith("async")
        else AwaitableTwin(sync.QdrantDB(**where), QdrantDB, {"async_client": ("client", engine)})
    )
    await store.setup()
    yield store
    await store.close()


async def points_of(db: QdrantDB) -> dict[str, models.Record]:
    records, _ = await db.async_client.scroll(
        db.collection_name, limit=1000, with_payload=True, with_vectors=True
    )
    return {str(record.id): record for record in records}


@pytest.mark.asyncio
async def test_the_default_collection_is_memoras_layout(db: QdrantDB) -> None:
    ids = new_ids(2)
    await db.add_memories(
        "org-1", "u-1", "agent-1", ids, ["user_u-1 resides in Oslo", "user_u-1 likes pizza"],
        "2024-06-01T08:30:00",
    )  # fmt: skip

    assert db.collection_name == MEMORA_COLLECTION_NAME == "memory_collection_v0_2"
    params = (await db.async_client.get_collection(db.collection_name)).config.params
    assert isinstance(params.vectors, dict) and set(params.vectors) == {DENSE}
    assert (params.vectors[DENSE].size, params.vectors[DENSE].distance) == (
        384,
        models.Distance.COSINE,
    )
    assert set(params.sparse_vectors or {}) == {SPARSE}
    points = await points_of(db)
    assert set(points) == set(ids)
    assert points[ids[0]].payload == {
        "document": "user_u-1 resides in Oslo",
        "org_id": "org-1",
        "org_user_id": "org-1:u-1",
        "user_id": "u-1",
        "agent_id": "agent-1",
        "obtained_at": "2024-06-01T08:30:00+00:00",  # naive is UTC, as in the graph
    }
    vectors = points[ids[0]].vector
    assert isinstance(vectors, dict) and set(vectors) == {DENSE, SPARSE}
    [expected] = HybridEmbedding().embed_documents(["user_u-1 resides in Oslo"])
    dense = vectors[DENSE]
    assert isinstance(dense, list)
    assert np.allclose(dense, np.array(expected.dense) / np.linalg.norm(expected.dense))
    sparse = vectors[SPARSE]
    assert isinstance(sparse, models.SparseVector)
    assert (sparse.indices, sparse.values) == (expected.sparse.indices, expected.sparse.values)


def test_the_dense_model_is_pooled_by_its_first_token_as_fastembed_0_5_did() -> None:
    """Memora's vectors come from fastembed 0.5, which took the ``[CLS]`` token's state and
    normalised it; fastembed 0.6 and later mean-pool this model, which would not match."""
    from fastembed import TextEmbedding

    texts = ["user_a resides in Oslo", "she walks the dog"]
    [ours, _] = HybridEmbedding().embed_queries(texts)
    mean_pooled = next(iter(TextEmbedding(hybrid.MEMORA_DENSE_MODEL).embed(texts[:1])))
    assert np.isclose(np.linalg.norm(ours.dense), 1.0)
    cosine = float(np.dot(ours.dense, mean_pooled) / np.linalg.norm(mean_pooled))
    assert 0.5 < cosine < 0.999  # the same model, pooled otherwise


@pytest.mark.asyncio
async def test_hybrid_search_finds_synonyms_and_keeps_tenants_apart(db: QdrantDB) -> None:
    oslo, pizza = new_ids(2)
    await db.add_memories(
        "org", "ann", "a1", [oslo, pizza], ["user_ann resides in Oslo", "user_ann likes pizza"],
        OBTAINED_AT,
    )  # fmt: skip
    [colleague] = new_ids(1)
    await db.add_memories("org", "bob", "a2", [colleague], ["user_bob lives in Paris"], OBTAINED_AT)
    [stranger] = new_ids(1)
    await db.add_memories(
        "other", "ann", "a1", [stranger], ["user_ann lives in Berlin"], OBTAINED_AT
    )

    user_hits = await db.search_memory("where does she live", USER, "org", "ann")
    assert [memory.memory_id for memory, _ in user_hits] == [oslo]  # a synonym: dense
    db.score_threshold = None  # Memora's 0.35 keeps only the first of one ranking
    org_hits = await db.search_memory("where does she live", ORG, "org", "ann")
    assert {memory.memory_id for memory, _ in org_hits} == {oslo, colleague}  # not pizza
    agent_hits = await db.search_memory("where does she live", ORG, "org", agent_id="a2")
    assert [memory.memory_id for memory, _ in agent_hits] == [colleague]
    db.score_threshold = 0.35
    [memory, score] = user_hits[0]
    assert (memory.org_id, memory.user_id, memory.agent_id, memory.memory) == (
        "org", "ann", "a1", "user_ann resides in Oslo",
    )  # fmt: skip
    assert memory.obtained_at.isoformat() == OBTAINED_AT and score == 0.5  # first of one list
    batch = await db.search_memories(["pizza", "where does she live"], USER, "org", "ann")
    assert [[m.memory_id for m, _ in hits] for hits in batch] == [[pizza], [oslo]]


@pytest.mark.asyncio
async def test_rrf_fusion_orders_by_both_rankings(db: QdrantDB) -> None:
    """Dense ranks home, Oslo, music; sparse ranks only music (it shares "live"). RRF
    (1/(2 + rank), summed) puts music first, and Memora's 0.35 drops Oslo (1/3)."""
    home, oslo, music, pizza = new_ids(4)
    texts = {
        home: "user_x lives at home in a house",
        oslo: "user_x resides in Oslo",
        music: "user_x likes live music",
        pizza: "user_x likes pizza",
    }
    await db.add_memories("org", "x", "a", list(texts), list(texts.values()), OBTAINED_AT)
    [query] = HybridEmbedding().embed_queries(["where does she live"])

    async def ranking(vector: Any, using: str) -> list[str]:
        request = models.QueryRequest(query=vector, using=using, limit=10)
        [response] = await db.async_client.query_batch_points(db.collection_name, [request])
        return [str(point.id) for point in response.points if point.score > 0.4]

    assert await ranking(query.dense, DENSE) == [home, oslo, music]
    assert await ranking(query.sparse, SPARSE) == [music]
    found = await db.search_memory("where does she live", ORG, "org")
    assert [memory.memory_id for memory, _ in found] == [music, home]
    assert [score for _, score in found] == pytest.approx([1 / 4 + 1 / 2, 1 / 2])
    db.score_threshold = None
    everything = await db.search_memory("where does she live", ORG, "org")
    assert [memory.memory_id for memory, _ in everything] == [music, home, oslo]


@pytest.mark.asyncio
async def test_deletes_by_memory_user_and_organisation(db: QdrantDB) -> None:
    ann, bob, other = new_ids(2), new_ids(1), new_ids(1)
    await db.add_memories(
        "org", "ann", "a", ann, ["user_ann likes pizza", "user_ann eats pasta"], OBTAINED_AT
    )
    await db.add_memories("org", "bob", "a", bob, ["user_bob likes pizza"], OBTAINED_AT)
    # An organisation id with ":" makes org_user_id ambiguous; the deletes stay exact.
    await db.add_memories("org:ann", "x", "a", other, ["user_x likes pizza"], OBTAINED_AT)

    await db.delete_memory(ann[0])
    assert set(await points_of(db)) == {ann[1], *bob, *other}
    await db.delete_all_user_memories("org", "ann")
    assert set(await points_of(db)) == {*bob, *other}
    await db.delete_all_organization_memories("org")
    assert set(await points_of(db)) == set(other)
    await db.delete_memories(other)
    assert await points_of(db) == {}


@pytest.mark.asyncio
async def test_each_batch_is_embedded_once_off_the_event_loop() -> None:
    store = QdrantDB()
    await store.setup()
    assert store.hybrid_embedding is not None
    embedding, calls = store.hybrid_embedding, []

    class Recording(HybridEmbedding):
        def embed_documents(self, texts: list[str]) -> list[HybridVectors]:
            calls.append(("documents", len(texts), threading.get_ident()))
            return embedding.embed_documents(texts)

        def embed_queries(self, texts: list[str]) -> list[HybridVectors]:
            calls.append(("queries", len(texts), threading.get_ident()))
            return embedding.embed_queries(texts)

    store.hybrid_embedding = Recording(embedding.cache_dir)
    await store.add_memories(
        "o", "u", "a", new_ids(3), ["likes pizza", "eats pasta", "cat"], OBTAINED_AT
    )
    await store.search_memories(["pizza", "pasta"], ORG, "o")
    loop_thread = threading.get_ident()
    assert [(kind, count) for kind, count, _ in calls] == [("documents", 3), ("queries", 2)]
    assert all(thread != loop_thread for _, _, thread in calls)
    await store.close()


@pytest.mark.asyncio
async def test_a_missing_model_says_so_and_names_the_offline_choice(tmp_path: Path) -> None:
    store = QdrantDB(embed_models_cache_dir=tmp_path / "empty")
    await store.setup()
    with pytest.raises(EmbedderUnavailableError) as raised:
        await store.add_memories("o", "u", "a", new_ids(1), ["likes pizza"], OBTAINED_AT)
    message = str(raised.value)
    assert hybrid.MEMORA_DENSE_MODEL in message and "embed_models_cache_dir" in message
    assert "embedding_function=HashingEmbedding()" in message
    assert (await store.async_client.count(store.collection_name)).count == 0
    await store.close()


@pytest.mark.asyncio
async def test_the_single_vector_layout_stays_readable(tmp_path: Path) -> None:
    """A folder written before Memora's models were the default opens with the hashing
    embedder; left at the default, the store refuses rather than search an empty collection."""
    folder = tmp_path / "qdrant"
    earlier = QdrantDB(path=folder, embedding_function=HashingEmbedding())
    [memory_id] = new_ids(1)
    await earlier.setup()
    await earlier.add_memories(
        "o", "u", "a", [memory_id], ["user_u sails on Lake Constance"], OBTAINED_AT
    )
    await earlier.close()

    default = QdrantDB(path=folder)
    with pytest.raises(ValueError, match="embedding_function=HashingEmbedding()"):
        await default.setup()
    assert not await default.async_client.collection_exists(MEMORA_COLLECTION_NAME)
    await default.close()

    reopened = QdrantDB(path=folder, embedding_function=HashingEmbedding())
    await reopened.setup()
    assert reopened.collection_name == SINGLE_VECTOR_COLLECTION_NAME
    [(found, _)] = await reopened.search_memory("sails on a lake", ORG, "o")
    assert found.memory_id == memory_id
    # Each layout's store refuses the other's collection, saying how to open it.
    wrong = QdrantDB(reopened.async_client, collection_name=SINGLE_VECTOR_COLLECTION_NAME)
    with pytest.raises(
        ValueError, match="single-vector layout, open it with the embedding_function"
    ):
        await wrong.setup()
    await QdrantDB(reopened.async_client, collection_name=MEMORA_COLLECTION_NAME).setup()
    hashing = QdrantDB(
        reopened.async_client, MEMORA_COLLECTION_NAME, embedding_function=HashingEmbedding()
    )
    with pytest.raises(ValueError, match="opened without an embedding_function"):
        await hashing.setup()
    await reopened.close()


def test_vector_names_follow_qdrant_client_fastembed_naming() -> None:
    assert (hybrid.DENSE_VECTOR, hybrid.SPARSE_VECTOR) == (DENSE, SPARSE)


def test_without_fastembed_the_error_names_the_install_and_the_offline_choice() -> None:
    """fastembed made unimportable (as if not installed) in a fresh interpreter."""
    script = (
        "import sys; sys.modules['fastembed'] = None\n"
        "from memora_ogm.vector_db.hybrid import HybridEmbedding\n"
        "HybridEmbedding().embed_queries(['pizza'])\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script],
        cwd=Path(__file__).resolve().parent.parent,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 1
    last = done.stderr.strip().splitlines()[-1]
    assert last.startswith("memora_ogm.errors.EmbedderUnavailableError: ")
    assert "pip install fastembed" in last and "embedding_function=HashingEmbedding()" in last


def test_a_forked_child_embeds_with_the_models_its_parent_loaded() -> None:
    """A prefork server (gunicorn --preload) loads the models in the parent: each child
    embeds with the inherited ONNX sessions, a batch large enough for their thread pools,
    and gets the parent's vectors."""
    embedding = HybridEmbedding()
    texts = ["user_a resides in Oslo", "she walks the dog"]
    parent = embedding.embed_documents(texts)
    reading, writing = os.pipe()
    child = os.fork()
    if child == 0:  # pragma: no cover - the child reports through the pipe
        code = 1
        try:
            vectors = embedding.embed_documents(texts + ["a house in Paris with a cat"] * 2_000)
            code = 0 if vectors[:2] == parent else 2
        finally:
            os.write(writing, bytes([code]))
            os._exit(0)
    os.close(writing)
    try:
        ready = select.select([reading], [], [], 60)[0]
        if not ready:
            os.kill(child, signal.SIGKILL)
        assert ready, "the child did not embed within 60 s"
        assert os.read(reading, 1) == bytes([0]), "the child's vectors differ from the parent's"
    finally:
        os.close(reading)
        os.waitpid(child, 0)


def _first_embedding_without_models(
    env: dict[str, str],
) -> tuple[subprocess.CompletedProcess[str], float]:
    """A fresh interpreter whose store embeds once with no model in its cache and the hub
    not asked to stay offline: its outcome, and how long it took."""
    script = (
        "import uuid\n"
        "from memora_ogm.sync import QdrantDB\n"
        "store = QdrantDB()\n"
        "print(store.hybrid_embedding.cache_dir, flush=True)\n"
        "store.setup()\n"
        "store.add_memories('o', 'u', 'a', [str(uuid.uuid4())], ['likes pizza'], "
        f"{OBTAINED_AT!r})\n"
    )
    quiet = {
        k: v for k, v in os.environ.items() if k not in ("HF_HUB_OFFLINE", "FASTEMBED_CACHE_PATH")
    }
    started = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-c", script],
        cwd=Path(__file__).resolve().parent.parent,
        env={**quiet, **env},
        capture_output=True,
        text=True,
        timeout=120,
    )
    return done, time.monotonic() - started


def test_an_unresolvable_model_hub_fails_the_first_embedding_at_once(tmp_path: Path) -> None:
    """No cached model and a hub whose name cannot resolve (``.invalid``, RFC 6761): the
    error comes in seconds, not after fastembed's retries of 3, 9 and 27 s, and says why.
    The models' folder is the user's cache folder, not the system's temporary one."""
    home = tmp_path / "home"
    done, seconds = _first_embedding_without_models(
        {"HOME": str(home), "XDG_CACHE_HOME": "", "HF_ENDPOINT": "https://hub.memora-ogm.invalid"}
    )
    assert done.returncode == 1, done.stderr[-2000:]
    assert done.stdout.strip() == str(home / ".cache" / "memora-ogm" / "fastembed")
    last = done.stderr.strip().splitlines()[-1]
    assert last.startswith("memora_ogm.errors.EmbedderUnavailableError: ")
    assert "'hub.memora-ogm.invalid' does not resolve" in last
    assert "embedding_function=HashingEmbedding()" in last
    assert seconds < 15, seconds


def test_the_cache_folder_follows_xdg_and_the_callers_choice_wins(tmp_path: Path) -> None:
    assert hybrid.HybridEmbedding(tmp_path / "mine").cache_dir == str(tmp_path / "mine")
    quiet = {k: v for k, v in os.environ.items() if k != "FASTEMBED_CACHE_PATH"}
    done = subprocess.run(
        [sys.executable, "-c", "from memora_ogm.vector_db.hybrid import HybridEmbedding as H\n"
         "print(H().cache_dir)"],
        env={**quiet, "XDG_CACHE_HOME": str(tmp_path / "xdg")},
        capture_output=True, text=True, timeout=60, check=True,
    )  # fmt: skip
    assert done.stdout.strip() == str(tmp_path / "xdg" / "memora-ogm" / "fastembed")
