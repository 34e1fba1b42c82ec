"""``memora-ogm vectors migrate``: a folder of qdrant-client's local mode (what
``QdrantDB(path=)`` wrote before it embedded Qdrant Edge) moved into Edge, in both layouts,
with real engines on both sides."""

from __future__ import annotations

import random
import uuid
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from qdrant_client import QdrantClient, models

from memora_ogm.cli import main
from memora_ogm.cli.stores import migrate
from memora_ogm.sync import QdrantDB
from memora_ogm.vector_db import layouts
from memora_ogm.vector_db.embedding import HashingEmbedding
from memora_ogm.vector_db.hybrid import DENSE_DIMENSION, DENSE_VECTOR, SPARSE_VECTOR
from memora_ogm.vector_db.qdrant_common import TENANT_HNSW
from memora_ogm.vector_db.scope import MemorySearchScope

OBTAINED_AT = "2024-06-01T08:30:00+00:00"


def memora_vectors(rng: random.Random) -> layouts.Embedded:
    indices = sorted(rng.sample(range(30_000), 5))
    return {
        DENSE_VECTOR: [rng.uniform(-1, 1) for _ in range(DENSE_DIMENSION)],
        SPARSE_VECTOR: models.SparseVector(
            indices=indices, values=[rng.uniform(0.1, 2) for _ in indices]
        ),
    }


def write_local_mode(folder: Path, layout: layouts.Layout, texts: list[str]) -> None:
    """A collection as the earlier ``QdrantDB(path=folder)`` wrote it, through local mode."""
    rng = random.Random(7)
    client = QdrantClient(path=str(folder))
    try:
        client.create_collection(
            layout.default_collection, hnsw_config=TENANT_HNSW, **layout.create_arguments()
        )
        ids = [str(uuid.UUID(int=rng.getrandbits(128))) for _ in texts]
        if isinstance(layout, layouts.SingleVectorLayout):
            vectors: list[layouts.Embedded] = list(HashingEmbedding(layout.dimension).embed(texts))
        else:
            vectors = [memora_vectors(rng) for _ in texts]
        half = len(texts) // 2
        for users, part in (("u1", slice(None, half)), ("u2", slice(half, None))):
            tenant = layouts.tenant("o", users, "a", OBTAINED_AT)
            points = layout.points(tenant, ids[part], ids[part], texts[part], vectors[part])
            client.upsert(layout.default_collection, points)
    finally:
        client.close()


def points_of(folder: Path, collection: str) -> dict[str, tuple[dict[str, Any], Any]]:
    client = QdrantClient(path=str(folder))
    try:
        records, _ = client.scroll(collection, limit=1000, with_payload=True, with_vectors=True)
        return {str(record.id): (record.payload or {}, record.vector) for record in records}
    finally:
        client.close()


def same_vectors(left: Any, right: Any) -> bool:
    if isinstance(left, dict):
        return set(left) == set(right) and all(same_vectors(left[k], right[k]) for k in left)
    if isinstance(left, models.SparseVector):
        return left.indices == right.indices and left.values == pytest.approx(right.values)
    # Cosine: Edge keeps the vector normalised, local mode as given.
    first, second = (np.asarray(vector) / np.linalg.norm(vector) for vector in (left, right))
    return bool(np.allclose(first, second, atol=1e-6))


def test_both_layouts_move_with_their_points_payloads_and_vectors(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = tmp_path / "qdrant"
    memora_texts = [f"user likes dish {n}" for n in range(23)]
    single_texts = [f"user_u sails boat {n}" for n in range(17)]
    write_local_mode(folder, layouts.MemoraLayout(), memora_texts)
    write_local_mode(folder, layouts.SingleVectorLayout(64), single_texts)
    before = {
        name: points_of(folder, name)
        for name in (layouts.MEMORA_COLLECTION_NAME, layouts.SINGLE_VECTOR_COLLECTION_NAME)
    }

    done = migrate(folder, page=5)  # several pages of each collection

    assert sorted((moved.name, moved.points) for moved in done.moved) == [
        (layouts.SINGLE_VECTOR_COLLECTION_NAME, 17),
        (layouts.MEMORA_COLLECTION_NAME, 23),
    ]
    assert done.backup == tmp_path / "qdrant.local-mode"
    assert (done.backup / "meta.json").is_file()  # the old folder, kept whole
    assert sorted(path.name for path in tmp_path.iterdir()) == ["qdrant", "qdrant.local-mode"]

    memora = QdrantDB(path=folder)
    memora.setup()  # the collection fits Memora's layout; its tenant indexes are there
    assert memora.tenants() == {("o", "u1"): 11, ("o", "u2"): 12}
    moved = memora.client.retrieve(
        memora.collection_name, list(before[memora.collection_name]), with_vectors=True
    )
    assert {str(point.id): point.payload for point in moved} == {
        point_id: payload for point_id, (payload, _) in before[memora.collection_name].items()
    }
    for point in moved:
        assert same_vectors(point.vector, before[memora.collection_name][str(point.id)][1])
    memora.close()

    single = QdrantDB(path=folder, embedding_function=HashingEmbedding(64))
    single.setup()
    assert single.tenants() == {("o", "u1"): 8, ("o", "u2"): 9}
    payloads = single.payloads(list(before[single.collection_name]))
    assert payloads == {key: value for key, (value, _) in before[single.collection_name].items()}
    [(found, _)] = single.search_memory("sails boat 3", MemorySearchScope.USER, "o", "u1")[:1]
    assert found.memory == "user_u sails boat 3"
    single.close()

    capsys.readouterr()
    assert main(["vectors", "migrate", "--qdrant-path", str(folder)]) == 0
    assert (
        capsys.readouterr().out == f"nothing to migrate: {folder} is a Qdrant Edge store already\n"
    )
    assert sorted(path.name for path in tmp_path.iterdir()) == ["qdrant", "qdrant.local-mode"]


def test_the_command_moves_a_folder_and_names_the_backup(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = tmp_path / "qdrant"
    write_local_mode(folder, layouts.SingleVectorLayout(64), ["user_u swims", "user_u runs"])
    assert main(["vectors", "migrate", "--qdrant-path", str(folder)]) == 0
    assert capsys.readouterr().out.splitlines() == [
        f"{layouts.SINGLE_VECTOR_COLLECTION_NAME}: 2 points",
        f"{folder} is now a Qdrant Edge store; the old folder is kept in {folder}.local-mode",
    ]


def test_the_command_refuses_what_it_cannot_move(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """No store, a folder in use, a backup in the way: exit 2, and nothing changed."""
    folder = tmp_path / "qdrant"
    assert main(["vectors", "migrate", "--qdrant-path", str(folder)]) == 2
    assert "no vector store of qdrant-client's local mode" in capsys.readouterr().err

    write_local_mode(folder, layouts.SingleVectorLayout(64), ["user_u swims", "user_u runs"])
    holder = QdrantClient(path=str(folder))
    assert main(["vectors", "migrate", "--qdrant-path", str(folder)]) == 2
    assert "in use" in capsys.readouterr().err
    holder.close()

    (tmp_path / "qdrant.local-mode").mkdir()
    assert main(["vectors", "migrate", "--qdrant-path", str(folder)]) == 2
    assert "qdrant.local-mode exists already" in capsys.readouterr().err
    assert (folder / "meta.json").is_file()
    assert sorted(path.name for path in tmp_path.iterdir()) == ["qdrant", "qdrant.local-mode"]
