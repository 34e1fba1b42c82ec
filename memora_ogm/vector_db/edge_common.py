"""The Edge adapter's part without async I/O: the folder, its lock, and the translation
of qdrant-client's ``models`` to ``qdrant_edge`` (only what the layouts build, else
``TypeError``).
"""

from __future__ import annotations

import fcntl
import json
import os
import threading
import uuid
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import IO, Any

import qdrant_edge as edge
from qdrant_client import models
from qdrant_client.http import models as rest

from memora_ogm import fork
from memora_ogm.errors import FolderInUseError, LocalModeFolderError

#: So that a second opener of a folder fails at once and clearly.
LOCK_FILE = ".memora-ogm.lock"
SHARD_CONFIG = "edge_config.json"
#: Qdrant's default RRF constant, as Memora's scores: ``1/(2 + rank)`` summed.
RRF_K = 2

_DISTANCES = {
    models.Distance.COSINE: edge.Distance.Cosine,
    models.Distance.DOT: edge.Distance.Dot,
    models.Distance.EUCLID: edge.Distance.Euclid,
    models.Distance.MANHATTAN: edge.Distance.Manhattan,
}


def is_local_mode_folder(folder: Path) -> bool:
    """qdrant-client's local mode writes ``meta.json``."""
    return (folder / "meta.json").is_file()


def folder_path(path: object) -> Path:
    if not isinstance(path, str | os.PathLike) or not os.fspath(path):
        raise ValueError("`path` must be a folder's path (a string or a path object).")
    return Path(os.fspath(path))


def shard_folder(folder: Path, collection_name: str) -> Path:
    """The shard of a collection, whose name must be one plain folder name."""
    if (
        not isinstance(collection_name, str)
        or collection_name in {"", ".", ".."}
        or collection_name.startswith(".")
        or any(separator in collection_name for separator in ("/", "\\", "\0"))
    ):
        raise ValueError(
            f"Collection name {collection_name!r} cannot name a folder of the embedded "
            "store: use letters, digits, '-' and '_'."
        )
    return folder / collection_name


def is_shard(path: Path) -> bool:
    return (path / SHARD_CONFIG).is_file()


def _lock_folder(folder: Path) -> IO[bytes]:
    """Create the folder if missing and take its lock; a local-mode folder must not open as
    an empty Edge store. A ``flock`` belongs to one open file, so it refuses a second store
    in this process too (Edge's WAL lock says only "WouldBlock")."""
    if folder.exists() and not folder.is_dir():
        raise ValueError(f"`path` {folder} is not a folder.")
    if is_local_mode_folder(folder):
        raise LocalModeFolderError(
            f"{folder} holds a vector store of qdrant-client's local mode, which memora-ogm "
            "no longer embeds (QdrantDB(path=) now opens Qdrant Edge). Move it once with "
            f"`memora-ogm vectors migrate --qdrant-path {folder}`; the old folder is kept "
            "beside it."
        )
    folder.mkdir(parents=True, exist_ok=True)
    handle = open(folder / LOCK_FILE, "a+b")  # noqa: SIM115 (held until close)
    try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        handle.close()
        raise FolderInUseError(
            f"The vector store in {folder} is already open (by another QdrantDB in this "
            "process or in another one). Open a folder once and share that store, which "
            "is safe across threads, or close the first before opening it again."
        ) from None
    return handle


class EdgeFolder:
    """The folder of ``QdrantDB(path=)``: its lock and its open shards."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.folder = folder_path(path)
        self._lock_file: IO[bytes] | None = _lock_folder(self.folder)
        self._shards: dict[str, edge.EdgeShard] = {}
        # Two threads must not load one shard twice.
        self._opening = threading.Lock()

    def _shard(self, collection_name: str, create: edge.EdgeConfig | None = None) -> edge.EdgeShard:
        """A collection's shard, loaded on first use, or created from ``create``."""
        shard = self._shards.get(collection_name)
        if shard is not None and create is None:
            return shard
        folder = shard_folder(self.folder, collection_name)
        with self._opening:
            if self._lock_file is None:
                raise RuntimeError(f"The vector store in {self.folder} is closed.")
            if create is not None:
                if is_shard(folder):
                    raise ValueError(f"Collection {collection_name!r} already exists")
                self._shards[collection_name] = edge.EdgeShard.create(str(folder), create)
            elif collection_name not in self._shards:
                if not is_shard(folder):
                    raise ValueError(f"Collection {collection_name!r} not found in {self.folder}")
                self._shards[collection_name] = edge.EdgeShard.load(str(folder))
            return self._shards[collection_name]

    def _update(self, collection_name: str, operation: edge.UpdateOperation) -> None:
        """Apply and flush: a memory the store acknowledged is kept."""
        shard = self._shard(collection_name)
        shard.update(operation)
        shard.flush()

    def release(self) -> None:
        """Flush and close every shard, then unlock the folder; idempotent."""
        with self._opening:
            shards, self._shards = self._shards, {}
            lock_file, self._lock_file = self._lock_file, None
        try:
            for shard in shards.values():
                shard.flush()
                shard.close()
        finally:
            if lock_file is not None:
                lock_file.close()

    def forget_inherited(self) -> None:
        """In a forked child: drop the parent's shards and lock unclosed (closing them
        would flush into the parent's folder)."""
        fork.keep((self._shards, self._lock_file))
        self._opening = threading.Lock()
        self._shards = {}
        self._lock_file = None


def shard_config(
    vectors_config: models.VectorParams | Mapping[str, models.VectorParams] | None = None,
    sparse_vectors_config: Mapping[str, models.SparseVectorParams] | None = None,
    hnsw_config: models.HnswConfigDiff | None = None,
    quantization_config: models.QuantizationConfig | None = None,
) -> edge.EdgeConfig:
    if isinstance(vectors_config, models.VectorParams):
        vectors_config = {"": vectors_config}
    if quantization_config is not None and not isinstance(
        quantization_config, models.ScalarQuantization
    ):
        raise TypeError(
            f"The embedded store keeps scalar quantisation only, not {quantization_config!r}."
        )
    return edge.EdgeConfig(
        vectors={
            name: edge.EdgeVectorParams(size=params.size, distance=_DISTANCES[params.distance])
            for name, params in (vectors_config or {}).items()
        },
        sparse_vectors={
            name: edge.EdgeSparseVectorParams(
                modifier=edge.Modifier.Idf if params.modifier == models.Modifier.IDF else None
            )
            for name, params in (sparse_vectors_config or {}).items()
        },
        # Qdrant's defaults; used only if a shard is ever optimised, which nothing does.
        hnsw_config=None
        if hnsw_config is None
        else edge.HnswIndexConfig(
            m=16 if hnsw_config.m is None else hnsw_config.m,
            ef_construct=hnsw_config.ef_construct or 100,
            full_scan_threshold=hnsw_config.full_scan_threshold or 10_000,
            payload_m=hnsw_config.payload_m,
        ),
        quantization_config=None
        if quantization_config is None
        else edge.ScalarQuantizationConfig(
            type=edge.ScalarType.Int8,
            quantile=quantization_config.scalar.quantile,
            always_ram=quantization_config.scalar.always_ram,
        ),
    )


def collection_info(shard: Path, payload_schema: Mapping[str, Any]) -> models.CollectionInfo:
    """What the store reads of ``get_collection``: the vectors (from Edge's file) and indexes."""
    config = json.loads((shard / SHARD_CONFIG).read_text())
    dense = {
        name: models.VectorParams(size=params["size"], distance=models.Distance(params["distance"]))
        for name, params in (config.get("vectors") or {}).items()
    }
    sparse = {name: models.SparseVectorParams() for name in config.get("sparse_vectors") or {}}
    params = models.CollectionParams(
        vectors=dense[""] if list(dense) == [""] else dense, sparse_vectors=sparse or None
    )
    return models.CollectionInfo.model_construct(
        config=models.CollectionConfig.model_construct(params=params),
        payload_schema=dict(payload_schema),
    )


def field_index(schema: models.KeywordIndexParams) -> edge.KeywordIndexParams:
    if not isinstance(schema, models.KeywordIndexParams):
        raise TypeError(f"The embedded store keeps keyword indexes only, not {schema!r}.")
    return edge.KeywordIndexParams(is_tenant=schema.is_tenant)


def point(point: models.PointStruct) -> edge.Point:
    vector = point.vector
    if isinstance(vector, Mapping):
        vectors: Any = {name: _vector(value) for name, value in vector.items()}
    else:
        vectors = _vector(vector)
    return edge.Point(point_ids([point.id])[0], vectors, point.payload or {})


def _vector(vector: object) -> Any:
    if isinstance(vector, models.SparseVector):
        return edge.SparseVector(list(vector.indices), list(vector.values))
    if type(vector) is list:  # a point's validated floats (a copy would cost 23 µs)
        return vector
    if isinstance(vector, Sequence) and not isinstance(vector, str):
        return [float(value) for value in vector]
    raise TypeError(f"The embedded store keeps dense and sparse vectors, not {vector!r}.")


def point_ids(ids: Sequence[models.ExtendedPointId]) -> list[edge.PointId]:
    return [point_id if isinstance(point_id, int) else str(point_id) for point_id in ids]


def record_id(point_id: object) -> models.ExtendedPointId:
    return point_id if isinstance(point_id, int) else str(uuid.UUID(str(point_id)))


def record(found: edge.Record, with_vectors: bool = False) -> models.Record:
    vector: Any = found.vector if with_vectors else None
    if isinstance(vector, Mapping):
        vector = {name: _model_vector(value) for name, value in vector.items()}
        vector = vector[""] if list(vector) == [""] else vector
    elif vector is not None:
        vector = _model_vector(vector)
    return models.Record(id=record_id(found.id), payload=found.payload, vector=vector)


def _model_vector(vector: Any) -> Any:
    if isinstance(vector, edge.SparseVector):
        return models.SparseVector(indices=list(vector.indices), values=list(vector.values))
    return list(vector)


def query_response(points: list[edge.ScoredPoint]) -> rest.QueryResponse:
    # models.QueryResponse is fastembed's result type, not the REST one.
    return rest.QueryResponse(
        points=[
            models.ScoredPoint(
                id=record_id(found.id), version=0, score=found.score, payload=found.payload
            )
            for found in points
        ]
    )


def condition_filter(filter_: models.Filter | None) -> edge.Filter | None:
    """The layouts' filters: a must-list of field matches or nested filters."""
    if filter_ is None:
        return None
    if not isinstance(filter_.must, list) or filter_.should or filter_.must_not:
        raise TypeError(f"The embedded store does not translate the filter {filter_!r}.")
    return edge.Filter(must=[_condition(condition) for condition in filter_.must])


def _condition(condition: object) -> Any:
    if isinstance(condition, models.Filter):
        return condition_filter(condition)
    if isinstance(condition, models.FieldCondition) and isinstance(
        condition.match, models.MatchValue
    ):
        return edge.FieldCondition(condition.key, match=edge.MatchValue(condition.match.value))
    raise TypeError(f"The embedded store does not translate the condition {condition!r}.")


def query_request(request: models.QueryRequest) -> edge.QueryRequest:
    """A layout's query: nearest to a vector, or prefetches fused by RRF."""
    prefetches = request.prefetch
    listed = prefetches if isinstance(prefetches, list) else [prefetches] if prefetches else []
    query: Any
    if isinstance(request.query, models.FusionQuery) and request.query.fusion == models.Fusion.RRF:
        query = edge.Fusion.Rrf(k=RRF_K)
    else:
        query = _nearest(request.query, request.using)
    return edge.QueryRequest(
        limit=request.limit or 10,
        query=query,
        prefetches=[_prefetch(prefetch, request.filter) for prefetch in listed] or None,
        filter=condition_filter(request.filter),
        with_payload=bool(request.with_payload),
        score_threshold=request.score_threshold,
        params=_search_params(request.params),
    )


def _prefetch(prefetch: models.Prefetch, outer: models.Filter | None) -> edge.Prefetch:
    if prefetch.prefetch is not None or prefetch.query is None:
        raise TypeError("The embedded store translates one level of prefetches with a query.")
    # A server applies the query's filter to its prefetches too.
    own = prefetch.filter
    within = own or outer if own is None or outer is None else models.Filter(must=[own, outer])
    return edge.Prefetch(
        prefetch.limit or 10,
        _nearest(prefetch.query, prefetch.using),
        filter=condition_filter(within),
        score_threshold=prefetch.score_threshold,
        params=_search_params(prefetch.params),
    )


def _nearest(query: object, using: str | None) -> Any:
    if isinstance(query, models.NearestQuery):
        query = query.nearest
    return edge.Query.Nearest(_vector(query), using)


def _search_params(params: models.SearchParams | None) -> edge.SearchParams | None:
    if params is None:
        return None
    quantization = params.quantization
    return edge.SearchParams(
        hnsw_ef=params.hnsw_ef,
        exact=bool(params.exact),
        quantization=None
        if quantization is None
        else edge.QuantizationSearchParams(
            ignore=bool(quantization.ignore),
            rescore=quantization.rescore,
            oversampling=quantization.oversampling,
        ),
    )


def selector_operation(
    selector: models.PointIdsList | models.FilterSelector,
) -> edge.UpdateOperation:
    if isinstance(selector, models.PointIdsList):
        return edge.UpdateOperation.delete_points(point_ids(selector.points))
    if not isinstance(selector, models.FilterSelector):
        raise TypeError(f"The embedded store does not translate the selector {selector!r}.")
    translated = condition_filter(selector.filter)
    assert translated is not None
    return edge.UpdateOperation.delete_points_by_filter(translated)
