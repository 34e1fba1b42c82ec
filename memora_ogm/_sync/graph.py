# Generated from memora_ogm/_async by scripts/generate_sync.py: do not edit.
"""A facade's graph: its connection, and the one door its calls go through.

A call declared in :mod:`memora_ogm.calls` runs through :meth:`Graph.execute`, every
statement leaving through :meth:`Graph._send`, as one auto-commit statement or in an
explicit transaction (:meth:`Graph.transaction`), retried by :mod:`memora_ogm._async.retry`
on the drivers of :mod:`memora_ogm._async.connection`; a write's vector changes are
applied around its commit (:class:`~memora_ogm._async.vector_changes.VectorCommit`): both
stores change together or neither does.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from contextlib import nullcontext
from functools import partial
from typing import Any, ParamSpec, TypeVar, cast

from neo4j import Driver, GraphDatabase, Record, Session, Transaction
from neo4j.exceptions import IncompleteCommit

from memora_ogm import telemetry
from memora_ogm._sync import nodes
from memora_ogm._sync.connection import (
    Connection,
    bind_neomodel,
    neomodel_driver,
    open_transaction,
)
from memora_ogm._sync.retry import CONNECTION_LOST, ask_outcome, retried
from memora_ogm._sync.vector_base import BaseVectorDB
from memora_ogm._sync.vector_changes import VectorCommit
from memora_ogm.calls import Batches, Call, Landed, Query, VectorChanges, nothing
from memora_ogm.constraints import EDITION
from memora_ogm.errors import NodeVanished, NotFoundError
from memora_ogm.projection import reading_through
from memora_ogm.queries import APOC_AVAILABLE
from memora_ogm.unit_of_work import Statement

__all__ = ["Graph", "Landed", "Work", "VectorChanges", "nothing"]

logger = logging.getLogger("memora_ogm")
T = TypeVar("T")
P = ParamSpec("P")


def _row(record: Record) -> dict[str, Any]:
    """A record as a dict of its values as they came.

    Not ``record.data()``, which walks every nested value to turn graph entities into
    dicts (a large share of a page read's client time); the statements here return
    maps and lists, never entities.
    """
    return dict(zip(record.keys(), record, strict=True))


def _answer(statement: Statement | Query, rows: list[dict[str, Any]]) -> Any:
    """What a call's result is of: a hand-written read's rows, a unit of work's one row."""
    return rows if isinstance(statement, Query) else _only_row(statement, rows)


def _only_row(work: Statement, rows: list[dict[str, Any]]) -> dict[str, Any]:
    """The one row of a unit of work's statement, after raising the not-found error of what
    it missed."""
    if not rows:
        # The statement returns one row by construction; none means the server dropped
        # it over a node a concurrent transaction deleted meanwhile: run it again.
        raise NodeVanished("a node was deleted while the statement ran")
    work.raise_missing(rows[0]["missing"])
    return rows[0]


class Work:
    """The work of an explicit transaction: its statements run here, its vector changes
    recorded here."""

    def __init__(self, graph: Graph, transaction: Transaction, changes: VectorChanges) -> None:
        self.graph = graph
        self.transaction = transaction
        #: What the write changes in the vector store, applied just before it commits.
        self.changes = changes

    def run(self, statement: Statement | Query) -> Any:
        """Run ``statement`` here: a unit of work's one row (after raising the not-found
        error of what it missed), or a query's rows."""
        query, params = statement.compile()
        return _answer(statement, self.graph._send(self.transaction, query, params))

    def execute(self, call: Call[T]) -> T:
        """Run a declared call's statement here (its vector changes are not recorded);
        its result."""
        statement = call.statement
        assert statement is not None
        query, params = statement.compile()
        rows = self.graph._send(self.transaction, query, params)
        return call.result(_answer(statement, rows))


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
            partial(GraphDatabase.driver, uri, auth=(username or "", password or ""), **config)
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
        #: (see :func:`~memora_ogm._async.connection.new_session`).
        self.bookmarks = GraphDatabase.bookmark_manager()

    def driver(self) -> Driver:
        """This graph's driver for this process and event loop; for ``from_neomodel()``
        interfaces, neomodel's."""
        return (self.connection.link()).driver

    def connect(self) -> None:
        """Check that the server answers."""
        (self.driver()).verify_connectivity()

    def close(self) -> None:
        """Close this graph's drivers and kept sessions (a borrowed driver stays open)."""
        self.connection.close()

    # -- the door --------------------------------------------------------------------------

    def execute(
        self, declare: Callable[P, Call[T] | Batches], *args: P.args, **kwargs: P.kwargs
    ) -> T:
        """Declare a call with the arguments (:mod:`memora_ogm.calls`) and run it.

        A read, or a write that changes no vectors (or has no vector store to change),
        runs as one auto-commit statement; any other write in a transaction, its
        statements on it and its vector changes around its commit; :class:`Batches`
        batch after batch. The call reads through this twin's node classes.
        """
        with reading_through(nodes):
            declared = declare(*args, **kwargs)
            if isinstance(declared, Batches):
                self._batches(declared)
                answer: Any = None
            else:
                answer = self._call(declared)
        if declared.log:
            logger.info(declared.log)
        return cast(T, answer)

    def _call(self, call: Call[T]) -> T:
        statement = call.statement
        if statement is None:
            return call.result(None)
        if not call.write or (not call.before and (call.vectors is None or self.vector_db is None)):
            query, params = statement.compile()
            return self._auto_commit(
                query,
                params,
                lambda rows: call.result(_answer(statement, rows)),
                write=call.write,
                landed=call.landed,
            )

        def attempt(work: Work) -> T:
            for before in call.before:
                work.run(before)
            row = work.run(statement)
            if call.vectors is not None:
                call.vectors(row, work.changes)
            return call.result(row)

        return self.transaction(attempt, call.landed)

    def _batches(self, batches: Batches) -> None:
        """Run the statement of ``batches``, each batch a write of its own (retried on its
        own), until a batch says it is done.

        A batch that finds what the work starts from gone after an earlier batch ends it:
        that batch took exactly what was left, so it could not tell that nothing was.
        """
        query, params = batches.statement.compile()

        def step(work: Work) -> dict[str, Any]:
            rows = self._send(work.transaction, query, params)
            row = _only_row(batches.statement, rows)
            batches.vectors(row, work.changes)
            return row

        first = True
        while True:
            try:
                row = self.transaction(step, batches.landed)
            except NotFoundError:
                if first:
                    raise
                return
            telemetry.batch()
            if batches.done(row):
                return
            first = False
            params = {**params, **batches.carried(row)}

    # -- transactions and retries ----------------------------------------------------------

    def transaction(
        self,
        work: Callable[[Work], T],
        landed: Landed | Callable[[T], Landed | None] | None = None,
        *,
        write: bool = True,
        neomodel: bool = False,
    ) -> T:
        """Run ``work`` in an explicit transaction, retried, with its vector changes all or
        nothing (a read routes to a reader in a cluster).

        When a write's commit goes unanswered (``IncompleteCommit``), ``landed`` (or
        ``landed`` of the work's result, for work that finds what it writes) says what
        shows that it took effect, and the server is asked: if it did, the vector changes
        stand and the result is returned; if not, they are undone and the work runs again.
        Work without ``landed`` (or for which it gives None) may run twice: it simply runs
        again. With ``neomodel``, the node classes' own queries in ``work`` run on the
        transaction too (see :func:`~memora_ogm._async.connection.bind_neomodel`).
        """

        def attempt() -> T:
            vectors = VectorCommit(self.vector_db if write else None)
            ran: list[T] = []  # the work's result, once it ran
            try:
                driver = self.driver()
                database = self.database
                with open_transaction(driver, database, write, self.bookmarks) as opened:
                    session, tx = opened
                    bound = bind_neomodel(driver, database, session, tx) if neomodel else None
                    with bound or nullcontext():
                        ran.append(work(Work(self, tx, vectors.changes)))
                    vectors.before_commit()
                    self.commit(tx)
                return ran[0]
            except BaseException as error:
                took_effect = False
                try:
                    if ran and write and isinstance(error, IncompleteCommit):
                        shows = landed(ran[0]) if callable(landed) else landed
                        took_effect = self._has_landed(shows)
                finally:
                    if not took_effect:
                        vectors.commit_failed()
                if took_effect:
                    return ran[0]
                raise

        return retried(attempt, self.max_attempts, self.base_backoff)

    def commit(self, transaction: Transaction) -> None:
        """Commit a transaction (its own method, so tests can make a commit fail)."""
        transaction.commit()

    def _has_landed(self, landed: Landed | None) -> bool:
        """Ask the server whether a write whose commit went unanswered took effect, for up
        to :attr:`outcome_timeout` seconds (:func:`ask_outcome`); False without ``landed``:
        the write runs again.

        On a write session: in a cluster the leader answers, which has the commit if it
        happened (a follower may not have it yet, and its bookmark was in the lost answer).
        """
        if landed is None:
            return False
        query, params = landed.probe().compile()

        def found() -> bool:
            return self._auto_commit(query, params, lambda rows: rows[0]["node"] is not None, True)

        return ask_outcome(landed, found, self.outcome_timeout)

    def _send(
        self, runner: Session | Transaction, query: str, params: dict[str, Any]
    ) -> list[dict[str, Any]]:
        """Send one statement and read its rows: on a kept session as an auto-commit
        transaction, or on an explicit transaction. The one place a statement leaves for
        the server, counted in ``statements`` (a call's cost in round trips)."""
        self.statements += 1
        telemetry.sent(query)
        result = runner.run(query, params)
        return [_row(record) for record in result]

    def _auto_commit(
        self,
        query: str,
        params: dict[str, Any],
        result: Callable[[list[dict[str, Any]]], T],
        write: bool = False,
        landed: Landed | None = None,
    ) -> T:
        """One statement run as an auto-commit transaction; ``result`` of its rows.

        One statement is atomic on its own, so it needs no explicit transaction: one
        round trip instead of two (BEGIN with the statement, then COMMIT). ``result``
        runs inside the attempt: a node deleted while it was read raises
        ``NodeVanished`` there, and the statement runs again (and then finds it missing).

        A write that lost its connection may have committed (the driver never retries
        an auto-commit statement): ``landed`` says what shows it did, and the server is
        asked. If it did, ``result`` is of the row of a unit of work with no outputs (a
        write passing ``landed`` outputs nothing); else, or without ``landed`` (a write
        that may run twice), the statement runs again.
        """

        def attempt() -> T:
            link = self.connection.link()
            database = self.database
            session = link.session(database, write, self.bookmarks)
            try:
                rows = self._send(session, query, params)
            except BaseException as error:
                session.close()  # a failed statement's session is not reused
                if write and isinstance(error, CONNECTION_LOST) and self._has_landed(landed):
                    return result([{"missing": []}])
                raise
            link.keep(database, write, session)
            return result(rows)

        return retried(attempt, self.max_attempts, self.base_backoff)

    # -- what the server is ----------------------------------------------------------------

    def components(self) -> list[dict[str, Any]]:
        """The server's components: each one's ``name``, ``version`` and ``edition``."""
        return self.execute(Call, Query(EDITION, {}), list)

    def is_enterprise(self) -> bool:
        """Whether this graph's server is Enterprise Edition, asked once per graph.

        Not ``adb.edition_is_enterprise()``: neomodel caches the edition process-wide,
        for whichever server it asked first, and interfaces may be on servers of both
        editions.
        """
        if self.enterprise is None:
            components = self.components()
            self.enterprise = any(row["edition"] == "enterprise" for row in components)
        return self.enterprise

    def has_apoc(self) -> bool:
        """Whether to resolve placeholders with APOC: ``use_apoc``, else asked once."""
        if self.use_apoc is None:
            self.use_apoc = self.execute(
                Call, Query(APOC_AVAILABLE, {}), lambda rows: any(r["available"] for r in rows)
            )
        return self.use_apoc
