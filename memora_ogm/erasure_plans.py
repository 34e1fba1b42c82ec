"""The erasure's own operations on a unit of work: Memora's chains and bounded batches.

A batch of an erasure (:mod:`memora_ogm.calls.erasure`) takes at most so many nodes of
each kind; these declare what is Memora's own in it, on top of the generic compiler
(:mod:`memora_ogm.unit_of_work`, through its extension points :meth:`UnitOfWork.add`,
:meth:`UnitOfWork.param` and :meth:`UnitOfWork.output_value`): the tails of the
interactions' message chains, walked back from where the batch before stopped; whether a
batch took all that was left (:func:`room`); and the deletes that wait for that
(:func:`delete_when`). No I/O; shared by both twins.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from memora_ogm.mapping import arrow, hint, label, present, target_class
from memora_ogm.plan import Bind, Subquery, Update, Var, cy, identifier, join
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
) -> tuple[Ref, Var]:
    """The last nodes of the chains of ``starts`` (``first``, then ``then`` repeated),
    ``limit`` at most, highest ``order_by`` first: a whole chain's tail before the next
    chain's, so each chain keeps a prefix. Returns them, and the output (named
    ``{known}_ends``) listing, per chain that keeps nodes, ``[start, new last node, its
    order_by, start's stamp]`` (element ids, the stamp as a string).

    The parameter ``known`` maps a start's element id to that list as a statement
    before returned it: its chain is then walked back from that node, which costs what
    is taken rather than the chain's length, if it is still its chain's last node with
    that ``order_by`` and the start's ``stamp`` (a property every other change of the
    chain sets) is unchanged; otherwise the chain is walked from its start. (Element
    ids are reused once their node is deleted: what this cannot see is a concurrent
    erasure of the same chain deleting that node between the two statements and a new
    last node of another chain, at the same ``order_by``, taking its id.)
    """
    cls = target_class(then)
    name, step, position = label(cls), arrow(then), identifier(order_by)
    plural = hint(cls, many=True)
    split, quota, taken = Var(f"{plural}_by_chain"), Var(f"{plural}_taken"), Var(plural)
    work.params.setdefault(known, {})
    count = work.param(limit, f"{plural}_limit")
    stamped = f"toString(start.{identifier(stamp)})"
    work.add(
        Subquery(
            cy(
                "UNWIND ",
                starts.items,
                " AS start "
                f"WITH start, ${known}[elementId(start)] AS known "
                f"OPTIONAL MATCH (kept:{name}) WHERE elementId(kept) = known[1] "
                f"AND kept.{position} = known[2] AND {stamped} = known[3] "
                f"AND NOT EXISTS {{ (kept){step}() }} "
                "OPTIONAL CALL (start, kept) { WITH start WHERE kept IS NULL "
                f"MATCH (start){arrow(first)}(:{label(target_class(first))})"
                f"{arrow(then, '*0..')}(found:{name}) WHERE {present(cls, 'found')} "
                f"AND NOT EXISTS {{ (found){step}() }} RETURN found LIMIT 1 }} "
                "WITH start, coalesce(kept, found) AS last WHERE last IS NOT NULL "
                # Walked back from the last node: nearest first (a chain has one path),
                # one more than a batch takes, so the new last node is among them.
                f"WITH start, COLLECT {{ MATCH (node:{name}){arrow(then, '*0..')}(last) "
                f"WHERE {present(cls, 'node')} RETURN node LIMIT {count} + 1 }} AS nearest "
                "RETURN collect([start, nearest]) AS ",
                split,
            ),
            (split,),
        )
    )
    # Each chain in turn takes what the batch has room left for: [taken lists, taken].
    work.add(
        Bind(
            quota,
            cy(
                "reduce(acc = [[], 0], chain IN ",
                split,
                f" | [acc[0] + [chain[1][..{count} - acc[1]]], "
                f"acc[1] + size(chain[1][..{count} - acc[1]])])[0]",
            ),
        )
    )
    work.add(Bind(taken, cy("COLLECT { UNWIND ", quota, " AS t UNWIND t AS node RETURN node }")))
    last = cy(split, "[k][1][size(", quota, "[k])]")
    ends = work.output_value(
        f"{known}_ends",
        cy(
            "[k IN range(0, size(",
            split,
            ") - 1) WHERE size(",
            quota,
            "[k]) < size(",
            split,
            "[k][1]) | [elementId(",
            split,
            "[k][0]), elementId(",
            last,
            "), ",
            last,
            f".{position}, toString(",
            split,
            f"[k][0].{identifier(stamp)})]]",
        ),
    )
    return Ref(cy(taken), cls, True), ends


def room(
    work: UnitOfWork, groups: Sequence[tuple[Ref, int]], name: str, given: Var | None = None
) -> Var:
    """Whether each of ``groups`` holds fewer nodes than its limit (and ``given`` holds):
    a bounded batch took all that was left. Returned as ``name``; the condition for
    :func:`delete_when`."""
    room = [
        cy("size(", group.items, f") < {work.param(limit, 'limit')}") for group, limit in groups
    ]
    return work.output_value(
        name, cy("(", join(" AND ", [*([given] if given else []), *room]), ")")
    )


def delete_when(work: UnitOfWork, ref: Ref, when: Var) -> None:
    """Detach and delete the node(s) only if the condition ``when`` (a :func:`room`) holds."""
    nodes = cy("CASE WHEN ", when, " THEN ", ref.items, " ELSE [] END")
    work.add(Update(cy("FOREACH (node IN ", nodes, " | DETACH DELETE node)")))


def output_first_key(work: UnitOfWork, name: str, ref: Ref, keys: Sequence[str]) -> None:
    """Return as ``name`` a list of the ``keys`` of the first of ``ref``'s nodes (empty
    when there are none): what shows that a batch's delete landed, without the cost of
    returning every node it deleted."""
    first = ", ".join(f".{identifier(key)}" for key in keys)
    work.output_value(name, cy("[node IN ", ref.items, f"[..1] | node {{{first}}}]"))
