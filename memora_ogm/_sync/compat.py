"""The few calls that differ between the async source and its generated sync twin."""

import threading
from time import sleep

from memora_ogm.vector_db.embedding import HashingEmbedding
from memora_ogm.vector_db.embedding import SyncEmbeddingFunction as EmbeddingFunction

__all__ = ["EmbeddingFunction", "acquire", "default_embedding", "sleep"]


def default_embedding(dimension: int) -> EmbeddingFunction:
    """The offline ``HashingEmbedding``, called synchronously."""
    return HashingEmbedding(dimension).embed


def acquire(lock: threading.Lock) -> None:
    """Take a lock that other threads share."""
    lock.acquire()
