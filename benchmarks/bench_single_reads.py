"""Single-node reads against the Bolt floor, with many samples: where each floor goes.

    python benchmarks/bench_single_reads.py [--calls 2000] [--twins async,sync]

Connects like the tests (``NEO4J_*`` variables, else Docker, else the embedded server),
makes a small tenant (an organisation, a user, an agent, an interaction of three messages
and one memory naming both) and deletes it at the end.

For each twin and each single-node read of the facade, ``--calls`` rounds run five
calls in an order shuffled each round: the floor (a ``RETURN 1`` auto-commit round trip),
the read, the read's own statement (the one the facade sent, captured once) replayed by
the bare driver of the same flavour in a read session, and for telemetry's cost the read
untraced (the method without the observer hook's wrapper) and the read instrumented into the
OpenTelemetry SDK (a batch span processor whose exporter drops the spans, and the
duration histogram). Per read it prints the median wall time, the client CPU per call,
the floor, the read's ratio to it (``xfloor``), the statement's (``s.xfl``: the server's
work and the round trip) and the difference (the layer's share); then ``api``, the read
as it runs by default (uninstrumented: the hook's one check) over the untraced read,
and ``sdk``, the SDK's over the untraced (medians), and ``+api`` and ``+sdk``, what each
adds to the client CPU per call in microseconds (differences of the medians: steadier
than wall times on a loaded machine, and tracing's cost is client CPU). Few calls
between two of the same kind keep the code warm, as in an application calling one
method in a loop; interleave more kinds and every ratio grows.
``bench_api.py`` runs every method but few samples of each; this one runs few methods
and many samples, which is what a sub-millisecond call needs on a shared machine.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import statistics
import time
from collections.abc import Awaitable, Callable
from datetime import datetime
from typing import Any

from bench_api import StatementCounter, Tracing, Twin, Untraced, open_twins, settle

from memora_ogm.schema.storage import MemoriesAndInteraction, MemoryToStore
from memora_ogm.server import connect_or_start


async def tenant(memora: Any) -> dict[str, str]:
    """The ids the reads ask for, of a tenant made through the facade."""
    org = await settle(memora.create_organization("bench-single-reads"))
    user = await settle(memora.create_user(org.org_id, "Ann"))
    agent = await settle(memora.create_agent(org.org_id, "Bot", None))
    data = MemoriesAndInteraction(
        interaction=[
            {"role": "user", "content": "Hello"},
            {"role": "assistant", "content": "Hi, how can I help?"},
            {"role": "user", "content": "I live in Oslo with my cat"},
        ],
        interaction_date=datetime.now().astimezone(),
        memories=[
            MemoryToStore(
                memory=f"user_{user.user_id} lives in Oslo and talks to agent_{agent.agent_id}",
                source_msg_block_pos=[2],
            )
        ],
        contrary_memories=[],
    )
    interaction_id, _ = await settle(
        memora.save_interaction_with_memories(org.org_id, agent.agent_id, user.user_id, data)
    )
    (memory,) = await settle(memora.get_all_user_memories(org.org_id, user.user_id))
    return {
        "org_id": org.org_id,
        "user_id": user.user_id,
        "agent_id": agent.agent_id,
        "interaction_id": interaction_id,
        "memory_id": memory.memory_id,
    }


def reads(memora: Any, ids: dict[str, str]) -> dict[str, Callable[[], Any]]:
    org, user = ids["org_id"], ids["user_id"]
    return {
        "get_organization": lambda: memora.get_organization(org),
        "get_agent": lambda: memora.get_agent(org, ids["agent_id"]),
        "get_user": lambda: memora.get_user(org, user),
        "get_user_memory": lambda: memora.get_user_memory(org, user, ids["memory_id"]),
        "get_interaction": lambda: memora.get_interaction(org, user, ids["interaction_id"]),
    }


async def statement_of(
    counter: StatementCounter, call: Callable[[], Any]
) -> tuple[str, dict[str, Any]]:
    """The one auto-commit read ``call`` sends."""
    counter.reset(capturing=True)
    await settle(call())
    count, reads = counter.count, counter.reads
    counter.reset()
    if count != 1 or len(reads) != 1:
        raise RuntimeError(f"expected one auto-commit read, saw {count} statements")
    return reads[0]


#: The calls timed for each read, in the order the medians are read back.
ORDER = ("floor", "read", "statement", "untraced", "sdk")


def replayed(twin: Twin, query: str, params: dict[str, Any]) -> Callable[[], Any]:
    return lambda: twin.replay(query, params)


async def shuffled(
    timed: dict[str, Callable[[], Any]], calls: int
) -> tuple[dict[str, float], dict[str, float]]:
    """Median wall time and client CPU of each call, over ``calls`` rounds that run them
    all once in a new random order (after 20 rounds of warm-up)."""
    wall: dict[str, list[float]] = {label: [] for label in timed}
    cpu: dict[str, list[float]] = {label: [] for label in timed}
    labels = list(timed)
    for round_ in range(calls + 20):
        random.shuffle(labels)
        for label in labels:
            started, used = time.perf_counter(), time.thread_time()
            await settle(timed[label]())
            if round_ >= 20:
                cpu[label].append(time.thread_time() - used)
                wall[label].append(time.perf_counter() - started)
    return (
        {label: statistics.median(values) for label, values in wall.items()},
        {label: statistics.median(values) for label, values in cpu.items()},
    )


async def measure(twin: Twin, counter: StatementCounter, calls: int) -> None:
    ids = await tenant(twin.graph)
    tracing = Tracing()
    print(f"\n{twin.name} twin, {calls} rounds per read")
    print(
        f"{'read':<18} {'median':>7} {'cpu':>6} {'floor':>6} {'xfloor':>6} {'s.xfl':>6}"
        f" {'layer':>6} {'api':>6} {'sdk':>6} {'+api':>5} {'+sdk':>5}"
    )
    untraced = reads(Untraced(twin.graph), ids)
    for name, call in reads(twin.graph, ids).items():
        query, params = await statement_of(counter, call)
        timed = {
            "floor": twin.floor,
            "read": call,
            "statement": replayed(twin, query, params),
            "untraced": untraced[name],
            "sdk": call,
        }
        wall, cpu = await shuffled(
            {label: tracing.mode(label, thunk) for label, thunk in timed.items()}, calls
        )
        floor, median, alone, bare, sdk = (wall[label] for label in ORDER)
        print(
            f"{name:<18} {median * 1000:7.3f} {cpu['read'] * 1000:6.3f}"
            f" {floor * 1000:6.3f} {median / floor:6.2f} {alone / floor:6.2f}"
            f" {(median - alone) / floor:6.2f} {median / bare:6.3f} {sdk / bare:6.3f}"
            f" {(cpu['read'] - cpu['untraced']) * 1e6:5.1f}"
            f" {(cpu['sdk'] - cpu['untraced']) * 1e6:5.1f}"
        )
    await settle(twin.graph.delete_organization(ids["org_id"]))


#: Measures one twin: ``measure(twin, counter, calls)``.
Measure = Callable[[Twin, StatementCounter, int], Awaitable[None]]


async def run(measure: Measure, options: argparse.Namespace) -> None:
    """``measure`` each twin of ``--twins`` in turn, on an interface of its own."""
    counter = StatementCounter()
    with connect_or_start() as conn:
        for name in options.twins.split(","):
            (twin,) = await open_twins(conn, name)
            try:
                await measure(twin, counter, options.calls)
            finally:
                await twin.close()


def main(measure: Measure = measure, doc: str | None = __doc__) -> None:
    """The command line of this script and of ``bench_statement_parts.py``."""
    parser = argparse.ArgumentParser(description=(doc or "").splitlines()[0])
    parser.add_argument("--calls", type=int, default=2000, help="rounds per twin (2000)")
    parser.add_argument("--twins", default="async,sync", help="async, sync or both")
    asyncio.run(run(measure, parser.parse_args()))


if __name__ == "__main__":
    main()
