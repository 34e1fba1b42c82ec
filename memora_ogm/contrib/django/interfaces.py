"""This process's facades, one per database of the project's settings, opened on first
use (each held by a :class:`~memora_ogm.config.PerProcess`)."""

from __future__ import annotations

import asyncio
import functools
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Generic, TypeVar

from memora_ogm.config import PerProcess, close_async, close_sync
from memora_ogm.contrib.django.conf import DEFAULT, check_database, memora_config

if TYPE_CHECKING:
    from memora_ogm import Neo4jGraphInterface, sync

T = TypeVar("T")


def _close_async_at_exit(interface: Neo4jGraphInterface) -> None:
    """At exit no event loop runs here any more: one is made for the close, which also
    closes the drivers other loops left open."""
    asyncio.run(close_async(interface))


class _ByDatabase(Generic[T]):
    """A facade per database alias of ``MEMORA_OGM``, made on the alias's first use."""

    def __init__(self, open_one: Callable[[str], T], close_one: Callable[[T], None]) -> None:
        self._open, self._close = open_one, close_one
        self._held: dict[str, PerProcess[T]] = {}
        self._lock = threading.Lock()

    def get(self, database: str) -> T:
        held = self._held.get(database)
        if held is None:
            check_database(database)  # an unknown alias makes no facade
            with self._lock:
                held = self._held.get(database)
                if held is None:
                    held = PerProcess(functools.partial(self._open, database), self._close)
                    self._held[database] = held
        return held.get()

    def close(self) -> None:
        """Close every facade this process opened; the next use opens anew."""
        for held in list(self._held.values()):
            held.close()


_sync_interfaces = _ByDatabase(lambda alias: memora_config(alias).open_sync(), close_sync)
_async_interfaces = _ByDatabase(
    lambda alias: memora_config(alias).open_async(), _close_async_at_exit
)


def get_interface(database: str = DEFAULT) -> sync.Neo4jGraphInterface:
    """The sync facade of this process on ``database`` (an alias of ``MEMORA_OGM``), for
    sync views, commands, Celery tasks."""
    return _sync_interfaces.get(database)


def get_async_interface(database: str = DEFAULT) -> Neo4jGraphInterface:
    """The async facade of this process on ``database`` (for async views); it keeps a
    driver per event loop, so ASGI servers and ``async_to_sync`` callers can share it."""
    return _async_interfaces.get(database)
