"""The few calls that differ between the async source and its generated sync twin."""

import asyncio
import contextvars
import threading
from asyncio import sleep as sleep
from collections.abc import AsyncGenerator, Awaitable, Callable, Coroutine
from concurrent.futures import Future
from contextlib import suppress
from typing import Any, TypeVar

from memora_ogm import fork
from memora_ogm.vector_db.embedding import EmbeddingFunction as EmbeddingFunction

#: A forked child only keeps the parent's async driver referenced: closing it would go
#: through the parent's event loop (whose epoll set the child shares).
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
    """Have ``close`` awaited when the running loop shuts down its async generators (as
    ``asyncio.run`` does before closing it). The loop holds them weakly: keep what this
    returns while open. The first step reaches the ``yield`` without awaiting, so plain
    code on the loop may call this.
    """
    watcher = _until_shutdown(close)
    with suppress(StopIteration):  # how a step that reached a ``yield`` ends
        watcher.__anext__().send(None)
    return watcher


async def close_watcher(watcher: Any) -> None:
    """Close what :func:`watch_running_loop` returned (its ``close`` runs once more, as a no-op)."""
    await watcher.aclose()


async def close_on(loop: Any, close: Callable[[], Coroutine[Any, Any, None]]) -> None:
    """Await ``close`` on ``loop``, here or in its thread; a closed or stopped loop's
    objects are left to the garbage collector."""
    if loop is asyncio.get_running_loop():
        await close()
    elif not loop.is_closed() and loop.is_running():
        await asyncio.wrap_future(asyncio.run_coroutine_threadsafe(close(), loop))


class _Wait:
    """A thread waiting for a lock for a task that may be cancelled meanwhile: whichever
    comes second (the lock taken, the task giving up) releases it."""

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


#: Tasks started by :func:`start`, held until done (the loop holds tasks weakly).
_started: set[asyncio.Task[Any]] = set()


async def turn() -> None:
    """Let the tasks already resumed run before this one goes on (one turn of the loop)."""
    await asyncio.sleep(0)


def answer_slot() -> asyncio.Future[Any]:
    """Where a queued write's caller waits for its answer: a future of the caller's own
    loop, which its batch runs on, so the answer needs no hop through another thread."""
    return asyncio.get_running_loop().create_future()


def claim(slot: asyncio.Future[Any]) -> bool:
    """Take a queued write for a batch (from any thread): False if its caller gave up."""
    return not slot.cancelled()


async def answer_of(slot: asyncio.Future[T]) -> T:
    """The answer a batch gave (a caller cancelled meanwhile cancels the slot)."""
    return await slot


def answer(
    slot: asyncio.Future[Any], result: Any = None, error: BaseException | None = None
) -> None:
    """Give a caller its result or its error, unless it gave up waiting."""
    if slot.done():
        return
    if error is None:
        slot.set_result(result)
    else:
        slot.set_exception(error)


def caller_loop() -> asyncio.AbstractEventLoop:
    """The caller's event loop: coalesced writes run on their own callers' loop."""
    return asyncio.get_running_loop()


def start(
    work: Callable[..., Coroutine[Any, Any, None]],
    *args: Any,
    loop: asyncio.AbstractEventLoop | None = None,
) -> None:
    """Run ``work(*args)`` on its own, as a task of ``loop`` (the running one if None; a
    loop of another thread gets it through ``call_soon_threadsafe``): a caller cancelled
    meanwhile does not cancel it, nor does the task run as part of the caller's call
    (an empty context, as a new thread has)."""
    running = asyncio.get_running_loop()
    target = running if loop is None else loop

    def create() -> None:
        task = contextvars.Context().run(target.create_task, work(*args))
        _started.add(task)
        task.add_done_callback(_started.discard)

    if target is running:
        create()
    else:
        target.call_soon_threadsafe(create)
