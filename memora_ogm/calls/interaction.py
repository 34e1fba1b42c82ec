"""Interactions: message chains with the memories extracted from them. A save or an
update is one statement whatever its size, every input checked before anything is written.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from memora_ogm.calls.agent import match_agent
from memora_ogm.calls.memory import Reads, user_page
from memora_ogm.engine import convert, queries
from memora_ogm.engine.call import Batches, Call, Landed, Row, VectorChanges
from memora_ogm.engine.chains import keep_common_prefix
from memora_ogm.engine.erasure import (
    FINISHED,
    Erasure,
    batches,
    erase,
    first_memory,
    per_batch,
    room,
    user_collection_batch,
)
from memora_ogm.engine.nodes import Nodes
from memora_ogm.engine.projection import reading
from memora_ogm.engine.unit_of_work import Ref, UnitOfWork
from memora_ogm.errors import InteractionNotFound, MemoryNotFound, UserNotFound
from memora_ogm.properties import storable
from memora_ogm.schema import models
from memora_ogm.schema.storage import MemoriesAndInteraction
from memora_ogm.schema.validation import check_flag, check_ids, check_page


def _checked(value: Any) -> MemoriesAndInteraction:
    """The write's own copy of ``value``, checked, its date as the graph stores it."""
    data = MemoriesAndInteraction.checked(value)
    data.interaction_date = storable(data.interaction_date)
    return data


def _owner(
    nodes: Nodes,
    work: UnitOfWork,
    user: Ref,
    ids: tuple[str, str, str],
    data: MemoriesAndInteraction,
) -> tuple[Ref, Ref | None, list[str]]:
    """Match the agent, the user's memory collection and the user's superseded memories
    (``MemoryNotFound`` for another's); returns the last two and the superseded ids."""
    org_id, user_id, agent_id = ids
    match_agent(nodes, work, org_id, agent_id)
    collection = work.match_related(
        user, nodes.User.has_memories, lambda: UserNotFound(org_id, user_id)
    )
    wanted = sorted({memory.existing_contrary_memory_id for memory in data.contrary_memories})
    superseded = None
    if wanted:
        keys = [{"org_id": org_id, "user_id": user_id, "memory_id": id_} for id_ in wanted]
        superseded = work.match_each(
            nodes.Memory, keys, lambda key: MemoryNotFound(org_id, user_id, key["memory_id"])
        )
    return collection, superseded, wanted


def messages_of(messages: Sequence[Mapping[str, str]]) -> list[dict[str, Any]]:
    """The properties of an interaction's message blocks, positions from 0."""
    return [
        {"msg_position": position, "role": message["role"], "content": message["content"]}
        for position, message in enumerate(messages)
    ]


def link_chains(
    nodes: Nodes, work: UnitOfWork, interactions: Ref, chain: Ref, counts: Sequence[int]
) -> list[int]:
    """Link ``chain`` (``counts`` messages per interaction, in turn) as the interactions'
    chains; returns where each one's messages start."""
    offsets = [0, *itertools.accumulate(counts)][:-1]
    work.link(
        nodes.Interaction.first_message,
        interactions,
        chain,
        [(i, offsets[i]) for i, count in enumerate(counts) if count],
    )
    work.link(
        nodes.MessageBlock.is_next,
        chain,
        chain,
        [
            (offsets[i] + n, offsets[i] + n + 1)
            for i, count in enumerate(counts)
            for n in range(count - 1)
        ],
    )
    return offsets


def _memories(
    nodes: Nodes,
    work: UnitOfWork,
    interaction: Ref,
    chain: Ref,
    owner: tuple[Ref, Ref | None, list[str]],
    data: MemoriesAndInteraction,
    keys: Mapping[str, str],
    interactions_in: Ref | None = None,
) -> list[dict[str, Any]]:
    """Create and link the memories of a save or an update; returns their properties.

    Links to shared nodes come last (their locks held shortest), in the order every writer
    and delete takes them (no deadlock): interaction collection, memory collection, day,
    superseded memories.
    """
    memories_in, superseded, wanted = owner
    checked = [*data.memories, *data.contrary_memories]
    created, memories = work.create_each(
        nodes.Memory,
        [
            {**keys, "memory": memory.memory, "obtained_at": data.interaction_date}
            for memory in checked
        ],
    )
    work.link(nodes.Memory.interaction_source, created, interaction)
    sources = [
        (n, position)
        for n, memory in enumerate(checked)
        for position in sorted(set(memory.source_msg_block_pos))
    ]
    work.link(nodes.Memory.message_source, created, chain, sources)
    if interactions_in is not None:
        work.link(nodes.InteractionCollection.had_interaction, interactions_in, interaction)
    work.link(nodes.MemoryCollection.includes, memories_in, created)
    # The day of the stored datetime in its own offset, as the server's date() gives it.
    date = data.interaction_date.date()
    day = work.merge(nodes.Date, org_id=keys["org_id"], user_id=keys["user_id"], date=date)
    work.link(nodes.Interaction.has_occurrence_on, interaction, day)
    work.link(nodes.Memory.date_obtained, created, day)
    if superseded is not None:
        pairs = [
            (wanted.index(memory.existing_contrary_memory_id), len(data.memories) + n)
            for n, memory in enumerate(data.contrary_memories)
        ]
        work.link(nodes.Memory.contrary_update, superseded, created, pairs)
    return memories


def _written(
    nodes: Nodes,
    work: UnitOfWork,
    id_and_date: tuple[str, datetime],
    memories: list[dict[str, Any]],
    landed: Landed | None,
    log: str,
    batch_key: tuple[str, ...] | None = None,
    serial: tuple[str, ...] | None = None,
) -> Call[tuple[str, datetime]]:
    """A write's call: returns the interaction's id and date, adds ``memories`` to vectors."""

    def record(_: Row, changes: VectorChanges) -> None:
        changes.add(convert.memory_for_vector(nodes, memory) for memory in memories)

    return Call(
        work,
        lambda _: id_and_date,
        write=True,
        vectors=record,
        landed=landed,
        log=log,
        batch_key=batch_key,
        serial=serial,
    )


def _chain(nodes: Nodes, work: UnitOfWork, interactions: Ref) -> Ref:
    return work.reachable(
        interactions,
        nodes.Interaction.first_message,
        nodes.MessageBlock.is_next,
        order_by="msg_position",
    )


def save_interaction_with_memories(
    nodes: Nodes,
    org_id: str,
    agent_id: str,
    user_id: str,
    memories_and_interaction: MemoriesAndInteraction,
) -> Call[tuple[str, datetime]]:
    """Store a new interaction with its messages and memories; return its id and date.

    No lock of its own: it links to every node it relies on, and a delete of one locks it
    first (the save fails, and its retry finds the node missing).
    """
    check_ids(org_id=org_id, agent_id=agent_id, user_id=user_id)
    data = _checked(memories_and_interaction)
    when = data.interaction_date

    work = UnitOfWork()

    def missing() -> UserNotFound:
        return UserNotFound(org_id, user_id)

    user = work.match(nodes.User, missing, org_id=org_id, user_id=user_id)
    owner = _owner(nodes, work, user, (org_id, user_id, agent_id), data)
    collection = work.match_related(user, nodes.User.interactions_in, missing)
    interaction, props = work.create(
        nodes.Interaction,
        org_id=org_id,
        user_id=user_id,
        agent_id=agent_id,
        created_at=when,
        updated_at=when,
    )
    chain, _ = work.create_each(nodes.MessageBlock, messages_of(data.interaction))
    link_chains(nodes, work, interaction, chain, [len(data.interaction)])
    keys = {name: props[name] for name in ("org_id", "user_id", "agent_id", "interaction_id")}
    memories = _memories(nodes, work, interaction, chain, owner, data, keys, collection)
    interaction_id = props["interaction_id"]
    key = {"org_id": org_id, "user_id": user_id, "interaction_id": interaction_id}
    log = f"saved interaction {interaction_id} of user {user_id}"
    landed = Landed(nodes.Interaction, key)
    # A batch of saves locks the user's collections, then the day: by user, then by day.
    locks = (org_id, user_id, when.date().isoformat())
    return _written(nodes, work, (interaction_id, when), memories, landed, log, locks)


def update_interaction_and_memories(
    nodes: Nodes,
    org_id: str,
    agent_id: str,
    user_id: str,
    interaction_id: str,
    updated_memories_and_interaction: MemoriesAndInteraction,
) -> Call[tuple[str, datetime]]:
    """Make the stored chain equal the new message list and add the new memories.

    Messages from the first difference (by role and content) on are replaced; their
    memories stay, without ``MESSAGE_SOURCE``.
    """
    check_ids(org_id=org_id, agent_id=agent_id, user_id=user_id, interaction_id=interaction_id)
    data = _checked(updated_memories_and_interaction)
    when = data.interaction_date
    key: dict[str, Any] = {"org_id": org_id, "user_id": user_id, "interaction_id": interaction_id}

    def missing() -> InteractionNotFound:
        return InteractionNotFound(org_id, user_id, interaction_id)

    work = UnitOfWork()
    user = work.match(nodes.User, missing, org_id=org_id, user_id=user_id)
    interaction = work.match(nodes.Interaction, missing, lock=True, **key)
    owner = _owner(nodes, work, user, (org_id, user_id, agent_id), data)
    kept, created = keep_common_prefix(
        work, _chain(nodes, work, interaction), messages_of(data.interaction), ("role", "content")
    )
    work.set(interaction, agent_id=agent_id, updated_at=when)
    chain = work.concat(kept, created)
    link_chains(nodes, work, interaction, chain, [len(data.interaction)])
    memories = _memories(
        nodes, work, interaction, chain, owner, data, {**key, "agent_id": agent_id}
    )
    log = f"updated interaction {interaction_id} of user {user_id}"
    landed = first_memory(nodes, memories, True)
    # A batch locks the interaction first, then the user's collections, then the day.
    locks = (org_id, user_id, interaction_id, when.date().isoformat())
    serial = (org_id, user_id, interaction_id)
    return _written(nodes, work, (interaction_id, when), memories, landed, log, locks, serial)


def get_interaction(
    nodes: Nodes,
    apoc: bool,
    org_id: str,
    user_id: str,
    interaction_id: str,
    with_messages: bool = True,
    with_memories: bool = True,
) -> Call[models.Interaction]:
    """One interaction; unrequested messages or memories come back as empty lists."""
    check_ids(org_id=org_id, user_id=user_id, interaction_id=interaction_id)
    check_flag("with_messages", with_messages)
    check_flag("with_memories", with_memories)
    if not with_memories:
        work = UnitOfWork()
        interaction = work.match(
            nodes.Interaction,
            lambda: InteractionNotFound(org_id, user_id, interaction_id),
            org_id=org_id,
            user_id=user_id,
            interaction_id=interaction_id,
        )
        work.output("interaction", interaction)
        if with_messages:
            work.output("messages", _chain(nodes, work, interaction))

        def bare(row: Row) -> models.Interaction:
            messages = row.get("messages") or []
            node, message = reading(nodes.Interaction), reading(nodes.MessageBlock)
            return convert.interaction(row["interaction"], messages, [], node, message)

        return Call(work, bare)
    reads = Reads.of(nodes, apoc)

    def found(rows: list[Row]) -> models.Interaction:
        if not rows:
            raise InteractionNotFound(org_id, user_id, interaction_id)
        return reads.interaction_of(rows[0]["details"])

    statement = reads.query(
        queries.USER_INTERACTION,
        org_id=org_id,
        user_id=user_id,
        interaction_id=interaction_id,
        with_messages=with_messages,
        with_memories=True,
    )
    return Call(statement, found)


def get_all_user_interactions(
    nodes: Nodes,
    apoc: bool,
    org_id: str,
    user_id: str,
    with_their_messages: bool = True,
    with_their_memories: bool = True,
    skip: int = 0,
    limit: int = 100,
) -> Call[list[models.Interaction]]:
    """One page of the user's interactions, newest ``updated_at`` first (by its calendar
    day in its own offset, then by ``updated_at``)."""
    check_ids(org_id=org_id, user_id=user_id)
    check_flag("with_their_messages", with_their_messages)
    check_flag("with_their_memories", with_their_memories)
    check_page(skip, limit)
    return user_page(
        nodes,
        apoc,
        queries.INTERACTIONS_PAGE,
        "details",
        Reads.interaction_of,
        org_id,
        user_id,
        with_messages=with_their_messages,
        with_memories=with_their_memories,
        skip=skip,
        limit=limit,
    )


def delete_user_interaction_and_its_memories(
    nodes: Nodes, erasure: Erasure, org_id: str, user_id: str, interaction_id: str
) -> Batches:
    """Delete the interaction, its messages and memories in batches, each locking the
    interaction first (as an update does)."""
    check_ids(org_id=org_id, user_id=user_id, interaction_id=interaction_id)
    key = {"org_id": org_id, "user_id": user_id, "interaction_id": interaction_id}
    size = erasure.size
    work = UnitOfWork(batched=True)
    interaction = work.match(
        nodes.Interaction,
        lambda: InteractionNotFound(org_id, user_id, interaction_id),
        lock=True,
        **key,
    )
    memories = work.reachable(interaction, nodes.Interaction.memories, limit=per_batch(size))
    room(work, erase(nodes, work, size, erasure.vectors, memories, interaction), FINISHED)
    return batches(
        nodes,
        work,
        top=Landed(nodes.Interaction, key, present=False),
        log=f"deleted interaction {interaction_id} of user {user_id}",
    )


def delete_all_user_interactions_and_their_memories(
    nodes: Nodes, erasure: Erasure, org_id: str, user_id: str
) -> Batches:
    """Delete the user's interactions with their messages and memories in batches, each
    locking the interaction collection (against saves), then its interactions (updates)."""
    size = erasure.size
    work = user_collection_batch(nodes, org_id, user_id, nodes.User.interactions_in)
    interactions = work.nodes(nodes.Interaction, per_batch(size, 4), org_id=org_id, user_id=user_id)
    work.lock(interactions)
    memories = work.reachable(interactions, nodes.Interaction.memories, limit=per_batch(size))
    groups = erase(nodes, work, size, erasure.vectors, memories, interactions)
    room(work, [*groups, (interactions, per_batch(size, 4))], FINISHED)
    return batches(nodes, work, log=f"deleted all interactions of user {user_id}")
