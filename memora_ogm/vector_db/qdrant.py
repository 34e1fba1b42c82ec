"""``BaseVectorDB`` over Qdrant, remote or embedded (qdrant-client's local mode).

One collection holds the memories of every organisation; ``org_id`` and ``user_id`` are
tenant payload indexes, so Qdrant keeps each tenant's points together and builds its
search graph per tenant. A point's id is its ``memory_id``, which makes writes
idempotent: retrying an add overwrites the same points instead of duplicating them, which
the graph layer's all-or-nothing writes rely on (SPEC section 6).
"""

from __future__ import annotations

import logging
import math
import os
import uuid
import warnings
from datetime import datetime, timezone
from typing import Any

import numpy as np
from qdrant_client import AsyncQdrantClient, models
from typing_extensions import override

from memora_ogm.schema.models import Memory
from memora_ogm.vector_db.base import BaseVectorDB, MemorySearchScope
from memora_ogm.vector_db.embedding import DEFAULT_DIMENSION, EmbeddingFunction, HashingEmbedding

DEFAULT_COLLECTION_NAME = "memora_ogm_memories"
"""Not Memora's ``memory_collection_v0_2``: that collection holds fastembed named dense and
sparse vectors, which this store's single unnamed vector cannot share."""

_TENANT_FIELDS = ("org_id", "user_id")
_KEYWORD_FIELDS = ("agent_id", "memory_id")
_UPSERT_BATCH = 256
_LOCAL_INDEX_WARNING = "Payload indexes have no effect in the local Qdrant"

logger = logging.getLogger(__name__)


def _require_id(name: str, value: object) -> str:
    """An id must be a non-blank string; anything else would silently match nothing."""
    if not isinstance(value, str) or not value.strip():
        raise ValueError(f"`{name}` must be a non-empty string.")
    return value


def _positive_int(name: str, value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"`{name}` must be a positive integer.")
    return value


def _optional_id(name: str, value: object) -> str | None:
    return None if value is None else _require_id(name, value)


def _require_list(name: str, value: object) -> list[Any]:
    """Lists (or tuples) only: a bare string would otherwise be iterated character by character."""
    if not isinstance(value, list | tuple):
        raise ValueError(f"`{name}` must be a list.")
    return list(value)


def _point_ids(memory_ids: object) -> list[str]:
    """Canonical UUID strings of memory ids, which Qdrant requires as point ids."""
    canonical = [_point_id(memory_id) for memory_id in _require_list("memory_ids", memory_ids)]
    if len(set(canonical)) != len(canonical):
        raise ValueError("`memory_ids` must not contain duplicates.")
    return canonical


def _point_id(memory_id: object) -> str:
    try:
        return str(uuid.UUID(_require_id("memory_id", memory_id)))
    except ValueError:
        raise ValueError(f"memory id {memory_id!r} is not a UUID.") from None


def _iso_datetime(obtained_at: object) -> str:
    """Validate an ISO-8601 datetime and make it timezone-aware (naive is taken as UTC)."""
    if not isinstance(obtained_at, str):
        raise ValueError("`obtained_at` must be an ISO-8601 datetime string.")
    # Python 3.10's parser does not know the "Z" suffix.
    text = obtained_at[:-1] + "+00:00" if obtained_at.endswith("Z") else obtained_at
    try:
        parsed = datetime.fromisoformat(text)
    except ValueError:
        raise ValueError(f"`obtained_at` {obtained_at!r} is not an ISO-8601 datetime.") from None
    return (parsed if parsed.tzinfo else parsed.replace(tzinfo=timezone.utc)).isoformat()


def _match(key: str, value: str) -> models.FieldCondition:
    return models.FieldCondition(key=key, match=models.MatchValue(value=value))


class QdrantDB(BaseVectorDB):
    """Memories in a Qdrant collection, embedded by a pluggable function.

    Connection: pass a ready ``async_client``, or at most one of ``url`` (with an optional
    ``api_key``), ``location`` (``":memory:"`` or a URL) and ``path`` (a folder for the
    embedded store). With none of them the store is embedded and in memory.

    Embedding: ``embedding_function`` turns texts into vectors of ``embedding_dimension``
    floats; it defaults to the offline ``HashingEmbedding`` (dimension 1024 unless given).

    Search: at most ``search_limit`` results per query; results scoring at or below
    ``score_threshold`` (cosine similarity) are dropped, so by default a memory sharing
    nothing with the query is not returned. ``None`` keeps every result.
    """

    def __init__(
        self,
        async_client: AsyncQdrantClient | None = None,
        collection_name: str = DEFAULT_COLLECTION_NAME,
        *,
        url: str | None = None,
        api_key: str | None = None,
        location: str | None = None,
        path: str | os.PathLike[str] | None = None,
        embedding_function: EmbeddingFunction | None = None,
        embedding_dimension: int | None = None,
        search_limit: int = 10,
        score_threshold: float | None = 0.0,
        enable_logging: bool = False,
    ) -> None:
        self.collection_name = _require_id("collection_name", collection_name)
        self.search_limit = _positive_int("search_limit", search_limit)
        if score_threshold is not None and (
            isinstance(score_threshold, bool)
            or not isinstance(score_threshold, int | float)
            or not math.isfinite(score_threshold)
        ):
            raise ValueError("`score_threshold` must be a finite number or None.")
        self.score_threshold = score_threshold
        self.embedding_function, self.embedding_dimension = self._embedding(
            embedding_function, embedding_dimension
        )
        # Last, once the arguments are known good: opening a folder locks it.
        self.async_client = self._connect(async_client, url, api_key, location, path)
        if enable_logging:
            logging.basicConfig(level=logging.INFO)

    @staticmethod
    def _connect(
        async_client: AsyncQdrantClient | None,
        url: str | None,
        api_key: str | None,
        location: str | None,
        path: str | os.PathLike[str] | None,
    ) -> AsyncQdrantClient:
        choices = {"async_client": async_client, "url": url, "location": location, "path": path}
        given = [name for name, value in choices.items() if value is not None]
        if len(given) > 1:
            raise ValueError(f"Give at most one of {', '.join(given)}.")
        if api_key is not None and url is None:
            raise ValueError("`api_key` is only used with `url`.")
        if async_client is not None:
            if not isinstance(async_client, AsyncQdrantClient):
                raise ValueError("`async_client` must be a qdrant_client.AsyncQdrantClient.")
            return async_client
        if url is not None:
            return AsyncQdrantClient(url=url, api_key=api_key)
        if path is not None:
            return AsyncQdrantClient(path=os.fspath(path))
        return AsyncQdrantClient(location=location or ":memory:")

    @staticmethod
    def _embedding(
        embedding_function: EmbeddingFunction | None, embedding_dimension: int | None
    ) -> tuple[EmbeddingFunction, int]:
        if embedding_dimension is not None:
            _positive_int("embedding_dimension", embedding_dimension)
        if embedding_function is None:
            default = HashingEmbedding(embedding_dimension or DEFAULT_DIMENSION)
            return default, default.dimension
        if not callable(embedding_function):
            raise ValueError("`embedding_function` must be an async callable.")
        if embedding_dimension is None:
            raise ValueError("`embedding_dimension` is required with an `embedding_function`.")
        return embedding_function, embedding_dimension

    async def _embed(self, texts: list[str]) -> list[list[float]]:
        """Embed and check the function's output, so a faulty model fails loudly here."""
        expected = (len(texts), self.embedding_dimension)
        output = await self.embedding_function(texts)
        try:
            vectors = np.asarray(output, dtype=np.float64)
        except (TypeError, ValueError):  # ragged or not numbers
            vectors = np.empty(0)
        if vectors.shape != expected or not np.isfinite(vectors).all():
            raise ValueError(
                f"The embedding function must return {expected[0]} vectors of "
                f"{expected[1]} finite floats, one per text."
            )
        result: list[list[float]] = vectors.tolist()
        return result

    @override
    async def close(self) -> None:
        """Close the Qdrant client (also one passed in, as Memora does)."""
        await self.async_client.close()

    @override
    async def setup(self, *args: Any, **kwargs: Any) -> None:
        """Create the collection and its payload indexes if missing; safe to repeat.

        An existing collection must have this store's vector size and cosine distance,
        else ``ValueError``: writing into it would fail on every add.
        """
        if not await self.async_client.collection_exists(self.collection_name):
            await self._create_collection()
        info = await self.async_client.get_collection(self.collection_name)
        self._check_vectors(info.config.params.vectors)
        await self._create_missing_indexes(set(info.payload_schema))
        logger.info("Qdrant collection %s is set up", self.collection_name)

    async def _create_collection(self) -> None:
        try:
            await self.async_client.create_collection(
                collection_name=self.collection_name,
                vectors_config=models.VectorParams(
                    size=self.embedding_dimension, distance=models.Distance.COSINE
                ),
                # Every search filters by org_id, so per-tenant graphs (payload_m) are all
                # that is needed; m=0 skips building a useless global one.
                hnsw_config=models.HnswConfigDiff(payload_m=16, m=0),
            )
        except Exception:
            # Another process may have created it between the check and the create.
            if not await self.async_client.collection_exists(self.collection_name):
                raise
        logger.info("Created Qdrant collection %s", self.collection_name)

    def _check_vectors(self, vectors: object) -> None:
        if not (
            isinstance(vectors, models.VectorParams)
            and vectors.size == self.embedding_dimension
            and vectors.distance == models.Distance.COSINE
        ):
            raise ValueError(
                f"Collection {self.collection_name!r} exists with vectors {vectors!r}; this "
                f"store needs one unnamed {self.embedding_dimension}-dimensional cosine vector. "
                "Use another collection_name or a matching embedding."
            )

    async def _create_missing_indexes(self, existing: set[str]) -> None:
        schemas: dict[str, models.KeywordIndexParams] = {
            **{
                field: models.KeywordIndexParams(
                    type=models.KeywordIndexType.KEYWORD, is_tenant=True
                )
                for field in _TENANT_FIELDS
            },
            **{
                field: models.KeywordIndexParams(type=models.KeywordIndexType.KEYWORD)
                for field in _KEYWORD_FIELDS
            },
        }
        with warnings.catch_warnings():
            # Local mode accepts the calls but warns that it ignores them; that is expected.
            warnings.filterwarnings("ignore", message=_LOCAL_INDEX_WARNING, category=UserWarning)
            for field, schema in schemas.items():
                if field not in existing:
                    await self.async_client.create_payload_index(
                        collection_name=self.collection_name,
                        field_name=field,
                        field_schema=schema,
                        wait=True,
                    )

    @override
    async def add_memories(
        self,
        org_id: str,
        user_id: str,
        agent_id: str,
        memory_ids: list[str],
        memories: list[str],
        obtained_at: str,
    ) -> None:
        """Upsert the memories; empty lists are a no-op.

        Ids must be UUID strings (Qdrant point ids), unique within the call. If a write
        fails part-way, the points this call wrote are deleted again before the error is
        raised, so a failed add leaves nothing behind.
        """
        payload_base = {
            "org_id": _require_id("org_id", org_id),
            "user_id": _require_id("user_id", user_id),
            "agent_id": _require_id("agent_id", agent_id),
            "obtained_at": _iso_datetime(obtained_at),
        }
        point_ids = _point_ids(memory_ids)
        texts = _require_list("memories", memories)
        if len(texts) != len(point_ids):
            raise ValueError("`memory_ids` and `memories` must have the same length.")
        if not all(isinstance(text, str) and text.strip() for text in texts):
            raise ValueError("Every memory must be a non-empty string.")
        if not texts:
            return

        vectors = await self._embed(texts)
        points = [
            models.PointStruct(
                id=point_id,
                vector=vector,
                payload={**payload_base, "memory_id": memory_id, "memory": text},
            )
            for point_id, memory_id, text, vector in zip(
                point_ids, memory_ids, texts, vectors, strict=True
            )
        ]
        try:
            for start in range(0, len(points), _UPSERT_BATCH):
                await self.async_client.upsert(
                    collection_name=self.collection_name,
                    points=points[start : start + _UPSERT_BATCH],
                    wait=True,
                )
        except Exception:
            await self._discard(point_ids)
            raise
        logger.info("Added %d memories to %s", len(points), self.collection_name)

    async def _discard(self, point_ids: list[str]) -> None:
        """Best-effort removal after a failed add; the add's own error is what matters."""
        try:
            await self._delete_points(models.PointIdsList(points=list(point_ids)))
        except Exception:
            logger.exception("Could not remove the points of a failed add")

    @override
    async def search_memory(
        self,
        query: str,
        memory_search_scope: MemorySearchScope,
        org_id: str,
        user_id: str | None = None,
        agent_id: str | None = None,
    ) -> list[tuple[Memory, float]]:
        """See ``BaseVectorDB.search_memory``; a blank query raises ``ValueError``."""
        if not isinstance(query, str):
            raise ValueError("`query` must be a string.")
        results = await self.search_memories(
            [query], memory_search_scope, org_id, user_id=user_id, agent_id=agent_id
        )
        return results[0]

    @override
    async def search_memories(
        self,
        queries: list[str],
        memory_search_scope: MemorySearchScope,
        org_id: str,
        user_id: str | None = None,
        agent_id: str | None = None,
    ) -> list[list[tuple[Memory, float]]]:
        """See ``BaseVectorDB.search_memories``; all queries go to Qdrant in one request.

        ``memory_search_scope`` may also be given as its value (``"user"``); in
        ``ORGANIZATION`` scope a ``user_id`` is ignored, as in Memora.
        """
        texts = _require_list("queries", queries)
        if not texts or not all(isinstance(text, str) and text.strip() for text in texts):
            raise ValueError("`queries` must be a non-empty list of non-empty strings.")
        search_filter = self._search_filter(memory_search_scope, org_id, user_id, agent_id)

        vectors = await self._embed(texts)
        responses = await self.async_client.query_batch_points(
            collection_name=self.collection_name,
            requests=[
                models.QueryRequest(
                    query=vector,
                    filter=search_filter,
                    limit=self.search_limit,
                    score_threshold=self.score_threshold,
                    with_payload=True,
                )
                for vector in vectors
            ],
        )
        return [
            [(self._to_memory(point.payload or {}), point.score) for point in response.points]
            for response in responses
        ]

    @staticmethod
    def _search_filter(
        memory_search_scope: object, org_id: object, user_id: object, agent_id: object
    ) -> models.Filter:
        try:
            # By value, so the string "user" or Memora's own enum member work too.
            scope = MemorySearchScope(getattr(memory_search_scope, "value", memory_search_scope))
        except ValueError:
            raise ValueError(
                "`memory_search_scope` must be a MemorySearchScope (organization or user)."
            ) from None
        conditions: list[models.Condition] = [_match("org_id", _require_id("org_id", org_id))]
        user = _optional_id("user_id", user_id)
        if scope is MemorySearchScope.USER:
            if user is None:
                raise ValueError("`user_id` is required for a USER scope search.")
            conditions.append(_match("user_id", user))
        agent = _optional_id("agent_id", agent_id)
        if agent is not None:
            conditions.append(_match("agent_id", agent))
        return models.Filter(must=conditions)

    @staticmethod
    def _to_memory(payload: dict[str, Any]) -> Memory:
        return Memory(
            org_id=payload["org_id"],
            agent_id=payload["agent_id"],
            user_id=payload["user_id"],
            memory_id=payload["memory_id"],
            memory=payload["memory"],
            obtained_at=datetime.fromisoformat(payload["obtained_at"]),
        )

    @override
    async def delete_memory(self, memory_id: str) -> None:
        """Delete one memory by its UUID; an absent id is a no-op."""
        await self._delete_points(models.PointIdsList(points=[_point_id(memory_id)]))

    @override
    async def delete_memories(self, memory_ids: list[str]) -> None:
        """Delete memories by UUID; an empty list or absent ids are a no-op."""
        point_ids = _point_ids(memory_ids)
        if point_ids:
            await self._delete_points(models.PointIdsList(points=list(point_ids)))

    @override
    async def delete_all_user_memories(self, org_id: str, user_id: str) -> None:
        """Delete every memory whose payload names this organisation and user."""
        conditions: list[models.Condition] = [
            _match("org_id", _require_id("org_id", org_id)),
            _match("user_id", _require_id("user_id", user_id)),
        ]
        await self._delete_points(models.FilterSelector(filter=models.Filter(must=conditions)))

    @override
    async def delete_all_organization_memories(self, org_id: str) -> None:
        """Delete every memory whose payload names this organisation."""
        condition = _match("org_id", _require_id("org_id", org_id))
        await self._delete_points(models.FilterSelector(filter=models.Filter(must=[condition])))

    async def _delete_points(self, selector: models.PointIdsList | models.FilterSelector) -> None:
        await self.async_client.delete(
            collection_name=self.collection_name, points_selector=selector, wait=True
        )
        logger.info("Deleted %s from %s", type(selector).__name__, self.collection_name)
