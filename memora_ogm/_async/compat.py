"""The few calls that differ between the async source and its generated sync twin."""

import asyncio
import threading
from asyncio import sleep

from memora_ogm.vector_db.embedding import EmbeddingFunction, HashingEmbedding

__all__ = ["EmbeddingFunction", "acquire", "default_embedding", "sleep"]


def default_embedding(dimension: int) -> EmbeddingFunction:
    """The offline ``HashingEmbedding``, whose instances are async callables."""
    return HashingEmbedding(dimension)


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
