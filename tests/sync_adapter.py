"""Running the async test suite, unchanged, against the generated sync twin."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any


class AwaitableTwin:
    """A sync twin dressed as its async original, so ``await x.method(...)`` runs the sync code.

    Whatever is a coroutine function on the ``original`` class becomes an ``async def``
    that calls the twin's method directly (blocking the loop, which a test can afford);
    everything else is the twin's own attribute. ``renamed`` maps the attributes whose
    name differs in the twin (``async_client`` is ``client``) to that name and the async
    class to dress them as.
    """

    def __init__(
        self, twin: object, original: type, renamed: dict[str, tuple[str, type]] | None = None
    ) -> None:
        self._twin = twin
        self._original = original
        self._renamed = renamed or {}

    def __getattr__(self, name: str) -> Any:
        if name in self._renamed:
            twin_name, original = self._renamed[name]
            return AwaitableTwin(getattr(self._twin, twin_name), original)
        value = getattr(self._twin, name)
        if inspect.iscoroutinefunction(getattr(self._original, name, None)):
            return _awaitable(value)
        return value

    def __setattr__(self, name: str, value: Any) -> None:
        """The wrapper's own three fields stay here; anything else is the twin's
        (``memora.database = ...`` must reach the interface)."""
        if name in ("_twin", "_original", "_renamed"):
            object.__setattr__(self, name, value)
        else:
            setattr(self._twin, name, value)


def _awaitable(method: Callable[..., Any]) -> Callable[..., Any]:
    async def call(*args: Any, **kwargs: Any) -> Any:
        return method(*args, **kwargs)

    return call
