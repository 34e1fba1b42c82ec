"""Erasure of any size: bounded batches, each one statement and transaction, run until
one finds room to spare (a tenant can outgrow the server's transaction memory).

A batch takes at most ``erase_batch_size`` memories and messages: memories, chain tails
(one chain's whole before the next), emptied interactions, unlinked days; hubs go last,
once emptied, so no batch detaches a node of high degree. Keyed nodes are found by key
index, so unlinked ones are found too. Chains are walked back from where the batch before
stopped (:data:`TAILS`): cost linear in length, not times the batches. After any batch a
read accepts the graph, so an interrupted erasure finishes when called again.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from memora_ogm import convert
from memora_ogm._async.nodes import Interaction, Memory, MessageBlock, User
from memora_ogm.calls import Batches, Landed, Row, VectorChanges
from memora_ogm.erasure_plans import chain_tails, output_first_key
from memora_ogm.errors import UserNotFound
from memora_ogm.mapping import node_key
from memora_ogm.schema import models
from memora_ogm.unit_of_work import Ref, UnitOfWork
from memora_ogm.validation import check_ids

#: Default ``erase_batch_size``: about an inner transaction of the bare driver's
#: ``IN TRANSACTIONS OF 5000 ROWS``; twice that cost a fifth more server CPU.
BATCH_SIZE = 2_500
#: Interactions a tenant's batch takes, as a share of its size: with ~10 messages each,
#: an eighth brings a little more messages than a batch deletes.
INTERACTIONS = 8

#: The flag a batch returns when it took everything left.
FINISHED = "finished"
#: The parameter carrying the chains' last nodes from one batch to the next.
TAILS = "tails"
MEMORY_ID_NAMES = node_key(Memory)


@dataclass(frozen=True)
class Erasure:
    """An interface's batch size, and whether deletes record memories for a vector store."""

    size: int
    vectors: bool


def user_collection_batch(org_id: str, user_id: str, collection: Any) -> UnitOfWork:
    """A user's erasure batch, first locking ``collection`` (every write adding to it
    links to it)."""
    check_ids(org_id=org_id, user_id=user_id)

    def missing() -> UserNotFound:
        return UserNotFound(org_id, user_id)

    work = UnitOfWork(batched=True)
    user = work.match(User, missing, org_id=org_id, user_id=user_id)
    work.match_related(user, collection, missing, lock=True)
    return work


def per_batch(size: int, share: int = 1) -> int:
    """Nodes of a kind a batch takes: a ``share`` for kinds bringing more nodes along."""
    return max(1, size // share)


def removed_memories(row: Mapping[str, Any]) -> Iterator[models.Memory]:
    return (convert.memory_for_vector(memory) for memory in row["memories"])


def first_memory(memories: Sequence[Mapping[str, Any]], present: bool = False) -> Landed | None:
    """What shows a write of ``memories`` landed: the first is there (``present``) or gone.
    None without memories: the write may run again."""
    if not memories:
        return None
    return Landed(Memory, {name: memories[0][name] for name in MEMORY_ID_NAMES}, present)


def erase(
    work: UnitOfWork,
    size: int,
    vectors: bool,
    memories: Ref,
    interactions: Ref | None = None,
) -> list[tuple[Ref, int]]:
    """Delete ``memories``, the tails of ``interactions``' chains, the interactions left
    empty and the unlinked days; returns the bounded groups and limits for ``room``.

    ``memories`` is output whole for a vector store (which may have to add them back),
    else only the first key, all :func:`first_memory` reads.
    """
    memories = work.as_list(memories)
    days = [work.reachable(memories, Memory.date_obtained)]
    groups = [(memories, per_batch(size))]
    messages = None
    if interactions is not None:
        days.append(work.reachable(interactions, Interaction.has_occurrence_on))
        messages = chain_tails(
            work,
            work.as_list(interactions),
            Interaction.first_message,
            MessageBlock.is_next,
            "msg_position",
            "updated_at",
            per_batch(size),
            TAILS,
        )
        groups.append((messages, per_batch(size)))
    # After every subquery: each subquery row would count the memory maps again.
    if vectors:
        work.output("memories", memories)
    else:
        output_first_key(work, "memories", memories, MEMORY_ID_NAMES)
    work.delete(memories)
    if interactions is not None and messages is not None:
        work.delete(messages)
        work.delete_emptied(interactions, [Interaction.first_message, Interaction.memories])
    for ref in days:
        work.delete_unlinked(ref)
    return groups


def batches(
    work: UnitOfWork,
    last: Callable[[VectorChanges], None] | None = None,
    top: Landed | None = None,
    log: str = "",
) -> Batches:
    """Run ``work`` until it returns :data:`FINISHED`.

    ``last`` records the final batch's vector changes. An unanswered commit landed if
    ``top`` (deleted last) is gone on the final batch, else if its first memory is.
    """

    def vectors(row: Row, changes: VectorChanges) -> None:
        changes.remove(removed_memories(row))
        if row[FINISHED] and last is not None:
            last(changes)

    def landed(row: Row) -> Landed | None:
        return top if row[FINISHED] and top is not None else first_memory(row["memories"])

    def carried(row: Row) -> dict[str, Any]:
        if TAILS not in work.params:
            return {}
        return {TAILS: {tail[0]: tail for tail in row[f"{TAILS}_ends"]}}

    return Batches(work, lambda row: bool(row[FINISHED]), vectors, landed, carried, log)
