"""Every generated statement is linear in what it carries (issue 22).

A save's server memory grew with messages x memories: 10,000 messages with 1,000
memories failed with ``MemoryPoolOutOfMemoryError`` while 10,000 x 10 and 2,000 x 1,000
passed. ``benchmarks/bench_statement_memory.py`` prints the server's memory per input
size; this checks that the large save and its update succeed and store what they carry.
"""

from __future__ import annotations

from typing import Any

from interaction_helpers import DAY, LATER, chat, conversation, make_world, value
from neo4j import Driver

MESSAGES = 10_000
MEMORIES = 1_000


def _large(when: Any, first: str) -> Any:
    return conversation(
        chat(first, *(f"message {n}" for n in range(1, MESSAGES))),
        when=when,
        memories=[(f"memory {n}", [n * 7 % MESSAGES, n * 7 + 1]) for n in range(MEMORIES)],
    )


async def test_a_save_and_an_update_of_10000_messages_with_1000_memories_succeed(
    memora: Any, driver: Driver
) -> None:
    world = await make_world(memora)
    ids = (world.org_id, world.agent_id, world.user_id)
    interaction_id, _ = await memora.save_interaction_with_memories(*ids, _large(DAY, "hello"))

    def count(query: str) -> int:
        return int(value(driver, query, interaction_id=interaction_id))

    chain = (
        "MATCH (:Interaction {interaction_id: $interaction_id})-[:FIRST_MESSAGE]->()"
        "-[:IS_NEXT*0..]->(m:MessageBlock) RETURN count(m)"
    )
    memories = "MATCH (:Interaction {interaction_id: $interaction_id})<-[:INTERACTION_SOURCE]-(m) "
    assert count(chain) == MESSAGES
    assert count(memories + "RETURN count(m)") == MEMORIES
    assert count(memories + "MATCH (m)-[:MESSAGE_SOURCE]->(b) RETURN count(b)") == 2 * MEMORIES

    # The first message changes: the whole chain is rewritten, the memories doubled.
    await memora.update_interaction_and_memories(*ids, interaction_id, _large(LATER, "hello again"))
    assert count(chain) == MESSAGES
    assert count(memories + "RETURN count(m)") == 2 * MEMORIES
    assert count(memories + "MATCH (m)-[:MESSAGE_SOURCE]->(b) RETURN count(b)") == 2 * MEMORIES
