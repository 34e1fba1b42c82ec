"""The few calls that differ between the async source and its generated sync twin."""

import threading
from collections.abc import Callable
from concurrent.futures import Future
from time import sleep
from typing import Any, TypeVar

from memora_ogm import fork
from memora_ogm.vector_db.embedding import HashingEmbedding
from memora_ogm.vector_db.embedding import SyncEmbeddingFunction as EmbeddingFunction

__all__ = [
    "EmbeddingFunction",
    "acquire",
    "close_on",
    "close_watcher",
    "current_loop",
    "default_embedding",
    "forget_driver",
    "result_of",
    "sleep",
    "watch_loop",
    "watch_running_loop",
]

#: In a forked child, a sync driver of the parent drops its connections without a byte
#: on the wire (:func:`memora_ogm.fork.disown`).
forget_driver = fork.disown


T = TypeVar("T")


def result_of(future: Future[T]) -> T:
    """The result of work done in another thread, waited for."""
    return future.result()


def default_embedding(dimension: int) -> EmbeddingFunction:
    """The offline ``HashingEmbedding``, called synchronously."""
    return HashingEmbedding(dimension).embed


def current_loop() -> object:
    """A sync driver belongs to no event loop (``None``): one per process."""
    return None


def watch_loop(close: Callable[[], None]) -> object:
    """No event loop to close with: the driver is closed by ``close()``."""
    return None


def watch_running_loop(close: Callable[[], None]) -> object:
    """No event loop to close with: the client is closed by ``close()``."""
    return None


def close_watcher(watcher: Any) -> None:
    """Nothing to close: :func:`watch_loop` watched nothing."""


def close_on(loop: Any, close: Callable[[], None]) -> None:
    """Run ``close``: a sync driver belongs to no event loop."""
    close()


def acquire(lock: threading.Lock) -> None:
    """Take a lock that other threads share."""
    lock.acquire()
