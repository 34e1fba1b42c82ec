"""What a forked child must not inherit: its parent's Bolt connections.

A pooled connection used by two processes (gunicorn ``--preload``, Celery prefork, ...)
interleaves their requests, so one reads the other's answers: another tenant's records.
Drivers are keyed by :func:`generation`, which changes in every child, and the parent's are
:func:`disown`\\ ed in the child without a byte on the wire: closing them (or the garbage
collector, at exit) would send ``GOODBYE`` and shut down the parent's streams.
"""

from __future__ import annotations

import os
import threading
import weakref
from collections.abc import Callable
from contextlib import suppress
from typing import Any, Protocol

_generation = 0
_lock = threading.Lock()


class Inheritor(Protocol):
    """An owner of connections that must let go of them in a forked child."""

    def forget_inherited(self) -> None: ...


_owners: weakref.WeakSet[Any] = weakref.WeakSet()
#: What children inherited and forgot, kept so that the GC never finalises it in a child.
_inherited: list[object] = []


def generation() -> int:
    """How many forks separate this process from the one that imported memora-ogm."""
    return _generation


def register(owner: Inheritor) -> None:
    """Have ``owner.forget_inherited()`` called in every child forked from now on."""
    with _lock:
        _owners.add(owner)


def keep(inherited: object) -> None:
    """Keep a parent's object alive in this child, so that it is never closed here."""
    _inherited.append(inherited)


def disown(driver: Any) -> None:
    """Forget a sync driver's pooled connections in a child without touching their streams.

    ``kill()`` closes a socket's descriptor in this process only (no ``GOODBYE``, no
    ``shutdown()``). The pool's locks are not taken: a parent thread may have held one.
    """
    keep(driver)
    pool = getattr(driver, "_pool", None)
    connections: dict[Any, Any] = getattr(pool, "connections", None) or {}
    for queue in list(connections.values()):
        for connection in list(queue):
            kill: Callable[[], None] | None = getattr(connection, "kill", None)
            if kill is not None:
                with suppress(Exception):  # a dead copy is what we want anyway
                    kill()


def _in_child() -> None:
    global _generation, _lock
    _generation += 1
    _lock = threading.Lock()  # a parent thread may have held the old one at the fork
    for owner in list(_owners):
        owner.forget_inherited()


os.register_at_fork(after_in_child=_in_child)
