"""The layout a collection was written in, for commands that open a store they did not
create (``memora-ogm check`` and ``shell``)."""

from __future__ import annotations

from typing import Any

from qdrant_client import QdrantClient, models

from memora_ogm._sync.edge import EdgeClient
from memora_ogm.vector_db.embedding import HashingEmbedding
from memora_ogm.vector_db.layouts import MEMORA_COLLECTION_NAME, SINGLE_VECTOR_COLLECTION_NAME


def stored_layout(where: dict[str, Any], collection: str | None) -> dict[str, Any] | None:
    """``QdrantDB``'s options for the collection's layout (``None``: no collection).

    ``where``: ``{"path": DIR}`` or ``{"url": URL, "api_key": KEY}``. The single-vector
    layout gets ``HashingEmbedding``, the one embedder a command knows. Without
    ``collection``: Memora's default collection, else the earlier default one.
    """
    client: QdrantClient | EdgeClient = (
        EdgeClient(where["path"]) if "path" in where else QdrantClient(**where)
    )
    names = [collection] if collection else [MEMORA_COLLECTION_NAME, SINGLE_VECTOR_COLLECTION_NAME]
    try:
        for name in names:
            if client.collection_exists(name):
                vectors = client.get_collection(name).config.params.vectors
                if isinstance(vectors, models.VectorParams):
                    return {
                        "collection_name": name,
                        "embedding_function": HashingEmbedding(vectors.size),
                    }
                return {"collection_name": name}
        return None
    finally:
        client.close()
