"""What ``QdrantDB`` does without I/O besides its layouts: argument checks, ids, clients."""

from __future__ import annotations

import hashlib
import math
import os
import threading
import uuid
import weakref
from collections.abc import Mapping
from datetime import datetime, timezone
from enum import Enum
from pathlib import Path
from typing import Any, Generic, TypeVar

import numpy as np
from qdrant_client import models
from qdrant_client.local.async_qdrant_local import AsyncQdrantLocal
from qdrant_client.local.qdrant_local import QdrantLocal

from memora_ogm import fork
from memora_ogm.server.state import memora_home
from memora_ogm.vector_db.edge_common import EdgeFolder, folder_path, shard_folder

UPSERT_BATCH = 256
#: Every search filters by org_id: per-tenant graphs only, no useless global one (m=0).
TENANT_HNSW = models.HnswConfigDiff(payload_m=16, m=0)
LOCAL_INDEX_WARNING = "Payload indexes have no effect in the local Qdrant"


class Default(Enum):
    """A parameter left to the layout's own default."""

    LAYOUT = "layout"


DEFAULT = Default.LAYOUT


def pending_folder(
    collection_name: str, *, url: str | None, path: str | os.PathLike[str] | None
) -> Path | None:
    """Where a store's writes journal their pending changes by default: beside an Edge
    folder, per server and collection under ``$MEMORA_OGM_HOME``, else in memory."""
    if path is not None:
        folder = Path(path).expanduser().absolute()
        return folder.with_name(f"{folder.name}.pending")
    if url is not None:
        digest = hashlib.sha256(f"{url}\n{collection_name}".encode()).hexdigest()[:16]
        return memora_home() / "pending" / digest
    return None


def require_id(name: str, value: object) -> str:
    """An id must be a non-blank string; anything else would silently match nothing."""
    if not isinstance(value, str) or not value.strip():
        raise ValueError(f"`{name}` must be a non-empty string.")
    return value


def positive_int(name: str, value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"`{name}` must be a positive integer.")
    return value


def optional_id(name: str, value: object) -> str | None:
    return None if value is None else require_id(name, value)


def require_list(name: str, value: object) -> list[Any]:
    """Lists (or tuples) only: a bare string would be iterated character by character."""
    if not isinstance(value, list | tuple):
        raise ValueError(f"`{name}` must be a list.")
    return list(value)


def check_score_threshold(score_threshold: object) -> float | None:
    if score_threshold is not None and (
        isinstance(score_threshold, bool)
        or not isinstance(score_threshold, int | float)
        or not math.isfinite(score_threshold)
    ):
        raise ValueError("`score_threshold` must be a finite number or None.")
    return score_threshold


def check_connection(
    client: object,
    engines: tuple[type, type],
    choices: Mapping[str, Any],
    api_key: object,
    collection: str,
) -> None:
    """At most one of ``choices``; ``api_key`` only with ``url``; a client of ``engines``;
    with ``path``, a collection name that names a folder."""
    given = [name for name, value in choices.items() if value is not None]
    if len(given) > 1:
        raise ValueError(f"Give at most one of {', '.join(given)}.")
    if api_key is not None and choices["url"] is None:
        raise ValueError("`api_key` is only used with `url`.")
    if client is not None and not isinstance(client, engines):
        server, folder = (engine.__name__ for engine in engines)
        raise ValueError(
            f"The client must be a qdrant_client.{server} or another store's {folder}."
        )
    if choices["path"] is not None:
        shard_folder(folder_path(choices["path"]), collection)


def checked_vectors(output: object, count: int, dimension: int) -> list[list[float]]:
    """The embedding function's output, checked so that a faulty model fails loudly."""
    try:
        vectors = np.asarray(output, dtype=np.float64)
    except (TypeError, ValueError):  # ragged or not numbers
        vectors = np.empty(0)
    if vectors.shape != (count, dimension) or not np.isfinite(vectors).all():
        raise ValueError(
            f"The embedding function must return {count} vectors of "
            f"{dimension} finite floats, one per text."
        )
    result: list[list[float]] = vectors.tolist()
    return result


def point_id(memory_id: object) -> str:
    """The canonical UUID string of a memory id, which Qdrant requires as point id."""
    try:
        return str(uuid.UUID(require_id("memory_id", memory_id)))
    except ValueError:
        raise ValueError(f"memory id {memory_id!r} is not a UUID.") from None


def point_ids(memory_ids: object) -> list[str]:
    canonical = [point_id(memory_id) for memory_id in require_list("memory_ids", memory_ids)]
    if len(set(canonical)) != len(canonical):
        raise ValueError("`memory_ids` must not contain duplicates.")
    return canonical


def iso_datetime(obtained_at: object) -> str:
    """A valid ISO-8601 datetime, made timezone-aware (naive is taken as UTC)."""
    if not isinstance(obtained_at, str):
        raise ValueError("`obtained_at` must be an ISO-8601 datetime string.")
    # Python 3.10's parser does not know the "Z" suffix.
    text = obtained_at[:-1] + "+00:00" if obtained_at.endswith("Z") else obtained_at
    try:
        parsed = datetime.fromisoformat(text)
    except ValueError:
        raise ValueError(f"`obtained_at` {obtained_at!r} is not an ISO-8601 datetime.") from None
    return (parsed if parsed.tzinfo else parsed.replace(tzinfo=timezone.utc)).isoformat()


def memory_texts(memories: object, count: int) -> list[str]:
    texts = require_list("memories", memories)
    if len(texts) != count:
        raise ValueError("`memory_ids` and `memories` must have the same length.")
    if not all(isinstance(text, str) and text.strip() for text in texts):
        raise ValueError("Every memory must be a non-empty string.")
    return texts


def query_texts(queries: object) -> list[str]:
    texts = require_list("queries", queries)
    if not texts or not all(isinstance(text, str) and text.strip() for text in texts):
        raise ValueError("`queries` must be a non-empty list of non-empty strings.")
    return texts


def match(key: str, value: str) -> models.FieldCondition:
    return models.FieldCondition(key=key, match=models.MatchValue(value=value))


#: Tenants one facet count lists at most; more raise rather than pass unchecked.
FACET_LIMIT = 1_000_000


def facet_counts(key: str, response: models.FacetResponse) -> dict[str, int]:
    """Points per facet value; a full page means some were left out."""
    if len(response.hits) >= FACET_LIMIT:
        raise RuntimeError(f"More than {FACET_LIMIT} values of {key!r}: too many to list.")
    return {str(hit.value): hit.count for hit in response.hits}


def id_payloads(points: list[models.Record]) -> list[tuple[str, dict[str, Any]]]:
    return [(str(point.id), point.payload or {}) for point in points]


class InheritedEmbeddedStoreError(RuntimeError):
    """An embedded store was used by a process forked after the store was opened: the
    child's copy of the engine would silently disagree with the parent's."""


ClientT = TypeVar("ClientT")
LocalEngine = QdrantLocal | AsyncQdrantLocal

#: One lock per engine, which two stores may share; ``setdefault`` is atomic.
_ENGINE_LOCKS: weakref.WeakKeyDictionary[LocalEngine, threading.Lock] = weakref.WeakKeyDictionary()


def _local_engine(client: object) -> LocalEngine | None:
    """The local-mode engine qdrant-client keeps in ``_client``, if any."""
    engine = getattr(client, "_client", None)
    return engine if isinstance(engine, LocalEngine) else None


class ProcessClient(Generic[ClientT]):
    """A Qdrant client as this process may use it: :attr:`lock` serialises calls on local
    mode, which is not thread-safe; a forked child reopens a server client with the same
    options and refuses an embedded engine."""

    def __init__(self, client: ClientT) -> None:
        self._client: ClientT = client
        self._pid = os.getpid()
        engine = _local_engine(client)
        self.local_mode = engine is not None
        self.embedded = self.local_mode or isinstance(client, EdgeFolder)
        self.lock = None if engine is None else _ENGINE_LOCKS.setdefault(engine, threading.Lock())
        self._reopening = threading.Lock()
        fork.register(self)

    def get(self) -> ClientT:
        if self._pid != os.getpid():
            with self._reopening:
                if self._pid != os.getpid():
                    self._reopen()
        return self._client

    def _reopen(self) -> None:
        if self.embedded:
            raise InheritedEmbeddedStoreError(
                f"This embedded Qdrant store was opened by process {self._pid} before it "
                f"forked; process {os.getpid()} cannot use it. Open the store in each process "
                "after the fork (a folder in one process at a time), or use a Qdrant server "
                "(url=) shared by all of them."
            )
        fork.keep(self._client)
        server: Any = self._client
        self._client = type(self._client)(**server.init_options)
        self._pid = os.getpid()

    def owned(self) -> bool:
        """Whether this process opened the client (else it is not to close)."""
        return self._pid == os.getpid()

    def forget_inherited(self) -> None:
        """In a forked child: the copy must not release the parent's folder lock."""
        self._reopening = threading.Lock()  # a parent thread may have held it at the fork
        engine = _local_engine(self._client)
        if isinstance(self._client, EdgeFolder):
            self._client.forget_inherited()
        elif engine is not None:
            # Its close() would unlock the flock the child shares with the parent.
            engine._flock_file = None
            fork.keep(self._client)
