"""The two collection layouts ``QdrantDB`` reads and writes: Memora's (the default) and
memora-ogm's earlier single-vector one (with an ``embedding_function``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from qdrant_client import models

from memora_ogm.schema.models import Memory
from memora_ogm.vector_db import hybrid
from memora_ogm.vector_db.embedding import HashingEmbedding
from memora_ogm.vector_db.qdrant_common import (
    iso_datetime,
    match,
    optional_id,
    positive_int,
    require_id,
)
from memora_ogm.vector_db.scope import MemorySearchScope

MEMORA_COLLECTION_NAME = "memory_collection_v0_2"
SINGLE_VECTOR_COLLECTION_NAME = "memora_ogm_memories"

Embedded = list[float] | dict[str, models.Vector]

_TENANT_INDEX = models.KeywordIndexParams(type=models.KeywordIndexType.KEYWORD, is_tenant=True)
_KEYWORD_INDEX = models.KeywordIndexParams(type=models.KeywordIndexType.KEYWORD)


@dataclass(frozen=True)
class Tenant:
    """The payload fields every memory of one ``add_memories`` call shares."""

    org_id: str
    user_id: str
    agent_id: str
    obtained_at: str


def tenant(org_id: object, user_id: object, agent_id: object, obtained_at: object) -> Tenant:
    """The checked payload fields of one ``add_memories`` call."""
    return Tenant(
        org_id=require_id("org_id", org_id),
        user_id=require_id("user_id", user_id),
        agent_id=require_id("agent_id", agent_id),
        obtained_at=iso_datetime(obtained_at),
    )


class _Layout:
    """What both layouts share: they differ in payload fields, vectors and queries."""

    default_collection: str
    default_score_threshold: float
    indexes: Mapping[str, models.KeywordIndexParams]
    text_field: str
    #: Else the point id stands for the memory id.
    keeps_memory_id: bool
    #: The indexed field telling users apart (facets count only indexed fields).
    user_facet: str
    remedy: str

    def fits(self, params: models.CollectionParams) -> bool:
        raise NotImplementedError

    def user_value(self, org_id: str, user_id: str) -> str:
        return user_id

    def facet_user(self, org_id: str, value: str) -> str:
        return value

    def payload(self, tenant: Tenant, memory_id: str, text: str) -> dict[str, Any]:
        payload = {
            self.text_field: text,
            "org_id": tenant.org_id,
            self.user_facet: self.user_value(tenant.org_id, tenant.user_id),
            "user_id": tenant.user_id,
            "agent_id": tenant.agent_id,
            "obtained_at": tenant.obtained_at,
        }
        return {**payload, "memory_id": memory_id} if self.keeps_memory_id else payload

    def points(
        self,
        tenant: Tenant,
        memory_ids: list[str],
        point_ids: list[str],
        texts: list[str],
        vectors: list[Embedded],
    ) -> list[models.PointStruct]:
        return [
            models.PointStruct(id=point, vector=vector, payload=self.payload(tenant, memory, text))
            for memory, point, text, vector in zip(
                memory_ids, point_ids, texts, vectors, strict=True
            )
        ]

    def memory(self, point_id: models.ExtendedPointId, payload: Mapping[str, Any]) -> Memory:
        return Memory(
            org_id=payload["org_id"],
            agent_id=payload["agent_id"],
            user_id=payload["user_id"],
            memory_id=payload["memory_id"] if self.keeps_memory_id else str(point_id),
            memory=payload[self.text_field],
            obtained_at=datetime.fromisoformat(payload["obtained_at"]),
        )

    def results(
        self, responses: list[models.QueryResponse], score_threshold: float | None
    ) -> list[list[tuple[Memory, float]]]:
        """Memories scoring above ``score_threshold`` (strictly, as Memora filters)."""
        return [
            [
                (self.memory(point.id, point.payload or {}), point.score)
                for point in response.points
                if score_threshold is None or point.score > score_threshold
            ]
            for response in responses
        ]

    def check(self, collection_name: str, params: models.CollectionParams) -> None:
        """An existing collection must fit, else every add would fail."""
        if not self.fits(params):
            raise ValueError(
                f"Collection {collection_name!r} exists with vectors {params.vectors!r} and "
                f"sparse vectors {params.sparse_vectors!r}: {self.remedy}. Or use another "
                "collection_name."
            )

    def user_filter(self, org_id: object, user_id: object) -> models.Filter:
        return models.Filter(
            must=self._user_conditions(require_id("org_id", org_id), require_id("user_id", user_id))
        )

    def _user_conditions(self, org_id: str, user_id: str) -> list[models.Condition]:
        return [match("org_id", org_id), match(self.user_facet, self.user_value(org_id, user_id))]

    def search_filter(
        self, memory_search_scope: object, org_id: object, user_id: object, agent_id: object
    ) -> models.Filter:
        """In ``ORGANIZATION`` scope a ``user_id`` is ignored, as in Memora."""
        try:
            # By value, so "user" or Memora's own enum member work too.
            scope = MemorySearchScope(getattr(memory_search_scope, "value", memory_search_scope))
        except ValueError:
            raise ValueError(
                "`memory_search_scope` must be a MemorySearchScope (organization or user)."
            ) from None
        org = require_id("org_id", org_id)
        conditions: list[models.Condition] = [match("org_id", org)]
        user = optional_id("user_id", user_id)
        if scope is MemorySearchScope.USER:
            if user is None:
                raise ValueError("`user_id` is required for a USER scope search.")
            conditions = self._user_conditions(org, user)
        agent = optional_id("agent_id", agent_id)
        if agent is not None:
            conditions.append(match("agent_id", agent))
        return models.Filter(must=conditions)


class MemoraLayout(_Layout):
    """Memora's collection, as memora-core 0.3.1's ``QdrantDB`` creates and fills it.

    The point id is the memory id, so a search returns it in canonical UUID form. Unlike
    Memora, ``obtained_at`` is written timezone-aware (a naive one is read as UTC, as the
    graph does). A user is matched on ``org_user_id`` and on ``org_id``, which keeps an
    organisation id containing ``:`` exact.
    """

    default_collection = MEMORA_COLLECTION_NAME
    default_score_threshold = 0.35
    prefetch_limit = 12
    dense_score_threshold = 0.4
    indexes = {"org_id": _TENANT_INDEX, "org_user_id": _TENANT_INDEX, "agent_id": _KEYWORD_INDEX}
    text_field = "document"
    keeps_memory_id = False
    user_facet = "org_user_id"
    remedy = (
        "it was not written by Memora's store nor by this one with Memora's models; if it "
        "holds memora-ogm's single-vector layout, open it with the embedding_function it "
        "was written with (by default before: embedding_function=HashingEmbedding())"
    )

    def create_arguments(self) -> dict[str, Any]:
        return {
            "vectors_config": {hybrid.DENSE_VECTOR: vector_params(hybrid.DENSE_DIMENSION)},
            "sparse_vectors_config": {
                hybrid.SPARSE_VECTOR: models.SparseVectorParams(index=models.SparseIndexParams())
            },
            "quantization_config": models.ScalarQuantization(
                scalar=models.ScalarQuantizationConfig(
                    type=models.ScalarType.INT8, quantile=0.95, always_ram=True
                )
            ),
        }

    def fits(self, params: models.CollectionParams) -> bool:
        vectors = params.vectors
        dense = vectors.get(hybrid.DENSE_VECTOR) if isinstance(vectors, dict) else None
        return _is_cosine(dense, hybrid.DENSE_DIMENSION) and hybrid.SPARSE_VECTOR in (
            params.sparse_vectors or {}
        )

    def user_value(self, org_id: str, user_id: str) -> str:
        return f"{org_id}:{user_id}"

    def facet_user(self, org_id: str, value: str) -> str:
        return value.removeprefix(f"{org_id}:")

    def requests(
        self, vectors: list[Embedded], search: models.Filter, limit: int, local_mode: bool
    ) -> list[models.QueryRequest]:
        """Memora's hybrid query; its search parameters are left out on local mode, which
        searches exactly and warns about them."""
        prefetch_limit = max(self.prefetch_limit, limit)
        params = models.SearchParams(quantization=models.QuantizationSearchParams(rescore=False))
        requests = []
        for vector in vectors:
            if not isinstance(vector, dict):
                raise TypeError("Memora's layout searches with named dense and sparse vectors.")
            sparse, dense = hybrid.SPARSE_VECTOR, hybrid.DENSE_VECTOR
            requests.append(
                models.QueryRequest(
                    prefetch=[
                        models.Prefetch(query=vector[sparse], using=sparse, limit=prefetch_limit),
                        models.Prefetch(
                            query=vector[dense],
                            using=dense,
                            score_threshold=self.dense_score_threshold,
                            limit=prefetch_limit,
                        ),
                    ],
                    query=models.FusionQuery(fusion=models.Fusion.RRF),
                    filter=search,
                    limit=limit,
                    with_payload=True,
                    params=None if local_mode else params,
                )
            )
        return requests


class SingleVectorLayout(_Layout):
    """memora-ogm's earlier collection: one unnamed cosine vector of an embedding function."""

    default_collection = SINGLE_VECTOR_COLLECTION_NAME
    default_score_threshold = 0.0
    indexes = {
        "org_id": _TENANT_INDEX,
        "user_id": _TENANT_INDEX,
        "agent_id": _KEYWORD_INDEX,
        "memory_id": _KEYWORD_INDEX,
    }
    text_field = "memory"
    keeps_memory_id = True
    user_facet = "user_id"

    def __init__(self, dimension: int) -> None:
        self.dimension = dimension
        self.remedy = (
            f"this store needs one unnamed {dimension}-dimensional cosine vector; a "
            "collection in Memora's layout is opened without an embedding_function"
        )

    def create_arguments(self) -> dict[str, Any]:
        return {"vectors_config": vector_params(self.dimension)}

    def fits(self, params: models.CollectionParams) -> bool:
        return _is_cosine(params.vectors, self.dimension)

    def requests(
        self, vectors: list[Embedded], search: models.Filter, limit: int, local_mode: bool
    ) -> list[models.QueryRequest]:
        requests = []
        for vector in vectors:
            if not isinstance(vector, list):
                raise TypeError("The single-vector layout searches with one unnamed vector.")
            requests.append(
                models.QueryRequest(query=vector, filter=search, limit=limit, with_payload=True)
            )
        return requests


Layout = MemoraLayout | SingleVectorLayout


def for_embedding(
    embedding_function: object, dimension: int | None, cache_dir: object
) -> MemoraLayout | SingleVectorLayout:
    """Memora's layout for Memora's models (the default), else the single-vector one of the
    function's dimension (a ``HashingEmbedding`` knows its own)."""
    if dimension is None and isinstance(embedding_function, HashingEmbedding):
        dimension = embedding_function.dimension
    if dimension is not None:
        positive_int("embedding_dimension", dimension)
    if embedding_function is None:
        if dimension is not None:
            raise ValueError(
                "`embedding_dimension` goes with an `embedding_function`; Memora's models "
                "(the default) embed in their own dimension."
            )
        return MemoraLayout()
    if not callable(embedding_function):
        raise ValueError("`embedding_function` must be callable.")
    if dimension is None:
        raise ValueError("`embedding_dimension` is required with an `embedding_function`.")
    if cache_dir is not None:
        raise ValueError(
            "`embed_models_cache_dir` is for Memora's models, not an embedding_function."
        )
    return SingleVectorLayout(dimension)


def vector_params(dimension: int) -> models.VectorParams:
    return models.VectorParams(size=dimension, distance=models.Distance.COSINE)


def _is_cosine(vectors: object, size: int) -> bool:
    return (
        isinstance(vectors, models.VectorParams)
        and vectors.size == size
        and vectors.distance == models.Distance.COSINE
    )


def earlier_default_message(earlier: str) -> str:
    return (
        f"This Qdrant holds {earlier!r}, the collection memora-ogm wrote by default before "
        f"Memora's models became its default (single vector, feature hashing), and no "
        f"{MEMORA_COLLECTION_NAME!r}. To keep using it, open it as it was written: "
        "QdrantDB(..., embedding_function=HashingEmbedding()) (from "
        "memora_ogm.vector_db.embedding). To start Memora's layout beside it, pass "
        f"collection_name={MEMORA_COLLECTION_NAME!r}."
    )


def organization_filter(org_id: object) -> models.Filter:
    return models.Filter(must=[match("org_id", require_id("org_id", org_id))])
