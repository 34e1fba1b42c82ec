"""A save's client work without a server: its input model, its declaration, its statements.

    python benchmarks/bench_declare.py [--calls 2000]

One save of 6 messages and 3 memories (issue 48's), declared and compiled as the facade
does it, step by step: the input model (``MemoriesAndInteraction``), the declaration
(checks, ids, each step's shape and values), the single statement and the batched
form, and ``weight()`` of the batched row. Then the same declaration and compile with
the statement cache emptied before each call (every call builds its plan and lays it
out, as every call built its plan before the declaration cache), and in the same run the
ratio of the two. Medians over ``--calls`` calls, in rounds interleaved.
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable

from memora_ogm._async.coalescing import weight
from memora_ogm._async.nodes import NODES
from memora_ogm.calls.interaction import save_interaction_with_memories
from memora_ogm.engine import plan
from memora_ogm.engine.unit_of_work import UnitOfWork
from memora_ogm.schema.storage import MemoriesAndInteraction, MemoryToStore

IDS = ("Z7tqQmNn4v2Xy8bLcR5s3K", "Q2wErTyUiOpAsDfGhJkL9m", "P0oIuYtReWqAsDfGhJkL1n")


def one_save() -> MemoriesAndInteraction:
    messages = [
        {"role": "user" if n % 2 == 0 else "assistant", "content": f"message {n}"} for n in range(6)
    ]
    memories = [MemoryToStore(memory=f"memory {n}", source_msg_block_pos=[n]) for n in range(3)]
    return MemoriesAndInteraction(interaction=messages, memories=memories)


def declared() -> UnitOfWork:
    work = save_interaction_with_memories(NODES, *IDS, DATA).statement
    assert isinstance(work, UnitOfWork)
    return work


def built_each_time() -> None:
    plan._statements.clear()
    declared().compile()


DATA = one_save()
WORK = declared()
ROW = WORK.compile(per_row=True)[1]
STEPS: dict[str, Callable[[], object]] = {
    "the input model": one_save,
    "declaring the call": declared,
    "compiling the single statement": WORK.compile,
    "compiling the batched form": lambda: WORK.compile(per_row=True),
    "weight() of the batched row": lambda: weight(ROW),
    "declaring and compiling, cached": lambda: declared().compile(),
    "declaring and compiling, plan built": built_each_time,
}


def main(calls: int) -> None:
    times: dict[str, list[float]] = {name: [] for name in STEPS}
    for _ in range(max(calls // 100, 1)):
        for name, step in STEPS.items():
            start = time.perf_counter()
            for _ in range(100):
                step()
            times[name].append((time.perf_counter() - start) / 100 * 1e6)
    medians = {name: statistics.median(values) for name, values in times.items()}
    for name, median in medians.items():
        print(f"{name:40s} {median:8.1f} µs")
    cached = medians["declaring and compiling, cached"]
    built = medians["declaring and compiling, plan built"]
    print(f"cached / built: {cached / built:.2f}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=2000)
    main(parser.parse_args().calls)
