# Generated from memora_ogm/_async by scripts/generate_sync.py: do not edit.
"""Interactions: message chains with the memories extracted from them.

An interaction's messages form a chain ``(Interaction)-[:FIRST_MESSAGE]->(m0)
-[:IS_NEXT]->(m1)...`` with positions 0..n-1. Writes go through the node classes
and the batched helpers of :mod:`memora_ogm._async.ogm`, so the number of queries
of a call does not depend on how many messages or memories it carries. Every
input is validated before anything is written.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from memora_ogm import convert, queries
from memora_ogm._sync.component import GraphComponent, get_agent, get_user, lock, locked_user
from memora_ogm._sync.graph import VectorChanges
from memora_ogm._sync.memory import collection_of, delete_memories, resolving_read
from memora_ogm._sync.nodes import (
    Date,
    Interaction,
    InteractionCollection,
    MemoraNode,
    Memory,
    MemoryCollection,
    MessageBlock,
    User,
)
from memora_ogm._sync.ogm import Link, connect_many, delete_nodes, reachable
from memora_ogm.errors import InteractionNotFound, MemoryNotFound
from memora_ogm.properties import as_aware
from memora_ogm.schema import models
from memora_ogm.schema.storage import (
    ContraryMemoryToStore,
    MemoriesAndInteraction,
    MemoryToStore,
)
from memora_ogm.validation import (
    MAX_NAME_LENGTH,
    MAX_TEXT_LENGTH,
    check_encodable,
    check_flag,
    check_ids,
    check_page,
    check_text,
)


def _check_message(index: int, message: Any) -> dict[str, str]:
    """A message is a dict with a string role and content (content may be empty)."""
    if not isinstance(message, Mapping):
        raise ValueError(f"message {index} must be a dict with `role` and `content`.")
    for key, limit in (("role", MAX_NAME_LENGTH), ("content", MAX_TEXT_LENGTH)):
        value = message.get(key)
        if not isinstance(value, str):
            raise ValueError(f"message {index} must have a string `{key}`.")
        if len(value) > limit:
            raise ValueError(f"`{key}` of message {index} is longer than {limit} characters.")
        check_encodable(f"{key} of message {index}", value)
    return {"role": message["role"], "content": message["content"]}


def _fields(value: Any, names: tuple[str, ...]) -> dict[str, Any] | None:
    """``value``'s attributes ``names``, or None if it lacks one.

    Read by name, not by class, so Memora's own ``storage_schema`` objects (or any
    object with the same fields) are accepted; a dict's keys are not fields.
    """
    if isinstance(value, Mapping):
        return None
    try:
        return {name: getattr(value, name) for name in names}
    except AttributeError:
        return None


def _sequence(value: Any) -> bool:
    """A list or a tuple (Memora builds either); a string is not a sequence of items here."""
    return isinstance(value, list | tuple)


def _check_positions(positions: Any, message_count: int) -> list[int]:
    """Source positions are distinct ints (not bools) indexing the messages of the same object."""
    if not _sequence(positions):
        raise ValueError("`source_msg_block_pos` must be a list of message positions.")
    seen: set[int] = set()
    for position in positions:
        if isinstance(position, bool) or not isinstance(position, int):
            raise ValueError(f"message position {position!r} must be an integer.")
        if not 0 <= position < message_count:
            raise ValueError(
                f"message position {position} is outside the {message_count} messages."
            )
        if position in seen:
            raise ValueError(f"message position {position} is given twice.")
        seen.add(position)
    return [int(position) for position in positions]


_DATA_FIELDS = ("interaction", "interaction_date", "memories", "contrary_memories")
_MEMORY_FIELDS = ("memory", "source_msg_block_pos")
_CONTRARY_FIELDS = (*_MEMORY_FIELDS, "existing_contrary_memory_id")


def _memory_fields(
    name: str, kind: str, value: Any, names: tuple[str, ...], message_count: int
) -> list[dict[str, Any]]:
    """The checked fields of each memory in ``value`` (a list of ``kind`` objects)."""
    if not _sequence(value):
        raise ValueError(f"`{name}` must be a list of {kind} objects.")
    checked: list[dict[str, Any]] = []
    for memory in value:
        fields = _fields(memory, names)
        if fields is None:
            raise ValueError(f"`{name}` must be a list of {kind} objects.")
        check_text("memory", fields["memory"])
        fields["source_msg_block_pos"] = _check_positions(
            fields["source_msg_block_pos"], message_count
        )
        checked.append(fields)
    return checked


def check_memories_and_interaction(value: Any) -> MemoriesAndInteraction:
    """Everything a save or an update writes, checked before the first write.

    Accepts memora-ogm's ``MemoriesAndInteraction``, Memora's, or any object with the
    same fields (their memories likewise), and returns a new memora-ogm object built from
    the checked fields, so a caller changing its object later cannot change the write.
    Source positions index the message list of the same object, each at most once.
    """
    fields = _fields(value, _DATA_FIELDS)
    if fields is None:
        raise ValueError(
            "expected a MemoriesAndInteraction (an object with `interaction`, "
            "`interaction_date`, `memories` and `contrary_memories`)."
        )
    if not _sequence(fields["interaction"]):
        raise ValueError("`interaction` must be a list of messages.")
    messages = [_check_message(index, m) for index, m in enumerate(fields["interaction"])]
    if not isinstance(fields["interaction_date"], datetime):
        raise ValueError("`interaction_date` must be a datetime.")
    count = len(messages)
    memories = _memory_fields(
        "memories", "MemoryToStore", fields["memories"], _MEMORY_FIELDS, count
    )
    contrary = _memory_fields(
        "contrary_memories",
        "ContraryMemoryToStore",
        fields["contrary_memories"],
        _CONTRARY_FIELDS,
        count,
    )
    for memory in contrary:
        check_ids(existing_contrary_memory_id=memory["existing_contrary_memory_id"])
    return MemoriesAndInteraction(
        interaction=messages,
        interaction_date=fields["interaction_date"],
        memories=[MemoryToStore(**memory) for memory in memories],
        contrary_memories=[ContraryMemoryToStore(**memory) for memory in contrary],
    )


@dataclass
class _Owner:
    """What the memories of a write link to, looked up (and checked) before any write."""

    user: User
    memories: MemoryCollection
    #: The memories the contrary memories supersede, by memory_id.
    superseded: dict[str, Memory]


def _load_owner(user: User, agent_id: str, data: MemoriesAndInteraction) -> _Owner:
    """The agent and superseded memories must exist, or the write fails before writing.

    ``user`` is locked by the caller (:func:`locked_user`). A contrary memory may only
    supersede a memory of the same org and user; any other id (unknown, or another
    tenant's) raises ``MemoryNotFound``.
    """
    org_id, user_id = user.org_id, user.user_id
    get_agent(org_id, agent_id)
    collection = collection_of(user, User.has_memories)
    wanted = sorted({memory.existing_contrary_memory_id for memory in data.contrary_memories})
    found = (
        Memory.nodes.filter(org_id=org_id, user_id=user_id, memory_id__in=wanted).all()
        if wanted
        else []
    )
    superseded = {node.memory_id: node for node in found}
    for memory_id in wanted:
        if memory_id not in superseded:
            raise MemoryNotFound(org_id, user_id, memory_id)
    return _Owner(user, collection, superseded)


def _day(org_id: str, user_id: str, when: datetime) -> Date:
    """The user's Date node of ``when``'s calendar day (in its own offset), made if missing."""
    (day,) = Date.nodes.bulk_get_or_create(
        {"org_id": org_id, "user_id": user_id, "date": when.date()}
    )
    return day


def _append_messages(
    interaction: Interaction, kept: list[MessageBlock], messages: list[dict[str, str]]
) -> tuple[list[MessageBlock], list[Link]]:
    """Create ``messages`` after the ``kept`` head of the chain: the whole chain, and its links."""
    created = MessageBlock.nodes.bulk_create(
        *(
            {"msg_position": position, "role": message["role"], "content": message["content"]}
            for position, message in enumerate(messages, start=len(kept))
        )
    )
    if not created:
        return kept, []
    head: Link = (
        (MessageBlock.is_next, [(kept[-1], created[0])])
        if kept
        else (Interaction.first_message, [(interaction, created[0])])
    )
    return [*kept, *created], [
        head,
        (MessageBlock.is_next, list(zip(created, created[1:], strict=False))),
    ]


def _add_memories(
    interaction: Interaction,
    owner: _Owner,
    day: Date,
    chain: list[MessageBlock],
    data: MemoriesAndInteraction,
    changes: VectorChanges,
) -> list[Link]:
    """Create one Memory node per memory and contrary memory; return the links they need."""
    stored = [*data.memories, *data.contrary_memories]
    nodes = Memory.nodes.bulk_create(
        *(
            {
                "org_id": interaction.org_id,
                "user_id": interaction.user_id,
                "agent_id": interaction.agent_id,
                "interaction_id": interaction.interaction_id,
                "memory": memory.memory,
                "obtained_at": as_aware(data.interaction_date),
            }
            for memory in stored
        )
    )
    changes.add(convert.memory_for_vector(node) for node in nodes)
    contrary = zip(nodes[len(data.memories) :], data.contrary_memories, strict=True)
    return [
        (Memory.interaction_source, [(node, interaction) for node in nodes]),
        (MemoryCollection.includes, [(owner.memories, node) for node in nodes]),
        (Memory.date_obtained, [(node, day) for node in nodes]),
        (
            Memory.message_source,
            [
                (node, chain[position])
                for node, memory in zip(nodes, stored, strict=True)
                for position in sorted(set(memory.source_msg_block_pos))
            ],
        ),
        (
            Memory.contrary_update,
            [
                (owner.superseded[memory.existing_contrary_memory_id], node)
                for node, memory in contrary
            ],
        ),
    ]


def _unchanged_prefix(chain: Sequence[MessageBlock], messages: Sequence[dict[str, str]]) -> int:
    """How many leading messages the stored chain and the new list share (by role and content)."""
    for position, (stored, message) in enumerate(zip(chain, messages, strict=False)):
        if stored.role != message["role"] or stored.content != message["content"]:
            return position
    return min(len(chain), len(messages))


def _locked_interaction(
    org_id: str, user_id: str, interaction_id: str, **properties: Any
) -> Interaction:
    """The interaction of the locked user, with ``properties`` set and write-locked.

    The user's lock comes first (:func:`locked_user`; the same order for every
    writer, so they cannot deadlock), then the interaction's own.
    """

    def missing() -> InteractionNotFound:
        return InteractionNotFound(org_id, user_id, interaction_id)

    locked_user(org_id, user_id, missing)
    interaction = Interaction.nodes.get_or_none(
        org_id=org_id, user_id=user_id, interaction_id=interaction_id
    )
    if interaction is None:
        raise missing()
    return lock(interaction, missing, **properties)


def _chain(interactions: Sequence[Interaction]) -> dict[MemoraNode, list[MessageBlock]]:
    """Each interaction's messages, in position order, in one query."""
    chains: dict[MemoraNode, list[MessageBlock]] = {node: [] for node in interactions}
    for start, message in reachable(interactions, Interaction.first_message, MessageBlock.is_next):
        chains[start].append(message)
    for messages in chains.values():
        messages.sort(key=lambda message: message.msg_position)
    return chains


def _interaction(details: dict[str, Any], apoc: bool) -> models.Interaction:
    """An interaction map of :mod:`memora_ogm.queries` as the return model."""
    return convert.interaction(
        details,
        [convert.message_block(message) for message in details["messages"]],
        [convert.resolved_memory(memory, not apoc) for memory in details["memories"]],
    )


def _interaction_with_messages(
    org_id: str, user_id: str, interaction_id: str, with_messages: bool
) -> models.Interaction:
    """An interaction without its memories, through the node classes."""
    interaction = Interaction.nodes.get_or_none(
        org_id=org_id, user_id=user_id, interaction_id=interaction_id
    )
    if interaction is None:
        raise InteractionNotFound(org_id, user_id, interaction_id)
    chain = (_chain([interaction]))[interaction] if with_messages else []
    return convert.interaction(
        interaction.__properties__, [convert.message(message) for message in chain], []
    )


def _delete_interactions(interactions: list[Interaction], changes: VectorChanges) -> None:
    """Delete interactions with their messages and memories, then the days left unused."""
    memories = [memory for _, memory in reachable(interactions, Interaction.memories)]
    messages = [message for chain in (_chain(interactions)).values() for message in chain]
    days = [day for _, day in reachable(interactions, Interaction.has_occurrence_on)]
    delete_memories(memories, changes, others=[*messages, *interactions], days=days)


class Neo4jInteraction(GraphComponent):
    def save_interaction_with_memories(
        self,
        org_id: str,
        agent_id: str,
        user_id: str,
        memories_and_interaction: MemoriesAndInteraction,
    ) -> tuple[str, datetime]:
        """Store a new interaction with its messages and memories; return its id and date.

        The user and agent must exist (else not-found and nothing is written
        anywhere). Memories are stored even without messages; every memory is
        linked to its Date (``DATE_OBTAINED``).
        """
        check_ids(org_id=org_id, agent_id=agent_id, user_id=user_id)
        data = check_memories_and_interaction(memories_and_interaction)
        when = as_aware(data.interaction_date)

        def work(changes: VectorChanges) -> tuple[str, datetime]:
            owner = _load_owner(locked_user(org_id, user_id), agent_id, data)
            collection = collection_of(owner.user, User.interactions_in)
            interaction = Interaction(
                org_id=org_id, user_id=user_id, agent_id=agent_id, created_at=when, updated_at=when
            ).save()
            day = _day(org_id, user_id, when)
            chain, chain_links = _append_messages(interaction, [], data.interaction)
            connect_many(
                (InteractionCollection.had_interaction, [(collection, interaction)]),
                (Interaction.has_occurrence_on, [(interaction, day)]),
                *chain_links,
                *_add_memories(interaction, owner, day, chain, data, changes),
            )
            return interaction.interaction_id, when

        interaction_id, created_at = self.graph.write(work)
        self.logger.info("saved interaction %s of user %s", interaction_id, user_id)
        return interaction_id, created_at

    def update_interaction_and_memories(
        self,
        org_id: str,
        agent_id: str,
        user_id: str,
        interaction_id: str,
        updated_memories_and_interaction: MemoriesAndInteraction,
    ) -> tuple[str, datetime]:
        """Make the stored chain equal the new message list and add the new memories.

        The chain is compared with the new list by role and content inside the
        write transaction: from the first difference on, stored messages are
        deleted and the new tail appended (their memories stay, without
        ``MESSAGE_SOURCE``). ``updated_at`` and ``agent_id`` are set and the
        interaction is linked to the update's Date.
        """
        check_ids(org_id=org_id, agent_id=agent_id, user_id=user_id, interaction_id=interaction_id)
        data = check_memories_and_interaction(updated_memories_and_interaction)
        when = as_aware(data.interaction_date)

        def work(changes: VectorChanges) -> tuple[str, datetime]:
            interaction = _locked_interaction(
                org_id, user_id, interaction_id, agent_id=agent_id, updated_at=when
            )
            owner = _load_owner(get_user(org_id, user_id), agent_id, data)
            (stored,) = (_chain([interaction])).values()
            kept = _unchanged_prefix(stored, data.interaction)
            delete_nodes(stored[kept:])
            chain, chain_links = _append_messages(
                interaction, stored[:kept], data.interaction[kept:]
            )
            day = _day(org_id, user_id, when)
            connect_many(
                (Interaction.has_occurrence_on, [(interaction, day)]),
                *chain_links,
                *_add_memories(interaction, owner, day, chain, data, changes),
            )
            return interaction_id, when

        result = self.graph.write(work)
        self.logger.info("updated interaction %s of user %s", interaction_id, user_id)
        return result

    def get_interaction(
        self,
        org_id: str,
        user_id: str,
        interaction_id: str,
        with_messages: bool = True,
        with_memories: bool = True,
    ) -> models.Interaction:
        """One interaction; unrequested messages or memories come back as empty lists."""
        check_ids(org_id=org_id, user_id=user_id, interaction_id=interaction_id)
        check_flag("with_messages", with_messages)
        check_flag("with_memories", with_memories)
        if not with_memories:
            return self.graph.read(
                lambda: _interaction_with_messages(org_id, user_id, interaction_id, with_messages)
            )
        apoc = self.graph.has_apoc()

        def work() -> models.Interaction:
            rows = resolving_read(
                self.graph,
                queries.USER_INTERACTION,
                apoc,
                org_id=org_id,
                user_id=user_id,
                interaction_id=interaction_id,
                with_messages=with_messages,
                with_memories=True,
            )
            if not rows:
                raise InteractionNotFound(org_id, user_id, interaction_id)
            return _interaction(rows[0]["details"], apoc)

        return self.graph.read(work)

    def get_all_user_interactions(
        self,
        org_id: str,
        user_id: str,
        with_their_messages: bool = True,
        with_their_memories: bool = True,
        skip: int = 0,
        limit: int = 100,
    ) -> list[models.Interaction]:
        """One page of the user's interactions, newest ``updated_at`` first.

        Ordered by the calendar day of ``updated_at`` (in its own offset), then by
        ``updated_at``: the same order unless timestamps mix offsets across midnight.
        A missing user raises ``UserNotFound``.
        """
        check_ids(org_id=org_id, user_id=user_id)
        check_flag("with_their_messages", with_their_messages)
        check_flag("with_their_memories", with_their_memories)
        check_page(skip, limit)
        apoc = self.graph.has_apoc()

        def work() -> list[models.Interaction]:
            get_user(org_id, user_id)
            rows = resolving_read(
                self.graph,
                queries.INTERACTIONS_PAGE,
                apoc,
                org_id=org_id,
                user_id=user_id,
                with_messages=with_their_messages,
                with_memories=with_their_memories,
                skip=skip,
                limit=limit,
            )
            return [_interaction(row["details"], apoc) for row in rows]

        return self.graph.read(work)

    def delete_user_interaction_and_its_memories(
        self, org_id: str, user_id: str, interaction_id: str
    ) -> None:
        """Delete the interaction with its messages and memories (in both stores).

        A Date node goes once nothing links to it any more.
        """
        check_ids(org_id=org_id, user_id=user_id, interaction_id=interaction_id)

        def work(changes: VectorChanges) -> None:
            interaction = _locked_interaction(org_id, user_id, interaction_id)
            _delete_interactions([interaction], changes)

        self.graph.write(work)
        self.logger.info("deleted interaction %s of user %s", interaction_id, user_id)

    def delete_all_user_interactions_and_their_memories(self, org_id: str, user_id: str) -> None:
        """Delete every interaction of the user with its messages and memories (in both stores)."""
        check_ids(org_id=org_id, user_id=user_id)

        def work(changes: VectorChanges) -> None:
            collection = collection_of(locked_user(org_id, user_id), User.interactions_in)
            found = reachable([collection], InteractionCollection.had_interaction)
            interactions = [interaction for _, interaction in found]
            # Saving takes their write locks, so no update adds messages meanwhile.
            Interaction.nodes.bulk_save(interactions)
            _delete_interactions(interactions, changes)

        self.graph.write(work)
        self.logger.info("deleted all interactions of user %s", user_id)
