"""One small Memora graph holding every relationship type, written by either graph layer.

Shared by the tests that read a graph through neomodel's own API: it is written
through the layer's public methods only (memora-ogm's facade or Memora's own
``Neo4jGraphInterface``), with Memora's ``storage_schema`` objects, which both take.
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass
from typing import Any

from interaction_helpers import DAY, LATER, chat
from memora.schema.storage_schema import (
    ContraryMemoryToStore,
    MemoriesAndInteraction,
    MemoryToStore,
)
from neomodel.util import RelationshipDirection

from memora_ogm import nodes

FIRST_CHAT = chat("I live in Oslo", "Nice!", "I run every morning")


@dataclass(frozen=True)
class Story:
    """The ids of the story: one user with an org agent and an agent of their own, two
    interactions on two days, and a memory superseded by a newer one."""

    org_id: str
    user_id: str
    bot_id: str
    helper_id: str
    first_interaction: str
    second_interaction: str
    oslo: str
    runs: str
    bergen: str

    @property
    def owner(self) -> dict[str, str]:
        return {"org_id": self.org_id, "user_id": self.user_id}


async def write_story(layer: Any) -> Story:
    """Day one: the first interaction (Bot) with memories ``oslo`` and ``runs``; day two:
    the second interaction (Helper, the user's own agent) with ``bergen`` superseding
    ``oslo``, and an update that adds a message to the first interaction."""
    org = await layer.create_organization("Acme")
    user = await layer.create_user(org.org_id, "Ann")
    bot = await layer.create_agent(org.org_id, "Bot")
    helper = await layer.create_agent(org.org_id, "Helper", user.user_id)
    ann = f"user_{user.user_id}"
    first, _ = await layer.save_interaction_with_memories(
        org.org_id,
        bot.agent_id,
        user.user_id,
        MemoriesAndInteraction(
            interaction=FIRST_CHAT,
            interaction_date=DAY,
            memories=[
                MemoryToStore(memory=f"{ann} lives in Oslo", source_msg_block_pos=[0]),
                MemoryToStore(memory=f"{ann} runs", source_msg_block_pos=[2]),
            ],
        ),
    )
    found = await layer.get_interaction(org.org_id, user.user_id, first)
    ids = {memory.memory.split(" ", 1)[1]: memory.memory_id for memory in found.memories}
    second, _ = await layer.save_interaction_with_memories(
        org.org_id,
        helper.agent_id,
        user.user_id,
        MemoriesAndInteraction(
            interaction=chat("I moved to Bergen", "Welcome!"),
            interaction_date=LATER,
            contrary_memories=[
                ContraryMemoryToStore(
                    memory=f"{ann} lives in Bergen",
                    source_msg_block_pos=[0],
                    existing_contrary_memory_id=ids["lives in Oslo"],
                )
            ],
        ),
    )
    await layer.update_interaction_and_memories(
        org.org_id,
        bot.agent_id,
        user.user_id,
        first,
        MemoriesAndInteraction(interaction=[*FIRST_CHAT, *chat("Bye")], interaction_date=LATER),
    )
    newest = await layer.get_interaction(org.org_id, user.user_id, second)
    return Story(
        org.org_id,
        user.user_id,
        bot.agent_id,
        helper.agent_id,
        first,
        second,
        ids["lives in Oslo"],
        ids["runs"],
        newest.memories[0].memory_id,
    )


def relationship_attributes() -> list[tuple[str, str]]:
    """``(class name, attribute)`` of every relationship attribute of the node classes."""
    return [
        (cls.__name__, name)
        for cls in nodes.NODE_CLASSES
        for name in cls.defined_properties(aliases=False, properties=False, rels=True)
    ]


def model_name(relation_type: str) -> str:
    """The relationship model of a type is named after it: ``HAS_OCCURRENCE_ON`` is
    ``HasOccurrenceOn``."""
    return "".join(word.capitalize() for word in relation_type.split("_"))


def declared_relationships() -> set[tuple[str, str, str]]:
    """``(start label, type, end label)`` of every relationship the classes declare, each
    read in the graph's own direction (an incoming attribute names it from its end)."""
    declared = set()
    for cls in nodes.NODE_CLASSES:
        for rel in cls.defined_properties(aliases=False, properties=False, rels=True).values():
            rel.lookup_node_class()
            ends = (cls.__label__, rel.definition["node_class"].__label__)
            start, end = (
                ends
                if rel.definition["direction"] == RelationshipDirection.OUTGOING
                else ends[::-1]
            )
            declared.add((start, rel.definition["relation_type"], end))
    return declared


async def done(value: Any) -> Any:
    """The result of a call on either twin: awaited when the async twin returned an
    awaitable, so one test body drives both."""
    return await value if inspect.isawaitable(value) else value
