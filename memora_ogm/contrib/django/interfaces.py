"""This process's facades, opened on first use from the project's settings (each held by
a :class:`~memora_ogm.config.PerProcess`)."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

from memora_ogm.config import PerProcess, close_async, close_sync
from memora_ogm.contrib.django.conf import memora_config

if TYPE_CHECKING:
    from memora_ogm import Neo4jGraphInterface, sync


def _close_async_at_exit(interface: Neo4jGraphInterface) -> None:
    """At exit no event loop runs here any more: one is made for the close, which also
    closes the drivers other loops left open."""
    asyncio.run(close_async(interface))


_sync_interface = PerProcess(lambda: memora_config().open_sync(), close_sync)
_async_interface = PerProcess(lambda: memora_config().open_async(), _close_async_at_exit)


def get_interface() -> sync.Neo4jGraphInterface:
    """The sync facade of this process (for sync views, commands, Celery tasks)."""
    return _sync_interface.get()


def get_async_interface() -> Neo4jGraphInterface:
    """The async facade of this process (for async views); it keeps a driver per event
    loop, so ASGI servers and ``async_to_sync`` callers can share it."""
    return _async_interface.get()
