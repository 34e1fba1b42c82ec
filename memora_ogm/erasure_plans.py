"""The erasure's operations on a unit of work: chain tails, and whether a bounded batch
took all that was left (:func:`room`). No I/O.
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
    # One more than a batch takes, nearest first: the new last node is among them.
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
    """Output ``name``: each group is under its limit (and ``given``): all that was left."""
    room = [
        cy("size(", group.items, f") < {work.param(limit, 'limit')}") for group, limit in groups
    ]
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
