"""Running facade calls at the same time from several processes (the concurrency tests).

Kept apart from the test modules so that each spawned process imports only this
and memora_ogm: a process starts in a second instead of several.
"""

from __future__ import annotations

import asyncio
import multiprocessing
import queue
from collections.abc import Sequence
from typing import Any

from memora_ogm._async.interface import Neo4jGraphInterface
from memora_ogm.server import Neo4jConnection

Call = tuple[str, tuple[Any, ...]]
"""A facade method's name and its arguments."""

Outcome = tuple[str, Any]
"""``("ok", result)`` or ``(error class name, message)``: comparable across processes."""

#: Processes of the multi-process tests; each runs its share of the calls as asyncio tasks.
PROCESSES = 3
#: Seconds a multi-process test may take before it counts as hung.
PROCESS_TIMEOUT = 120


def outcome_of(result: Any) -> Outcome:
    if isinstance(result, BaseException):
        return type(result).__name__, str(result)
    return "ok", result


async def _run_share(
    connection: tuple[str, str, str, str], calls: Sequence[Call], barrier: Any
) -> list[Outcome]:
    memora = Neo4jGraphInterface(*connection)
    try:
        await memora.get_all_organizations()  # connected before the start line
        barrier.wait(PROCESS_TIMEOUT)
        results = await asyncio.gather(
            *(getattr(memora, method)(*arguments) for method, arguments in calls),
            return_exceptions=True,
        )
        return [outcome_of(result) for result in results]
    finally:
        await memora.close()


def _child(
    connection: tuple[str, str, str, str],
    calls: Sequence[Call],
    barrier: Any,
    results: Any,
    index: int,
) -> None:
    """A process of :func:`race_in_processes`: its own facade, driver and event loop."""
    results.put((index, asyncio.run(_run_share(connection, calls, barrier))))


def race_in_processes(conn: Neo4jConnection, calls: Sequence[Call]) -> list[Outcome]:
    """Run ``calls`` spread over :data:`PROCESSES` spawned processes, all released at once.

    Outcomes come back in the order of ``calls``.
    """
    context = multiprocessing.get_context("spawn")
    barrier = context.Barrier(PROCESSES)
    results = context.Queue()
    connection = (conn.uri, conn.username, conn.password, conn.database)
    shares = [list(range(len(calls)))[index::PROCESSES] for index in range(PROCESSES)]
    children = [
        context.Process(
            target=_child,
            args=(connection, [calls[i] for i in share], barrier, results, index),
        )
        for index, share in enumerate(shares)
    ]
    for child in children:
        child.start()
    outcomes: list[Outcome | None] = [None] * len(calls)
    try:
        for _ in children:
            index, share_outcomes = results.get(timeout=PROCESS_TIMEOUT)
            for position, outcome in zip(shares[index], share_outcomes, strict=True):
                outcomes[position] = outcome
    except queue.Empty:
        raise AssertionError("a process of the race did not report back in time") from None
    finally:
        for child in children:
            child.join(10)
            if child.is_alive():
                child.kill()
    assert all(child.exitcode == 0 for child in children)
    return [outcome for outcome in outcomes if outcome is not None]
