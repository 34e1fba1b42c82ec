"""Erasure of any size: bounded batches, each one statement in its own transaction.

A user, an organisation or a single interaction can hold more than the server's
transaction memory can delete at once, so each erasure runs batch after batch until a
batch finds room to spare. A batch takes at most ``erase_batch_size`` memories and
messages (``BATCH_SIZE`` unless the interface says otherwise; a quarter as many
interactions or users), always in this order: memories, then the last messages of the
chains (a chain's tail whole before the next chain's), then the interactions left with
neither, then the days nothing links to any more; the hubs (collections, users, the
organisation) go last, once emptied, so no batch detaches a node of high degree.

The keyed nodes of a user or an organisation (interactions, memories, users, agents,
days) are found by their key properties, through the index of their key, not by walking
from the hubs: whatever is the tenant's is found, also when something (an erasure of
Memora's, a writer of the graph's own) left it unlinked from its collection, user or day.
Messages carry no key: they are found along their interaction's chain, which a batch only
ever shortens from its tail. A chain is walked from its start once; later batches walk
back from where the batch before stopped (:data:`TAILS`), so a long chain costs work in
proportion to its length, not to its length times its batches.

After any batch the graph is one a read accepts: chains are shortened from their
tail, as an update shortens them, memories lose only their message sources, and the
node a read starts from (the interaction, the user, the organisation) goes in the
batch that deletes the last thing under it. An interrupted erasure therefore leaves
the caller's node in place, and calling it again finishes the work.
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
#: otherwise (``erase_batch_size``). A batch of 2,500 memories and 2,500 messages, with
#: their interactions and days, holds about as many nodes as an inner transaction of the
#: bare driver's ``CALL { ... } IN TRANSACTIONS OF 5000 ROWS``; twice that made the
#: server spend a fifth more CPU per node (an organisation of 100k nodes: 4.2 to 6.9 s of
#: server CPU, against 3.8 to 4.7 s at 2,500 and 3.5 to 4.7 s for the bare driver).
BATCH_SIZE = 2_500
#: The share of a batch's size in interactions a user's or an organisation's batch takes:
#: an interaction of Memora's brings about ten messages, so an eighth of the size in
#: interactions has a little more messages than the batch deletes (the rest wait, locked,
#: for the next batch), not the two and a half times a quarter would walk and lock.
INTERACTIONS = 8

#: The name of the flag a batch returns when it took everything that was left.
FINISHED = "finished"
#: The parameter of a batch naming the chains' last nodes the batch before left, so that a
#: long chain is walked back from there instead of from its start each batch (linear work
#: in its length); :func:`batches` passes on what each batch returns.
TAILS = "tails"
#: The key of a memory, as statements return it.
MEMORY_ID_NAMES = node_key(Memory)


@dataclass(frozen=True)
class Erasure:
    """How an interface erases: at most ``size`` memories and messages a batch (see
    :data:`BATCH_SIZE`), and whether its deletes record the memories for a vector store."""

    size: int
    vectors: bool


def user_collection_batch(org_id: str, user_id: str, collection: Any) -> UnitOfWork:
    """A batch of a user's erasure that starts by locking the user's ``collection``
    (``User.interactions_in`` or ``User.has_memories``), which every write adding to it
    links to; ``UserNotFound`` when the user or the collection is missing."""
    check_ids(org_id=org_id, user_id=user_id)

    def missing() -> UserNotFound:
        return UserNotFound(org_id, user_id)

    work = UnitOfWork(batched=True)
    user = work.match(User, missing, org_id=org_id, user_id=user_id)
    work.match_related(user, collection, missing, lock=True)
    return work


def per_batch(size: int, share: int = 1) -> int:
    """How many nodes of a kind a batch of ``size`` takes: ``size`` itself, or a ``share``
    of it for interactions and users (each brings more nodes along)."""
    return max(1, size // share)


def removed_memories(row: Mapping[str, Any]) -> Iterator[models.Memory]:
    """The memories a delete statement returned, as the vector store keeps them (built
    only when a vector store records them)."""
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
    days: Sequence[Ref] = (),
) -> list[tuple[Ref, int]]:
    """Declare the deletion of ``memories``, of the last messages of ``interactions``'
    chains (``size`` at most, highest positions first, so each chain keeps a prefix), of
    those interactions left with no message and no memory, then of the days nothing links
    to any more.

    The memories are returned as ``memories``: whole when a vector store is attached
    (``vectors``), which removes them and, should the commit fail, adds them back;
    without one, only the first one's key, which is all :func:`first_memory` reads. ``days`` are
    further Date nodes that may lose their last link. Returns the bounded groups, with
    their limits, for :func:`memora_ogm.erasure_plans.room`.
    """
    memories = work.as_list(memories)
    days = [*days, work.reachable(memories, Memory.date_obtained)]
    groups = [(memories, per_batch(size))]
    messages = None
    if interactions is not None:
        days.append(work.reachable(interactions, Interaction.has_occurrence_on))
        messages, _ = chain_tails(
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

    Each batch's graph deletes and the removal of its memories from the vector store
    commit together or not at all. ``last`` records the vector changes of the final batch
    (a purge of the user or organisation). A batch whose commit went unanswered is
    resolved by what shows it landed: the final batch's ``top`` (the node it deletes
    last) is gone, or a batch's first memory is; a batch that deleted neither may simply
    run again.
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
