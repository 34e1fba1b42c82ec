"""Erasure of any size: bounded batches, each one statement in its own transaction.

A tenant can hold more than the server's transaction memory can delete at once, so an
erasure runs batch after batch until one finds room to spare. A batch takes at most
``erase_batch_size`` memories and messages, in this order: memories, the last messages
of the chains (a chain's tail whole before the next one's), the interactions left with
neither, the days nothing links to any more; the hubs (collections, users, the
organisation) go last, once emptied, so no batch detaches a node of high degree.

Keyed nodes are found through their key's index, not from the hubs, so whatever is the
tenant's is found even when left unlinked. Messages are found along their chain, walked
from its start once and then back from where the batch before stopped (:data:`TAILS`):
a long chain costs work in proportion to its length, not times its batches.

After any batch the graph is one a read accepts (chains shortened from their tail, as an
update does; the node a read starts from goes with the last thing under it), so an
interrupted erasure leaves the caller's node in place and calling it again finishes.
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

#: Memories, messages and agents a batch deletes at most, unless the interface says
#: otherwise (``erase_batch_size``): about the nodes of an inner transaction of the bare
#: driver's ``IN TRANSACTIONS OF 5000 ROWS``; twice that cost a fifth more server CPU.
BATCH_SIZE = 2_500
#: The share of a batch's size in interactions a tenant's batch takes: with about ten
#: messages each, an eighth brings a little more messages than the batch deletes.
INTERACTIONS = 8

#: The name of the flag a batch returns when it took everything that was left.
FINISHED = "finished"
#: The parameter naming the chains' last nodes the batch before left, which :func:`batches`
#: passes on, so that a long chain is walked back from there.
TAILS = "tails"
#: The key of a memory, as statements return it.
MEMORY_ID_NAMES = node_key(Memory)


@dataclass(frozen=True)
class Erasure:
    """How an interface erases: at most ``size`` memories and messages a batch, and whether
    its deletes record the memories for a vector store."""

    size: int
    vectors: bool


def user_collection_batch(org_id: str, user_id: str, collection: Any) -> UnitOfWork:
    """A batch of a user's erasure that starts by locking the user's ``collection``, which
    every write adding to it links to; ``UserNotFound`` when either is missing."""
    check_ids(org_id=org_id, user_id=user_id)

    def missing() -> UserNotFound:
        return UserNotFound(org_id, user_id)

    work = UnitOfWork(batched=True)
    user = work.match(User, missing, org_id=org_id, user_id=user_id)
    work.match_related(user, collection, missing, lock=True)
    return work


def per_batch(size: int, share: int = 1) -> int:
    """How many nodes of a kind a batch of ``size`` takes: a ``share`` of it for kinds that
    bring more nodes along."""
    return max(1, size // share)


def removed_memories(row: Mapping[str, Any]) -> Iterator[models.Memory]:
    """The memories a delete statement returned, as the vector store keeps them."""
    return (convert.memory_for_vector(memory) for memory in row["memories"])


def first_memory(memories: Sequence[Mapping[str, Any]], present: bool = False) -> Landed | None:
    """What shows that a write of ``memories`` (stored properties, or as a delete returned
    them) took effect: the first of them is there (``present``), or gone. None when there
    are none: the write may run again."""
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
    """Declare the deletion of ``memories``, of the last messages of ``interactions``'
    chains (``size`` at most), of those interactions left with neither, then of the days
    nothing links to any more. Returns the bounded groups with their limits, for
    :func:`~memora_ogm.erasure_plans.room`.

    The memories are returned as ``memories``: whole when a vector store is attached
    (``vectors``), which removes them (and adds them back should the commit fail); else
    only the first one's key, which is all :func:`first_memory` reads.
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
    # Projected after every subquery: a subquery's rows each carry the variables bound
    # before it, and the server counts a batch of memory maps once per row.
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
    """Run ``work`` (which returns ``memories`` and :data:`FINISHED`) until it finishes.

    ``last`` records the vector changes of the final batch (a purge of the user or
    organisation). A batch whose commit went unanswered landed if the final batch's
    ``top`` (the node it deletes last) is gone, or else its first memory is.
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
