"""A rich organisation to export, and every public read of it, for the transfer tests."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterable
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from typing import Any

from interaction_helpers import World, chat, conversation, memory_ids, save, update

PARIS = timezone(timedelta(hours=2))
NEW_YORK = timezone(timedelta(hours=-5))


@dataclass(frozen=True)
class Organisation:
    org_id: str
    ann: str
    bob: str
    bot: str
    #: Ann's own agent (user-specific).
    anns_agent: str
    #: Bob's own agent.
    bobs_agent: str


async def records_of(exported: Any) -> list[dict[str, Any]]:
    """An export of either twin (async or plain iterator) as a list."""
    if isinstance(exported, AsyncIterator):
        return [record async for record in exported]
    return list(exported)


async def build_organisation(memora: Any, name: str = "Acme") -> Organisation:
    """Two users, an org-wide agent and one agent each, conversations with updates that cut
    messages (memories left without sources), memories saved without sources, a contrary
    update chain, placeholders, and timestamps in three offsets across midnight."""
    org_id = (await memora.create_organization(name)).org_id
    ann = (await memora.create_user(org_id, f"{name} Ann")).user_id
    bob = (await memora.create_user(org_id, f"{name} Bob")).user_id
    bot = (await memora.create_agent(org_id, f"{name} Bot")).agent_id
    anns_agent = (await memora.create_agent(org_id, f"{name} Ann's coach", ann)).agent_id
    bobs_agent = (await memora.create_agent(org_id, f"{name} Bob's coach", bob)).agent_id
    with_ann, with_coach = World(org_id, ann, bot), World(org_id, ann, anns_agent)
    first = chat("I like tea", "Noted", "I live in Paris", "Nice")
    talk = await save(
        memora,
        with_ann,
        conversation(
            first,
            when=datetime(2024, 5, 1, 23, 30, 15, 123456, tzinfo=PARIS),
            memories=[
                (f"user_{ann} likes tea", [0]),
                (f"user_{ann} lives in Paris, told agent_{bot}", [2, 3]),
                ("said without a source", []),
            ],
        ),
    )
    tea = (await memory_ids(memora, with_ann, talk))[f"{name} Ann likes tea"]
    await update(
        memora,
        with_ann,
        talk,
        conversation(
            [*first[:2], *chat("Actually I prefer coffee")],
            when=datetime(2024, 5, 2, 1, 5, tzinfo=NEW_YORK),
            contrary=[(f"user_{ann} prefers coffee", [2], tea)],
        ),
    )
    coffee = (await memory_ids(memora, with_ann, talk))[f"{name} Ann prefers coffee"]
    await update(
        memora,
        with_ann,
        talk,
        conversation(
            [*first[:2], *chat("Actually I prefer coffee", "And now green tea")],
            when=datetime(2024, 5, 3, 12, 0, tzinfo=timezone.utc),
            contrary=[(f"user_{ann} prefers green tea", [3], coffee)],
        ),
    )
    await save(
        memora,
        with_coach,
        conversation(
            [],
            when=datetime(2024, 4, 30, 8, 0, tzinfo=NEW_YORK),
            memories=[(f"agent_{anns_agent} coaches user_{ann}", [])],
        ),
    )
    await save(
        memora,
        World(org_id, bob, bobs_agent),
        conversation(
            chat("I run", "Great", "Every morning"),
            when=datetime(2024, 5, 1, 6, 0, tzinfo=timezone.utc),
            memories=[(f"user_{bob} runs every morning", [0, 2])],
        ),
    )
    return Organisation(org_id, ann, bob, bot, anns_agent, bobs_agent)


def _dump(models: Iterable[Any]) -> list[Any]:
    """Models as JSON values: datetimes become ISO strings with their own offsets."""
    return [model.model_dump(mode="json") for model in models]


def _sorted(models: Iterable[Any], key: str) -> list[Any]:
    return sorted(_dump(models), key=lambda model: model[key])


async def public_reads(memora: Any, org_id: str) -> dict[str, Any]:
    """What every read of the public API returns about the organisation."""
    reads: dict[str, Any] = {
        "organization": _dump([await memora.get_organization(org_id)]),
        "organizations": [
            org for org in _dump(await memora.get_all_organizations()) if org["org_id"] == org_id
        ],
        "users": _sorted(await memora.get_all_org_users(org_id), "user_id"),
        "agents": _sorted(await memora.get_all_org_agents(org_id), "agent_id"),
    }
    for agent in reads["agents"]:
        reads[f"agent {agent['agent_id']}"] = _dump(
            [await memora.get_agent(org_id, agent["agent_id"])]
        )
    for user in reads["users"]:
        user_id = user["user_id"]
        prefix = f"user {user_id}"
        reads[prefix] = _dump([await memora.get_user(org_id, user_id)])
        reads[f"{prefix} agents"] = _sorted(
            await memora.get_all_user_agents(org_id, user_id), "agent_id"
        )
        interactions = await memora.get_all_user_interactions(org_id, user_id)
        reads[f"{prefix} interactions"] = _dump(interactions)
        reads[f"{prefix} interactions bare"] = _dump(
            await memora.get_all_user_interactions(org_id, user_id, False, False, 1, 1)
        )
        memories = await memora.get_all_user_memories(org_id, user_id)
        reads[f"{prefix} memories"] = _dump(memories)
        for agent in reads["agents"]:
            reads[f"{prefix} memories of {agent['agent_id']}"] = _dump(
                await memora.get_all_user_memories(org_id, user_id, agent["agent_id"])
            )
        for interaction in interactions:
            for flags in ((True, True), (False, True), (True, False)):
                reads[f"interaction {interaction.interaction_id} {flags}"] = _dump(
                    [
                        await memora.get_interaction(
                            org_id, user_id, interaction.interaction_id, *flags
                        )
                    ]
                )
        ids = [{"org_id": org_id, "user_id": user_id, "memory_id": m.memory_id} for m in memories]
        reads[f"{prefix} resolved"] = _dump(await memora.fetch_user_memories_resolved(ids))
        for memory in memories:
            reads[f"memory {memory.memory_id}"] = _dump(
                [await memora.get_user_memory(org_id, user_id, memory.memory_id)]
            )
            reads[f"history {memory.memory_id}"] = _dump(
                await memora.get_user_memory_history(org_id, user_id, memory.memory_id)
            )
    return reads
