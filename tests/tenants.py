"""A populated organisation, and valid arguments from it, for the bad-input and tenant tests.

Every kind of id a facade method takes exists in it (organisation, user, org agent,
user agent, interaction, memory and the memory it superseded), and every text it
stores starts with its label, so a test can tell whether anything of another
tenant leaked into a result.
"""

from __future__ import annotations

import functools
import inspect
from dataclasses import dataclass
from typing import Any

from interaction_helpers import World, chat, conversation, make_world, memory_ids, save, update

from memora_ogm._async.base import BaseGraphDB

ID_NAMES = (
    "org_id",
    "user_id",
    "agent_id",
    "user_agent_id",
    "interaction_id",
    "memory_id",
    "old_memory_id",
)


@dataclass(frozen=True)
class Tenant:
    label: str
    org_id: str
    user_id: str
    agent_id: str
    user_agent_id: str
    interaction_id: str
    #: The newer memory of a contrary-update pair, and the older one it superseded.
    memory_id: str
    old_memory_id: str

    @property
    def world(self) -> World:
        return World(self.org_id, self.user_id, self.agent_id)

    def ids(self, memory_id: str | None = None) -> dict[str, str]:
        """``{org_id, user_id, memory_id}`` as the fetch methods take them."""
        return self.world.ids(memory_id or self.memory_id)

    def identifiers(self) -> list[str]:
        return [getattr(self, name) for name in ID_NAMES]


async def make_tenant(memora: Any, label: str, org_id: str | None = None) -> Tenant:
    """An organisation (or a second user in ``org_id``) with a conversation and a history."""
    if org_id is None:
        org_id = (await memora.create_organization(f"{label} org")).org_id
    world = await make_world(memora, f"{label} user", f"{label} agent", org_id)
    user_agent = await memora.create_agent(org_id, f"{label} own agent", world.user_id)
    messages = chat(f"{label} says hi", f"{label} hears hello", f"{label} likes tea")
    interaction_id = await save(
        memora, world, conversation(messages, memories=[(f"{label} likes tea", [2])])
    )
    old = (await memory_ids(memora, world, interaction_id))[f"{label} likes tea"]
    await update(
        memora,
        world,
        interaction_id,
        conversation(
            [*messages, *chat(f"{label} now likes coffee")],
            contrary=[(f"{label} likes coffee", [3], old)],
        ),
    )
    new = (await memory_ids(memora, world, interaction_id))[f"{label} likes coffee"]
    return Tenant(
        label,
        org_id,
        world.user_id,
        world.agent_id,
        user_agent.agent_id,
        interaction_id,
        new,
        old,
    )


# -- the arguments of the facade's methods, by role ------------------------------------

#: The arguments of ``BaseGraphDB``'s methods, by what they hold.
ID_ARGS = {"org_id", "user_id", "agent_id", "interaction_id", "memory_id"}
NAME_ARGS = {"org_name", "new_org_name", "agent_label", "new_agent_label"}
NAME_ARGS |= {"user_name", "new_user_name"}
FLAG_ARGS = {"with_messages", "with_memories", "with_their_messages", "with_their_memories"}
PAGE_ARGS = {"skip", "limit"}
DATA_ARGS = {"memories_and_interaction", "updated_memories_and_interaction"}
ID_LIST_ARGS = {"org_user_mem_ids", "batch_org_user_mem_ids"}


@functools.cache
def public_arguments() -> dict[str, list[str]]:
    """Every public method of ``BaseGraphDB`` that takes arguments, with their names (read
    once: the sweep asks for every case). Not to be changed."""
    found = {}
    for name, function in inspect.getmembers(BaseGraphDB, inspect.isfunction):
        parameters = inspect.signature(function).parameters.values()
        named = [
            p.name for p in parameters if p.name != "self" and p.kind == p.POSITIONAL_OR_KEYWORD
        ]
        if not name.startswith("_") and named:
            found[name] = named
    return found


def valid_argument(method: str, argument: str, t: Tenant) -> Any:
    """A value that is right for ``argument`` of ``method``, so only the swept one is wrong."""
    if argument in ID_ARGS:
        return getattr(t, argument)
    if argument in NAME_ARGS:
        return "renamed"
    if argument in FLAG_ARGS:
        return True
    if argument in PAGE_ARGS:
        return 0 if argument == "skip" else 10
    if argument in DATA_ARGS:
        return conversation(chat("fresh", "words"), memories=[("fresh memory", [0])])
    if argument == "org_user_mem_ids":
        return [t.ids()]
    if argument == "batch_org_user_mem_ids":
        return [[t.ids()]]
    raise AssertionError(f"no valid value known for {method}({argument})")
