# Generated from memora_ogm/_async by scripts/generate_sync.py: do not edit.
"""Set-at-a-time operations on node objects, for the migrations and the tenant export.

neomodel connects one relationship per query (``node.rel.connect(other)``). These
helpers do the same work for many nodes in one query, generated from a
relationship attribute of the node classes (``Memory.date_obtained``), never from
domain knowledge written by hand. The facade's own calls use
:mod:`memora_ogm.unit_of_work` instead.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import date
from typing import Any, TypeVar

from neomodel import db
from neomodel.util import escape_identifier

from memora_ogm._sync.nodes import MemoraNode
from memora_ogm.properties import ZonedDateTimeProperty, from_compact
from memora_ogm.unit_of_work import arrow, target_class

N = TypeVar("N", bound=MemoraNode)


def _ids(nodes: Sequence[MemoraNode]) -> list[str]:
    ids = [node.element_id for node in nodes]
    if None in ids:
        raise ValueError("only saved nodes can be linked or locked in bulk")
    return ids  # type: ignore[return-value]


Link = tuple[Any, Sequence[tuple[MemoraNode, MemoraNode]]]
"""A relationship attribute with the ``(from, to)`` node pairs to link along it."""


def connect_many(*links: Link) -> None:
    """Link each ``(from, to)`` pair along its relationship attribute, all in one query.

    Each attribute gets its own subquery; ``MERGE`` makes linking twice harmless,
    so callers need not check whether a relationship already exists.
    """
    blocks: list[str] = []
    params: dict[str, Any] = {}
    for index, (rel, pairs) in enumerate(links):
        if pairs:
            params[f"pairs{index}"] = [_ids(pair) for pair in pairs]
            blocks.append(
                f"CALL () {{ UNWIND $pairs{index} AS pair "
                "MATCH (a) WHERE elementId(a) = pair[0] "
                "MATCH (b) WHERE elementId(b) = pair[1] "
                f"MERGE (a){arrow(rel)}(b) }}"
            )
    if blocks:
        db.cypher_query("\n".join(blocks), params)


def lacking(cls: type[N], rel: Any, count: int) -> list[N]:
    """Up to ``count`` nodes of ``cls`` that have no ``rel`` relationship at all."""
    query = (
        f"MATCH (n:{escape_identifier(cls.__label__)}) "
        f"WHERE NOT EXISTS {{ (n){arrow(rel)}() }} "
        "RETURN n LIMIT $count"
    )
    rows, _ = db.cypher_query(query, {"count": count})
    return [cls.inflate(row[0]) for row in rows]


def _times(cls: type[MemoraNode]) -> list[tuple[str, str]]:
    """(attribute, database name) of each DATETIME property of ``cls``."""
    return [
        (name, prop.get_db_property_name(name))
        for name, prop in cls.defined_properties(aliases=False, rels=False).items()
        if isinstance(prop, ZonedDateTimeProperty)
    ]


def exact_times(nodes: Sequence[MemoraNode]) -> None:
    """Give ``nodes`` (of one class) their DATETIMEs exactly as stored, in one query."""
    times = _times(type(nodes[0])) if nodes else []
    if not times:
        return
    read = ", ".join(ZonedDateTimeProperty.compact(f"n.{escape_identifier(db)}") for _, db in times)
    rows, _ = db.cypher_query(
        f"UNWIND $ids AS id MATCH (n) WHERE elementId(n) = id RETURN id, [{read}]",
        {"ids": _ids(nodes)},
    )
    exact = {row[0]: row[1] for row in rows}
    for node in nodes:
        for (name, _), value in zip(times, exact.get(node.element_id, []), strict=False):
            if value is not None:
                setattr(node, name, from_compact(value))


def days_of(nodes: Sequence[N], name: str) -> dict[N, date]:
    """The day of each node's DATETIME property ``name``, as the server has
    it (``date()``: the calendar day in the stored offset). For a value stored with a
    zone's name (as Memora stores a naive datetime when the server's default zone is
    one) only the server knows that offset: Python's zone data can disagree."""
    if not nodes:
        return {}
    prop = type(nodes[0]).defined_properties(aliases=False, rels=False)[name]
    rows, _ = db.cypher_query(
        "UNWIND $ids AS id MATCH (n) WHERE elementId(n) = id "
        f"RETURN id, date(n.{escape_identifier(prop.get_db_property_name(name))})",
        {"ids": _ids(nodes)},
    )
    by_id = {node.element_id: node for node in nodes}
    return {by_id[row[0]]: row[1].to_native() for row in rows}


def reachable(
    nodes: Sequence[MemoraNode], rel: Any, then_repeat: Any | None = None
) -> list[tuple[MemoraNode, Any]]:
    """The nodes one hop along ``rel`` from each of ``nodes``, then along ``then_repeat`` 0+ times.

    Returns ``(start, reached)`` pairs, so ``reachable(interactions,
    Interaction.first_message, MessageBlock.is_next)`` lists every message of
    every interaction in one query.
    """
    if not nodes:
        return []
    target: type[MemoraNode] = target_class(then_repeat if then_repeat is not None else rel)
    pattern = f"(s){arrow(rel)}(n)"
    if then_repeat is not None:
        pattern = f"(s){arrow(rel)}(first), (first){arrow(then_repeat, '*0..')}(n)"
    query = (
        "UNWIND $ids AS id MATCH (s) WHERE elementId(s) = id "
        f"MATCH {pattern} "
        # A node deleted concurrently can be seen without its properties: skip it.
        f"WHERE n:{escape_identifier(target.__label__)} AND size(keys(n)) > 0 "
        "RETURN id, n"
    )
    rows, _ = db.cypher_query(query, {"ids": _ids(nodes)})
    by_id = {node.element_id: node for node in nodes}
    return [(by_id[row[0]], target.inflate(row[1])) for row in rows]


def take(nodes: Any, count: int) -> list[Any]:
    """The first ``count`` nodes of a neomodel node set, as a list."""
    nodes.limit = count
    return nodes.all()  # type: ignore[no-any-return]
