"""Concurrent saves share a transaction (issue 48), on a real server, in both twins.

Tasks on the async facade, threads (16 of them) on the sync twin. Each caller must get
its own answer: the saves that should land land whole, the others fail alone and leave
nothing behind; the graph's counts are exact and its invariants hold.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import urllib.request
import weakref
from collections import Counter
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, cast

import pytest
from interaction_helpers import (
    DAY,
    LATER,
    World,
    chat,
    conversation,
    make_world,
    value,
    vector_ids,
    with_vectors,
)
from invariants import all_violations, vector_memories
from neo4j import Driver
from neo4j.exceptions import IncompleteCommit, Neo4jError
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import HistogramDataPoint, InMemoryMetricReader
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from sync_adapter import AwaitableTwin
from web_servers import serve

from memora_ogm._async.coalescing import weight
from memora_ogm._async.interface import Neo4jGraphInterface
from memora_ogm.calls import interaction
from memora_ogm.engine.unit_of_work import UnitOfWork
from memora_ogm.errors import AgentNotFound, UserNotFound
from memora_ogm.schema.storage import MemoriesAndInteraction
from memora_ogm.server import Neo4jConnection
from memora_ogm.sync import Neo4jGraphInterface as SyncInterface
from memora_ogm.sync import QdrantDB as SyncQdrantDB
from memora_ogm.telemetry import MemoraInstrumentor
from memora_ogm.testing import clear_database
from memora_ogm.vector_db.embedding import HashingEmbedding
from memora_ogm.vector_db.qdrant import QdrantDB

__all__ = ["with_vectors"]  # the fixture, imported so pytest finds it here

GOLDEN = Path(__file__).parent / "golden"
NO_ONE = "0d5e6c8a-9b1f-4c2e-8a7d-3f4b5c6d7e8f"
#: Threads of the sync twin's callers.
THREADS = 16


def _data(n: int, when: Any = DAY) -> MemoriesAndInteraction:
    """Caller ``n``'s save: its own messages and memory, so its answer can be checked."""
    return conversation(chat(f"caller {n} asks", f"caller {n} hears"), when, [(f"fact {n}", [0])])


async def _all_at_once(memora: Any, calls: list[Callable[..., Any]]) -> list[Any]:
    """Each ``call(interface)`` at the same time: tasks, or threads of the sync twin; each
    one's result or exception."""
    if isinstance(memora, AwaitableTwin):
        twin = memora._twin

        def one(call: Callable[[Any], Any]) -> Any:
            try:
                return call(twin)
            except Exception as error:
                return error

        with ThreadPoolExecutor(THREADS) as threads:
            return await asyncio.to_thread(lambda: list(threads.map(one, calls)))

    async def task(call: Callable[[Any], Any]) -> Any:
        return await call(memora)

    return await asyncio.gather(*(task(call) for call in calls), return_exceptions=True)


def _graph(memora: Any) -> Any:
    twin: Any = memora._twin if isinstance(memora, AwaitableTwin) else memora
    return twin.graph


def _count(driver: Driver, label: str) -> int:
    return int(value(driver, f"MATCH (n:{label}) RETURN count(n)"))


def _first_message(driver: Driver, interaction_id: str) -> str:
    return str(
        value(
            driver,
            "MATCH (:Interaction {interaction_id: $id})-[:FIRST_MESSAGE]->(m) RETURN m.content",
            id=interaction_id,
        )
    )


async def test_concurrent_saves_land_exactly_the_good_ones(memora: Any, driver: Driver) -> None:
    """200 saves over 20 users at once, 10 of them bad (input, unknown user, unknown
    agent): each good caller gets its own interaction, each bad one its own error."""
    memora.coalesce_writes = True
    first = await make_world(memora, "user 0")
    users = [first.user_id] + [
        (await memora.create_user(first.org_id, f"user {n}")).user_id for n in range(1, 20)
    ]
    bad: dict[int, type[Exception]] = {}
    calls = []
    for n in range(200):
        org, agent, user, data = first.org_id, first.agent_id, users[n % 20], _data(n)
        if n % 20 == n // 20:  # users 0 to 9 get one bad save each
            kind = n // 20 % 3
            bad[n] = (ValueError, UserNotFound, AgentNotFound)[kind]
            if kind == 0:
                data = conversation([{"role": "user"}])  # no content
            elif kind == 1:
                user = NO_ONE
            else:
                agent = NO_ONE
        calls.append(
            lambda m, o=org, a=agent, u=user, d=data: m.save_interaction_with_memories(o, a, u, d)
        )
    answers = await _all_at_once(memora, calls)
    assert len(bad) == 10
    saved: dict[int, str] = {}
    for n, answer in enumerate(answers):
        if n in bad:
            assert type(answer) is bad[n], (n, answer)
            continue
        assert isinstance(answer, tuple), (n, answer)
        interaction_id, when = answer
        assert when == DAY
        saved[n] = interaction_id
    assert len(set(saved.values())) == 190
    for n, interaction_id in saved.items():
        assert _first_message(driver, interaction_id) == f"caller {n} asks"
    assert _count(driver, "Interaction") == 190
    assert _count(driver, "MessageBlock") == 380
    assert _count(driver, "Memory") == 190
    assert _count(driver, "Date") == 20  # one day per user
    per_user = value(
        driver,
        "MATCH (u:User)-[:INTERACTIONS_IN]->()-[:HAD_INTERACTION]->(i) "
        "WITH u, count(i) AS saved RETURN collect([u.user_name, saved])",
    )
    assert sorted(per_user) == sorted([f"user {n}", 9 if n < 10 else 10] for n in range(20))
    assert not await all_violations(driver)
    sizes = _graph(memora).coalescer.sizes
    refused_before = list(bad.values()).count(ValueError)  # input checks: before any queue
    assert sum(size * times for size, times in sizes.items()) == 200 - refused_before
    assert max(sizes) > 1, sizes  # saves did share transactions


def _busy(memora: Any) -> Any:
    """The graph's coalescer with every slot taken, so the next saves queue."""
    coalescer = _graph(memora).coalescer
    coalescer.in_flight = coalescer.limit
    return coalescer


async def _queued(coalescer: Any, length: int) -> None:
    for _ in range(500):
        if len(coalescer.queue) == length:
            return
        await asyncio.sleep(0.01)
    raise AssertionError(f"{len(coalescer.queue)} saves queued, not {length}")


def _run_each(memora: Any, calls: list[Any]) -> asyncio.Future[list[Any]]:
    """Each declared call run at once by the facade's graph (a thread each on the sync
    twin): their results or exceptions, in order."""
    graph = _graph(memora)
    if not isinstance(memora, AwaitableTwin):
        return asyncio.gather(*(graph.run(call) for call in calls), return_exceptions=True)
    threads = ThreadPoolExecutor(len(calls))
    loop = asyncio.get_running_loop()
    running = asyncio.gather(
        *(loop.run_in_executor(threads, graph.run, call) for call in calls),
        return_exceptions=True,
    )
    running.add_done_callback(lambda _: threads.shutdown(wait=False))
    return running


async def test_a_batch_the_server_refuses_is_split(memora: Any, driver: Driver) -> None:
    """One save of a batch fails on the server part-way (a property the server cannot
    store): the batch is split until it is alone, and the others land."""
    memora.coalesce_writes = True
    world = await make_world(memora)
    graph = _graph(memora)
    calls = [
        interaction.save_interaction_with_memories(
            graph.nodes, world.org_id, world.agent_id, world.user_id, _data(n, LATER)
        )
        for n in range(8)
    ]
    poisoned = calls[5].statement
    assert isinstance(poisoned, UnitOfWork)
    poisoned.params["interaction"] = {**poisoned.params["interaction"], "poison": {"a": 1}}
    coalescer = _busy(memora)
    running = _run_each(memora, calls)
    await _queued(coalescer, 8)
    coalescer._release([])  # a transaction returned: the eight go together
    answers = await running
    assert isinstance(answers[5], Neo4jError), answers[5]
    assert all(isinstance(answer, tuple) for n, answer in enumerate(answers) if n != 5), answers
    assert coalescer.sizes[8] == 1
    assert _count(driver, "Interaction") == 7
    assert _count(driver, "Memory") == 7
    assert not await all_violations(driver)


@pytest.mark.parametrize(
    ("max_saves", "saves_in_bytes", "sizes"), [(3, 64, [3, 3, 1]), (64, 2.5, [2, 2, 2, 1])]
)
async def test_a_batch_keeps_to_its_caps(
    memora: Any, driver: Driver, max_saves: int, saves_in_bytes: float, sizes: list[int]
) -> None:
    """Seven saves waiting go in batches of at most ``max_saves`` saves and ``max_bytes``
    parameter bytes (here room for 2.5 saves' rows): each lands, in its caller's order."""
    memora.coalesce_writes = True
    world = await make_world(memora)
    graph = _graph(memora)
    calls = [
        interaction.save_interaction_with_memories(
            graph.nodes, world.org_id, world.agent_id, world.user_id, _data(n)
        )
        for n in range(7)
    ]
    coalescer = _busy(memora)
    one_save = weight(cast(UnitOfWork, calls[0].statement).compile(per_row=True)[1])
    coalescer.max_saves, coalescer.max_bytes = max_saves, int(one_save * saves_in_bytes)
    running = _run_each(memora, calls)
    await _queued(coalescer, len(calls))
    coalescer._release([])  # a transaction returned: batches go one after another
    answers = await running
    assert all(isinstance(answer, tuple) for answer in answers), answers
    assert coalescer.sizes == Counter(sizes)
    assert _count(driver, "Interaction") == 7
    assert _count(driver, "Memory") == 7
    assert not await all_violations(driver)


@pytest.mark.parametrize("memora", ["async"], indirect=True)  # the sync twin has no loops
async def test_a_batch_runs_on_its_callers_own_event_loop(memora: Any, driver: Driver) -> None:
    """Callers on two event loops (a thread each) queue a save each, and a third loop's
    transaction returns: each save goes in a batch of its own loop's callers, run on that
    loop, so a loop that ends takes no other caller's save with it. Before, the two went
    as one batch, run on the loop that happened to release the slot."""
    memora.coalesce_writes = True
    worlds = [await make_world(memora)]
    worlds.append(await make_world(memora, "Bob", org_id=worlds[0].org_id))
    graph = _graph(memora)
    sent_on: dict[str, Any] = {}
    send = graph._send

    async def recording(runner: Any, query: str, params: dict[str, Any]) -> Any:
        sent_on[params["user_id"]] = asyncio.get_running_loop()
        return await send(runner, query, params)

    graph._send = recording
    coalescer = _busy(memora)
    loops: dict[str, Any] = {}

    def caller(world: World) -> Any:
        async def save() -> Any:
            loops[world.user_id] = asyncio.get_running_loop()
            return await memora.save_interaction_with_memories(*_owner(world), _data(0))

        return asyncio.run(save())

    with ThreadPoolExecutor(2) as threads:
        running = [asyncio.wrap_future(threads.submit(caller, world)) for world in worlds]
        await _queued(coalescer, 2)
        coalescer._release([])  # this loop's transaction returned
        answers = await asyncio.gather(*running)
    assert all(isinstance(answer, tuple) for answer in answers), answers
    assert coalescer.sizes == Counter({1: 2})
    assert sent_on == loops and len(set(map(id, loops.values()))) == 2
    assert _count(driver, "Interaction") == 2
    assert not await all_violations(driver)


@pytest.mark.parametrize("memora", ["async"], indirect=True)  # a thread cannot be cancelled
async def test_a_save_cancelled_before_it_is_sent_leaves_the_queue(
    memora: Any, driver: Driver
) -> None:
    """A task cancelled, or timed out, while its save waits: out of the queue, nothing
    written; one cancelled after its batch was sent lands whole (never half)."""
    memora.coalesce_writes = True
    world = await make_world(memora)
    coalescer = _busy(memora)

    def saving(n: int) -> Any:
        return memora.save_interaction_with_memories(
            world.org_id, world.agent_id, world.user_id, _data(n)
        )

    waiting = asyncio.ensure_future(saving(0))
    await _queued(coalescer, 1)
    waiting.cancel()
    with pytest.raises(asyncio.CancelledError):
        await waiting
    assert not coalescer.queue
    with pytest.raises(TimeoutError):
        await asyncio.wait_for(saving(1), 0.2)
    assert not coalescer.queue
    assert _count(driver, "Interaction") == 0
    # Sent, then cancelled: the batch runs to its end, the save lands whole.
    sent, kept = asyncio.ensure_future(saving(2)), asyncio.ensure_future(saving(3))
    await _queued(coalescer, 2)
    coalescer._release([])
    sent.cancel()
    interaction_id, _ = await kept
    with pytest.raises(asyncio.CancelledError):
        await sent
    for _ in range(100):
        if coalescer.in_flight == coalescer.limit - 1:
            break
        await asyncio.sleep(0.01)
    assert _count(driver, "Interaction") == 2
    assert _count(driver, "MessageBlock") == 4
    assert _count(driver, "Memory") == 2
    assert _first_message(driver, interaction_id) == "caller 3 asks"
    assert not await all_violations(driver)


async def test_a_lone_save_goes_alone_with_the_single_statement(
    memora: Any, driver: Driver
) -> None:
    """Below the limit a save is not queued: one statement, today's, as without coalescing
    (which is why coalescing is on by default)."""
    assert memora.coalesce_writes  # the default
    world: World = await make_world(memora)
    graph = _graph(memora)
    for coalesce in (False, True):
        memora.coalesce_writes = coalesce
        before = graph.statements
        await memora.save_interaction_with_memories(
            world.org_id, world.agent_id, world.user_id, _data(int(coalesce))
        )
        assert graph.statements - before == 1
    assert dict(graph.coalescer.sizes) == {1: 1}
    assert _count(driver, "Interaction") == 2


@pytest.mark.parametrize("memora", ["async"], indirect=True)  # threads resume in no set order
async def test_the_callers_a_batch_answered_go_together_in_the_next(
    memora: Any, driver: Driver
) -> None:
    """Eight tasks save three times each, one after the other: every transaction holds all
    eight. Before, the first caller back from a batch found the slot free and went alone,
    and the seven behind it waited for it: batches of 1 and 7 in turn."""
    assert memora.coalesce_writes  # the default
    world = await make_world(memora)
    coalescer = _graph(memora).coalescer

    async def caller(n: int) -> list[str]:
        saved = []
        for turn in range(3):
            data = _data(10 * n + turn)
            saved.append((await memora.save_interaction_with_memories(*_owner(world), data))[0])
        return saved

    answers = await asyncio.gather(*(caller(n) for n in range(8)))
    assert coalescer.sizes == Counter({8: 3})
    assert len({interaction_id for saved in answers for interaction_id in saved}) == 24
    for n, saved in enumerate(answers):
        for turn, interaction_id in enumerate(saved):
            assert _first_message(driver, interaction_id) == f"caller {10 * n + turn} asks"
    assert _count(driver, "Interaction") == 24 and _count(driver, "Memory") == 24
    assert not await all_violations(driver)


async def test_updates_of_one_interaction_keep_their_call_order(
    memora: Any, driver: Driver
) -> None:
    """Six updates of one interaction queued in turn, with updates of four others: never
    two of one interaction in a batch or in flight, so the last one called is the chain
    that stays; the others' updates share the first batch."""
    world = await make_world(memora)
    ids = [
        (await memora.save_interaction_with_memories(*_owner(world), _data(n)))[0] for n in range(5)
    ]
    memora.coalesce_writes = True
    coalescer = _busy(memora)
    coalescer.sizes.clear()  # the five saves above went alone (coalescing is on by default)
    calls = [(ids[0], n) for n in range(6)] + [(ids[k], 10 + k) for k in range(1, 5)]
    updates = [
        (
            interaction_id,
            conversation(chat(f"update {n}", f"reply {n}"), LATER, [(f"changed {n}", [1])]),
        )
        for interaction_id, n in calls
    ]
    answers = await _queued_in_turn(memora, world, updates)
    assert [cast(tuple[str, Any], answer)[0] for answer in answers] == [i for i, _ in calls]
    assert _first_message(driver, ids[0]) == "update 5"
    for k in range(1, 5):
        assert _first_message(driver, ids[k]) == f"update {10 + k}"
    assert coalescer.sizes[5] == 1 and coalescer.sizes[1] == 5  # then one at a time
    memories = value(
        driver,
        "MATCH (:Interaction {interaction_id: $id})<-[:INTERACTION_SOURCE]-(m) RETURN count(m)",
        id=ids[0],
    )
    assert memories == 7
    assert not coalescer.busy and not coalescer.queue
    assert not await all_violations(driver)


def _owner(world: World) -> tuple[str, str, str]:
    return world.org_id, world.agent_id, world.user_id


async def _queued_in_turn(
    memora: Any, world: World, updates: list[tuple[str, MemoriesAndInteraction]]
) -> list[Any]:
    """Each ``(interaction_id, data)`` update queued behind the busy slot in turn (a
    thread each on the sync twin), then the slot released: their answers or exceptions."""
    graph, coalescer = _graph(memora), _graph(memora).coalescer
    threads = ThreadPoolExecutor(len(updates))
    loop = asyncio.get_running_loop()
    running = []
    for queued, (interaction_id, data) in enumerate(updates):
        arguments = (*_owner(world), interaction_id, data)
        if isinstance(memora, AwaitableTwin):
            declare = interaction.update_interaction_and_memories
            running.append(loop.run_in_executor(threads, graph.execute, declare, *arguments))
        else:
            running.append(
                asyncio.ensure_future(memora.update_interaction_and_memories(*arguments))
            )
        await _queued(coalescer, queued + 1)
    coalescer._release([])
    answers = await asyncio.gather(*running, return_exceptions=True)
    threads.shutdown()
    return answers


async def test_a_batch_whose_commit_went_unanswered_is_not_sent_again(
    memora: Any, driver: Driver
) -> None:
    """A batch's first update adds no memory (nothing shows whether it landed), the
    second adds one: an unanswered commit that landed is found by the second's memory,
    and the batch is not sent again (it was, and the second memory's create then failed
    as a ``ConflictError``: the soak with lost replies, seed 46)."""
    world = await make_world(memora)
    ids = [
        (await memora.save_interaction_with_memories(*_owner(world), _data(n)))[0] for n in range(2)
    ]
    memora.coalesce_writes = True
    graph = _graph(memora)
    commit = graph.commit
    lost: list[bool] = []

    def answer_lost() -> None:
        if not lost:
            lost.append(True)
            raise IncompleteCommit("the answer to the commit was lost (the test)")

    if isinstance(memora, AwaitableTwin):

        def lose_sync(transaction: Any) -> None:
            commit(transaction)
            answer_lost()

        graph.commit = lose_sync
    else:

        async def lose(transaction: Any) -> None:
            await commit(transaction)
            answer_lost()

        graph.commit = lose
    coalescer = _busy(memora)
    updates = [
        conversation(chat("caller 0 asks", "caller 0 hears", "more"), LATER, []),
        conversation(chat("caller 1 asks", "caller 1 hears"), LATER, [("new fact", [1])]),
    ]
    answers = await _queued_in_turn(memora, world, list(zip(ids, updates, strict=True)))
    assert lost and coalescer.sizes[2] == 1
    assert answers == [(ids[0], LATER), (ids[1], LATER)]
    assert _count(driver, "Memory") == 3
    assert _count(driver, "MessageBlock") == 5
    assert not await all_violations(driver)


async def test_the_bulk_save_reports_each_item(memora: Any, driver: Driver) -> None:
    """150 saves from one caller over three users, three of them bad: each item's ids in
    order, each bad one its own error, exactly the good ones in the graph."""
    world = await make_world(memora)
    users = [world.user_id] + [
        (await memora.create_user(world.org_id, f"user {n}")).user_id for n in (1, 2)
    ]
    items: list[tuple[str, MemoriesAndInteraction]] = [(users[n % 3], _data(n)) for n in range(150)]
    items[10] = (NO_ONE, _data(10))
    items[70] = (users[1], conversation([{"role": "user"}]))
    items[140] = (users[2], conversation(chat("a", "b"), DAY, [("fact", [5])]))
    answers = await memora.save_interactions_with_memories(world.org_id, world.agent_id, items)
    assert len(answers) == 150
    assert isinstance(answers[10], UserNotFound)
    assert isinstance(answers[70], ValueError) and isinstance(answers[140], ValueError)
    for n, answer in enumerate(answers):
        if n not in (10, 70, 140):
            assert isinstance(answer, tuple), (n, answer)
            assert _first_message(driver, answer[0]) == f"caller {n} asks"
    assert _count(driver, "Interaction") == 147
    assert _count(driver, "Memory") == 147
    assert not await all_violations(driver)
    sizes = _graph(memora).coalescer.sizes
    assert sum(sizes.values()) == 3 and max(sizes) == 64  # 147 saves: 64, 64, 19


async def test_the_bulk_save_declares_a_batch_at_a_time(
    memora: Any, driver: Driver, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A bulk save declares its writes as its lanes come free: when its first batch is
    sent, at most the lanes' first batches (and one write of the next) were declared, not
    all 40, so a large import never holds every declared write at once. A drawn write
    waits as its compiled statements: no save's plan (its unit of work) is alive when a
    batch is sent, but for one a thread of the sync twin may be declaring."""
    world = await make_world(memora)
    graph = _graph(memora)
    graph.coalescer.max_saves = 4
    declared: list[int] = []
    plans: list[weakref.ref[Any]] = []
    declare = interaction.save_interaction_with_memories

    def counting(*args: Any) -> Any:
        declared.append(1)
        call = declare(*args)
        plans.append(weakref.ref(call.statement))
        return call

    monkeypatch.setattr(interaction, "save_interaction_with_memories", counting)
    at_first_send: list[int] = []
    plans_alive: list[int] = []
    send = graph._send

    def recording(*args: Any) -> Any:
        at_first_send.append(len(declared))
        plans_alive.append(sum(plan() is not None for plan in plans))
        return send(*args)

    monkeypatch.setattr(graph, "_send", recording)
    items = [(world.user_id, _data(n)) for n in range(40)]
    answers = await memora.save_interactions_with_memories(world.org_id, world.agent_id, items)
    assert [_first_message(driver, answer[0]) for answer in answers] == [
        f"caller {n} asks" for n in range(40)
    ]
    assert len(declared) == 40 and len(at_first_send) == 10
    assert at_first_send[0] <= graph.coalescer.lanes * 4 + 1, at_first_send
    assert max(plans_alive) <= 1, plans_alive
    assert _count(driver, "Interaction") == 40
    assert not await all_violations(driver)


async def test_a_bulk_save_whose_declaring_fails_sends_what_it_drew_then_raises(
    memora: Any, driver: Driver, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Declaring the sixth of ten writes fails with an error that is not a refused input:
    the five drawn before it land (none is left waiting for an answer), and the error is
    raised."""
    world = await make_world(memora)
    _graph(memora).coalescer.max_saves = 4
    declare = interaction.save_interaction_with_memories
    drawn: list[int] = []

    def failing(*args: Any) -> Any:
        drawn.append(1)
        if len(drawn) == 6:
            raise RuntimeError("declaring failed (the test)")
        return declare(*args)

    monkeypatch.setattr(interaction, "save_interaction_with_memories", failing)
    items = [(world.user_id, _data(n)) for n in range(10)]
    with pytest.raises(RuntimeError, match="declaring failed"):
        await asyncio.wait_for(
            memora.save_interactions_with_memories(world.org_id, world.agent_id, items), 60
        )
    assert len(drawn) == 6
    assert _count(driver, "Interaction") == 5
    assert not await all_violations(driver)


async def test_each_coalesced_save_reports_its_batch_size(memora: Any, driver: Driver) -> None:
    """OpenTelemetry: the span of each save that went in a batch carries
    ``db.operation.batch.size`` and the batched statement; its queue wait is measured."""
    exporter, reader = InMemorySpanExporter(), InMemoryMetricReader()
    tracing = TracerProvider()
    tracing.add_span_processor(SimpleSpanProcessor(exporter))
    MemoraInstrumentor().instrument(
        tracer_provider=tracing, meter_provider=MeterProvider(metric_readers=[reader])
    )
    try:
        memora.coalesce_writes = True
        world = await make_world(memora)
        coalescer = _busy(memora)
        saves = [
            lambda m, n=n: m.save_interaction_with_memories(*_owner(world), _data(n))
            for n in range(4)
        ]
        running = asyncio.ensure_future(_all_at_once(memora, saves))
        await _queued(coalescer, 4)
        coalescer._release([])
        answers = await running
    finally:
        MemoraInstrumentor().uninstrument()
    assert all(isinstance(answer, tuple) for answer in answers), answers
    batched = [
        span
        for span in exporter.get_finished_spans()
        if span.name == "save_interaction_with_memories"
    ]
    attributes = [dict(span.attributes or {}) for span in batched]
    assert [found["db.operation.batch.size"] for found in attributes] == [4] * 4
    batch = (GOLDEN / "save_interaction_with_memories__batch.cypher").read_text()
    assert {found["db.query.text"] for found in attributes} == {batch.split("\n", 1)[1].strip()}
    data = reader.get_metrics_data()
    assert data is not None
    waits = [
        point
        for resource in data.resource_metrics
        for scope in resource.scope_metrics
        for metric in scope.metrics
        if metric.name == "memora.coalesce.wait"
        for point in metric.data.data_points
    ]
    assert sum(cast(HistogramDataPoint, point).count for point in waits) == 4


async def test_a_batch_changes_the_vector_store_with_the_graph(
    with_vectors: tuple[Any, Any], driver: Driver
) -> None:
    """With a vector store a batch is one transaction whose vector half holds exactly the
    memories of the rows that were written: the two stores agree."""
    memora, vectors = with_vectors
    memora.coalesce_writes = True
    world = await make_world(memora)
    coalescer = _busy(memora)
    saves = [
        lambda m, n=n: m.save_interaction_with_memories(
            world.org_id, world.agent_id, NO_ONE if n in (3, 7) else world.user_id, _data(n)
        )
        for n in range(12)
    ]
    running = asyncio.ensure_future(_all_at_once(memora, saves))
    await _queued(coalescer, 12)
    coalescer._release([])
    answers = await running
    assert [n for n, answer in enumerate(answers) if isinstance(answer, UserNotFound)] == [3, 7]
    assert coalescer.sizes[12] == 1
    assert _count(driver, "Memory") == 10
    assert len(await vector_ids(vectors)) == 10
    assert not await all_violations(driver, vectors)


@pytest.mark.parametrize("twin", ["async", "sync"])
async def test_a_batch_vector_half_is_one_store_write_and_one_record(
    neo4j_connection: Neo4jConnection, driver: Driver, tmp_path: Path, twin: str
) -> None:
    """A batch of saves of twelve users changes the embedded store (``QdrantDB(path=)``)
    in one upsert, so one flush, and journals one record of pending changes: the flush
    that makes an acknowledged save durable is paid once per batch, not once per save."""
    clear_database(driver, neo4j_connection.database)
    conn = neo4j_connection
    args = (conn.uri, conn.username, conn.password, conn.database)
    if twin == "async":
        store: Any = QdrantDB(path=tmp_path / "vectors", embedding_function=HashingEmbedding())
        memora: Any = Neo4jGraphInterface(*args, store)
        engine = store.async_client
    else:
        store = SyncQdrantDB(path=tmp_path / "vectors", embedding_function=HashingEmbedding())
        memora = AwaitableTwin(SyncInterface(*args, store), Neo4jGraphInterface)
        engine = store.client
    try:
        await memora.setup()
        memora.coalesce_writes = True
        world = await make_world(memora)
        users = [world.user_id] + [
            (await memora.create_user(world.org_id, f"user {n}")).user_id for n in range(1, 12)
        ]
        writes: list[str] = []
        update = engine._update

        def counted(name: str, operation: Any) -> None:
            writes.append(name)
            update(name, operation)

        engine._update = counted
        journal = next(Path(store.pending_folder).glob("*.jsonl"), None)
        journalled = 0 if journal is None else len(journal.read_text().splitlines())
        coalescer = _busy(memora)
        saves = [
            lambda m, n=n: m.save_interaction_with_memories(
                world.org_id, world.agent_id, users[n], _data(n)
            )
            for n in range(12)
        ]
        running = asyncio.ensure_future(_all_at_once(memora, saves))
        await _queued(coalescer, 12)
        coalescer._release([])
        answers = await running
        assert not [answer for answer in answers if isinstance(answer, Exception)]
        assert coalescer.sizes[12] == 1
        assert len(writes) == 1, "one upsert (one flush) for the batch's twelve memories"
        (journal,) = Path(store.pending_folder).glob("*.jsonl")
        lines = [json.loads(line) for line in journal.read_text().splitlines()[journalled:]]
        assert len(lines) == 2 and len(lines[0]["memory_ids"]) == 12, lines
        assert lines[1] == {"close": lines[0]["open"]}
        assert len(await vector_memories(store)) == 12
        assert not await all_violations(driver, store)
    finally:
        await memora.close()
        closed = store.close()
        if asyncio.iscoroutine(closed):
            await closed


def test_a_gunicorn_gthread_worker_coalesces_its_threads_saves(
    neo4j_connection: Neo4jConnection, driver: Driver
) -> None:
    """One gunicorn ``gthread`` worker with 16 threads shares a sync facade with
    ``coalesce_writes`` on (:mod:`coalesced_wsgi`); 16 clients send 20 saves each over
    four users at once. Each answer is its own caller's interaction (its one message is
    that caller's text), exactly the 320 saves are in the graph, and they shared
    transactions."""
    clear_database(driver, neo4j_connection.database)
    with SyncInterface.from_connection(neo4j_connection) as memora:
        org = memora.create_organization("Acme")
        agent = memora.create_agent(org.org_id, "Bot")
        users = [memora.create_user(org.org_id, f"user {n}").user_id for n in range(4)]
    command = [
        *(sys.executable, "-m", "gunicorn", "-k", "gthread", "--threads", str(THREADS)),
        *("-w", "1", "-b", "127.0.0.1:{port}", "coalesced_wsgi:app"),
    ]
    env = {
        **os.environ,
        **neo4j_connection.env(),
        "PYTHONPATH": os.pathsep.join([str(Path(__file__).parent), *sys.path]),
    }

    def save(url: str, caller: int, number: int) -> tuple[str, str]:
        text = f"caller {caller} save {number}"
        body = {"org_id": org.org_id, "agent_id": agent.agent_id, "text": text}
        request = urllib.request.Request(
            f"{url}/save",
            data=json.dumps({**body, "user_id": users[caller % 4]}).encode(),
            headers={"Content-Type": "application/json"},
        )
        with urllib.request.urlopen(request, timeout=120) as reply:
            return text, json.load(reply)["interaction_id"]

    with serve(command, env, "/batches") as served:

        def caller(number: int) -> list[tuple[str, str]]:
            return [save(served.url, number, n) for n in range(20)]

        with ThreadPoolExecutor(THREADS) as clients:
            answers = [pair for saves in clients.map(caller, range(THREADS)) for pair in saves]
        with urllib.request.urlopen(f"{served.url}/batches", timeout=60) as reply:
            batches = {int(size): count for size, count in json.load(reply).items()}

    saved = {
        record["id"]: record["text"]
        for record in driver.execute_query(
            "MATCH (i:Interaction)-[:FIRST_MESSAGE]->(m) "
            "RETURN i.interaction_id AS id, m.content AS text"
        ).records
    }
    assert len(answers) == len(saved) == 16 * 20
    assert {interaction_id: text for text, interaction_id in answers} == saved
    assert _count(driver, "Memory") == 16 * 20
    assert sum(size * count for size, count in batches.items()) == 16 * 20
    assert max(batches) > 1, f"no save shared a transaction: {batches}"


def test_a_forked_child_starts_with_no_write_in_flight() -> None:
    """A child forked while its parent had writes in flight and waiting does not wait for
    them: its coalescer starts empty (their threads and tasks stayed in the parent)."""
    graph = SyncInterface("bolt://localhost:1", "neo4j", "password", "neo4j").graph
    coalescer = graph.coalescer
    coalescer.in_flight = coalescer.limit
    coalescer.busy[("org", "user", "interaction")] = 1
    reading, writing = os.pipe()
    child = os.fork()
    if child == 0:  # pragma: no cover - the child reports through the pipe
        state = (coalescer.in_flight, len(coalescer.busy), coalescer.lock.acquire(blocking=False))
        os.write(writing, repr(state).encode())
        os._exit(0)
    os.close(writing)
    _, status = os.waitpid(child, 0)
    assert status == 0
    assert os.read(reading, 100).decode() == "(0, 0, True)"
    os.close(reading)
