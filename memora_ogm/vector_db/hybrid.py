"""Memora's embedding: two fastembed models, one dense and one sparse, for a hybrid search.

Memora's ``QdrantDB`` (memora-core 0.3.1) embeds through qdrant-client's fastembed
integration, which qdrant-client 1.20 no longer has; this module calls fastembed itself and
computes the vectors that integration stored, under its names (``fast-<model>``,
``fast-sparse-<model>``). memora-core pins fastembed 0.5, which pooled the dense model by
its first (``[CLS]``) token; later versions mean-pool it, so its files are registered
here under a private name with 0.5's pooling. Models download into ``cache_dir`` on first
use and load once per process and folder; fastembed (and onnxruntime) is imported only then.
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


class EmbedderUnavailableError(RuntimeError):
    """fastembed or one of Memora's models cannot be had (not installed, not downloadable)."""


@dataclass(frozen=True)
class HybridVectors:
    """One text's dense and sparse vectors."""

    dense: list[float]
    sparse: models.SparseVector

    def named(self) -> dict[str, models.Vector]:
        """The point's vectors under the names Memora's collection gives them."""
        return {DENSE_VECTOR: self.dense, SPARSE_VECTOR: self.sparse}


_loaded: dict[tuple[str, str], Any] = {}
_loading = threading.Lock()


def default_cache_dir() -> Path:
    """Where Memora's models are kept unless the caller or ``FASTEMBED_CACHE_PATH`` says:
    the user's cache folder, which outlives a reboot (fastembed's own default is in the
    system's temporary folder)."""
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base, "memora-ogm", "fastembed")


def _hub_unresolvable() -> str | None:
    """Why a download is certain to fail (the hub's name does not resolve), else None.

    fastembed retries a failed download after 3, 9 and 27 s and offers no option to
    retry less; a name that does not resolve will not resolve on the next try either."""
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
    """One of Memora's models; the dense one's files pooled as fastembed 0.5 pooled them."""
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
    """One of Memora's models from ``cache_dir``, loaded once per process: from the cache
    when it holds the model, else downloaded, unless the download cannot succeed."""
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
    """Memora's dense and sparse models, in one cache folder.

    ``cache_dir`` is where the models are downloaded and found; ``None`` is
    ``FASTEMBED_CACHE_PATH`` when set, else :func:`default_cache_dir`.
    Memora's own store defaults to ``./cache``. The embedding is CPU-bound: the async
    store calls it in a worker thread.
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
