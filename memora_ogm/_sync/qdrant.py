# Generated from memora_ogm/_async by scripts/generate_sync.py: do not edit.
"""``BaseVectorDB`` over Qdrant: a server, Qdrant Edge in a folder, or local mode in memory.

A point's id is its ``memory_id``, so a retried add overwrites instead of duplicating
(SPEC section 6). What does no I/O is in ``qdrant_common`` and ``layouts``, for both twins.
"""

from __future__ import annotations

import logging
import os
import threading
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from qdrant_client import QdrantClient, models
from typing_extensions import override

from memora_ogm import fork, observe
from memora_ogm._sync.compat import (
    EmbeddingFunction,
    acquire,
    close_on,
    current_loop,
    embedding_call,
    off_loop,
    watch_running_loop,
)
from memora_ogm._sync.edge import EdgeClient
from memora_ogm._sync.loop_bound import LoopBound
from memora_ogm._sync.vector_base import BaseVectorDB
from memora_ogm.schema.models import Memory
from memora_ogm.vector_db import layouts
from memora_ogm.vector_db import qdrant_common as common
from memora_ogm.vector_db.embedding import HashingEmbedding
from memora_ogm.vector_db.hybrid import HybridEmbedding
from memora_ogm.vector_db.scope import MemorySearchScope

logger = logging.getLogger("memora_ogm.vector_db.qdrant")

_Engine = QdrantClient | EdgeClient


class _LoopClient(LoopBound):
    """A server client of one process and event loop, closed with its loop."""

    def __init__(self, client: QdrantClient) -> None:
        super().__init__()
        self.client = client
        self.watcher = watch_running_loop(self.loop_shuts_down)

    def release(self) -> None:
        self.client.close()


class _ServerClients:
    """A ``url=`` store's clients, one per process and event loop: an async client's
    connections belong to the loop that opened them."""

    #: A server needs no lock of ours, and searches by its indexes.
    lock = None
    local_mode = False

    def __init__(self, open_client: Callable[[], QdrantClient]) -> None:
        self._open = open_client
        self._clients: dict[tuple[int, Any], _LoopClient] = {}
        self._lock = threading.Lock()
        fork.register(self)

    def get(self) -> QdrantClient:
        key = (fork.generation(), current_loop())
        held = self._clients.get(key)
        if held is None or held.closed:
            with self._lock:
                held = self._clients.get(key)
                if held is None or held.closed:
                    # Clients of closed loops cannot be awaited any more: left to the GC.
                    for gone in [key for key in self._clients if key[1] and key[1].is_closed()]:
                        del self._clients[gone]
                    held = self._clients[key] = _LoopClient(self._open())
        return held.client

    def forget_inherited(self) -> None:
        self._lock = threading.Lock()
        inherited, self._clients = self._clients, {}
        fork.keep(inherited)

    def close(self) -> None:
        """Close this process's clients, each on its own loop."""
        held, self._clients = self._clients, {}
        for (generation, loop), client in held.items():
            if generation == fork.generation():
                close_on(loop, client.close)


class QdrantDB(BaseVectorDB):
    """Memories in a Qdrant collection: a drop-in for Memora's own ``QdrantDB``
    (docs/vector-store.md tells more).

    Connection: a ready client, or at most one of ``url`` (with ``api_key``), ``location``
    and ``path``. ``path=DIR`` opens Qdrant Edge in-process (one store per folder, else
    ``FolderInUseError``; a local-mode folder raises ``LocalModeFolderError``). With none,
    qdrant-client's local mode in memory, for tests and prototypes.

    Embedding: by default Memora's dense and sparse fastembed models fused by RRF, in
    Memora's layout and collection (``memory_collection_v0_2``), downloaded on first use
    into ``embed_models_cache_dir``. Or ``embedding_function`` with its
    ``embedding_dimension`` (``HashingEmbedding()``: offline) in the single-vector layout.

    Search: at most ``search_limit`` results per query, those scoring at or below
    ``score_threshold`` dropped (Memora's 0.35 on RRF, 0.0 cosine with an
    ``embedding_function``; ``None`` keeps all).

    Pending changes: the facade journals each write's vector changes in
    ``pending_folder`` until its commit's outcome is known (docs/vector-store.md). By
    default ``DIR.pending`` beside a ``path=DIR`` store, a folder per server and
    collection under ``$MEMORA_OGM_HOME/pending`` for ``url=``, and none (this process's
    memory) for a store in memory or a client passed in.

    Safe across threads, tasks and event loops: the in-memory engine takes turns, a whole
    method each; ``url=`` opens a client per process and loop. A client passed in is used
    as given; a forked child reopens a server client and refuses an embedded engine
    (``InheritedEmbeddedStoreError``).
    """

    def __init__(
        self,
        client: _Engine | None = None,
        collection_name: str | None = None,
        embed_models_cache_dir: str | os.PathLike[str] | None = None,
        enable_logging: bool = False,
        *,
        url: str | None = None,
        api_key: str | None = None,
        location: str | None = None,
        path: str | os.PathLike[str] | None = None,
        embedding_function: EmbeddingFunction | HashingEmbedding | None = None,
        embedding_dimension: int | None = None,
        search_limit: int = 10,
        score_threshold: float | None | common.Default = common.DEFAULT,
        pending_folder: str | os.PathLike[str] | None | common.Default = common.DEFAULT,
    ) -> None:
        self.layout = layouts.for_embedding(
            embedding_function, embedding_dimension, embed_models_cache_dir
        )
        self.hybrid_embedding = (
            HybridEmbedding(embed_models_cache_dir) if embedding_function is None else None
        )
        self.embedding_function = (
            None if embedding_function is None else embedding_call(embedding_function)
        )
        self._guard_earlier_default = collection_name is None and embedding_function is None
        self.collection_name = common.require_id(
            "collection_name",
            self.layout.default_collection if collection_name is None else collection_name,
        )
        self.search_limit = common.positive_int("search_limit", search_limit)
        self.score_threshold = common.check_score_threshold(
            self.layout.default_score_threshold
            if score_threshold is common.DEFAULT
            else score_threshold
        )
        choices = {"client": client, "url": url, "location": location, "path": path}
        engines = (QdrantClient, EdgeClient)
        common.check_connection(client, engines, choices, api_key, self.collection_name)
        # Last, once the arguments are known good: opening a folder locks it.
        self._process_client: common.ProcessClient[_Engine] | _ServerClients
        if url is not None:
            # Built only to check the options and, once, the server's version.
            QdrantClient(url=url, api_key=api_key)
            self._process_client = _ServerClients(
                lambda: QdrantClient(url=url, api_key=api_key, check_compatibility=False)
            )
        elif client is not None:
            self.client = client
        elif path is not None:
            self.client = EdgeClient(path)
        else:
            self.client = QdrantClient(location=location or ":memory:")
        #: Where writes journal their vector changes until the graph settles them
        #: (:mod:`memora_ogm.vector_db.pending`); ``None``: in this process's memory.
        self.pending_folder = (
            common.pending_folder(self.collection_name, url=url, path=path)
            if pending_folder is common.DEFAULT
            else pending_folder
        )
        if enable_logging:
            logging.basicConfig(level=logging.INFO)

    @property
    def client(self) -> _Engine:
        """The client of this process (and, with ``url=``, of the running event loop)."""
        return self._process_client.get()

    @client.setter
    def client(self, client: _Engine) -> None:
        self._process_client = common.ProcessClient(client)

    @contextmanager
    def _engine(self) -> Iterator[_Engine]:
        """The client, held alone while in use if it is the in-memory engine."""
        client, lock = self.client, self._process_client.lock
        if lock is not None:
            acquire(lock)
        try:
            yield client
        finally:
            if lock is not None:
                lock.release()

    def _embed(self, texts: list[str], *, queries: bool) -> list[layouts.Embedded]:
        hybrid = self.hybrid_embedding
        if hybrid is None:
            assert self.embedding_function is not None and isinstance(
                self.layout, layouts.SingleVectorLayout
            )
            output = self.embedding_function(texts)
            return list(common.checked_vectors(output, len(texts), self.layout.dimension))
        embed = hybrid.embed_queries if queries else hybrid.embed_documents
        return [vectors.named() for vectors in off_loop(embed, texts)]

    @override
    def close(self) -> None:
        """Close the client (also one passed in, as Memora does); with ``url=``, those of
        every loop. A forked child closes only what it opened itself."""
        if isinstance(self._process_client, _ServerClients):
            self._process_client.close()
        elif self._process_client.owned():
            with self._engine() as client:
                client.close()

    @override
    @observe.observed("qdrant")
    def setup(self, *args: Any, **kwargs: Any) -> None:
        """Create the collection and its payload indexes if missing; safe to repeat.
        ``ValueError`` if an existing collection has another layout, or if the default one
        would hide memora-ogm's earlier default (searches would silently find nothing)."""
        name = self.collection_name
        with self._engine() as client:
            if not client.collection_exists(name):
                earlier = layouts.SINGLE_VECTOR_COLLECTION_NAME
                if self._guard_earlier_default and client.collection_exists(earlier):
                    raise ValueError(layouts.earlier_default_message(earlier))
                try:
                    client.create_collection(
                        collection_name=name,
                        hnsw_config=common.TENANT_HNSW,
                        **self.layout.create_arguments(),
                    )
                except Exception:
                    # Another process may have created it since the check.
                    if not client.collection_exists(name):
                        raise
                logger.info("Created Qdrant collection %s", name)
            info = client.get_collection(name)
            self.layout.check(name, info.config.params)
            with warnings.catch_warnings():
                # Local mode warns that it ignores payload indexes.
                warnings.filterwarnings(
                    "ignore", message=common.LOCAL_INDEX_WARNING, category=UserWarning
                )
                for field, schema in self.layout.indexes.items():
                    if field not in info.payload_schema:
                        client.create_payload_index(
                            collection_name=name, field_name=field, field_schema=schema, wait=True
                        )
        logger.info("Qdrant collection %s is set up", name)

    @override
    @observe.observed("qdrant")
    def add_memories(
        self,
        org_id: str,
        user_id: str,
        agent_id: str,
        memory_ids: list[str],
        memories: list[str],
        obtained_at: str,
    ) -> None:
        """Upsert the memories (ids: unique UUID strings); a failed add deletes what it wrote."""
        tenant = layouts.tenant(org_id, user_id, agent_id, obtained_at)
        point_ids = common.point_ids(memory_ids)
        texts = common.memory_texts(memories, len(point_ids))
        self._upsert([(tenant, memory_id) for memory_id in memory_ids], point_ids, texts)

    @observe.observed("qdrant")
    def add_memory_models(self, memories: list[Memory]) -> None:
        """Upsert memories of any tenants as one write: one embedding call, one upsert (of
        up to ``UPSERT_BATCH`` points), so one flush of the embedded store. For a batch of
        saves' vector half, whose memories are of many users (``add_memories`` takes one
        user, agent and timestamp a call)."""
        owners = [
            (
                layouts.tenant(m.org_id, m.user_id, m.agent_id, m.obtained_at.isoformat()),
                m.memory_id,
            )
            for m in memories
        ]
        point_ids = common.point_ids([memory.memory_id for memory in memories])
        texts = common.memory_texts([memory.memory for memory in memories], len(point_ids))
        self._upsert(owners, point_ids, texts)

    def _upsert(
        self, owners: list[tuple[layouts.Tenant, str]], point_ids: list[str], texts: list[str]
    ) -> None:
        """Embed ``texts`` and write their points (``owners``: each one's tenant and memory
        id); a failed write deletes what it wrote."""
        if not texts:
            return
        vectors = self._embed(texts, queries=False)
        points = [
            point
            for (tenant, memory_id), point_id, text, vector in zip(
                owners, point_ids, texts, vectors, strict=True
            )
            for point in self.layout.points(tenant, [memory_id], [point_id], [text], [vector])
        ]
        with self._engine() as client:
            try:
                for start in range(0, len(points), common.UPSERT_BATCH):
                    client.upsert(
                        collection_name=self.collection_name,
                        points=points[start : start + common.UPSERT_BATCH],
                        wait=True,
                    )
            except Exception:
                try:
                    client.delete(
                        collection_name=self.collection_name,
                        points_selector=models.PointIdsList(points=list(point_ids)),
                        wait=True,
                    )
                except Exception:
                    logger.exception("Could not remove the points of a failed add")
                raise
        logger.info("Added %d memories to %s", len(points), self.collection_name)

    @override
    @observe.observed("qdrant")
    def search_memory(
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
        results = self.search_memories(
            [query], memory_search_scope, org_id, user_id=user_id, agent_id=agent_id
        )
        return results[0]

    @override
    @observe.observed("qdrant")
    def search_memories(
        self,
        queries: list[str],
        memory_search_scope: MemorySearchScope,
        org_id: str,
        user_id: str | None = None,
        agent_id: str | None = None,
    ) -> list[list[tuple[Memory, float]]]:
        """All queries in one request; the scope may be given by value (``"user"``)."""
        texts = common.query_texts(queries)
        search = self.layout.search_filter(memory_search_scope, org_id, user_id, agent_id)
        vectors = self._embed(texts, queries=True)
        requests = self.layout.requests(
            vectors, search, self.search_limit, local_mode=self._process_client.local_mode
        )
        with self._engine() as client:
            responses = client.query_batch_points(
                collection_name=self.collection_name, requests=requests
            )
        return self.layout.results(responses, self.score_threshold)

    @override
    @observe.observed("qdrant")
    def delete_memory(self, memory_id: str) -> None:
        self._delete(models.PointIdsList(points=[common.point_id(memory_id)]))

    @override
    @observe.observed("qdrant")
    def delete_memories(self, memory_ids: list[str]) -> None:
        point_ids = common.point_ids(memory_ids)
        if point_ids:
            self._delete(models.PointIdsList(points=list(point_ids)))

    @override
    @observe.observed("qdrant")
    def delete_all_user_memories(self, org_id: str, user_id: str) -> None:
        self._delete(models.FilterSelector(filter=self.layout.user_filter(org_id, user_id)))

    @override
    @observe.observed("qdrant")
    def delete_all_organization_memories(self, org_id: str) -> None:
        self._delete(models.FilterSelector(filter=layouts.organization_filter(org_id)))

    def _delete(self, selector: models.PointIdsList | models.FilterSelector) -> None:
        with self._engine() as client:
            client.delete(collection_name=self.collection_name, points_selector=selector, wait=True)
        logger.info("Deleted %s from %s", type(selector).__name__, self.collection_name)

    @observe.observed("qdrant")
    def tenants(self, org_id: str | None = None) -> dict[tuple[str, str], int]:
        """For the consistency check: points per (organisation, user), of ``org_id`` if given."""
        orgs = None if org_id is None else [common.require_id("org_id", org_id)]
        counts: dict[tuple[str, str], int] = {}
        with self._engine() as client:
            for org in orgs or self._facet(client, "org_id", None):
                within = layouts.organization_filter(org)
                users = self._facet(client, self.layout.user_facet, within)
                for value, count in users.items():
                    counts[org, self.layout.facet_user(org, value)] = count
            return counts

    def _facet(self, client: _Engine, key: str, within: models.Filter | None) -> dict[str, int]:
        response = client.facet(
            self.collection_name, key=key, facet_filter=within, limit=common.FACET_LIMIT, exact=True
        )
        return common.facet_counts(key, response)

    @observe.observed("qdrant")
    def points_page(
        self, org_id: str, user_id: str, offset: str | None, limit: int
    ) -> tuple[list[tuple[str, dict[str, Any]]], str | None]:
        """For the consistency check: a page of a user's (point id, payload) pairs in id
        order, and the next page's offset (``None`` after the last)."""
        with self._engine() as client:
            points, following = client.scroll(
                self.collection_name,
                scroll_filter=self.layout.user_filter(org_id, user_id),
                limit=common.positive_int("limit", limit),
                offset=offset,
                with_payload=True,
                with_vectors=False,
            )
        return common.id_payloads(points), None if following is None else str(following)

    @observe.observed("qdrant")
    def payloads(self, memory_ids: list[str]) -> dict[str, dict[str, Any]]:
        """The payloads of the ``memory_ids`` that have a point, by point id."""
        point_ids = common.point_ids(memory_ids)
        if not point_ids:
            return {}
        with self._engine() as client:
            points = client.retrieve(
                self.collection_name, ids=point_ids, with_payload=True, with_vectors=False
            )
        return dict(common.id_payloads(points))
