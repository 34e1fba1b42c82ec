"""Reads through the model: the facade's projections and their conversion to the return
models are generated from the node classes' property tables (``memora_ogm.engine.projection``)
and inflate through each property, as writes deflate through them."""

from __future__ import annotations

import gc
import re
from collections.abc import Iterator
from datetime import datetime, timedelta, timezone
from typing import Any

import pytest
from interaction_helpers import chat, make_world
from neo4j import Driver
from neomodel import StringProperty

from memora_ogm._async import nodes as async_nodes
from memora_ogm._async.nodes import NODES, Agent, Interaction, Memory, MessageBlock, Org, User
from memora_ogm._sync import nodes as sync_nodes
from memora_ogm.calls.agent import ORG_AGENTS
from memora_ogm.calls.organization import ORGANIZATION
from memora_ogm.calls.user import USER
from memora_ogm.engine import queries
from memora_ogm.engine.projection import projection, reading
from memora_ogm.errors import NodeVanished
from memora_ogm.placeholders import PLACEHOLDER_PATTERN
from memora_ogm.schema import models
from memora_ogm.schema.storage import MemoriesAndInteraction, MemoryToStore


def compact(expression: str) -> str:
    return (
        f"CASE WHEN {expression} IS NULL THEN null ELSE [{expression}.epochMillis, "
        f"{expression}.nanosecond, {expression}.timezone] END"
    )


def _bare(text: str) -> str:
    """``text`` without whitespace: the statements' layout aside."""
    return re.sub(r"\s+", "", text)


#: The generated projection of each node class, as a reader of the statements sees it.
GOLDEN: dict[type, str] = {
    Org: f"org {{.org_id, .org_name, created_at: {compact('org.created_at')}}}",
    User: f"user {{.org_id, .user_id, .user_name, created_at: {compact('user.created_at')}}}",
    Agent: (
        f"agent {{.org_id, .agent_id, .agent_label, created_at: {compact('agent.created_at')}, "
        ".user_id}"
    ),
    Interaction: (
        "interaction {.org_id, .user_id, .agent_id, .interaction_id, "
        f"created_at: {compact('interaction.created_at')}, "
        f"updated_at: {compact('interaction.updated_at')}}}"
    ),
    Memory: (
        "memory {.org_id, .user_id, .agent_id, .interaction_id, .memory_id, .memory, "
        f"obtained_at: {compact('memory.obtained_at')}}}"
    ),
    MessageBlock: "message {.msg_position, .role, .content}",
}


@pytest.mark.parametrize("cls", list(GOLDEN), ids=lambda cls: cls.__name__)
def test_each_class_projects_its_property_table(cls: type) -> None:
    variable = GOLDEN[cls].split(" ")[0]
    assert _bare(projection(cls).map(variable).render({})) == _bare(GOLDEN[cls])


def test_the_facade_reads_send_the_generated_projections() -> None:
    """Org, User and Agent reads (units of work) and the memory and interaction reads
    (the hand-written paging and resolution of ``queries``) carry the generated maps."""
    org = _bare(ORGANIZATION.bind(NODES, org_id="o").compile()[0])
    assert (
        _bare(f"org {{.org_id, .org_name, created_at: {compact('org.created_at')}}} AS org") in org
    )
    user = _bare(USER.bind(NODES, org_id="o", user_id="u").compile()[0])
    assert (
        _bare(
            "user {.org_id, .user_id, .user_name, "
            f"created_at: {compact('user.created_at')}}} AS user"
        )
        in user
    )
    agents = _bare(ORG_AGENTS.bind(NODES, org_id="o").compile()[0])
    assert (
        _bare(
            "[node IN agents | node {.org_id, .agent_id, .agent_label, "
            f"created_at: {compact('node.created_at')}, .user_id}}] AS agents"
        )
        in agents
    )

    memory = _bare(queries.statement(queries.USER_MEMORY, True, Interaction, Memory, MessageBlock))
    sources = (
        "message_sources: COLLECT { MATCH (mem)-[:MESSAGE_SOURCE]->(source:MessageBlock) "
        "WHERE source.msg_position IS NOT NULL "
        "RETURN source {.msg_position, .role, .content} ORDER BY source.msg_position }"
    )
    assert (
        _bare(
            "WITH *, mem {.org_id, .user_id, .agent_id, .interaction_id, .memory_id, "
            f"memory: resolved, obtained_at: {compact('mem.obtained_at')}, "
            f"user_name: owner.user_name, agent_label: agent.agent_label, {sources}}} AS memory"
        )
        in memory
    )
    assert _bare("apoc.text.split(stored, $placeholder_pattern, -1)") in memory
    page = _bare(
        queries.statement(queries.INTERACTIONS_PAGE, False, Interaction, Memory, MessageBlock)
    )
    assert (
        _bare(
            "WITH *, interaction {.org_id, .user_id, .agent_id, .interaction_id, "
            f"created_at: {compact('interaction.created_at')}, "
            f"updated_at: {compact('interaction.updated_at')}, "
            "messages: CASE WHEN $with_messages THEN COLLECT { MATCH (interaction)-[:FIRST_MESSAGE]"
            "->(:MessageBlock)-[:IS_NEXT*0..]->(message:MessageBlock) WHERE message.msg_position "
            "IS NOT NULL RETURN message {.msg_position, .role, .content} ORDER BY "
            "message.msg_position } ELSE [] END, memories: CASE WHEN $with_memories THEN COLLECT {"
        )
        in page
    )
    assert _bare("WITH *, mem.memory AS resolved") in page and "apoc" not in page
    assert _bare("ORDER BY day.org_id DESC, day.user_id DESC, day.date DESC") in page


def test_a_row_inflates_through_each_property() -> None:
    """The compact DATETIME form comes back through ``ZonedDateTimeProperty.inflate``: the
    same instant and offset, aware; strings and integers as they are."""
    when = datetime(1969, 12, 31, 23, 59, 58, 123456, tzinfo=timezone(timedelta(hours=5)))
    millis = (when - datetime(1970, 1, 1, tzinfo=timezone.utc)) // timedelta(milliseconds=1)
    row = {
        "org_id": "o",
        "user_id": "u",
        "agent_id": "a",
        "interaction_id": "i",
        "memory_id": "m",
        "memory": "likes tea",
        "obtained_at": [millis, 123456000, "+05:00"],
    }
    values = projection(Memory).values(row)
    assert values["obtained_at"] == when
    assert values["obtained_at"].utcoffset() == timedelta(hours=5)
    assert {name: values[name] for name in row if name != "obtained_at"} == {
        name: row[name] for name in row if name != "obtained_at"
    }
    assert projection(MessageBlock).values({"msg_position": 3, "role": "r", "content": "c"}) == {
        "msg_position": 3,
        "role": "r",
        "content": "c",
    }


@pytest.mark.parametrize("cls", list(GOLDEN), ids=lambda cls: cls.__name__)
def test_a_node_deleted_while_read_is_said_so(cls: type) -> None:
    """A node deleted while a read walked past it comes back as an empty map, or with
    some properties already gone: a property every node has is missing. Only an
    organisation-wide agent's ``user_id`` may be missing (it reads as None)."""
    with pytest.raises(NodeVanished):
        projection(cls).values({})
    fields = projection(cls).fields
    complete = {
        field.db_name: [0, 0, "Z"] if field.zoned else 0 if field.as_is is int else "x"
        for field in fields
    }
    for field in fields:
        row = {**complete, field.db_name: None}
        if field.always:
            with pytest.raises(NodeVanished, match=field.db_name):
                projection(cls).values(row)
        else:
            assert projection(cls).values(row)[field.name] is None
    assert [field.db_name for field in fields if not field.always] == (
        ["user_id"] if cls is Agent else []
    )


class ShoutedText(StringProperty):
    """A property whose inflate changes what the graph holds: the reads must call it."""

    def inflate(self, value: Any, rethrow: bool = False) -> Any:
        return str(value).upper()


@pytest.fixture
def tagged_memory() -> Iterator[dict[str, type]]:
    """A subclass of each twin's Memory declaring the same label, with an extra property
    and its text read through :class:`ShoutedText`, as an application would declare it.

    Removed again afterwards (caches cleared, class collected), so no other test reads
    through it."""

    class AsyncTaggedMemory(async_nodes.Memory):
        __label__ = "Memory"
        topic = StringProperty()
        memory = ShoutedText(required=True)

    class SyncTaggedMemory(sync_nodes.Memory):
        __label__ = "Memory"
        topic = StringProperty()
        memory = ShoutedText(required=True)

    classes: dict[str, type] = {"async": AsyncTaggedMemory, "sync": SyncTaggedMemory}
    del AsyncTaggedMemory, SyncTaggedMemory
    yield classes
    classes.clear()
    projection.cache_clear()
    queries.statement.cache_clear()
    gc.collect()
    assert reading(async_nodes.Memory) is async_nodes.Memory
    assert reading(sync_nodes.Memory) is sync_nodes.Memory


async def test_a_property_added_in_a_subclass_is_read_through_it(
    memora: Any, driver: Driver, tagged_memory: dict[str, type]
) -> None:
    """The facade reads each label through the class neomodel inflates it with: a
    subclass declaring ``__label__ = "Memory"`` adds ``topic`` to the projection, its row
    comes back with it inflated, and the memory text inflates through its own property;
    the return models keep Memora's fields."""
    world = await make_world(memora)
    org_id, user_id = world.org_id, world.user_id
    await memora.save_interaction_with_memories(
        org_id,
        world.agent_id,
        user_id,
        MemoriesAndInteraction(
            interaction=chat("hello", "hi"),
            memories=[MemoryToStore(memory=f"user_{user_id} likes tea", source_msg_block_pos=[0])],
        ),
    )
    memory_id = driver.execute_query("MATCH (m:Memory) RETURN m.memory_id AS id").records[0]["id"]
    driver.execute_query("MATCH (m:Memory) SET m.topic = 'drinks'")

    for twin, cls in tagged_memory.items():
        base = async_nodes.Memory if twin == "async" else sync_nodes.Memory
        assert reading(base) is cls
        statement = queries.statement(queries.USER_MEMORY, True, Interaction, cls, MessageBlock)
        assert _bare(
            "mem {.org_id, .user_id, .agent_id, .interaction_id, .memory_id, memory: resolved, "
            f"obtained_at: {compact('mem.obtained_at')}, .topic, user_name: owner.user_name"
        ) in _bare(statement)
        record = driver.execute_query(
            statement,
            org_id=org_id,
            user_id=user_id,
            memory_id=memory_id,
            placeholder_pattern=PLACEHOLDER_PATTERN,
        ).records[0]["memory"]
        values = projection(cls).values(record)
        assert values["topic"] == "drinks"
        assert values["memory"] == "ANN LIKES TEA"
        assert values["obtained_at"].tzinfo is not None

    read = await memora.get_user_memory(org_id, user_id, memory_id)
    assert type(read) is models.Memory
    assert read.memory == "ANN LIKES TEA"
    assert not hasattr(read, "topic")
    listed = await memora.get_all_user_memories(org_id, user_id)
    assert [memory.memory for memory in listed] == ["ANN LIKES TEA"]
    (interaction,) = await memora.get_all_user_interactions(org_id, user_id)
    assert [memory.memory for memory in interaction.memories or []] == ["ANN LIKES TEA"]
    # The graph keeps what the facade wrote.
    stored = driver.execute_query("MATCH (m:Memory) RETURN m.memory AS text, m.topic AS topic")
    assert [(r["text"], r["topic"]) for r in stored.records] == [
        (f"user_{user_id} likes tea", "drinks")
    ]
