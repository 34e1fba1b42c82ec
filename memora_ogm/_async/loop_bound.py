"""What one process and event loop opened, closed once: with its loop or by ``close()``."""

from __future__ import annotations

from abc import ABC, abstractmethod

from memora_ogm._async.compat import close_watcher


class LoopBound(ABC):
    """A driver's link or a vector store's server client, of one process and event loop.

    Its loop's watcher (``compat.watch_running_loop``) closes it when that loop shuts down its
    async generators; :meth:`close` does it earlier. Either way it is closed once.
    """

    def __init__(self) -> None:
        #: What closes it with its event loop (async twin only).
        self.watcher: object = None
        self.closed = False

    async def loop_shuts_down(self) -> None:
        """What the loop's watcher runs: :meth:`close`, minus the watcher, which runs it."""
        self.watcher = None
        await self.close()

    async def close(self) -> None:
        """Release what it holds, once (idempotent)."""
        if self.closed:
            return
        self.closed = True
        watcher, self.watcher = self.watcher, None
        if watcher is not None:
            await close_watcher(watcher)
        await self.release()

    @abstractmethod
    async def release(self) -> None:
        """Close what it holds (called once, by :meth:`close`)."""
