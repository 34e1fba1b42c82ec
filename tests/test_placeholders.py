"""Placeholder resolution in memory reads, by APOC on the server and by the Python fallback.

Every test runs in both modes (``resolution`` fixture): the fallback is forced by
setting ``graph.use_apoc = False`` on the facade, which is what a server without
APOC gets after detection. One test reads everything in both modes and compares.
"""

from __future__ import annotations

from typing import Any

import pytest
from interaction_helpers import World, chat, conversation, make_world, memory_ids, save

TEXTS = [
    # (stored, expected), with {u}/{a} the ids and {U}/{A} the names
    ("user_{u} likes agent_{a}", "{U} likes {A}"),
    ("user_{u}'s car is agent_{a}'s favourite", "{U}'s car is {A}'s favourite"),
    ("USER_{u} asked Agent_{a}", "{U} asked {A}"),
    ("user_{u}", "{U}"),
    ("(user_{u}),agent_{a}.", "({U}),{A}."),
    ("no placeholder at all", "no placeholder at all"),
    ("user_{u} and user_{u} again", "{U} and {U} again"),
]

NAMES = {
    "plain": ("Ann", "Bot"),
    "regex replacement syntax": ("$1 and \\1 and $0", "a\\b$ \\\\"),
    "quotes": ('O\'Brien "the" `tick`', "it's"),
    "emoji and accents": ("Zoë 😀", "Ω-bot 🤖"),
    "names that look like placeholders": ("agent_smith", "user_neo's"),
}


@pytest.fixture(params=["apoc", "python"])
def resolution(request: pytest.FixtureRequest, memora: Any, driver: Any) -> str:
    """Resolve placeholders with APOC (the server must have it) or force the Python fallback."""
    if request.param == "apoc":
        records = driver.execute_query(
            "SHOW FUNCTIONS YIELD name WHERE name = 'apoc.text.regexGroups' RETURN count(*)"
        ).records
        assert records[0][0] == 1, "the test server must have APOC core"
    else:
        memora.graph.use_apoc = False
    return str(request.param)


def _fill(template: str, world: World, user_name: str, agent_label: str) -> str:
    return template.format(u=world.user_id, a=world.agent_id, U=user_name, A=agent_label)


def _dump(read: Any) -> Any:
    if isinstance(read, list):
        return [_dump(item) for item in read]
    return read.model_dump()


async def _read_all(memora: Any, world: World, interaction_id: str) -> list[Any]:
    """Every read that returns memories, as plain data."""
    ids = sorted((await memory_ids(memora, world, interaction_id)).values())
    reads: list[Any] = [
        await memora.get_all_user_memories(world.org_id, world.user_id),
        await memora.get_interaction(world.org_id, world.user_id, interaction_id),
        await memora.get_all_user_interactions(world.org_id, world.user_id),
        await memora.fetch_user_memories_resolved_batch([[world.ids(i) for i in ids]]),
    ]
    for memory_id in ids:
        reads.append(await memora.get_user_memory(world.org_id, world.user_id, memory_id))
        reads.append(await memora.get_user_memory_history(world.org_id, world.user_id, memory_id))
    return [_dump(read) for read in reads]


@pytest.mark.parametrize("user_name, agent_label", NAMES.values(), ids=NAMES.keys())
async def test_placeholders_become_names(
    memora: Any, resolution: Any, user_name: Any, agent_label: Any
) -> None:
    world = await make_world(memora, user_name, agent_label)
    stored = [_fill(text, world, user_name, agent_label) for text, _ in TEXTS]
    interaction_id = await save(
        memora, world, conversation(chat("hi"), memories=[(text, [0]) for text in stored])
    )

    memories = await memora.get_all_user_memories(world.org_id, world.user_id)

    assert sorted(memory.memory for memory in memories) == sorted(
        _fill(expected, world, user_name, agent_label) for _, expected in TEXTS
    )
    found = await memora.get_interaction(world.org_id, world.user_id, interaction_id)
    assert sorted(memory.memory for memory in found.memories) == sorted(
        memory.memory for memory in memories
    )
    assert memora.graph.use_apoc is (resolution == "apoc")


async def test_spec_10_10_possessive_kept_and_names_inserted_literally(
    memora: Any, resolution: Any
) -> None:
    """Memora's pattern swallows a following 's, and apoc.text.replace reads $ and \\ in the
    name as group references."""
    world = await make_world(memora, "Jo $1 \\n", "Max\\$")
    text = f"user_{world.user_id}'s dog likes agent_{world.agent_id}'s voice"
    interaction_id = await save(memora, world, conversation(chat("hi"), memories=[(text, [0])]))

    (memory,) = await memora.get_all_user_memories(world.org_id, world.user_id)
    single = await memora.get_user_memory(world.org_id, world.user_id, memory.memory_id)
    found = await memora.get_interaction(world.org_id, world.user_id, interaction_id)

    expected = "Jo $1 \\n's dog likes Max\\$'s voice"
    assert [memory.memory, single.memory, found.memories[0].memory] == [expected] * 3


async def test_unresolvable_placeholders_stay_and_the_memory_is_returned(
    memora: Any, resolution: Any
) -> None:
    world = await make_world(memora, "Ann", "Bot")
    text = f"user_{world.user_id} met agent_{world.agent_id}"
    interaction_id = await save(memora, world, conversation(chat("hi"), memories=[(text, [0])]))
    await memora.delete_agent(world.org_id, world.agent_id)

    (memory,) = await memora.get_all_user_memories(world.org_id, world.user_id)
    found = await memora.get_interaction(world.org_id, world.user_id, interaction_id)

    assert memory.memory == f"Ann met agent_{world.agent_id}"
    assert [m.memory for m in found.memories] == [memory.memory]


async def test_apoc_and_python_resolution_give_identical_results(memora: Any) -> None:
    world = await make_world(memora, "Zoë $1 \\ 'q' 😀", "agent_smith")
    helper = await memora.create_agent(world.org_id, "Helper")
    stored = [_fill(text, world, "", "") for text, _ in TEXTS]
    interaction_id = await save(
        memora, world, conversation(chat("hi", "there"), memories=[(t, [0, 1]) for t in stored])
    )
    await memora.update_interaction_and_memories(
        world.org_id,
        helper.agent_id,
        world.user_id,
        interaction_id,
        conversation(
            chat("hi"), memories=[(f"agent_{helper.agent_id} helped user_{world.user_id}", [0])]
        ),
    )
    await memora.delete_agent(world.org_id, helper.agent_id)

    with_apoc = await _read_all(memora, world, interaction_id)
    assert memora.graph.use_apoc is True  # detected on the server
    memora.graph.use_apoc = False
    in_python = await _read_all(memora, world, interaction_id)

    assert in_python == with_apoc
    texts = {memory["memory"] for memory in with_apoc[0]}
    assert f"agent_{helper.agent_id} helped Zoë $1 \\ 'q' 😀" in texts
    assert "Zoë $1 \\ 'q' 😀's car is agent_smith's favourite" in texts
