"""Memora's embedding: a dense and a sparse fastembed model, for a hybrid search.

Memora embeds through qdrant-client's fastembed integration, gone in qdrant-client 1.20;
this module calls fastembed itself and gives the same vectors under the same names. The
dense model is registered under a private name with fastembed 0.5's ``[CLS]`` pooling
(later versions mean-pool). fastembed is imported, and models loaded, on first use only.
"""

from __future__ import annotations

import os
import socket
import threading
import urllib.parse
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from qdrant_client import models

from memora_ogm.errors import EmbedderUnavailableError

if TYPE_CHECKING:
    from fastembed import SparseTextEmbedding, TextEmbedding

MEMORA_DENSE_MODEL = "sentence-transformers/paraphrase-multilingual-MiniLM-L12-v2"
MEMORA_SPARSE_MODEL = "prithivida/Splade_PP_en_v1"
DENSE_DIMENSION = 384
DENSE_VECTOR = "fast-paraphrase-multilingual-minilm-l12-v2"
SPARSE_VECTOR = "fast-sparse-splade_pp_en_v1"
_DENSE_AS_FASTEMBED_05 = "memora-ogm/paraphrase-multilingual-MiniLM-L12-v2-cls-pooled"

OFFLINE_CHOICE = (
    "For an embedding that downloads nothing, pass embedding_function=HashingEmbedding() "
    "(from memora_ogm.vector_db.embedding: lexical, offline; it keeps memora-ogm's "
    "single-vector collection, not Memora's)."
)


@dataclass(frozen=True)
class HybridVectors:
    """One text's dense and sparse vectors."""

    dense: list[float]
    sparse: models.SparseVector

    def named(self) -> dict[str, models.Vector]:
        return {DENSE_VECTOR: self.dense, SPARSE_VECTOR: self.sparse}


_loaded: dict[tuple[str, str], Any] = {}
_loading = threading.Lock()


def default_cache_dir() -> Path:
    """The user's cache folder, which outlives a reboot (fastembed's default is in /tmp)."""
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base, "memora-ogm", "fastembed")


def _hub_unresolvable() -> str | None:
    """Why a download is certain to fail, else None: fastembed retries for 39 s without
    an option to retry less, and a host that does not resolve will not on a retry."""
    from huggingface_hub import constants  # fastembed's own dependency; honours HF_ENDPOINT

    host = urllib.parse.urlsplit(constants.ENDPOINT).hostname or ""
    try:
        socket.getaddrinfo(host, 443, type=socket.SOCK_STREAM)
    except (socket.gaierror, UnicodeError) as error:
        return f"the model hub's host {host!r} does not resolve ({error})"
    return None


def _fastembed() -> Any:
    try:
        import fastembed
    except ImportError as error:
        raise EmbedderUnavailableError(
            f"Memora's embedding needs fastembed, which cannot be imported ({error}); "
            f"install it with `pip install fastembed`. {OFFLINE_CHOICE}"
        ) from error
    return fastembed


def _model(fastembed: Any, model: str, cache_dir: str, local_files_only: bool) -> Any:
    if model == MEMORA_SPARSE_MODEL:
        return fastembed.SparseTextEmbedding(
            model, cache_dir=cache_dir, local_files_only=local_files_only
        )
    known = {found["model"]: found for found in fastembed.TextEmbedding.list_supported_models()}
    if _DENSE_AS_FASTEMBED_05 not in known:
        source = known[MEMORA_DENSE_MODEL]
        fastembed.TextEmbedding.add_custom_model(
            model=_DENSE_AS_FASTEMBED_05,
            pooling=fastembed.common.model_description.PoolingType.CLS,
            normalization=True,
            sources=fastembed.common.model_description.ModelSource(hf=source["sources"]["hf"]),
            dim=DENSE_DIMENSION,
            model_file=source["model_file"],
            additional_files=source.get("additional_files") or [],
        )
    return fastembed.TextEmbedding(
        _DENSE_AS_FASTEMBED_05, cache_dir=cache_dir, local_files_only=local_files_only
    )


def _load(model: str, cache_dir: str) -> Any:
    """One of Memora's models, loaded once per process: from the cache, else downloaded."""
    with _loading:
        key = (model, cache_dir)
        if key not in _loaded:
            fastembed = _fastembed()
            try:
                try:
                    _loaded[key] = _model(fastembed, model, cache_dir, local_files_only=True)
                except Exception:
                    unreachable = _hub_unresolvable()
                    if unreachable is not None:
                        raise RuntimeError(unreachable) from None
                    _loaded[key] = _model(fastembed, model, cache_dir, local_files_only=False)
            except Exception as error:
                raise EmbedderUnavailableError(
                    f"Could not load the embedding model {model!r} into {cache_dir!r} ({error}). "
                    "fastembed downloads it from Hugging Face on first use; on a machine "
                    "without access, copy a cache folder that holds it there "
                    f"(embed_models_cache_dir). {OFFLINE_CHOICE}"
                ) from error
        return _loaded[key]


class HybridEmbedding:
    """Memora's dense and sparse models in ``cache_dir`` (by default
    ``FASTEMBED_CACHE_PATH``, else :func:`default_cache_dir`; Memora's is ``./cache``).
    CPU-bound: the async store calls it in a worker thread.
    """

    def __init__(self, cache_dir: str | os.PathLike[str] | None = None) -> None:
        if cache_dir is None:
            cache_dir = os.environ.get("FASTEMBED_CACHE_PATH") or default_cache_dir()
        self.cache_dir = os.fspath(cache_dir)

    def _embed(self, texts: list[str], documents: bool) -> list[HybridVectors]:
        dense: TextEmbedding = _load(MEMORA_DENSE_MODEL, self.cache_dir)
        sparse: SparseTextEmbedding = _load(MEMORA_SPARSE_MODEL, self.cache_dir)
        dense_vectors = dense.passage_embed(texts) if documents else dense.embed(texts)
        return [
            HybridVectors(
                dense=vector.tolist(),
                sparse=models.SparseVector(
                    indices=weights.indices.tolist(), values=weights.values.tolist()
                ),
            )
            for vector, weights in zip(dense_vectors, sparse.embed(texts), strict=True)
        ]

    def embed_documents(self, texts: list[str]) -> list[HybridVectors]:
        """Memories as Memora's store embedded them (``passage_embed``, then SPLADE)."""
        return self._embed(texts, documents=True)

    def embed_queries(self, texts: list[str]) -> list[HybridVectors]:
        """Queries as Memora's store embedded them (``embed``, then SPLADE)."""
        return self._embed(texts, documents=False)
