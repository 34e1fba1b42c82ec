"""A facade's graph: its connection, and the one door its calls go through.

A declared call runs through :meth:`Graph.execute`, every statement leaving through
:meth:`Graph._send`, auto-commit or in a retried transaction; a write's vector changes
are applied around its commit, so both stores change together or neither does.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Iterator
from functools import partial
from typing import Any, Concatenate, ParamSpec, TypeVar, cast

from neo4j import AsyncDriver, AsyncGraphDatabase, AsyncSession, AsyncTransaction
from neo4j.exceptions import IncompleteCommit

from memora_ogm import observe
from memora_ogm._async.coalescing import Coalescer
from memora_ogm._async.connection import (
    Connection,
    neomodel_driver,
    open_transaction,
)
from memora_ogm._async.nodes import NODES
from memora_ogm._async.retry import ask_outcome, retried
from memora_ogm._async.vector_base import BaseVectorDB
from memora_ogm._async.vector_changes import VectorCommit, settle_journal
from memora_ogm.engine.call import (
    Batches,
    Call,
    Landed,
    Query,
    VectorChanges,
    answer,
    batch_of,
    nothing,
    only_row,
    row_of,
    sealed,
)
from memora_ogm.engine.constraints import EDITION
from memora_ogm.engine.nodes import Nodes
from memora_ogm.engine.queries import APOC_AVAILABLE
from memora_ogm.engine.unit_of_work import Statement
from memora_ogm.errors import CONNECTION_LOST, NodeVanished, NotFoundError, OutcomeUnknown
from memora_ogm.transfer.importing import memories_with_ids
from memora_ogm.vector_db.pending import Journal

__all__ = ["Graph", "Landed", "Work", "VectorChanges", "nothing"]

logger = logging.getLogger("memora_ogm")
T = TypeVar("T")
P = ParamSpec("P")


class Work:
    """An explicit transaction's statements and the vector changes recorded for it."""

    def __init__(self, graph: Graph, transaction: AsyncTransaction, changes: VectorChanges) -> None:
        self.graph = graph
        self.transaction = transaction
        self.changes = changes  # applied just before the commit

    async def send(self, statement: Statement | Query) -> Any:
        """Send ``statement`` here: a unit of work's one row, or a query's rows."""
        query, params = statement.compile()
        return answer(statement, await self.graph._send(self.transaction, query, params))

    async def run(self, call: Call[T]) -> T:
        """Run a declared call here, as :meth:`Graph.run` runs one alone; its vector
        changes are not recorded."""
        assert call.statement is not None
        return call.result(await self.send(call.statement))


class Graph:
    """The connection of one facade: its driver, its database and its vector store."""

    #: This twin's node classes, which every declaration it runs is given first.
    nodes: Nodes = NODES
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
        self.uri = uri  # None: neomodel's driver
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
        #: Resolve placeholders with APOC (True), in Python (False), or ask (None).
        self.use_apoc: bool | None = None
        self.enterprise: bool | None = None  # asked on first use
        #: Causal consistency: in a cluster, a read routed to a follower still sees every
        #: write this graph committed before it.
        self.bookmarks = AsyncGraphDatabase.bookmark_manager()
        #: Concurrent saves share a transaction (:mod:`memora_ogm._async.coalescing`).
        self.coalesce_writes = True
        self.coalescer = Coalescer(self._call, self._batch)

    async def driver(self) -> AsyncDriver:
        """This graph's driver for this process and event loop; for ``from_neomodel()``
        interfaces, neomodel's."""
        return (await self.connection.link()).driver

    async def connect(self) -> None:
        """Check that the server answers, then settle what waits for it (ended
        processes' records included)."""
        await (await self.driver()).verify_connectivity()
        await self.settle(connecting=True)

    async def close(self) -> None:
        """Close this graph's drivers and kept sessions (a borrowed driver stays open)."""
        await self.connection.close()

    async def execute(
        self,
        declare: Callable[Concatenate[Nodes, P], Call[T] | Batches],
        *args: P.args,
        **kwargs: P.kwargs,
    ) -> T:
        """Declare a call with this graph's node classes and the arguments
        (:mod:`memora_ogm.calls`), and :meth:`run` it."""
        return await self.run(declare(self.nodes, *args, **kwargs))

    async def run(self, call: Call[T] | Batches) -> T:
        """Run a declared call: a read, or a write without vector changes, as one
        auto-commit statement; any other write in a transaction (shared with others when
        writes coalesce); :class:`Batches` batch after batch."""
        if isinstance(call, Batches):
            await self._batches(call)
            answer: Any = None
        elif call.batch_key is not None and self.coalesce_writes:
            call = sealed(call)  # this frame holds the call until it returns
            answer = await self.coalescer.write(call)
        else:
            answer = await self._call(call)
        if call.log:
            logger.info(call.log)
        if isinstance(call, Batches) or call.write:
            await self.settle()  # the server answers again
        return cast(T, answer)

    async def execute_each(
        self,
        declare: Callable[..., Call[T]],
        arguments: list[tuple[Any, ...]],
    ) -> list[T | Exception]:
        """Declare a write per argument tuple and run them all, in shared transactions
        (:meth:`Coalescer.write_each`, which declares them a batch at a time): each one's
        result, or its own exception (its input refused, something it needs missing) in
        its place."""
        refused: dict[int, Exception] = {}

        def declared() -> Iterator[Call[T]]:
            for number, given in enumerate(arguments):
                try:
                    yield declare(self.nodes, *given)
                except ValueError as error:
                    refused[number] = error

        sent = iter(await self.coalescer.write_each(declared()))
        answers = [refused[n] if n in refused else next(sent) for n in range(len(arguments))]
        await self.settle()
        return answers

    async def _call(self, call: Call[T]) -> T:
        statement = call.statement
        if statement is None:
            return call.result(None)
        if not call.write or (not call.before and (call.vectors is None or self.vector_db is None)):
            query, params = statement.compile()
            return await self._auto_commit(
                query,
                params,
                lambda rows: call.result(answer(statement, rows)),
                write=call.write,
                landed=call.landed,
            )

        async def attempt(work: Work) -> T:
            for before in call.before:
                await work.send(before)
            row = await work.send(statement)
            if call.vectors is not None:
                call.vectors(row, work.changes)
            return call.result(row)

        return await self.transaction(attempt, call.landed)

    async def _batch(
        self,
        calls: list[Call[Any]],
        text: str,
        rows: list[tuple[tuple[str, ...], dict[str, Any]]],
    ) -> list[Any]:
        """Coalesced writes of one shape (``text``, each call's ``rows`` entry its batch key
        and parameters) in one retried transaction: each call's result, or the not-found
        error of a call whose row found something missing (that row wrote nothing)."""
        params = batch_of(rows)

        async def attempt(work: Work) -> list[Any]:
            answered = await self._send(work.transaction, text, params)
            if len(answered) != len(calls):
                raise NodeVanished("a node was deleted while the statement ran")
            outcomes: list[Any] = [None] * len(calls)
            for row in answered:
                index = row["index"]
                call = calls[index]
                try:
                    only_row(cast(Statement, call.statement), [row])
                except NotFoundError as missing:
                    outcomes[index] = missing
                    continue
                if call.vectors is not None:
                    call.vectors(row, work.changes)
                outcomes[index] = call.result(row)
            return outcomes

        def landed(outcomes: list[Any]) -> Landed | None:
            """Any saved row that can show it landed shows the whole transaction did (a row
            that cannot, an update adding no memory, is one that may run again)."""
            shown = (
                call.landed
                for call, outcome in zip(calls, outcomes, strict=True)
                if not isinstance(outcome, Exception)
            )
            return next((shows for shows in shown if shows is not None), None)

        return await self.transaction(attempt, landed)

    async def _batches(self, batches: Batches) -> None:
        """Run ``batches``, each a retried write of its own, until one says it is done.

        Not found after a first batch ends it: that batch took exactly what was left.
        """
        query, params = batches.statement.compile()

        async def step(work: Work) -> dict[str, Any]:
            rows = await self._send(work.transaction, query, params)
            row = only_row(batches.statement, rows)
            batches.vectors(row, work.changes)
            return row

        first = True
        while True:
            try:
                row = await self.transaction(step, batches.landed)
            except NotFoundError:
                if first:
                    raise
                return
            observe.batch()
            if batches.done(row):
                return
            first = False
            params = {**params, **batches.carried(row)}

    async def transaction(
        self,
        work: Callable[[Work], Awaitable[T]],
        landed: Landed | Callable[[T], Landed | None] | None = None,
        *,
        write: bool = True,
    ) -> T:
        """Run ``work`` in a retried explicit transaction, its vector changes all or nothing.

        When a write's commit goes unanswered, ``landed`` (or ``landed`` of the result)
        shows whether it took effect: if so, the vector changes stand and the result is
        returned; else they are undone and the work runs again (as it does without
        ``landed``). If the server cannot be asked within :attr:`outcome_timeout`,
        ``OutcomeUnknown`` is raised and the vector changes are held pending, settled by
        the graph once it answers (:meth:`settle`).
        """

        async def attempt() -> T:
            vectors = VectorCommit(
                self.vector_db if write else None, self.journal, self.memory_ids_held
            )
            ran: list[T] = []  # the work's result, once it ran
            try:
                driver = await self.driver()
                async with open_transaction(driver, self.database, write, self.bookmarks) as tx:
                    ran.append(await work(Work(self, tx, vectors.changes)))
                    await vectors.before_commit()
                    await self.commit(tx)
            except BaseException as error:
                if not (ran and write and isinstance(error, IncompleteCommit)):
                    await vectors.commit_failed()
                    if vectors.left_pending and isinstance(error, Exception):
                        # Run again (a retry, a split batch) while its record is held, a
                        # settler could remove the new run's points before it commits.
                        raise OutcomeUnknown(
                            "a write failed and its vector changes could not be undone; "
                            f"they are pending until the graph settles them: {error}"
                        ) from error
                    raise
                shows = landed(ran[0]) if callable(landed) else landed
                try:
                    took_effect = shows is not None and await self._has_landed(shows)
                except BaseException:  # OutcomeUnknown, or given up while asking
                    await vectors.outcome_unknown()
                    raise
                if not took_effect:
                    # Nothing to ask: the outcome is unknown to the vector store too.
                    await (vectors.outcome_unknown() if shows is None else vectors.commit_failed())
                    raise
            await vectors.committed()
            return ran[0]

        return await retried(attempt, self.max_attempts, self.base_backoff)

    @property
    def journal(self) -> Journal | None:
        """The vector store's journal of pending changes: the store keeps it, so the
        graphs sharing a store share it."""
        return None if self.vector_db is None else Journal.kept_by(self.vector_db)

    async def settle_pending(self) -> int:
        """Settle the store's pending changes against this graph; how many were settled."""
        store = self.vector_db
        return 0 if store is None else await settle_journal(self, store, Journal.kept_by(store))

    async def settle(self, connecting: bool = False) -> None:
        """Settle after a write if the journal holds records (a check without I/O), and
        on connecting (ended processes' records looked for too); logged, not raised: the
        call that asked succeeded."""
        journal = self.journal
        if journal is None or not (connecting or journal.unsettled):
            return
        try:
            await self.settle_pending()
        except Exception:
            logger.warning("pending vector changes are not settled yet", exc_info=True)

    async def memory_ids_held(self, memory_ids: list[str]) -> set[str]:
        """Those of ``memory_ids`` whose memories the graph holds now (any tenant's)."""
        found = await self.execute(memories_with_ids, memory_ids)
        return {values["memory_id"] for values in found}

    async def commit(self, transaction: AsyncTransaction) -> None:
        """Commit a transaction (its own method, so tests can make a commit fail)."""
        await transaction.commit()

    async def _has_landed(self, landed: Landed | None) -> bool:
        """Whether an unanswered commit took effect, asked for up to :attr:`outcome_timeout`.

        On a write session: the leader has the commit if it happened (a follower may not).
        """
        if landed is None:
            return False
        query, params = landed.probe().compile()

        def found() -> Awaitable[bool]:
            return self._auto_commit(query, params, lambda rows: rows[0]["node"] is not None, True)

        try:
            return await ask_outcome(landed, found, self.outcome_timeout)
        except OutcomeUnknown:
            raise
        except Exception as error:
            # Not a retryable error nor one to split a batch on: the write's vector changes
            # are held pending, and must not be run again meanwhile.
            raise OutcomeUnknown(
                "a write's commit went unanswered, and asking whether it took effect "
                f"failed: {error}"
            ) from error

    async def _send(
        self, runner: AsyncSession | AsyncTransaction, query: str, params: dict[str, Any]
    ) -> list[dict[str, Any]]:
        """The one place a statement leaves for the server (counted); its rows."""
        self.statements += 1
        observe.sent(query)
        result = await runner.run(query, params)
        return [row_of(record) async for record in result]

    async def _auto_commit(
        self,
        query: str,
        params: dict[str, Any],
        result: Callable[[list[dict[str, Any]]], T],
        write: bool = False,
        landed: Landed | None = None,
    ) -> T:
        """``result`` of one statement's rows, run as an auto-commit transaction (one round
        trip, not two); ``result`` runs in the attempt, so ``NodeVanished`` retries.

        A write that lost its connection may have committed: if ``landed`` shows it did,
        ``result`` gets an output-less row; else the statement runs again.
        """

        async def attempt() -> T:
            link = await self.connection.link()
            database = self.database
            session = link.session(database, write, self.bookmarks)
            try:
                rows = await self._send(session, query, params)
            except BaseException as error:
                await session.close()  # a failed statement's session is not reused
                if write and isinstance(error, CONNECTION_LOST) and await self._has_landed(landed):
                    return result([{"missing": []}])
                raise
            link.keep(database, write, session)
            return result(rows)

        return await retried(attempt, self.max_attempts, self.base_backoff)

    async def components(self) -> list[dict[str, Any]]:
        """The server's components: each one's ``name``, ``version`` and ``edition``."""
        return await self.run(Call(Query(EDITION, {}), list))

    async def is_enterprise(self) -> bool:
        """Whether this graph's server is Enterprise Edition, asked once per graph: not
        neomodel's, cached process-wide for whichever server it asked first."""
        if self.enterprise is None:
            components = await self.components()
            self.enterprise = any(row["edition"] == "enterprise" for row in components)
        return self.enterprise

    async def has_apoc(self) -> bool:
        """Whether to resolve placeholders with APOC: ``use_apoc``, else asked once."""
        if self.use_apoc is None:
            apoc = Query(APOC_AVAILABLE, {})
            self.use_apoc = await self.run(
                Call(apoc, lambda rows: any(r["available"] for r in rows))
            )
        return self.use_apoc
