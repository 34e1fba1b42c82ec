"""The erasure's own operations on a unit of work (:mod:`memora_ogm.calls.erasure`): the
tails of the interactions' message chains, walked back from where the batch before
stopped; whether a bounded batch took all that was left (:func:`room`); and the deletes
that wait for that (:func:`delete_when`). No I/O.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from memora_ogm.mapping import arrow, hint, label, path, present, target_class
from memora_ogm.plan import (
    Bind,
    Cypher,
    Update,
    Var,
    alias,
    call,
    case,
    collect,
    cy,
    delete,
    dot,
    each,
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
    returning,
    unwind,
    with_,
)
from memora_ogm.unit_of_work import Ref, UnitOfWork


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
    """The last nodes of the chains of ``starts`` (``first``, then ``then`` repeated),
    ``limit`` at most, highest ``order_by`` first, a whole chain's tail before the next
    one's. Outputs (as ``{known}_ends``), per chain that keeps nodes, ``[start, new last
    node, its order_by, start's stamp]`` (element ids, the stamp as a string).

    The parameter ``known`` maps a start's element id to that list from the statement
    before: the chain is walked back from that node (costing what is taken, not the
    chain's length) if it is still the chain's last node with that ``order_by`` and the
    ``stamp`` (which every other change of the chain sets) is unchanged; else from its
    start. (Unseen: a concurrent erasure of the same chain deleting that node between
    two batches, and a new last node of another chain at the same ``order_by`` taking
    its reused element id.)
    """
    cls = target_class(then)
    plural = hint(cls, many=True)
    split, quota, taken = Var(f"{plural}_by_chain"), Var(f"{plural}_taken"), Var(plural)
    work.params.setdefault(known, {})
    count = work.param(limit, f"{plural}_limit")
    stamped = cy("toString(", dot("start", stamp), ")")

    def last_of_chain(var: str) -> Cypher:
        return cy("NOT ", exists(path(node(var), then)))

    kept = match(
        node("kept", label(cls)),
        "elementId(kept) = known[1]",
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
    # Walked back from the last node, nearest first, one more than a batch takes: the new
    # last node is among them.
    nearest = collect(
        match(
            cy(node("node", label(cls)), arrow(then, "*0.."), node("last")), present(cls, "node")
        ),
        returning("node", limit=f"{count} + 1"),
    )
    work.add(
        call(
            unwind(starts.items, "start"),
            with_("start", alias(f"${known}[elementId(start)]", "known")),
            kept,
            optional_call(
                ("start", "kept"),
                with_("start", conditions=[is_null("kept")]),
                walked,
                returning("found", limit="1"),
            ),
            with_(
                "start", alias("coalesce(kept, found)", "last"), conditions=[is_null("last", False)]
            ),
            with_("start", alias(nearest, "nearest")),
            returning(alias("collect([start, nearest])", split)),
            binds=(split,),
        )
    )
    # Each chain in turn takes what the batch has room left for: [taken lists, taken].
    work.add(
        Bind(
            quota,
            cy(
                "reduce(acc = [[], 0], chain IN ",
                split,
                " | [",
                items(
                    [
                        f"acc[0] + [chain[1][..{count} - acc[1]]]",
                        f"acc[1] + size(chain[1][..{count} - acc[1]])",
                    ],
                    close=True,
                ),
                "])[0]",
            ),
        )
    )
    work.add(Bind(taken, collect(unwind(quota, "t"), unwind("t", "node"), returning("node"))))
    last = cy(split, "[k][1][size(", quota, "[k])]")
    work.output_value(
        f"{known}_ends",
        each(
            "k",
            cy("range(0, size(", split, ") - 1)"),
            cy(
                "[",
                items(
                    [
                        cy("elementId(", split, "[k][0])"),
                        cy("elementId(", last, ")"),
                        dot(last, order_by),
                        cy("toString(", dot(cy(split, "[k][0]"), stamp), ")"),
                    ],
                    close=True,
                ),
                "]",
            ),
            condition=cy("size(", quota, "[k]) < size(", split, "[k][1])"),
        ),
    )
    return Ref(cy(taken), cls, True)


def room(
    work: UnitOfWork, groups: Sequence[tuple[Ref, int]], name: str, given: Var | None = None
) -> Var:
    """Whether each of ``groups`` holds fewer nodes than its limit (and ``given`` holds):
    a bounded batch took all that was left. Returned as ``name``, for :func:`delete_when`."""
    room = [
        cy("size(", group.items, f") < {work.param(limit, 'limit')}") for group, limit in groups
    ]
    return work.output_value(
        name, cy("(", join(" AND ", [*([given] if given else []), *room]), ")")
    )


def delete_when(work: UnitOfWork, ref: Ref, when: Var) -> None:
    """Detach and delete the node(s) only if the condition ``when`` (a :func:`room`) holds."""
    work.add(Update(foreach("node", case(when, ref.items, "[]"), delete("node"))))


def output_first_key(work: UnitOfWork, name: str, ref: Ref, keys: Sequence[str]) -> None:
    """Return as ``name`` a list of the ``keys`` of the first of ``ref``'s nodes (or none):
    what shows that a batch's delete landed, without returning every node it deleted."""
    first = mapping("node", [f".{identifier(key)}" for key in keys])
    work.output_value(name, each("node", cy(ref.items, "[..1]"), first))
