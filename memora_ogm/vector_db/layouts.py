"""The two collection layouts ``QdrantDB`` reads and writes, without I/O.

- :class:`MemoraLayout`, the default: Memora's own collection (memora-core 0.3.1's
  ``QdrantDB``), a named dense and a named sparse vector searched together and fused by RRF.
  A collection written by Memora's store is read, extended and deleted from by this one, and
  the other way round.
- :class:`SingleVectorLayout`: memora-ogm's earlier collection, one unnamed cosine vector of
  an ``EmbeddingFunction`` (feature hashing, by default, before Memora's models were).
  Still read and written when the store is given an ``embedding_function``.

Which one a store uses follows from its embedding; an existing collection must have that
layout (``check``), else the store says how to open it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from qdrant_client import models

from memora_ogm.schema.models import Memory
from memora_ogm.vector_db import hybrid
from memora_ogm.vector_db.qdrant_common import iso_datetime, match, optional_id, require_id
from memora_ogm.vector_db.scope import MemorySearchScope

MEMORA_COLLECTION_NAME = "memory_collection_v0_2"
SINGLE_VECTOR_COLLECTION_NAME = "memora_ogm_memories"

#: A point's vectors: one unnamed vector, or named ones.
Embedded = list[float] | dict[str, models.Vector]


@dataclass(frozen=True)
class Tenant:
    """The payload fields every memory of one ``add_memories`` call shares (validated)."""

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


def _tenant_index() -> models.KeywordIndexParams:
    return models.KeywordIndexParams(type=models.KeywordIndexType.KEYWORD, is_tenant=True)


def _keyword_index() -> models.KeywordIndexParams:
    return models.KeywordIndexParams(type=models.KeywordIndexType.KEYWORD)


def _obtained_at(payload: Mapping[str, Any]) -> datetime:
    return datetime.fromisoformat(payload["obtained_at"])


class MemoraLayout:
    """Memora's collection, as memora-core 0.3.1's ``QdrantDB`` creates and fills it.

    - Vectors: ``fast-paraphrase-multilingual-minilm-l12-v2`` (384, cosine) and
      ``fast-sparse-splade_pp_en_v1``, as qdrant-client 1.12's fastembed integration names
      them; int8 scalar quantisation kept in RAM; per-tenant graphs only (``m=0``).
    - Payload: ``document`` (the text), ``org_id``, ``org_user_id`` (``"<org>:<user>"``),
      ``user_id``, ``agent_id``, ``obtained_at`` (ISO-8601). The point id is the memory id,
      so a search returns it in Qdrant's canonical UUID form.
    - Search: a prefetch on each vector (12 each, dense at cosine 0.4 or more), fused by
      RRF (``1/(2 + rank)`` summed), results scoring above 0.35 kept, as Memora does.

    Memora writes ``obtained_at`` as its caller gives it (``datetime.isoformat()``, naive for
    ``datetime.now()``); this store writes it timezone-aware and reads a naive one as UTC,
    as the graph does. A user's memories are matched on ``org_user_id`` (Memora's tenant
    index) and on ``org_id``, which keeps an organisation id containing ``:`` exact.
    """

    description = "Memora's hybrid layout (named dense and sparse fastembed vectors)"
    default_collection = MEMORA_COLLECTION_NAME
    default_score_threshold = 0.35
    prefetch_limit = 12
    dense_score_threshold = 0.4
    indexes: Mapping[str, models.KeywordIndexParams] = {
        "org_id": _tenant_index(),
        "org_user_id": _tenant_index(),
        "agent_id": _keyword_index(),
    }

    def create_arguments(self) -> dict[str, Any]:
        return {
            "vectors_config": {
                hybrid.DENSE_VECTOR: models.VectorParams(
                    size=hybrid.DENSE_DIMENSION, distance=models.Distance.COSINE
                )
            },
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
        dense = (
            params.vectors.get(hybrid.DENSE_VECTOR) if isinstance(params.vectors, dict) else None
        )
        return (
            dense is not None
            and dense.size == hybrid.DENSE_DIMENSION
            and dense.distance == models.Distance.COSINE
            and hybrid.SPARSE_VECTOR in (params.sparse_vectors or {})
        )

    def points(
        self,
        tenant: Tenant,
        memory_ids: list[str],
        point_ids: list[str],
        texts: list[str],
        vectors: list[Embedded],
    ) -> list[models.PointStruct]:
        payload = {
            "org_id": tenant.org_id,
            "org_user_id": f"{tenant.org_id}:{tenant.user_id}",
            "user_id": tenant.user_id,
            "agent_id": tenant.agent_id,
            "obtained_at": tenant.obtained_at,
        }
        return [
            models.PointStruct(id=point, vector=vector, payload={"document": text, **payload})
            for point, text, vector in zip(point_ids, texts, vectors, strict=True)
        ]

    def user_conditions(self, org_id: str, user_id: str) -> list[models.Condition]:
        return [match("org_id", org_id), match("org_user_id", f"{org_id}:{user_id}")]

    #: The indexed field a facet count of an organisation's users reads (a server and Edge
    #: count only indexed fields; ``user_id`` is not one in Memora's collection).
    user_facet = "org_user_id"

    @staticmethod
    def facet_user(org_id: str, value: str) -> str:
        """The user of an ``org_user_id`` within ``org_id`` (which may itself hold ``:``)."""
        return value.removeprefix(f"{org_id}:")

    def requests(
        self, vectors: list[Embedded], search: models.Filter, limit: int, local_mode: bool
    ) -> list[models.QueryRequest]:
        """Memora's hybrid query. Its search parameters (no rescoring of quantised scores)
        are left out on qdrant-client's local mode, which searches exactly and warns about them."""
        prefetch_limit = max(self.prefetch_limit, limit)
        requests = []
        for vector in vectors:
            if not isinstance(vector, dict):
                raise TypeError("Memora's layout searches with named dense and sparse vectors.")
            requests.append(
                models.QueryRequest(
                    prefetch=[
                        models.Prefetch(
                            query=vector[hybrid.SPARSE_VECTOR],
                            using=hybrid.SPARSE_VECTOR,
                            limit=prefetch_limit,
                        ),
                        models.Prefetch(
                            query=vector[hybrid.DENSE_VECTOR],
                            using=hybrid.DENSE_VECTOR,
                            score_threshold=self.dense_score_threshold,
                            limit=prefetch_limit,
                        ),
                    ],
                    query=models.FusionQuery(fusion=models.Fusion.RRF),
                    filter=search,
                    limit=limit,
                    with_payload=True,
                    params=None
                    if local_mode
                    else models.SearchParams(
                        quantization=models.QuantizationSearchParams(rescore=False)
                    ),
                )
            )
        return requests

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

    @staticmethod
    def memory(point_id: models.ExtendedPointId, payload: Mapping[str, Any]) -> Memory:
        return Memory(
            org_id=payload["org_id"],
            agent_id=payload["agent_id"],
            user_id=payload["user_id"],
            memory_id=str(point_id),
            memory=payload["document"],
            obtained_at=_obtained_at(payload),
        )


class SingleVectorLayout:
    """memora-ogm's earlier collection: one unnamed cosine vector of an embedding function.

    Payload ``memory`` (the text), ``memory_id``, ``org_id``, ``user_id``, ``agent_id`` and
    ``obtained_at``; results scoring at or below ``score_threshold`` (cosine) are dropped.
    """

    description = "memora-ogm's single-vector layout (one unnamed vector)"
    default_collection = SINGLE_VECTOR_COLLECTION_NAME
    default_score_threshold = 0.0
    indexes: Mapping[str, models.KeywordIndexParams] = {
        "org_id": _tenant_index(),
        "user_id": _tenant_index(),
        "agent_id": _keyword_index(),
        "memory_id": _keyword_index(),
    }

    def __init__(self, dimension: int) -> None:
        self.dimension = dimension

    def create_arguments(self) -> dict[str, Any]:
        return {"vectors_config": vector_params(self.dimension)}

    def fits(self, params: models.CollectionParams) -> bool:
        vectors = params.vectors
        return (
            isinstance(vectors, models.VectorParams)
            and vectors.size == self.dimension
            and vectors.distance == models.Distance.COSINE
        )

    def points(
        self,
        tenant: Tenant,
        memory_ids: list[str],
        point_ids: list[str],
        texts: list[str],
        vectors: list[Embedded],
    ) -> list[models.PointStruct]:
        payload = {
            "org_id": tenant.org_id,
            "user_id": tenant.user_id,
            "agent_id": tenant.agent_id,
            "obtained_at": tenant.obtained_at,
        }
        return [
            models.PointStruct(
                id=point, vector=vector, payload={**payload, "memory_id": memory_id, "memory": text}
            )
            for memory_id, point, text, vector in zip(
                memory_ids, point_ids, texts, vectors, strict=True
            )
        ]

    def user_conditions(self, org_id: str, user_id: str) -> list[models.Condition]:
        return [match("org_id", org_id), match("user_id", user_id)]

    user_facet = "user_id"

    @staticmethod
    def facet_user(org_id: str, value: str) -> str:
        return value

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

    def results(
        self, responses: list[models.QueryResponse], score_threshold: float | None
    ) -> list[list[tuple[Memory, float]]]:
        return [
            [
                (self.memory(point.payload or {}), point.score)
                for point in response.points
                if score_threshold is None or point.score > score_threshold
            ]
            for response in responses
        ]

    @staticmethod
    def memory(payload: Mapping[str, Any]) -> Memory:
        return Memory(
            org_id=payload["org_id"],
            agent_id=payload["agent_id"],
            user_id=payload["user_id"],
            memory_id=payload["memory_id"],
            memory=payload["memory"],
            obtained_at=_obtained_at(payload),
        )


Layout = MemoraLayout | SingleVectorLayout


def vector_params(dimension: int) -> models.VectorParams:
    return models.VectorParams(size=dimension, distance=models.Distance.COSINE)


def check(layout: Layout, collection_name: str, params: models.CollectionParams) -> None:
    """An existing collection must have the store's layout, else every add would fail."""
    if layout.fits(params):
        return
    if isinstance(layout, MemoraLayout):
        remedy = (
            "it was not written by Memora's store nor by this one with Memora's models; if it "
            "holds memora-ogm's single-vector layout, open it with the embedding_function it "
            "was written with (by default before: embedding_function=HashingEmbedding())"
        )
    else:
        remedy = (
            f"this store needs one unnamed {layout.dimension}-dimensional cosine vector; a "
            "collection in Memora's layout is opened without an embedding_function"
        )
    raise ValueError(
        f"Collection {collection_name!r} exists with vectors {params.vectors!r} and sparse "
        f"vectors {params.sparse_vectors!r}: {remedy}. Or use another collection_name."
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


def search_filter(
    layout: Layout, memory_search_scope: object, org_id: object, user_id: object, agent_id: object
) -> models.Filter:
    """The filter of a search; in ``ORGANIZATION`` scope a ``user_id`` is ignored, as in Memora."""
    try:
        # By value, so the string "user" or Memora's own enum member work too.
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
        conditions = layout.user_conditions(org, user)
    agent = optional_id("agent_id", agent_id)
    if agent is not None:
        conditions.append(match("agent_id", agent))
    return models.Filter(must=conditions)


def organization_filter(org_id: object) -> models.Filter:
    return models.Filter(must=[match("org_id", require_id("org_id", org_id))])


def user_filter(layout: Layout, org_id: object, user_id: object) -> models.Filter:
    conditions = layout.user_conditions(
        require_id("org_id", org_id), require_id("user_id", user_id)
    )
    return models.Filter(must=conditions)
