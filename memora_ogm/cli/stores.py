"""The vector store as commands open one they did not create: its collection's layout
(``check``, ``shell``) and the move of a local-mode folder into Qdrant Edge (``vectors
migrate``). It imports qdrant-client, so the CLI imports this module only when a command
needs a store.

The migration copies a local-mode folder (what ``QdrantDB(path=)`` wrote before issue 23)
into a new Edge store beside it, then swaps it in once every count matches (``DIR`` is
kept as ``DIR.local-mode``). Until the swap nothing in ``DIR`` changes, so an interrupted
run can simply start again. Pages are large: local mode re-sorts the whole collection for
each.
"""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

from qdrant_client import QdrantClient, models

from memora_ogm.sync import EdgeClient
from memora_ogm.vector_db import edge_common, layouts
from memora_ogm.vector_db.embedding import HashingEmbedding
from memora_ogm.vector_db.layouts import MEMORA_COLLECTION_NAME, SINGLE_VECTOR_COLLECTION_NAME
from memora_ogm.vector_db.qdrant_common import TENANT_HNSW, positive_int

PAGE = 4096


class MigrationError(RuntimeError):
    """The folder cannot be moved, with a message for the user."""


@dataclass(frozen=True)
class MovedCollection:
    name: str
    points: int


@dataclass(frozen=True)
class Migration:
    """What a run did, and where the old folder is kept."""

    folder: Path
    backup: Path
    moved: list[MovedCollection]


def migrate(path: str | os.PathLike[str], page: int = PAGE) -> Migration:
    """Move the local-mode store in ``path`` into Edge; an Edge store is left alone
    (``moved`` is empty), anything else raises ``MigrationError``."""
    folder = edge_common.folder_path(path)
    positive_int("page", page)
    backup = folder.with_name(folder.name + ".local-mode")
    if not edge_common.is_local_mode_folder(folder):
        if folder.is_dir() and (
            backup.exists() or any(edge_common.is_shard(path) for path in folder.iterdir())
        ):
            return Migration(folder, backup, [])
        raise MigrationError(f"no vector store of qdrant-client's local mode in {folder}")
    if backup.exists():
        raise MigrationError(
            f"{backup} exists already: move it away (it may be an earlier migration's "
            "backup) and run the command again"
        )
    staging = folder.with_name(folder.name + ".edge-migrating")
    if staging.exists():
        shutil.rmtree(staging)  # an interrupted run's, never opened by a store
    try:
        source = QdrantClient(path=str(folder))
    except RuntimeError as error:  # local mode's own lock: a store has the folder open
        raise MigrationError(f"{folder} is in use: {error}") from None
    try:
        target = EdgeClient(staging)
        try:
            moved = [
                _move(source, target, collection.name, page)
                for collection in source.get_collections().collections
            ]
        finally:
            target.close()
    finally:
        source.close()
    folder.rename(backup)
    staging.rename(folder)
    descriptor = os.open(folder.parent, os.O_RDONLY)  # make the renames durable
    try:
        os.fsync(descriptor)
    finally:
        os.close(descriptor)
    return Migration(folder, backup, moved)


def _move(source: QdrantClient, target: EdgeClient, name: str, page: int) -> MovedCollection:
    config = source.get_collection(name).config
    params = config.params
    vectors = params.vectors
    target.create_collection(
        name,
        vectors_config=vectors if isinstance(vectors, models.VectorParams) else dict(vectors or {}),
        sparse_vectors_config=dict(params.sparse_vectors or {}),
        hnsw_config=TENANT_HNSW,
        quantization_config=config.quantization_config,
    )
    # The payload indexes of the layout the collection fits (local mode had none).
    layout: layouts.Layout = (
        layouts.SingleVectorLayout(vectors.size)
        if isinstance(vectors, models.VectorParams)
        else layouts.MemoraLayout()
    )
    for field, schema in (layout.indexes if layout.fits(params) else {}).items():
        target.create_payload_index(name, field, schema)
    offset: models.ExtendedPointId | None = None
    while True:
        records, offset = source.scroll(
            name, limit=page, offset=offset, with_payload=True, with_vectors=True
        )
        if records:
            target.upsert(
                name,
                [
                    models.PointStruct(
                        id=record.id,
                        vector=cast(models.VectorStruct, record.vector),
                        payload=record.payload,
                    )
                    for record in records
                ],
            )
        if offset is None:
            break
    expected, found = source.count(name).count, target.count(name).count
    if found != expected:
        raise MigrationError(f"collection {name!r}: {expected} points read, {found} written")
    return MovedCollection(name, found)


def stored_layout(where: dict[str, Any], collection: str | None) -> dict[str, Any] | None:
    """``QdrantDB``'s options for the collection's layout (``None``: no collection).

    ``where``: ``{"path": DIR}`` or ``{"url": URL, "api_key": KEY}``. The single-vector
    layout gets ``HashingEmbedding``, the one embedder a command knows. Without
    ``collection``: of Memora's default collection and the earlier default one, the first
    that holds points (an empty one of Memora's name beside ours is not the store), else
    the first that exists.
    """
    client: QdrantClient | EdgeClient = (
        EdgeClient(where["path"]) if "path" in where else QdrantClient(**where)
    )
    names = [collection] if collection else [MEMORA_COLLECTION_NAME, SINGLE_VECTOR_COLLECTION_NAME]
    try:
        found = [name for name in names if client.collection_exists(name)]
        held = [name for name in found if client.count(name, exact=False).count > 0]
        if not found:
            return None
        name = (held or found)[0]
        vectors = client.get_collection(name).config.params.vectors
        if isinstance(vectors, models.VectorParams):
            return {"collection_name": name, "embedding_function": HashingEmbedding(vectors.size)}
        return {"collection_name": name}
    finally:
        client.close()
