"""A facade's graph: its connection, and the one way its statements reach the server.

Every statement of a facade call leaves through :meth:`Graph._send`, in one of two kinds
of transaction:

- an auto-commit transaction on a kept session (:meth:`Graph.query`), for a call of one
  statement: one round trip. :meth:`Graph.read_unit` and :meth:`Graph.write_unit` run a
  unit of work's statement this way;
- an explicit transaction (:meth:`Graph.read`, :meth:`Graph.write`; its BEGIN sent with
  the first statement), for work of several statements or a write whose vector changes
  must go with it. Its statements run through :meth:`Graph.cypher` (:meth:`Graph.run`
  for a unit of work), and neomodel's queries of the work run on it too
  (:func:`~memora_ogm._async.connection.bind_neomodel`).

Each attempt follows the retry policy of :mod:`memora_ogm._async.retry` (with its
resolution of unanswered commits, :class:`Landed`), on the drivers and sessions of
:mod:`memora_ogm._async.connection`; a write's vector changes are applied around its
commit by :class:`~memora_ogm._async.vector_changes.VectorCommit`: both stores change
together or neither does.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from functools import partial
from typing import Any, TypeVar

from neo4j import AsyncDriver, AsyncGraphDatabase, AsyncSession, AsyncTransaction, Record
from neo4j.exceptions import IncompleteCommit
from neomodel import adb

from memora_ogm import telemetry
from memora_ogm._async.connection import (
    Connection,
    bind_neomodel,
    bookmarks_for,
    neomodel_driver,
)
from memora_ogm._async.retry import CONNECTION_LOST, Landed, ask_outcome, retried
from memora_ogm._async.schema import EDITION
from memora_ogm._async.vector_base import BaseVectorDB
from memora_ogm._async.vector_changes import VectorChanges, VectorCommit
from memora_ogm.errors import NodeVanished
from memora_ogm.queries import APOC_AVAILABLE
from memora_ogm.unit_of_work import Statement, UnitOfWork

__all__ = ["Graph", "Landed", "VectorChanges", "nothing"]

T = TypeVar("T")


def nothing(row: dict[str, Any]) -> None:
    """The result of a write that returns nothing."""


def _row(record: Record) -> dict[str, Any]:
    """A record as a dict of its values as they came.

    Not ``record.data()``, which walks every nested value to turn graph entities into
    dicts (a large share of a page read's client time); the statements here return
    maps and lists, never entities.
    """
    return dict(zip(record.keys(), record, strict=True))


def _only_row(work: Statement, rows: list[dict[str, Any]]) -> dict[str, Any]:
    """The one row of a unit of work's statement, after raising the not-found error of what
    it missed."""
    if not rows:
        # The statement returns one row by construction; none means the server dropped
        # it over a node a concurrent transaction deleted meanwhile: run it again.
        raise NodeVanished("a node was deleted while the statement ran")
    work.raise_missing(rows[0]["missing"])
    return rows[0]


class Graph:
    """The connection of one facade: its driver, its database and its vector store."""

    #: Attempts for a unit of work that keeps meeting transient conflicts.
    max_attempts = 8
    #: First backoff in seconds; doubled each attempt, with full jitter.
    base_backoff = 0.02
    #: Seconds to keep asking whether an unanswered commit landed while the server is away.
    outcome_timeout = 120.0

    def __init__(
        self,
        uri: str | None,
        username: str | None,
        password: str | None,
        database: str | None,
        vector_db: BaseVectorDB | None = None,
        driver_config: dict[str, Any] | None = None,
    ) -> None:
        self.database = database or None
        self.vector_db = vector_db
        #: The server's URI (None: neomodel's driver), for the spans of telemetry.
        self.uri = uri
        config: dict[str, Any] = {
            # Planner notices (unknown labels on an empty graph and the like) are noise here.
            "notifications_min_severity": "OFF",
            **(driver_config or {}),
        }
        #: The graph's drivers, one per process and event loop, opened on first use there.
        self.connection = Connection(
            partial(AsyncGraphDatabase.driver, uri, auth=(username or "", password or ""), **config)
            if uri is not None
            else None,
            borrowed=neomodel_driver,
        )
        #: Statements run so far (a call's cost in round trips, for tests and benchmarks).
        self.statements = 0
        #: Resolve placeholders with APOC on the server (True), in Python (False), or
        #: detect whether the server has APOC on first use (None).
        self.use_apoc: bool | None = None
        #: Whether this graph's server is Enterprise Edition; asked on first use.
        self.enterprise: bool | None = None
        #: Causal consistency across this graph's units of work: in a cluster, a read
        #: routed to a follower still sees every write this graph committed before it
        #: (see :func:`~memora_ogm._async.connection.bookmarks_for`).
        self.bookmarks = AsyncGraphDatabase.bookmark_manager()

    async def driver(self) -> AsyncDriver:
        """This graph's driver for this process and event loop; for ``from_neomodel()``
        interfaces, neomodel's."""
        return (await self.connection.link()).driver

    async def connect(self) -> None:
        """Check that the server answers."""
        await (await self.driver()).verify_connectivity()

    async def close(self) -> None:
        """Close this graph's drivers and kept sessions (a borrowed driver stays open)."""
        await self.connection.close()

    @asynccontextmanager
    async def _transaction(
        self, write: bool, before_commit: Callable[[], Awaitable[None]] | None = None
    ) -> AsyncIterator[None]:
        """An explicit transaction bound to neomodel, committed when the work ran through
        (after ``before_commit``, the hook of the vector store's changes)."""
        driver = await self.driver()
        bookmarks = bookmarks_for(driver, self.bookmarks)
        async with bind_neomodel(driver, self.database, write, bookmarks) as transaction:
            yield
            if before_commit is not None:
                await before_commit()
            await self.commit(transaction)

    async def commit(self, transaction: AsyncTransaction) -> None:
        """Commit a unit of work (its own method, so tests can make a commit fail)."""
        await transaction.commit()

    async def _attempts(self, work: Callable[[], Awaitable[T]]) -> T:
        """``work`` under the retry policy, with this graph's attempts and backoff."""
        return await retried(work, self.max_attempts, self.base_backoff)

    async def read(self, work: Callable[[], Awaitable[T]]) -> T:
        """Run ``work`` in a read transaction (routed to a reader in a cluster)."""

        async def attempt() -> T:
            async with self._transaction(write=False):
                return await work()

        return await self._attempts(attempt)

    async def write(
        self,
        work: Callable[[VectorChanges], Awaitable[T]],
        landed: Landed | Callable[[T], Landed | None] | None = None,
    ) -> T:
        """Run ``work`` in a write transaction, with its vector changes all or nothing.

        When its commit goes unanswered (``IncompleteCommit``), ``landed`` (or ``landed``
        of the work's result, for work that finds what it deletes) says what shows that
        it took effect, and the server is asked: if it did,
        the vector changes stand and the result is returned; if not, they are undone and
        the work runs again. Work without ``landed`` (or for which it gives None) is work
        that may run twice, such as a rename or a delete that found nothing for the
        vector store: it simply runs again.
        """

        async def attempt() -> T:
            vectors = VectorCommit(self.vector_db)
            ran: list[T] = []  # the work's result, once it ran
            try:
                async with self._transaction(True, vectors.before_commit):
                    ran.append(await work(vectors.changes))
                return ran[0]
            except BaseException as error:
                took_effect = False
                try:
                    if ran and isinstance(error, IncompleteCommit):
                        shows = landed(ran[0]) if callable(landed) else landed
                        took_effect = await self._has_landed(shows)
                finally:
                    if not took_effect:
                        await vectors.commit_failed()
                if took_effect:
                    return ran[0]
                raise

        return await self._attempts(attempt)

    async def _has_landed(self, landed: Landed | None) -> bool:
        """Ask the server whether a write whose commit went unanswered took effect (False
        without ``landed``: the write runs again).

        On a write session: in a cluster the leader answers, which has the commit if it
        happened (a follower may not have it yet, and its bookmark was in the lost
        answer). A server that went down with the commit is asked again until it is back,
        for up to :attr:`outcome_timeout` seconds: giving up sooner would undo the vector
        changes of a write that may have landed. ``OutcomeUnknown`` after that.
        """
        if landed is None:
            return False
        query, params = landed.probe().compile()

        def found(rows: list[dict[str, Any]]) -> bool:
            return rows[0]["node"] is not None

        return await ask_outcome(
            landed, lambda: self.query(query, params, found, write=True), self.outcome_timeout
        )

    async def cypher(self, query: str, **params: Any) -> list[dict[str, Any]]:
        """Run one statement in the current unit of work's transaction; its rows as dicts.

        The transaction is the one :meth:`read` or :meth:`write` opened and bound to
        neomodel (:func:`~memora_ogm._async.connection.bind_neomodel`).
        """
        transaction = adb._active_transaction
        if transaction is None:
            raise RuntimeError("statements run inside Graph.read or Graph.write")
        return await self._send(transaction, query, params)

    async def _send(
        self, runner: AsyncSession | AsyncTransaction, query: str, params: dict[str, Any]
    ) -> list[dict[str, Any]]:
        """Send one statement and read its rows: on a kept session as an auto-commit
        transaction, or on an explicit transaction. The one place a statement leaves for
        the server, counted in ``statements`` (a call's cost in round trips)."""
        self.statements += 1
        telemetry.sent(query)
        result = await runner.run(query, params)
        return [_row(record) async for record in result]

    async def run(self, work: Statement) -> dict[str, Any]:
        """Run a unit of work's one statement; raise the not-found error of what it missed."""
        query, params = work.compile()
        return _only_row(work, await self.cypher(query, **params))

    async def query(
        self,
        query: str,
        params: dict[str, Any],
        result: Callable[[list[dict[str, Any]]], T],
        write: bool = False,
        landed: Landed | None = None,
    ) -> T:
        """One statement run as an auto-commit transaction; ``result`` of its rows.

        One statement is atomic on its own, so it needs no explicit transaction: one
        round trip instead of two (BEGIN with the statement, then COMMIT). Nothing here
        goes through neomodel, so nothing needs binding. ``result`` runs inside the
        attempt: a node deleted while it was read raises ``NodeVanished`` there, and the
        statement runs again (and then finds it missing).

        A write that lost its connection may have committed (the driver never retries
        an auto-commit statement): ``landed`` says what shows it did, and the server is
        asked. If it did, ``result`` is of the row of a unit of work with no outputs (a
        write passing ``landed`` outputs nothing); else, or without ``landed`` (a write
        that may run twice), the statement runs again.
        """

        async def attempt() -> T:
            link = await self.connection.link()
            database = self.database
            session = link.session(database, write, bookmarks_for(link.driver, self.bookmarks))
            try:
                rows = await self._send(session, query, params)
            except BaseException as error:
                await session.close()  # a failed statement's session is not reused
                if write and isinstance(error, CONNECTION_LOST) and await self._has_landed(landed):
                    return result([{"missing": []}])
                raise
            link.keep(database, write, session)
            return result(rows)

        return await self._attempts(attempt)

    async def read_unit(self, work: Statement, result: Callable[[dict[str, Any]], T]) -> T:
        """:meth:`query` of a unit of work (or a prepared read) that only reads: ``result`` of
        its one row."""
        query, params = work.compile()
        return await self.query(query, params, lambda rows: result(_only_row(work, rows)))

    async def write_unit(
        self,
        work: UnitOfWork,
        result: Callable[[dict[str, Any]], T],
        vectors: Callable[[dict[str, Any], VectorChanges], None] | None = None,
        landed: Landed | None = None,
    ) -> T:
        """Run a unit of work that writes; ``result`` of its one row.

        ``vectors`` records, from the row, what the write changes in the vector store.
        With a vector store attached that needs a transaction, so that both stores
        change or neither (:meth:`write`); without one, or when the unit changes no
        vectors, the statement runs on its own as an auto-commit transaction
        (:meth:`query`). ``landed`` shows that the write took effect when its commit
        goes unanswered; without it the write runs again then.
        """
        if vectors is None or self.vector_db is None:
            query, params = work.compile()
            return await self.query(
                query,
                params,
                lambda rows: result(_only_row(work, rows)),
                write=True,
                landed=landed,
            )

        async def attempt(changes: VectorChanges) -> T:
            row = await self.run(work)
            vectors(row, changes)
            return result(row)

        return await self.write(attempt, landed)

    async def components(self) -> list[dict[str, Any]]:
        """The server's components: each one's ``name``, ``version`` and ``edition``."""
        return await self.query(EDITION, {}, list)

    async def is_enterprise(self) -> bool:
        """Whether this graph's server is Enterprise Edition, asked once per graph.

        Not ``adb.edition_is_enterprise()``: neomodel caches the edition process-wide,
        for whichever server it asked first, and interfaces may be on servers of both
        editions.
        """
        enterprise = self.enterprise
        if enterprise is None:
            components = await self.components()
            enterprise = any(row["edition"] == "enterprise" for row in components)
            self.enterprise = enterprise
        return enterprise

    async def has_apoc(self) -> bool:
        """Whether to resolve placeholders with APOC: ``use_apoc``, else asked once."""
        use_apoc = self.use_apoc
        if use_apoc is None:
            use_apoc = await self.query(
                APOC_AVAILABLE, {}, lambda rows: any(row["available"] for row in rows)
            )
            self.use_apoc = use_apoc
        return use_apoc
