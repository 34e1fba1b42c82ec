"""Where the server's time for a single-node read goes: its statement built up in steps.

    python benchmarks/bench_statement_parts.py [--calls 2000] [--twins async,sync]

``bench_single_reads.py`` splits a read into its statement and the layer around it;
this splits the statement of ``get_user`` and of ``get_user_memory``. Each step adds
one part of what the read returns (the index seek alone, its properties, the compact
timestamp, the user and agent, the source messages, the placeholder resolution), the
last being the very statement the facade sends, captured once. Every step is sent by
the bare driver of each flavour, in a read session like the floor (``RETURN 1``), in
shuffled rounds (``bench_single_reads.shuffled``); it prints each step's median and its
ratio to the floor. The steps are written here for the benchmark only.

Connects like the tests and makes the same small tenant as ``bench_single_reads.py``,
deleted at the end.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from bench_api import StatementCounter, Twin, settle
from bench_single_reads import main, replayed, shuffled, statement_of, tenant

from memora_ogm._async.nodes import Interaction, Memory, MessageBlock
from memora_ogm.engine import plan, queries
from memora_ogm.placeholders import PLACEHOLDER_PATTERN

USER_KEY = "MATCH (u:User {org_id: $org_id, user_id: $user_id})"
USER_PROPERTIES = "u {.org_id, .user_id, .user_name"
MEMORY_KEY = "MATCH (mem:Memory {org_id: $org_id, user_id: $user_id, memory_id: $memory_id})"
MEMORY_PROPERTIES = "mem {.org_id, .agent_id, .user_id, .interaction_id, .memory_id, .memory"
OWNER_AND_AGENT = (
    "OPTIONAL MATCH (owner:User {org_id: mem.org_id, user_id: mem.user_id}) "
    "OPTIONAL MATCH (agent:Agent {org_id: mem.org_id, agent_id: mem.agent_id}) "
)


def compact(expression: str) -> str:
    """The renderer's compact DATETIME read of ``expression``, as text."""
    (text,) = plan.compact(expression).parts
    assert isinstance(text, str)
    return text


OBTAINED_AT = f"obtained_at: {compact('mem.obtained_at')}"


def steps(name: str, facade: str) -> dict[str, str]:
    """The statements of ``name``'s steps, ending with the facade's own ``facade``."""
    if name == "get_user":
        return {
            "index seek": f"{USER_KEY} RETURN 1 AS x",
            "+ properties": f"{USER_KEY} RETURN {USER_PROPERTIES}}} AS user",
            "+ compact created_at": (
                f"{USER_KEY} RETURN {USER_PROPERTIES}, created_at: "
                f"{compact('u.created_at')}}} AS user"
            ),
            "the facade's statement": facade,
        }
    return {
        "index seek": f"{MEMORY_KEY} RETURN 1 AS x",
        "+ properties": f"{MEMORY_KEY} RETURN {MEMORY_PROPERTIES}}} AS memory",
        "+ compact obtained_at": (
            f"{MEMORY_KEY} RETURN {MEMORY_PROPERTIES}, {OBTAINED_AT}}} AS memory"
        ),
        "+ user and agent": (
            f"{MEMORY_KEY} {OWNER_AND_AGENT} RETURN {MEMORY_PROPERTIES}, {OBTAINED_AT}, "
            "user_name: owner.user_name, agent_label: agent.agent_label} AS memory"
        ),
        "+ sources (no resolution)": queries.statement(
            queries.USER_MEMORY, False, Interaction, Memory, MessageBlock
        ),
        "the facade's statement": facade,
    }


def reads(memora: Any, ids: dict[str, str]) -> dict[str, Callable[[], Any]]:
    org, user = ids["org_id"], ids["user_id"]
    return {
        "get_user": lambda: memora.get_user(org, user),
        "get_user_memory": lambda: memora.get_user_memory(org, user, ids["memory_id"]),
    }


async def measure(twin: Twin, counter: StatementCounter, calls: int) -> None:
    ids = await tenant(twin.graph)
    print(f"\n{twin.name} driver, {calls} rounds")
    print(f"{'read':<16} {'step':<28} {'median':>7} {'xfloor':>6}")
    for name, call in reads(twin.graph, ids).items():
        facade, params = await statement_of(counter, call)
        params = {**ids, "placeholder_pattern": PLACEHOLDER_PATTERN, **params}
        timed = {"floor": twin.floor} | {
            step: replayed(twin, query, params) for step, query in steps(name, facade).items()
        }
        wall, _ = await shuffled(timed, calls)
        for step in timed:
            print(
                f"{name:<16} {step:<28} {wall[step] * 1000:7.3f} {wall[step] / wall['floor']:6.2f}"
            )
    await settle(twin.graph.delete_organization(ids["org_id"]))


if __name__ == "__main__":
    main(measure, __doc__)
