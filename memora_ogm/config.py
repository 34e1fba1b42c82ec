"""Settings shared by the framework integrations, and an interface per process.

The names (:data:`NAMES`) are the ``memora-ogm`` command's environment variables. Django
reads them from ``MEMORA_OGM``, Flask from ``MEMORA_OGM_<NAME>`` config keys, FastAPI
from the environment; a name the settings leave out falls back to the environment.
"""

from __future__ import annotations

import atexit
import importlib
import os
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from memora_ogm import fork
from memora_ogm.server.connection import Neo4jConnection, connection_from_env

if TYPE_CHECKING:
    from memora_ogm import Neo4jGraphInterface, sync

#: The settings, in the order the docs list them.
NAMES = (
    "NEO4J_URI",
    "NEO4J_USERNAME",
    "NEO4J_PASSWORD",
    "NEO4J_DATABASE",
    "QDRANT_URL",
    "QDRANT_API_KEY",
    "QDRANT_PATH",
    "COLLECTION",
    "EMBEDDER",
)
#: ``EMBEDDER`` values that name an embedding rather than import one.
MEMORA_MODELS, HASHING = "memora", "hashing"


class ConfigurationError(ValueError):
    """The integration's settings are incomplete or contradict each other."""


@dataclass(frozen=True)
class MemoraConfig:
    """Where the graph and the vector store are, read once from a framework's settings."""

    neo4j: Neo4jConnection
    qdrant_url: str | None = None
    qdrant_api_key: str | None = None
    qdrant_path: str | None = None
    collection: str | None = None
    #: ``"memora"`` (Memora's fastembed models, the default), ``"hashing"`` (offline,
    #: lexical), a dotted path to an embedding function, or the function itself.
    embedder: Any = MEMORA_MODELS

    @classmethod
    def from_settings(
        cls, settings: Mapping[str, Any], environ: Mapping[str, str] | None = None
    ) -> MemoraConfig:
        """``settings`` by the names of :data:`NAMES`; what they lack, from ``environ``
        (the process's environment by default)."""
        env = os.environ if environ is None else environ
        unknown = sorted(set(settings) - set(NAMES))
        if unknown:
            raise ConfigurationError(f"unknown memora-ogm settings {unknown}; known: {NAMES}")
        values = {name: settings.get(name, env.get(name)) for name in NAMES}
        neo4j = connection_from_env(
            {name: str(values[name]) for name in NAMES[:4] if values[name] is not None}
        )
        if neo4j is None:
            raise ConfigurationError("NEO4J_URI is not set (in the settings or the environment)")
        if values["QDRANT_URL"] and values["QDRANT_PATH"]:
            raise ConfigurationError("QDRANT_URL and QDRANT_PATH are both set; keep one")
        return cls(
            neo4j=neo4j,
            qdrant_url=values["QDRANT_URL"] or None,
            qdrant_api_key=values["QDRANT_API_KEY"] or None,
            qdrant_path=values["QDRANT_PATH"] or None,
            collection=values["COLLECTION"] or None,
            embedder=values["EMBEDDER"] or MEMORA_MODELS,
        )

    @property
    def has_vector_store(self) -> bool:
        return bool(self.qdrant_url or self.qdrant_path)

    def environ(self) -> dict[str, str]:
        """The settings as the ``memora-ogm`` command's environment variables (``EMBEDDER``
        when it names one: ``memora-ogm setup`` creates the collection of its layout)."""
        embedder = self.embedder if isinstance(self.embedder, str) else None
        values = {**self.neo4j.env(), "QDRANT_API_KEY": self.qdrant_api_key, "EMBEDDER": embedder}
        return {name: value for name, value in values.items() if value is not None}

    def store_options(self) -> dict[str, Any]:
        """``QdrantDB``'s keyword arguments (either twin's), the embedder resolved."""
        options: dict[str, Any] = {"collection_name": self.collection}
        if self.qdrant_url:
            options.update(url=self.qdrant_url, api_key=self.qdrant_api_key)
        else:
            options["path"] = self.qdrant_path
        embedder = self.embedder
        if embedder == HASHING:
            from memora_ogm.vector_db.embedding import HashingEmbedding

            options["embedding_function"] = HashingEmbedding()
        elif isinstance(embedder, str) and embedder != MEMORA_MODELS:
            module, _, name = embedder.rpartition(".")
            try:
                options["embedding_function"] = getattr(importlib.import_module(module), name)
            except (ImportError, AttributeError, ValueError) as error:
                raise ConfigurationError(f"EMBEDDER {embedder!r} cannot be imported") from error
        elif embedder != MEMORA_MODELS:
            options["embedding_function"] = embedder
        return options

    def open_sync(self) -> sync.Neo4jGraphInterface:
        """A new sync facade, with its vector store when one is configured."""
        from memora_ogm import sync

        store = sync.QdrantDB(**self.store_options()) if self.has_vector_store else None
        return sync.Neo4jGraphInterface.from_connection(self.neo4j, store)

    def open_async(self) -> Neo4jGraphInterface:
        """A new async facade, with its vector store when one is configured."""
        from memora_ogm import Neo4jGraphInterface
        from memora_ogm.vector_db.qdrant import QdrantDB

        store = QdrantDB(**self.store_options()) if self.has_vector_store else None
        return Neo4jGraphInterface.from_connection(self.neo4j, store)


def close_sync(memora: sync.Neo4jGraphInterface) -> None:
    """Close a facade the integration opened, and its store (its owner here)."""
    memora.close()
    store = memora.get_associated_vector_db()
    if store is not None:
        store.close()


async def close_async(memora: Neo4jGraphInterface) -> None:
    """:func:`close_sync` for the async facade."""
    await memora.close()
    store = memora.get_associated_vector_db()
    if store is not None:
        await store.close()


T = TypeVar("T")


class PerProcess(Generic[T]):
    """One object per process, opened on first use and closed when the process exits.

    A forked child opens its own (an embedded vector store refuses a child) and never
    closes the parent's.
    """

    def __init__(self, open_one: Callable[[], T], close_one: Callable[[T], None]) -> None:
        self._open, self._close = open_one, close_one
        self._held: tuple[int, T] | None = None
        self._lock = threading.Lock()
        atexit.register(self.close)

    def get(self) -> T:
        held = self._held
        if held is None or held[0] != fork.generation():
            with self._lock:
                held = self._held
                if held is None or held[0] != fork.generation():
                    if held is not None:
                        fork.keep(held[1])
                    held = self._held = (fork.generation(), self._open())
        return held[1]

    def close(self) -> None:
        """Close this process's object, if it opened one; the next ``get()`` opens anew."""
        with self._lock:
            held, self._held = self._held, None
        if held is not None and held[0] == fork.generation():
            self._close(held[1])
