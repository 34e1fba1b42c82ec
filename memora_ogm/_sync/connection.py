# Generated from memora_ogm/_async by scripts/generate_sync.py: do not edit.
"""The drivers of one graph, and the auto-commit sessions each keeps between calls.

A driver's connections belong to the process that opened them and, in the async twin,
to the event loop that opened them. So a graph holds one driver per process and event
loop (a :class:`Link`), opened lazily on first use there:

- after a fork the child opens its own, and the parent's are forgotten in the child
  without a byte on the wire (:mod:`memora_ogm.fork`);
- an async interface used from ``asyncio.run(...)`` per call, or from two loops in two
  threads at once, gets a driver per loop, closed when that loop shuts down its async
  generators (``asyncio.run`` does) or by :meth:`Connection.close`.

neomodel's own driver slot is the application's: no interface ever writes it
(:class:`UnitDriverView`).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager, nullcontext
from contextvars import ContextVar
from functools import partial
from typing import Any

from neo4j import (
    READ_ACCESS,
    WRITE_ACCESS,
    Driver,
    Neo4jDriver,
    Session,
    Transaction,
)
from neo4j.api import BookmarkManager
from neomodel import db
from neomodel.sync_.connection import ConnectionManager, ensure_connection

from memora_ogm import fork
from memora_ogm._sync.compat import close_on, current_loop, forget_driver, watch_running_loop
from memora_ogm._sync.loop_bound import LoopBound

#: The driver of the unit of work bound to neomodel in this context (see
#: :func:`bind_neomodel`); ``None`` outside one.
unit_driver: ContextVar[Driver | None] = ContextVar("memora_ogm_unit_driver", default=None)


class UnitDriverView(ConnectionManager):
    """neomodel's connection manager, which sees a unit of work's driver inside that unit.

    neomodel checks that it has a driver (``ensure_connection``) before every query, even
    one it runs on the transaction :func:`bind_neomodel` bound; without one it would
    connect the application's settings, or fail. Its driver slot is process-wide and
    belongs to the application, so an interface never writes it: inside a bound unit of
    work neomodel reads the unit's driver instead, and elsewhere its own slot as before.
    """

    @property
    def driver(self) -> Driver | None:
        own: Driver | None = self.__dict__.get("driver")
        return unit_driver.get() or own

    @driver.setter
    def driver(self, driver: Driver | None) -> None:
        self.__dict__["driver"] = driver


def view_unit_drivers() -> None:
    """Give neomodel's one connection manager (``adb``'s) the :class:`UnitDriverView`.

    The one change memora-ogm makes to neomodel's connection, made only for what binds
    neomodel to one of its drivers (:func:`bind_neomodel`, the Flask integration's
    per-app binding): the instance keeps its state and neomodel's own behaviour, only
    its class changes.
    """
    manager = db._connection
    if type(manager) is ConnectionManager:
        manager.__class__ = UnitDriverView


class Link(LoopBound):
    """One driver this process and event loop may use, with its kept auto-commit sessions.

    Sessions are kept by database and access mode: assigning the graph's ``database``
    takes effect on the next call, never on a session opened for the old one.
    """

    def __init__(self, driver: Driver, owned: bool) -> None:
        super().__init__()
        self.driver = driver
        #: Whether the link opened the driver (and so closes it); ``from_neomodel()``
        #: graphs borrow neomodel's.
        self.owned = owned
        self.idle: dict[tuple[str | None, bool], list[Session]] = {}

    def session(self, database: str | None, write: bool, bookmarks: BookmarkManager) -> Session:
        """A kept session for ``database`` and the access mode, or a new one.

        Opening a session merges the driver's configuration into a new session
        configuration each time, about as costly on the client as the layer's own work
        for a single-node read; a session whose statement ran through is reused instead
        (it holds no connection between statements).
        """
        kept = self.idle.get((database, write))
        if kept:
            try:
                return kept.pop()
            except IndexError:  # another thread took the last one
                pass
        return new_session(self.driver, database, write, bookmarks)

    def keep(self, database: str | None, write: bool, session: Session) -> None:
        """Keep a session whose statement ran through for the next call."""
        self.idle.setdefault((database, write), []).append(session)

    def kept(self) -> list[Session]:
        """Every session kept right now."""
        return [session for sessions in self.idle.values() for session in sessions]

    def release(self) -> None:
        """Close the kept sessions, and the driver if the link opened it."""
        idle, self.idle = self.idle, {}
        for sessions in idle.values():
            for session in sessions:
                session.close()
        if self.owned:
            self.driver.close()


class Connection:
    """The links of one graph, by process and event loop.

    ``open_driver`` opens a new driver of the graph's server; with ``None`` the graph
    runs on the driver the application gave neomodel (``borrowed``, read on each call
    because the application may replace it).
    """

    def __init__(
        self,
        open_driver: Callable[[], Driver] | None,
        borrowed: Callable[[], Any] | None = None,
    ) -> None:
        self._open = open_driver
        self._borrowed = borrowed
        self._links: dict[tuple[int, Any], Link] = {}
        self._lock = threading.Lock()
        fork.register(self)

    def link(self) -> Link:
        """The link of this process and event loop, opened on first use."""
        key = (fork.generation(), current_loop())
        link = self._links.get(key)
        if self._open is None:
            return self._borrow(key, link)
        if link is None:
            with self._lock:
                link = self._links.get(key)
                if link is None:
                    self._forget_closed_loops()
                    link = Link(self._open(), owned=True)
                    self._links[key] = link
            link.watcher = watch_running_loop(link.loop_shuts_down)
        return link

    def _borrow(self, key: tuple[int, Any], link: Link | None) -> Link:
        """The link on neomodel's current driver (replaced when neomodel's changed)."""
        assert self._borrowed is not None
        driver = self._borrowed()
        if link is None or link.driver is not driver:
            stale, link = link, Link(driver, owned=False)
            self._links[key] = link
            if stale is not None:
                stale.close()
        return link

    def _forget_closed_loops(self) -> None:
        """Drop the links of event loops that closed without shutting down their async
        generators: their drivers cannot be awaited any more, and the garbage collector
        closes their sockets."""
        for key in [key for key in self._links if key[1] is not None and key[1].is_closed()]:
            del self._links[key]

    def links(self) -> list[Link]:
        """The links of this process, on every event loop."""
        return [
            link for (generation, _), link in self._links.items() if generation == fork.generation()
        ]

    def forget_inherited(self) -> None:
        """In a forked child: forget the parent's links, without closing anything."""
        self._lock = threading.Lock()
        links, self._links = self._links, {}
        for link in links.values():
            fork.keep(link)
            forget_driver(link.driver)

    def close(self) -> None:
        """Close this process's links: on this loop here, on a running loop there; the
        links of loops that closed are dropped."""
        links, self._links = self._links, {}
        for (generation, loop), link in links.items():
            if generation == fork.generation():
                close_on(loop, link.close)


@ensure_connection
def _configured_driver(database: Any) -> Driver:
    """neomodel's driver (``database`` is ``adb``), built from its configuration
    on first use if need be."""
    driver: Driver = database.driver
    return driver


#: The driver of the connection the application gave neomodel, for ``from_neomodel()``:
#: built from neomodel's configuration on first use, or neomodel's error without one.
neomodel_driver = partial(_configured_driver, db)


def new_session(
    driver: Driver, database: str | None, write: bool, bookmarks: BookmarkManager
) -> Session:
    """A new session on ``driver``, in the access mode (a routing driver sends a read to a
    reader) and, on a routing (``neo4j://``) driver only, with ``bookmarks``.

    A routing driver may send a read to another server than the write before it, which
    must first catch up; a direct (``bolt://``) driver sends every statement to its one
    server, where a committed write is visible to the next statement anyway, and the
    manager would only cost work on both sides.
    """
    return driver.session(
        database=database,
        default_access_mode=WRITE_ACCESS if write else READ_ACCESS,
        bookmark_manager=bookmarks if isinstance(driver, Neo4jDriver) else None,
    )


@contextmanager
def open_transaction(
    driver: Driver, database: str | None, write: bool, bookmarks: BookmarkManager
) -> Iterator[tuple[Session, Transaction]]:
    """A :func:`new_session` with an explicit transaction; the caller commits, and a
    transaction left open is rolled back.

    The transaction's BEGIN is sent with its first statement instead of on its own, as the
    driver's own ``execute_query`` does: a round trip saved. The switch is private in the
    driver (pinned by neomodel), so without it a transaction simply begins the usual way.
    """
    session = new_session(driver, database, write, bookmarks)
    try:
        with getattr(session, "_pipelined_begin", nullcontext()):
            transaction = session.begin_transaction()
        try:
            yield session, transaction
        finally:
            if not transaction.closed():
                transaction.rollback()
    finally:
        session.close()


@contextmanager
def bind_neomodel(
    driver: Driver, database: str | None, session: Session, transaction: Transaction
) -> Iterator[None]:
    """Run neomodel's queries of this context on ``transaction`` (an opt-in of
    ``Graph.transaction(..., neomodel=True)``: the node classes' own API inside a facade's
    transaction).

    It relies on neomodel's private state: neomodel keeps its session, transaction and
    database name in context variables of ``adb`` (``_session``, ``_active_transaction``,
    ``_database_name``; one per asyncio task or thread) and runs every query on the
    active transaction when there is one. neomodel sees ``driver`` as its driver in this
    context only (:class:`UnitDriverView`): its process-wide driver stays the application's.
    """
    view_unit_drivers()
    saved = (db._session, db._active_transaction, db._database_name, unit_driver.get())
    db._session, db._active_transaction = session, transaction
    db._database_name = database
    unit_driver.set(driver)
    try:
        yield
    finally:
        db._session, db._active_transaction, db._database_name, bound = saved
        unit_driver.set(bound)
