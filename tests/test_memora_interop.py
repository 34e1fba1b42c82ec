"""memora-ogm's ``QdrantDB`` and memora-core 0.3.1's own, on one collection, both ways.

Memora's store runs for real, in its own virtual environment with its own pins
(``memora_core_venv.py``), on the same offline stand-in models (filed where its fastembed 0.5
looks for them). The two share a Qdrant reached over REST (``qdrant_standin``, Qdrant's API
over qdrant-client's engine), as a Memora deployment shares its Qdrant server. Not a
local-mode folder: one written by qdrant-client 1.12 does open in 1.20 and back, but
1.12.1's local mode cannot run Memora's hybrid query at all (``limit + offset`` with no
offset: ``TypeError``), so Memora's own store only ever searched a server.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from fastembed_standins import build_cache
from memora.vector_db import base as memora_base
from memora_core_venv import drive, venv_python
from qdrant_client import models
from qdrant_standin import qdrant_standin

from memora_ogm.vector_db.hybrid import HybridEmbedding
from memora_ogm.vector_db.qdrant import QdrantDB

#: Memora's own enum, which memora-ogm's store takes by value (typed as memora-ogm's).
ORGANIZATION: Any = memora_base.MemorySearchScope.ORGANIZATION
USER: Any = memora_base.MemorySearchScope.USER
DENSE = "fast-paraphrase-multilingual-minilm-l12-v2"
QUERIES = ["where does she live", "pizza", "music"]
#: As Memora's agent writes it: ``interaction_date.isoformat()`` of ``datetime.now()``, naive.
NAIVE_AT = "2024-06-01T08:30:00.123456"
ANN = ["4f1c2e3a-1b2c-4d5e-8f90-0a1b2c3d4e5f", "5a2d3f4b-2c3d-4e5f-9a01-1b2c3d4e5f60"]
BOB = ["6b3e4a5c-3d4e-4f60-8b12-2c3d4e5f6071"]
OTHER = ["7c4f5b6d-4e5f-4071-9c23-3d4e5f607182"]
ANN_TEXTS = ["user_ann resides in Oslo", "user_ann likes pizza"]
OURS = "8d5a6c7e-5f60-4182-8d34-4e5f60718293"


class Memora:
    """memora-core's own store on one Qdrant, driven in its environment."""

    def __init__(self, python: Path, url: str, cache_dir: Path) -> None:
        self.python, self.url, self.cache_dir = python, url, cache_dir

    def run(self, *steps: list[Any]) -> list[Any]:
        request = {"op": "run", "url": self.url, "cache_dir": str(self.cache_dir)}
        answer: list[Any] = drive(self.python, {**request, "steps": [list(s) for s in steps]})
        return answer


@pytest.fixture(scope="module")
def memora_python() -> Path:
    return venv_python()


@pytest.fixture(scope="module")
def memora_models(memora_python: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The stand-ins, filed where memora-core's fastembed 0.5 looks for Memora's models."""
    sources = drive(memora_python, {"op": "sources"})
    folder = tmp_path_factory.mktemp("fastembed-0.5")
    return build_cache(folder, {model: tuple(where) for model, where in sources.items()})


@pytest.fixture
def memora(memora_python: Path, memora_models: Path) -> Iterator[Memora]:
    with qdrant_standin() as (url, _):
        yield Memora(memora_python, url, memora_models)


def as_rows(found: list[list[tuple[Any, float]]]) -> list[list[list[Any]]]:
    """Our results in the driver's form, to compare with Memora's own."""
    return [
        [
            [m.memory_id, m.memory, m.org_id, m.user_id, m.agent_id, m.obtained_at.isoformat(), s]
            for m, s in hits
        ]
        for hits in found
    ]


def same_results(ours: list[list[list[Any]]], memoras: list[list[list[Any]]]) -> None:
    """Same memories in the same order with the same scores; Memora's naive ``obtained_at``
    is read as UTC here (the graph's rule), so only that field differs."""
    assert [[row[:5] for row in hits] for hits in ours] == [
        [row[:5] for row in hits] for hits in memoras
    ]
    assert [row[6] for hits in ours for row in hits] == pytest.approx(
        [row[6] for hits in memoras for row in hits]
    )


@pytest.mark.asyncio
async def test_memora_writes_memora_ogm_reads_extends_and_deletes(memora: Memora) -> None:
    *_, memoras, memoras_user = memora.run(
        ["setup"],
        ["add", "org", "ann", "a1", ANN, ANN_TEXTS, NAIVE_AT],
        ["add", "org", "bob", "a2", BOB, ["user_bob likes live music"], NAIVE_AT],
        ["add", "other", "ann", "a1", OTHER, ["user_ann lives in Berlin"], NAIVE_AT],
        ["search", QUERIES, "organization", "org", None, None],
        ["search", QUERIES, "user", "org", "ann", None],
    )  # fmt: skip
    assert [[row[0] for row in hits] for hits in memoras] == [[BOB[0], ANN[0]], [ANN[1]], [BOB[0]]]

    store = QdrantDB(url=memora.url)
    await store.setup()
    # The very points Memora wrote: payload, and the vectors this store computes.
    [record] = await store.async_client.retrieve(
        store.collection_name, [ANN[0]], with_payload=True, with_vectors=True
    )
    assert record.payload == {
        "document": "user_ann resides in Oslo",
        "org_id": "org",
        "org_user_id": "org:ann",
        "user_id": "ann",
        "agent_id": "a1",
        "obtained_at": NAIVE_AT,
    }
    [ours] = HybridEmbedding().embed_documents(["user_ann resides in Oslo"])
    assert isinstance(record.vector, dict)
    dense = record.vector[DENSE]
    assert isinstance(dense, list) and np.allclose(
        dense, ours.dense, atol=1e-6
    )  # pooled as fastembed 0.5
    sparse = record.vector["fast-sparse-splade_pp_en_v1"]
    assert isinstance(sparse, models.SparseVector) and sparse.indices == ours.sparse.indices

    # Search: the same results as Memora's own store, with Memora's own scope enum.
    same_results(as_rows(await store.search_memories(QUERIES, ORGANIZATION, "org")), memoras)
    user_scope = await store.search_memories(QUERIES, USER, "org", "ann")
    same_results(as_rows(user_scope), memoras_user)
    [[(memory, _), *_], *_] = user_scope
    assert memory.obtained_at.isoformat() == NAIVE_AT + "+00:00"

    # Extend and delete; Memora's store sees it.
    await store.add_memories(
        "org", "ann", "a1", [OURS], ["user_ann moved to Paris"], "2024-07-01T10:00:00+02:00"
    )
    await store.delete_memory(ANN[1])
    ids, [[first, *_]] = memora.run(
        ["ids"], ["search", ["where does she live"], "user", "org", "ann", None]
    )
    assert ids == sorted([ANN[0], *BOB, *OTHER, OURS])
    assert first[:6] == [
        OURS,
        "user_ann moved to Paris",
        "org",
        "ann",
        "a1",
        "2024-07-01T10:00:00+02:00",
    ]

    await store.delete_all_user_memories("org", "bob")
    assert memora.run(["ids"])[0] == sorted([ANN[0], *OTHER, OURS])
    await store.delete_all_organization_memories("other")
    assert memora.run(["ids"])[0] == sorted([ANN[0], OURS])
    await store.close()


@pytest.mark.asyncio
async def test_memora_ogm_writes_memora_reads_extends_and_deletes(memora: Memora) -> None:
    store = QdrantDB(url=memora.url)
    await store.setup()
    at = "2024-06-01T08:30:00+00:00"
    await store.add_memories(
        "org", "ann", "a1", ANN, ["user_ann resides in Oslo", "user_ann likes pizza"], at
    )
    await store.add_memories("org", "bob", "a2", BOB, ["user_bob likes live music"], at)
    await store.add_memories("other", "ann", "a1", OTHER, ["user_ann lives in Berlin"], at)
    ours = as_rows(await store.search_memories(QUERIES, ORGANIZATION, "org"))
    ours_user = as_rows(await store.search_memories(QUERIES, USER, "org", "ann"))

    # Memora's store creates nothing new (its setup keeps the collection) and finds the same.
    _, memoras, memoras_user = memora.run(
        ["setup"],
        ["search", QUERIES, "organization", "org", None, None],
        ["search", QUERIES, "user", "org", "ann", None],
    )
    same_results(ours, memoras)
    assert [row[5] for hits in memoras for row in hits] == [at] * 4
    same_results(ours_user, memoras_user)
    assert [[row[0] for row in hits] for hits in ours_user] == [[ANN[0]], [ANN[1]], []]

    # Memora's store extends it (its add checks the collection's vectors first) ...
    memora.run(["add", "org", "ann", "a1", [OURS], ["user_ann walks the dog"], NAIVE_AT])
    [[(dog, _)]] = await store.search_memories(["dog"], USER, "org", "ann")
    assert (dog.memory_id, dog.memory, dog.obtained_at.isoformat()) == (
        OURS,
        "user_ann walks the dog",
        NAIVE_AT + "+00:00",
    )
    # ... and deletes by memory, user and organisation, seen by this store.
    memora.run(["delete_memory", ANN[1]], ["delete_user", "org", "bob"])
    records, _ = await store.async_client.scroll(store.collection_name, limit=100)
    assert sorted(str(r.id) for r in records) == sorted([ANN[0], *OTHER, OURS])
    memora.run(["delete_organization", "org"])
    records, _ = await store.async_client.scroll(store.collection_name, limit=100)
    assert [str(r.id) for r in records] == OTHER
    sparse = (await store.async_client.get_collection(store.collection_name)).config.params
    assert sparse.sparse_vectors is not None
    assert [(name, p.modifier) for name, p in sparse.sparse_vectors.items()] == [
        ("fast-sparse-splade_pp_en_v1", None)
    ]
    await store.close()
