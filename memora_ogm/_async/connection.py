"""The drivers of one graph, and the auto-commit sessions each keeps between calls.

A driver's connections belong to the process, and in the async twin the event loop, that
opened them; so a graph holds one driver per process and loop (a :class:`Link`), opened on
first use there. A forked child forgets the parent's without a byte on the wire; a loop's
driver closes when the loop shuts down its async generators, or on :meth:`Connection.close`.
neomodel's own driver slot is the application's: no interface ever writes it.
"""

from __future__ import annotations

import threading
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager, nullcontext
from contextvars import ContextVar
from functools import partial
from typing import Any

from neo4j import (
    READ_ACCESS,
    WRITE_ACCESS,
    AsyncDriver,
    AsyncNeo4jDriver,
    AsyncSession,
    AsyncTransaction,
)
from neo4j.api import AsyncBookmarkManager
from neomodel import adb
from neomodel.async_.connection import AsyncConnectionManager, ensure_connection

from memora_ogm import fork
from memora_ogm._async.compat import close_on, current_loop, forget_driver, watch_running_loop
from memora_ogm._async.loop_bound import LoopBound
from memora_ogm.neomodel_compat import context_view, view_in_context

#: The driver neomodel uses in this context (:func:`point_neomodel`).
unit_driver: ContextVar[AsyncDriver | None] = ContextVar("memora_ogm_unit_driver", default=None)
#: The database neomodel uses in this context, when one is bound (``(None,)``: the default).
unit_database: ContextVar[tuple[str | None] | None] = ContextVar(
    "memora_ogm_unit_database", default=None
)


#: neomodel's connection manager class, seeing the driver and database bound in a context.
UnitDriverView = context_view(AsyncConnectionManager, unit_driver, unit_database)


class Link(LoopBound):
    """One driver of this process and event loop, with its kept auto-commit sessions (by
    database and access mode: a new ``database`` takes effect on the next call)."""

    def __init__(self, driver: AsyncDriver, owned: bool) -> None:
        super().__init__()
        self.driver = driver
        self.owned = owned  # it opened the driver, so closes it
        self.idle: dict[tuple[str | None, bool], list[AsyncSession]] = {}

    def session(
        self, database: str | None, write: bool, bookmarks: AsyncBookmarkManager
    ) -> AsyncSession:
        """A kept session for ``database`` and the access mode, or a new one: opening one
        costs about as much as a single-node read's own client work."""
        kept = self.idle.get((database, write))
        if kept:
            try:
                return kept.pop()
            except IndexError:  # another thread took the last one
                pass
        return new_session(self.driver, database, write, bookmarks)

    def keep(self, database: str | None, write: bool, session: AsyncSession) -> None:
        """Keep a session whose statement ran through for the next call."""
        self.idle.setdefault((database, write), []).append(session)

    async def release(self) -> None:
        """Close the kept sessions, and the driver if the link opened it."""
        idle, self.idle = self.idle, {}
        for sessions in idle.values():
            for session in sessions:
                await session.close()
        if self.owned:
            await self.driver.close()


class Connection:
    """The links of one graph, by process and event loop; without ``open_driver``, on
    neomodel's driver (``borrowed``, read each call: the application may replace it)."""

    def __init__(
        self,
        open_driver: Callable[[], AsyncDriver] | None,
        borrowed: Callable[[], Any] | None = None,
    ) -> None:
        self._open = open_driver
        self._borrowed = borrowed
        self._links: dict[tuple[int, Any], Link] = {}
        self._lock = threading.Lock()
        fork.register(self)

    async def link(self) -> Link:
        """The link of this process and event loop, opened on first use."""
        key = (fork.generation(), current_loop())
        link = self._links.get(key)
        if self._open is None:
            return await self._borrow(key, link)
        if link is None:
            with self._lock:
                link = self._links.get(key)
                if link is None:
                    self._forget_closed_loops()
                    link = Link(self._open(), owned=True)
                    self._links[key] = link
            link.watcher = watch_running_loop(link.loop_shuts_down)
        return link

    async def _borrow(self, key: tuple[int, Any], link: Link | None) -> Link:
        """The link on neomodel's current driver (replaced when neomodel's changed)."""
        assert self._borrowed is not None
        driver = await self._borrowed()
        if link is None or link.driver is not driver:
            stale, link = link, Link(driver, owned=False)
            self._links[key] = link
            if stale is not None:
                await stale.close()
        return link

    def _forget_closed_loops(self) -> None:
        """Drop the links of loops closed without shutting down their async generators
        (their drivers cannot be awaited; the garbage collector closes their sockets)."""
        for key in [key for key in self._links if key[1] is not None and key[1].is_closed()]:
            del self._links[key]

    def forget_inherited(self) -> None:
        """In a forked child: forget the parent's links, without closing anything."""
        self._lock = threading.Lock()
        links, self._links = self._links, {}
        for link in links.values():
            fork.keep(link)
            forget_driver(link.driver)

    async def close(self) -> None:
        """Close this process's links, each on its loop (those of closed loops dropped)."""
        links, self._links = self._links, {}
        for (generation, loop), link in links.items():
            if generation == fork.generation():
                await close_on(loop, link.close)


@ensure_connection
async def _configured_driver(database: Any) -> AsyncDriver:
    """neomodel's driver (``database`` is ``adb``), built from its configuration if need
    be (or neomodel's error without one)."""
    driver: AsyncDriver = database.driver
    return driver


neomodel_driver = partial(_configured_driver, adb)


def new_session(
    driver: AsyncDriver, database: str | None, write: bool, bookmarks: AsyncBookmarkManager
) -> AsyncSession:
    """A new session on ``driver`` in the access mode, with ``bookmarks`` on a routing
    (``neo4j://``) driver only: a direct one's single server sees every committed write."""
    return driver.session(
        database=database,
        default_access_mode=WRITE_ACCESS if write else READ_ACCESS,
        bookmark_manager=bookmarks if isinstance(driver, AsyncNeo4jDriver) else None,
    )


@asynccontextmanager
async def open_transaction(
    driver: AsyncDriver, database: str | None, write: bool, bookmarks: AsyncBookmarkManager
) -> AsyncIterator[AsyncTransaction]:
    """An explicit transaction in a :func:`new_session`; the caller commits, one left
    open is rolled back. BEGIN is sent with the first statement (a round trip saved) by
    the driver's private switch, as its ``execute_query`` does; without it, as usual."""
    session = new_session(driver, database, write, bookmarks)
    try:
        with getattr(session, "_pipelined_begin", nullcontext()):
            transaction = await session.begin_transaction()
        try:
            yield transaction
        finally:
            if not transaction.closed():
                await transaction.rollback()
    finally:
        await session.close()


def point_neomodel(driver: AsyncDriver, database: str | None) -> Callable[[], None]:
    """Make neomodel's queries in this context (a thread's, a task's) use ``driver`` and
    ``database``; returns what undoes it. Sets context variables only: other threads and
    tasks keep theirs."""
    view_in_context(adb, UnitDriverView)
    tokens = unit_driver.set(driver), unit_database.set((database,))

    def undo() -> None:
        unit_driver.reset(tokens[0])
        unit_database.reset(tokens[1])

    return undo
