"""The few calls that differ between the async source and its generated sync twin."""

import threading
from collections.abc import Callable
from concurrent.futures import Future
from time import sleep as sleep
from typing import Any, TypeVar

from memora_ogm import fork
from memora_ogm.vector_db.embedding import HashingEmbedding, SyncEmbeddingFunction

EmbeddingFunction = SyncEmbeddingFunction

#: In a forked child, a sync driver of the parent drops its connections without a byte
#: on the wire (:func:`memora_ogm.fork.disown`).
forget_driver = fork.disown


T = TypeVar("T")


def result_of(future: Future[T]) -> T:
    """The result of work done in another thread, waited for."""
    return future.result()


def off_loop(function: Callable[[list[str]], T], texts: list[str]) -> T:
    """CPU-bound work (a local model embedding a batch): there is no loop to keep free."""
    return function(texts)


def embedding_call(function: Any) -> EmbeddingFunction:
    """How this twin calls an embedding function: ``HashingEmbedding`` through its sync
    ``embed``, so ``embedding_function=HashingEmbedding()`` works in both twins."""
    return function.embed if isinstance(function, HashingEmbedding) else function


def current_loop() -> object:
    """A sync driver belongs to no event loop (``None``): one per process."""
    return None


def watch_running_loop(close: Callable[[], None]) -> object:
    """No event loop to close with: the driver or client is closed by ``close()``."""
    return None


def close_watcher(watcher: Any) -> None:
    """Nothing to close: :func:`watch_running_loop` watched nothing."""


def close_on(loop: Any, close: Callable[[], None]) -> None:
    """Run ``close``: a sync driver belongs to no event loop."""
    close()


def acquire(lock: threading.Lock) -> None:
    """Take a lock that other threads share."""
    lock.acquire()


def turn() -> None:
    """Threads resume on their own, in no order to wait for: nothing to do."""


def answer_slot() -> Future[Any]:
    """Where a queued write's thread waits for its answer."""
    return Future()


def claim(slot: Future[Any]) -> bool:
    """Take a queued write for a batch: a thread cannot give up waiting, so always True."""
    return slot.set_running_or_notify_cancel()


def answer_of(slot: Future[T]) -> T:
    """The answer a batch gave, waited for."""
    return slot.result()


def answer(slot: Future[Any], result: Any = None, error: BaseException | None = None) -> None:
    """Give a waiting thread its result or its error."""
    if error is None:
        slot.set_result(result)
    else:
        slot.set_exception(error)


def caller_loop() -> object | None:
    """No event loop: a coalesced batch runs in a thread of its own."""
    return None


def start(work: Callable[..., None], *args: Any, loop: object | None = None) -> None:
    """Run ``work(*args)`` on its own, in a thread of its own."""
    threading.Thread(target=work, args=args, daemon=True, name="memora-ogm-batch").start()
