# Generated from memora_ogm/_async by scripts/generate_sync.py: do not edit.
"""Connecting neomodel, running units of work, and keeping the vector store in step.

Every facade call runs on the interface's own driver and database, retried with
jittered backoff on Neo4j's transient errors, on constraint races of concurrent
``MERGE``\\ s of a user's days and on nodes deleted by a concurrent transaction while
this one waited for their lock. Any other constraint violation is a conflict, raised at
once. A write whose commit went unanswered (the connection lost after the commit was
sent, or during an auto-commit statement) may have landed or not: it is not simply run
again, but the server is asked what shows it landed (:class:`Landed`), and the call
returns as if the answer had come, or runs the write again.

A call of one statement (:meth:`Graph.query`, :meth:`Graph.read_unit`,
:meth:`Graph.write_unit`) runs it as an auto-commit transaction: one round trip. Work
of several statements, or a write whose vector changes must go with it, runs through
:meth:`Graph.read` or :meth:`Graph.write`: an explicit transaction (its BEGIN sent with
the first statement) bound to neomodel through its context-local session and
transaction, so concurrent tasks, threads and interfaces on other servers never share
one. A write's :class:`VectorChanges` are applied to the associated vector store after
the graph work succeeded and before the commit, and undone if the commit then fails:
both stores change together or neither does.
"""

from __future__ import annotations

import logging
import random
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import AbstractContextManager, contextmanager, nullcontext
from dataclasses import dataclass
from functools import partial
from typing import Any, TypeVar

from neo4j import (
    READ_ACCESS,
    WRITE_ACCESS,
    Driver,
    GraphDatabase,
    Neo4jDriver,
    Record,
    Session,
    Transaction,
)
from neo4j.api import BookmarkManager
from neo4j.exceptions import (
    ClientError,
    IncompleteCommit,
    ServiceUnavailable,
    SessionExpired,
    TransientError,
)
from neomodel import db
from neomodel.exceptions import NodeClassNotDefined, UniqueProperty
from neomodel.sync_.connection import ensure_connection

from memora_ogm._sync.compat import sleep
from memora_ogm._sync.connection import Connection, unit_driver
from memora_ogm._sync.vector_base import BaseVectorDB
from memora_ogm.errors import ConflictError, NodeVanished, OutcomeUnknown, RetriesExhausted
from memora_ogm.queries import APOC_AVAILABLE, EDITION
from memora_ogm.schema.models import Memory as MemoryModel
from memora_ogm.unit_of_work import Statement, UnitOfWork

T = TypeVar("T")
logger = logging.getLogger("memora_ogm")

CONSTRAINT_FAILED = "Neo.ClientError.Schema.ConstraintValidationFailed"
#: A node the transaction had found was deleted by a concurrent transaction before this
#: one could lock it (raised where it waited for that lock): the work starts again and
#: sees the node gone.
ENTITY_NOT_FOUND = "Neo.ClientError.Statement.EntityNotFound"
#: Labels of the nodes units of work ``MERGE`` (:meth:`UnitOfWork.merge`: a user's days).
#: Two transactions merging the same new one race on its key: the loser runs again and
#: finds it. A violation of any other key is a conflict.
MERGED_LABELS = ("Date",)
#: The driver's errors for a connection lost (or never made) under a statement.
CONNECTION_LOST = (ServiceUnavailable, SessionExpired)
#: The transaction outgrew the server's transaction memory: a transient error by its
#: code, but the same work would not fit the next time either, so it is never retried.
OUT_OF_TRANSACTION_MEMORY = "Neo.TransientError.General.MemoryPoolOutOfMemoryError"


class VectorChanges:
    """The memories one write transaction adds to and removes from the vector store.

    ``removed`` holds the memories as they were, so that a failed commit can put
    them back; a purge also clears whatever else the store holds for that user or
    organisation. Without a vector store (``tracked`` false) nothing is recorded, and
    the memories given are never built.
    """

    def __init__(self, tracked: bool = True) -> None:
        self.tracked = tracked
        self.added: list[MemoryModel] = []
        self.removed: list[MemoryModel] = []
        self.purged_users: list[tuple[str, str]] = []
        self.purged_organizations: list[str] = []

    def add(self, memories: Iterable[MemoryModel]) -> None:
        if self.tracked:
            self.added.extend(memories)

    def remove(self, memories: Iterable[MemoryModel]) -> None:
        if self.tracked:
            self.removed.extend(memories)

    def purge_user(self, org_id: str, user_id: str) -> None:
        if self.tracked:
            self.purged_users.append((org_id, user_id))

    def purge_organization(self, org_id: str) -> None:
        if self.tracked:
            self.purged_organizations.append(org_id)

    def __bool__(self) -> bool:
        return bool(self.added or self.removed or self.purged_users or self.purged_organizations)


def _add_to_vector_db(vector_db: BaseVectorDB, memories: list[MemoryModel]) -> None:
    """``add_memories`` takes one agent and one timestamp a call: group by them."""
    groups: dict[tuple[str, str, str, str], list[MemoryModel]] = {}
    for memory in memories:
        key = (memory.org_id, memory.user_id, memory.agent_id, memory.obtained_at.isoformat())
        groups.setdefault(key, []).append(memory)
    for (org_id, user_id, agent_id, obtained_at), group in groups.items():
        vector_db.add_memories(
            org_id=org_id,
            user_id=user_id,
            agent_id=agent_id,
            memory_ids=[memory.memory_id for memory in group],
            memories=[memory.memory for memory in group],
            obtained_at=obtained_at,
        )


def apply_vector_changes(vector_db: BaseVectorDB, changes: VectorChanges) -> None:
    """Apply ``changes``; if that fails half-way, put back what was applied and re-raise."""
    try:
        if changes.removed:
            vector_db.delete_memories([memory.memory_id for memory in changes.removed])
        for org_id, user_id in changes.purged_users:
            vector_db.delete_all_user_memories(org_id, user_id)
        for org_id in changes.purged_organizations:
            vector_db.delete_all_organization_memories(org_id)
        if changes.added:
            _add_to_vector_db(vector_db, changes.added)
    except BaseException:
        undo_vector_changes(vector_db, changes)
        raise


def undo_vector_changes(vector_db: BaseVectorDB, changes: VectorChanges) -> None:
    """Best effort inverse of :func:`apply_vector_changes` (deletes and upserts are idempotent)."""
    try:
        if changes.added:
            vector_db.delete_memories([memory.memory_id for memory in changes.added])
        if changes.removed:
            _add_to_vector_db(vector_db, changes.removed)
    except Exception:  # pragma: no cover - reported, the original error matters more
        logger.exception("could not undo vector store changes after a failed write")


def nothing(row: dict[str, Any]) -> None:
    """The result of a write that returns nothing."""


@dataclass(frozen=True)
class Landed:
    """What shows that a write took effect when its commit went unanswered: the node of
    ``cls`` with ``keys`` exists (``present``), or no longer does (a delete).

    One node is enough, since a transaction commits whole or not at all: the node the
    write creates with an id of its own, or the one it deletes.
    """

    cls: type
    keys: Mapping[str, Any]
    present: bool = True


#: Words of the server's message for a unique key that exists already (the same code
#: also reports a node deleted while a concurrent transaction linked to it).
KEY_EXISTS = "already exists with"


def _violated_key(error: BaseException) -> str | None:
    """The server's message of a unique constraint violation, else None."""
    if isinstance(error, UniqueProperty):
        return str(error.message)
    if isinstance(error, ClientError) and error.code == CONSTRAINT_FAILED:
        message = str(error.message)
        return message if KEY_EXISTS in message else None
    return None


def _is_retryable(error: BaseException) -> bool:
    """Whether running the work again is safe and may succeed.

    A lost connection is, for work that did not commit: an unanswered commit reaches
    here only once resolved (:meth:`Graph.write`, :meth:`Graph.query`).
    """
    if isinstance(error, TransientError) and error.code == OUT_OF_TRANSACTION_MEMORY:
        return False
    if isinstance(error, (TransientError, ServiceUnavailable, SessionExpired, NodeVanished)):
        return True
    if isinstance(error, NodeClassNotDefined) and not error.db_node_rel_class.labels:
        return True  # a node read while a concurrent transaction deleted it has no labels
    violated = _violated_key(error)
    if violated is not None:
        return any(f"label `{label}`" in violated for label in MERGED_LABELS)
    # A node deleted while a concurrent transaction linked to it ("still has
    # relationships"), or deleted while this one waited for its lock: run it again.
    return isinstance(error, ClientError) and error.code in (CONSTRAINT_FAILED, ENTITY_NOT_FOUND)


@ensure_connection
def _configured_driver(database: Any) -> Driver:
    """neomodel's driver (``database`` is ``adb``), built from its configuration
    on first use if need be."""
    driver: Driver = database.driver
    return driver


def _neomodel_driver() -> Driver:
    """The driver of the connection the application gave neomodel, for ``from_neomodel()``:
    built from neomodel's configuration on first use, or neomodel's error without one."""
    driver: Driver = _configured_driver(db)
    return driver


def pipelined_begin(session: Session) -> AbstractContextManager[Any]:
    """Send a transaction's BEGIN with its first statement instead of on its own.

    It saves a round trip per transaction; the driver's own ``execute_query`` begins its
    transactions this way. The switch is private in the driver (pinned by neomodel), so
    without it a transaction simply begins the usual way.
    """
    switch: AbstractContextManager[Any] = getattr(session, "_pipelined_begin", nullcontext())
    return switch


@contextmanager
def bind_neomodel(
    driver: Driver,
    database: str | None,
    write: bool,
    bookmarks: BookmarkManager | None = None,
) -> Iterator[Transaction]:
    """Run neomodel's queries of this context in a new transaction on ``driver``.

    The one place that chooses the connection of a unit of work. neomodel keeps its
    session, transaction and database name in context variables (one per asyncio
    task or thread) and runs every query on the active transaction when there is
    one; binding them here makes each unit of work use its interface's own driver and
    database, whatever other interfaces do concurrently. neomodel sees ``driver`` as its
    driver for the unit's duration, in this context only (``UnitDriverView`` in
    :mod:`memora_ogm._async.connection`): its process-wide driver stays the
    application's. Reads open read sessions, so a routing (``neo4j://``) driver sends
    them to a reader; ``bookmarks`` makes that reader wait until it has the writes the
    bookmark manager has seen committed. The caller commits; a transaction left open is
    rolled back.
    """
    session = driver.session(
        database=database,
        default_access_mode=WRITE_ACCESS if write else READ_ACCESS,
        bookmark_manager=bookmarks,
    )
    saved = (db._session, db._active_transaction, db._database_name, unit_driver.get())
    try:
        with pipelined_begin(session):
            transaction = session.begin_transaction()
        db._session, db._active_transaction = session, transaction
        db._database_name = database
        unit_driver.set(driver)
        try:
            yield transaction
        finally:
            db._session, db._active_transaction, db._database_name, bound = saved
            unit_driver.set(bound)
            if not transaction.closed():
                transaction.rollback()
    finally:
        session.close()


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
            borrowed=_neomodel_driver,
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
        #: (see :meth:`bookmarks_for`).
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

    @contextmanager
    def _transaction(self, write: bool) -> Iterator[None]:
        driver = self.driver()
        bookmarks = self.bookmarks_for(driver)
        with bind_neomodel(driver, self.database, write, bookmarks) as transaction:
            yield
            self.commit(transaction)

    def commit(self, transaction: Transaction) -> None:
        """Commit a unit of work (its own method, so tests can make a commit fail)."""
        transaction.commit()

    def _attempts(self, work: Callable[[], T]) -> T:
        for attempt in range(1, self.max_attempts + 1):
            try:
                return work()
            except Exception as error:
                if not _is_retryable(error):
                    violated = _violated_key(error)
                    if violated is not None:
                        raise ConflictError(violated) from error
                    raise
                if attempt == self.max_attempts:
                    raise RetriesExhausted(f"gave up after {attempt} attempts: {error}") from error
                delay = random.uniform(0, self.base_backoff * 2 ** (attempt - 1))
                logger.info(
                    "retrying after %s (attempt %d): %s", type(error).__name__, attempt, error
                )
                sleep(delay)
        raise AssertionError("unreachable")  # pragma: no cover

    def read(self, work: Callable[[], T]) -> T:
        """Run ``work`` in a read transaction (routed to a reader in a cluster)."""

        def attempt() -> T:
            with self._transaction(write=False):
                return work()

        return self._attempts(attempt)

    def write(
        self,
        work: Callable[[VectorChanges], T],
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

        def attempt() -> T:
            changes = VectorChanges(tracked=self.vector_db is not None)
            applied = False
            ran: list[T] = []  # the work's result, once it ran
            try:
                with self._transaction(write=True):
                    ran.append(work(changes))
                    if self.vector_db is not None and changes:
                        apply_vector_changes(self.vector_db, changes)
                        applied = True
                return ran[0]
            except BaseException as error:
                took_effect = False
                try:
                    if ran and isinstance(error, IncompleteCommit):
                        shows = landed(ran[0]) if callable(landed) else landed
                        took_effect = self._has_landed(shows)
                finally:
                    if applied and not took_effect and self.vector_db is not None:
                        undo_vector_changes(self.vector_db, changes)
                if took_effect:
                    return ran[0]
                raise

        return self._attempts(attempt)

    def _has_landed(self, landed: Landed | None) -> bool:
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
        probe = UnitOfWork()
        probe.output("node", probe.match(landed.cls, **landed.keys))
        query, params = probe.compile()
        deadline = time.monotonic() + self.outcome_timeout
        while True:
            try:
                found = self.query(
                    query, params, lambda rows: rows[0]["node"] is not None, write=True
                )
                break
            except (RetriesExhausted, *CONNECTION_LOST) as error:
                if time.monotonic() >= deadline:
                    raise OutcomeUnknown(
                        "the connection was lost as a write committed, and the server could "
                        f"not be asked whether it took effect: {error}"
                    ) from error
                sleep(0.5)
        logger.info("a commit went unanswered; it %s", "landed" if found else "did not land")
        return found == landed.present

    def cypher(self, query: str, **params: Any) -> list[dict[str, Any]]:
        """Run one statement in the current unit of work's transaction; its rows as dicts.

        Every statement of the facade goes through here (counted in ``statements``),
        on the transaction :func:`bind_neomodel` opened.
        """
        transaction = db._active_transaction
        if transaction is None:
            raise RuntimeError("statements run inside Graph.read or Graph.write")
        self.statements += 1
        result = transaction.run(query, params)
        return [_row(record) for record in result]

    def run(self, work: UnitOfWork) -> dict[str, Any]:
        """Run a unit of work's one statement; raise the not-found error of what it missed."""
        query, params = work.compile()
        return _only_row(work, self.cypher(query, **params))

    def query(
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

        def attempt() -> T:
            link = self.connection.link()
            database = self.database
            session = link.session(database, write, self.bookmarks_for(link.driver))
            try:
                self.statements += 1
                records = session.run(query, params)
                rows = [_row(record) for record in records]
            except BaseException as error:
                session.close()  # a failed statement's session is not reused
                if write and isinstance(error, CONNECTION_LOST) and self._has_landed(landed):
                    return result([{"missing": []}])
                raise
            link.keep(database, write, session)
            return result(rows)

        return self._attempts(attempt)

    def bookmarks_for(self, driver: Driver) -> BookmarkManager | None:
        """The bookmark manager for sessions of ``driver``: only a routing driver needs one.

        A routing (``neo4j://``) driver may send a read to another server than the write
        before it, which must first catch up; a direct (``bolt://``) driver sends every
        statement to its one server, where a committed write is visible to the next
        statement anyway, and the manager would only cost work on both sides.
        """
        return self.bookmarks if isinstance(driver, Neo4jDriver) else None

    def read_unit(self, work: Statement, result: Callable[[dict[str, Any]], T]) -> T:
        """:meth:`query` of a unit of work (or a prepared read) that only reads: ``result`` of
        its one row."""
        query, params = work.compile()
        return self.query(query, params, lambda rows: result(_only_row(work, rows)))

    def write_unit(
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
            return self.query(
                query,
                params,
                lambda rows: result(_only_row(work, rows)),
                write=True,
                landed=landed,
            )

        def attempt(changes: VectorChanges) -> T:
            row = self.run(work)
            vectors(row, changes)
            return result(row)

        return self.write(attempt, landed)

    def is_enterprise(self) -> bool:
        """Whether this graph's server is Enterprise Edition, asked once per graph.

        Not ``adb.edition_is_enterprise()``: neomodel caches the edition process-wide,
        for whichever server it asked first, and interfaces may be on servers of both
        editions.
        """
        enterprise = self.enterprise
        if enterprise is None:
            enterprise = self.query(
                EDITION, {}, lambda rows: any(row["edition"] == "enterprise" for row in rows)
            )
            self.enterprise = enterprise
        return enterprise

    def has_apoc(self) -> bool:
        """Whether to resolve placeholders with APOC: ``use_apoc``, else asked once."""
        use_apoc = self.use_apoc
        if use_apoc is None:
            use_apoc = self.query(
                APOC_AVAILABLE, {}, lambda rows: any(row["available"] for row in rows)
            )
            self.use_apoc = use_apoc
        return use_apoc
