"""What a forked child must not inherit: its parent's Bolt connections.

A process that forks (gunicorn ``--preload``, uWSGI, Celery's prefork pool,
``multiprocessing``) hands every open socket to each child. A pooled Bolt connection
used by two processes interleaves their requests on one stream, so one process reads
the other's answers: another tenant's records. Both twins key their drivers by
:func:`generation`, which changes in every child, so a child opens its own driver on
first use. The parent's connections are also :func:`disown`\\ ed in the child right after
the fork, without a byte on the wire: otherwise the child closing them (or the garbage
collector doing it at exit) would send ``GOODBYE`` and shut down the parent's streams.
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
#: What children inherited and forgot: kept referenced so that the garbage collector
#: never finalises a parent's driver, connection or client in a child.
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

    ``kill()`` is the driver's own way to drop a connection without ``GOODBYE``: it
    closes the socket's file descriptor in this process only (no ``shutdown()``), so the
    parent's connection stays intact. The pool's locks are not taken: a parent thread
    may have held one at the fork, and nothing else runs in the child yet.
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
