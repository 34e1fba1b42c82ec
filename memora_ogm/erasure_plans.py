"""The erasure's own operations on a unit of work: Memora's chains and bounded batches.

A batch of an erasure (:mod:`memora_ogm._async.erasure`) takes at most so many nodes of
each kind; these declare what is Memora's own in it, on top of the generic compiler
(:mod:`memora_ogm.unit_of_work`): the tails of the interactions' message chains, walked
back from where the batch before stopped; whether a batch took all that was left
(:func:`room`); and the deletes that wait for that (:func:`delete_when`). No I/O; shared
by both twins.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from memora_ogm.unit_of_work import Ref, UnitOfWork, _label, _name, _vars, arrow, target_class


def chain_tails(
    work: UnitOfWork,
    starts: Ref,
    first: Any,
    then: Any,
    order_by: str,
    stamp: str,
    limit: int,
    known: str,
) -> tuple[Ref, str]:
    """The last nodes of the chains of ``starts`` (``first``, then ``then`` repeated),
    ``limit`` at most, highest ``order_by`` first: a whole chain's tail before the next
    chain's, so each chain keeps a prefix. Returns them, and the name of the output
    listing, per chain that keeps nodes, ``[start, new last node, its order_by,
    start's stamp]`` (element ids, the stamp as a string).

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
    label, step, position = _label(cls), arrow(then), _name(order_by)
    taken, ends, split = work._var(), _name(f"{known}_ends"), work._var()
    work.params.setdefault(known, {})
    count = work._param(limit)
    stamped = f"toString(start.{_name(stamp)})"
    work._body.append(
        f"WITH * CALL ({_vars(starts)}) {{ UNWIND {starts.items} AS start "
        f"WITH start, ${known}[elementId(start)] AS known "
        f"OPTIONAL MATCH (kept:{label}) WHERE elementId(kept) = known[1] "
        f"AND kept.{position} = known[2] AND {stamped} = known[3] "
        f"AND NOT EXISTS {{ (kept){step}() }} "
        "OPTIONAL CALL (start, kept) { WITH start WHERE kept IS NULL "
        f"MATCH (start){arrow(first)}(:{_label(target_class(first))}){arrow(then, '*0..')}"
        f"(found:{label}) WHERE size(keys(found)) > 0 AND NOT EXISTS {{ (found){step}() }} "
        "RETURN found LIMIT 1 } "
        "WITH start, coalesce(kept, found) AS last WHERE last IS NOT NULL "
        # Walked back from the last node: nearest first (a chain has one path), one
        # more than a batch takes, so the new last node is among them.
        f"WITH start, COLLECT {{ MATCH (node:{label}){arrow(then, '*0..')}(last) "
        f"WHERE size(keys(node)) > 0 RETURN node LIMIT {count} + 1 }} AS nearest "
        f"RETURN collect([start, nearest]) AS {split} }}"
    )
    # Each chain in turn takes what the batch has room left for: [taken lists, taken].
    quota = (
        f"reduce(acc = [[], 0], chain IN {split} | [acc[0] + [chain[1][..{count} - acc[1]]], "
        f"acc[1] + size(chain[1][..{count} - acc[1]])])[0]"
    )
    work._body.append(f"WITH *, {quota} AS {taken}_split")
    work._body.append(
        f"WITH *, COLLECT {{ UNWIND {taken}_split AS t UNWIND t AS node RETURN node }} "
        f"AS {taken}, [k IN range(0, size({split}) - 1) "
        f"WHERE size({taken}_split[k]) < size({split}[k][1]) | "
        f"[elementId({split}[k][0]), elementId({split}[k][1][size({taken}_split[k])]), "
        f"{split}[k][1][size({taken}_split[k])].{position}, "
        f"toString({split}[k][0].{_name(stamp)})]] AS {ends}"
    )
    work._outputs.append(ends)
    return Ref(taken, cls, True), ends


def room(
    work: UnitOfWork, groups: Sequence[tuple[Ref, int]], name: str, given: str | None = None
) -> str:
    """Whether each of ``groups`` holds fewer nodes than its limit (and ``given`` holds):
    a bounded batch took all that was left. Returned as ``name``; the condition for
    :func:`delete_when`."""
    room = [f"size({group.items}) < {work._param(limit)}" for group, limit in groups]
    name = _name(name)
    work._body.append(f"WITH *, ({' AND '.join([*([given] if given else []), *room])}) AS {name}")
    work._outputs.append(name)
    return name


def delete_when(work: UnitOfWork, ref: Ref, when: str) -> None:
    """Detach and delete the node(s) only if the condition ``when`` (a :func:`room`) holds."""
    work._writes = True
    work._body.append(
        f"FOREACH (node IN CASE WHEN {when} THEN {ref.items} ELSE [] END | DETACH DELETE node)"
    )
