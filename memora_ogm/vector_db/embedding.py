"""An embedding with no model and no network, for an offline machine (SPEC section 6):
lexical features hashed into a fixed dimension. It finds shared words, not synonyms.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable, Iterator
from functools import lru_cache
from hashlib import blake2b
from itertools import pairwise

import numpy as np

EmbeddingFunction = Callable[[list[str]], Awaitable[list[list[float]]]]
"""Async function embedding a batch of texts into one vector each, in input order, of the
dimension declared to the store; async so that a remote API does not block the loop."""

SyncEmbeddingFunction = Callable[[list[str]], list[list[float]]]
"""The sync store's (``memora_ogm.sync.QdrantDB``) embedding function: the same, not async."""

DEFAULT_DIMENSION = 1024
"""A query sharing one word with one of 2000 memories finds it first 95% of the time at
1024, 40% at 384 (``benchmarks/bench_vector_qdrant.py``); a vector costs 4 KiB."""

_WORD = re.compile(r"\w+")
# Memora stores memories with `user_<id>` / `agent_<id>` placeholders; nearly every memory
# has one, so as features they would only make unrelated memories look alike.
_PLACEHOLDER = re.compile(r"(?:user|agent)_[a-z0-9\-]+(?:'s)?")
_HASHES_PER_FEATURE = 3
_UNIGRAM_WEIGHT = 1.0
_PREFIX_WEIGHT = 0.8  # a 4-letter prefix as a crude stem: allergic/allergies, work/works
_BIGRAM_WEIGHT = 0.7
_TRIGRAMS_WEIGHT = 0.6  # norm of one word's trigram features, relative to its unigram
# Function words carry no topic; left in, they make unrelated sentences look alike.
_STOPWORDS = frozenset(
    (
        "a an and are as at be been but by did do does for from had has have he her his i if in "
        "into is it its me my of on or our she so that the their them they this to was we were "
        "what when where which who will with you your"
    ).split()
)


@lru_cache(maxsize=1 << 16)
def _buckets(feature: str, dimension: int) -> tuple[tuple[int, float], ...]:
    """Stable (index, sign) pairs of a feature: several buckets, so a collision moves a
    score by a fraction of a feature; signs, so collisions do not add up."""
    digest = blake2b(feature.encode("utf-8"), digest_size=4 * _HASHES_PER_FEATURE).digest()
    pairs = []
    for start in range(0, len(digest), 4):
        value = int.from_bytes(digest[start : start + 4], "little")
        pairs.append((value % dimension, -1.0 if value >> 31 else 1.0))
    return tuple(pairs)


def _features(text: str) -> Iterator[tuple[str, float]]:
    """Weighted lexical features of a text, case-insensitive."""
    words = _WORD.findall(_PLACEHOLDER.sub(" ", text.casefold()))
    content = [word for word in words if word not in _STOPWORDS] or words
    for word in content:
        yield "w:" + word, _UNIGRAM_WEIGHT
        if len(word) >= 4:
            yield "p:" + word[:4], _PREFIX_WEIGHT
        padded = f"<{word}>"
        trigrams = [padded[i : i + 3] for i in range(len(padded) - 2)]
        weight = _TRIGRAMS_WEIGHT / len(trigrams) ** 0.5
        for trigram in trigrams:
            yield "c:" + trigram, weight
    for first, second in pairwise(content):
        yield f"b:{first} {second}", _BIGRAM_WEIGHT


class HashingEmbedding:
    """Offline text embedding by signed feature hashing, L2-normalised, the same on any
    machine (``blake2b``, not the salted ``hash``); an ``EmbeddingFunction``."""

    def __init__(self, dimension: int = DEFAULT_DIMENSION) -> None:
        if isinstance(dimension, bool) or not isinstance(dimension, int) or dimension < 1:
            raise ValueError("`dimension` must be a positive integer.")
        self.dimension = dimension

    def embed(self, texts: list[str]) -> list[list[float]]:
        """Microseconds per text: cheap enough to run on the loop."""
        vectors = np.zeros((len(texts), self.dimension), dtype=np.float64)
        for row, text in enumerate(texts):
            for feature, weight in _features(text):
                for index, sign in _buckets(feature, self.dimension):
                    vectors[row, index] += sign * weight
        norms = np.linalg.norm(vectors, axis=1, keepdims=True)
        np.divide(vectors, norms, out=vectors, where=norms > 0)
        result: list[list[float]] = vectors.tolist()
        return result

    async def __call__(self, texts: list[str]) -> list[list[float]]:
        return self.embed(texts)
