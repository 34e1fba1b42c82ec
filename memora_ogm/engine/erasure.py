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

from memora_ogm.engine import convert
from memora_ogm.engine.call import Batches, Landed, Row, VectorChanges
from memora_ogm.engine.mapping import arrow, hint, label, path, present
from memora_ogm.engine.nodes import Nodes
from memora_ogm.engine.plan import (
    Bind,
    Cypher,
    Update,
    Var,
    alias,
    call_subquery,
    case,
    coalesce,
    collect,
    collected,
    cy,
    delete,
    dot,
    each,
    element_id,
    exists,
    foreach,
    identifier,
    is_null,
    items,
    join,
    mapping,
    match,
    node,
    optional_call,
    parameter,
    range_,
    reduce,
    returning,
    size,
    to_string,
    unwind,
    with_,
)
from memora_ogm.engine.unit_of_work import Ref, UnitOfWork
from memora_ogm.errors import UserNotFound
from memora_ogm.neomodel_compat import target_class
from memora_ogm.schema import models
from memora_ogm.schema.validation import check_ids

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
#: A memory's key (``Memory.__node_key__``), how a batch names the memories it took.
MEMORY_ID_NAMES = ("org_id", "user_id", "memory_id")


@dataclass(frozen=True)
class Erasure:
    """An interface's batch size, and whether deletes record memories for a vector store."""

    size: int
    vectors: bool


def user_collection_batch(nodes: Nodes, org_id: str, user_id: str, collection: Any) -> UnitOfWork:
    """A user's erasure batch, first locking ``collection`` (every write adding to it
    links to it)."""
    check_ids(org_id=org_id, user_id=user_id)

    def missing() -> UserNotFound:
        return UserNotFound(org_id, user_id)

    work = UnitOfWork(batched=True)
    user = work.match(nodes.User, missing, org_id=org_id, user_id=user_id)
    work.match_related(user, collection, missing, lock=True)
    return work


def per_batch(size: int, share: int = 1) -> int:
    """Nodes of a kind a batch takes: a ``share`` for kinds bringing more nodes along."""
    return max(1, size // share)


def removed_memories(nodes: Nodes, row: Mapping[str, Any]) -> Iterator[models.Memory]:
    return (convert.memory_for_vector(nodes, memory) for memory in row["memories"])


def first_memory(
    nodes: Nodes, memories: Sequence[Mapping[str, Any]], present: bool = False
) -> Landed | None:
    """What shows a write of ``memories`` landed: the first is there (``present``) or gone.
    None without memories: the write may run again."""
    if not memories:
        return None
    return Landed(nodes.Memory, {name: memories[0][name] for name in MEMORY_ID_NAMES}, present)


def erase(
    nodes: Nodes,
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
    days = [work.reachable(memories, nodes.Memory.date_obtained)]
    groups = [(memories, per_batch(size))]
    messages = None
    if interactions is not None:
        days.append(work.reachable(interactions, nodes.Interaction.has_occurrence_on))
        messages = chain_tails(
            work,
            work.as_list(interactions),
            nodes.Interaction.first_message,
            nodes.MessageBlock.is_next,
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
        work.delete_emptied(
            interactions, [nodes.Interaction.first_message, nodes.Interaction.memories]
        )
    for ref in days:
        work.delete_unlinked(ref)
    return groups


def batches(
    nodes: Nodes,
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
        changes.remove(removed_memories(nodes, row))
        if row[FINISHED] and last is not None:
            last(changes)

    def landed(row: Row) -> Landed | None:
        return top if row[FINISHED] and top is not None else first_memory(nodes, row["memories"])

    def carried(row: Row) -> dict[str, Any]:
        if TAILS not in work.params:
            return {}
        return {TAILS: {tail[0]: tail for tail in row[f"{TAILS}_ends"]}}

    return Batches(work, lambda row: bool(row[FINISHED]), vectors, landed, carried, log)


def chain_tails(
    work: UnitOfWork,
    starts: Ref,
    first: Any,
    then: Any,
    order_by: str,
    stamp: str,
    limit: int,
    known: str,
) -> Ref:
    """At most ``limit`` last nodes of ``starts``' chains, highest ``order_by`` first, one
    chain's tail before the next. Outputs ``{known}_ends``: per chain left non-empty,
    ``[start, new last node, its order_by, start's stamp]``.

    The parameter ``known`` holds those from the batch before: a chain is walked back from
    that node if it is still last with that ``order_by`` and ``stamp`` (set by every other
    change), else from its start. (Unseen: a concurrent erasure deleting that node between
    batches, and another chain's new last node reusing its element id.)
    """
    cls = target_class(then)
    plural = hint(cls, many=True)
    split, quota, taken = Var(f"{plural}_by_chain"), Var(f"{plural}_taken"), Var(plural)
    work.params.setdefault(known, {})
    count = work.param(limit, f"{plural}_limit")
    stamped = to_string(dot("start", stamp))

    def last_of_chain(var: str) -> Cypher:
        return cy("NOT ", exists(path(node(var), then)))

    kept = match(
        node("kept", label(cls)),
        cy(element_id("kept"), " = known[1]"),
        cy(dot("kept", order_by), " = known[2]"),
        cy(stamped, " = known[3]"),
        last_of_chain("kept"),
        optional=True,
        fold=True,
    )
    walked = match(
        path(node("start"), first, then, node("found", label(cls))),
        present(cls, "found"),
        last_of_chain("found"),
    )
    # One more than a batch takes, nearest first: the new last node is among them.
    nearest = collect(
        match(
            cy(node("node", label(cls)), arrow(then, "*0.."), node("last")), present(cls, "node")
        ),
        returning("node", limit=f"{count} + 1"),
    )
    work.add(
        call_subquery(
            unwind(starts.items, "start"),
            with_("start", alias(cy(parameter(known), "[", element_id("start"), "]"), "known")),
            kept,
            optional_call(
                ("start", "kept"),
                with_("start", conditions=[is_null("kept")]),
                walked,
                returning("found", limit="1"),
            ),
            with_(
                "start",
                alias(coalesce("kept", "found"), "last"),
                conditions=[is_null("last", False)],
            ),
            with_("start", alias(nearest, "nearest")),
            returning(alias(collected("[start, nearest]"), split)),
            binds=(split,),
        )
    )
    # Each chain in turn takes what the batch has room left for: [taken lists, taken].
    rest = f"chain[1][..{count} - acc[1]]"
    taking = items([f"acc[0] + [{rest}]", cy("acc[1] + ", size(rest))], close=True)
    work.add(Bind(quota, cy(reduce("acc", "[[], 0]", "chain", split, cy("[", taking, "]")), "[0]")))
    work.add(Bind(taken, collect(unwind(quota, "t"), unwind("t", "node"), returning("node"))))
    last = cy(split, "[k][1][", size(cy(quota, "[k]")), "]")
    work.output_value(
        f"{known}_ends",
        each(
            "k",
            range_("0", cy(size(split), " - 1")),
            cy(
                "[",
                items(
                    [
                        element_id(cy(split, "[k][0]")),
                        element_id(last),
                        dot(last, order_by),
                        to_string(dot(cy(split, "[k][0]"), stamp)),
                    ],
                    close=True,
                ),
                "]",
            ),
            condition=cy(size(cy(quota, "[k]")), " < ", size(cy(split, "[k][1]"))),
        ),
    )
    return Ref(cy(taken), cls, True)


def room(
    work: UnitOfWork, groups: Sequence[tuple[Ref, int]], name: str, given: Var | None = None
) -> Var:
    """Output ``name``: each group is under its limit (and ``given``): all that was left."""
    room = [cy(size(group.items), f" < {work.param(limit, 'limit')}") for group, limit in groups]
    return work.output_value(
        name, cy("(", join(" AND ", [*([given] if given else []), *room]), ")")
    )


def delete_when(work: UnitOfWork, ref: Ref, when: Var) -> None:
    """Detach and delete the node(s) only if ``when`` (a :func:`room`) holds."""
    work.add(Update(foreach("node", case(when, ref.items, "[]"), delete("node"))))


def output_first_key(work: UnitOfWork, name: str, ref: Ref, keys: Sequence[str]) -> None:
    """Output the ``keys`` of ``ref``'s first node (if any): enough to show a delete landed."""
    first = mapping("node", [f".{identifier(key)}" for key in keys])
    work.output_value(name, each("node", cy(ref.items, "[..1]"), first))
