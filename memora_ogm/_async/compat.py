"""The few calls that differ between the async source and its generated sync twin."""

import asyncio
import threading
from asyncio import sleep as sleep
from collections.abc import AsyncGenerator, Awaitable, Callable, Coroutine
from concurrent.futures import Future
from contextlib import suppress
from typing import Any, TypeVar

from memora_ogm import fork
from memora_ogm.vector_db.embedding import EmbeddingFunction as EmbeddingFunction

#: In a forked child, an async driver of the parent is only kept referenced: closing or
#: killing its connections would go through the parent's event loop (whose epoll set the
#: child shares), and its connections never send anything unless used.
forget_driver = fork.keep


T = TypeVar("T")


async def result_of(future: Future[T]) -> T:
    """The result of work done in another thread, awaited without blocking the loop."""
    return await asyncio.wrap_future(future)


async def off_loop(function: Callable[[list[str]], T], texts: list[str]) -> T:
    """CPU-bound work (a local model embedding a batch) in a worker thread, off the loop."""
    return await asyncio.to_thread(function, texts)


def embedding_call(function: EmbeddingFunction) -> EmbeddingFunction:
    """How this twin calls an embedding function: ``HashingEmbedding`` instances are async."""
    return function


def current_loop() -> asyncio.AbstractEventLoop:
    """The event loop a driver's connections belong to."""
    return asyncio.get_running_loop()


async def _until_shutdown(close: Callable[[], Awaitable[None]]) -> AsyncGenerator[None, None]:
    try:
        yield
    finally:
        await close()


def watch_running_loop(close: Callable[[], Awaitable[None]]) -> object:
    """Have ``close`` awaited when the running loop shuts down its async generators.

    ``asyncio.run`` (and every ``asyncio.Runner``) does that before closing the loop, so a
    driver or client opened on a loop is closed on it. The loop holds its generators
    weakly: keep what this returns for as long as it is open. The loop adopts the watcher
    on its first step; that step runs it to its ``yield``, which no ``await`` precedes, so
    it completes here without awaiting (plain code on the loop may call it).
    """
    watcher = _until_shutdown(close)
    with suppress(StopIteration):  # how a step that reached a ``yield`` ends
        watcher.__anext__().send(None)
    return watcher


async def close_watcher(watcher: Any) -> None:
    """Close what :func:`watch_running_loop` returned (its ``close`` runs once more, as a no-op)."""
    await watcher.aclose()


async def close_on(loop: Any, close: Callable[[], Coroutine[Any, Any, None]]) -> None:
    """Await ``close`` on ``loop``: here, or there when that loop runs in another thread.

    A loop that closed, or is not running, can no longer run it: what it held is left
    to the garbage collector.
    """
    if loop is asyncio.get_running_loop():
        await close()
    elif not loop.is_closed() and loop.is_running():
        await asyncio.wrap_future(asyncio.run_coroutine_threadsafe(close(), loop))


class _Wait:
    """A thread waiting for a lock on behalf of a task, which may be cancelled meanwhile.

    Whichever of the two comes second (the thread getting the lock, the task giving up)
    releases it, so a cancelled task never leaves the lock held.
    """

    def __init__(self, lock: threading.Lock) -> None:
        self.lock = lock
        self.handoff = threading.Lock()
        self.acquired = False
        self.abandoned = False

    def in_thread(self) -> None:
        self.lock.acquire()
        with self.handoff:
            self.acquired = True
            if self.abandoned:
                self.lock.release()

    def abandon(self) -> None:
        with self.handoff:
            self.abandoned = True
            if self.acquired:
                self.lock.release()


async def acquire(lock: threading.Lock) -> None:
    """Take a lock that other threads and event loops share, without blocking this loop."""
    if lock.acquire(blocking=False):
        return
    wait = _Wait(lock)
    waiting = asyncio.ensure_future(asyncio.to_thread(wait.in_thread))
    try:
        await asyncio.shield(waiting)
    except BaseException:
        wait.abandon()
        raise
