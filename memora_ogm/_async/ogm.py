"""Set-at-a-time operations on node objects, for the tenant transfers.

neomodel connects one relationship per query (``node.rel.connect(other)``). These
helpers do the same work for many nodes in one query, generated from a
relationship attribute of the node classes (``Memory.date_obtained``), never from
domain knowledge written by hand. The facade's own calls use
:mod:`memora_ogm.unit_of_work` instead.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime, timedelta, timezone
from typing import Any, TypeVar

from neomodel import adb
from neomodel.util import escape_identifier

from memora_ogm._async.nodes import MemoraNode
from memora_ogm.properties import ZonedDateTimeProperty, sent_form, storable
from memora_ogm.unit_of_work import arrow, target_class

N = TypeVar("N", bound=MemoraNode)


def _ids(nodes: Sequence[MemoraNode]) -> list[str]:
    ids = [node.element_id for node in nodes]
    if None in ids:
        raise ValueError("only saved nodes can be linked or locked in bulk")
    return ids  # type: ignore[return-value]


Link = tuple[Any, Sequence[tuple[MemoraNode, MemoraNode]]]
"""A relationship attribute with the ``(from, to)`` node pairs to link along it."""


async def connect_many(*links: Link) -> None:
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
        await adb.cypher_query("\n".join(blocks), params)


def _times(cls: type[MemoraNode]) -> list[tuple[str, str]]:
    """(attribute, database name) of each DATETIME property of ``cls``."""
    return [
        (name, prop.get_db_property_name(name))
        for name, prop in cls.defined_properties(aliases=False, rels=False).items()
        if isinstance(prop, ZonedDateTimeProperty)
    ]


def _driver_cannot_send(value: Any) -> bool:
    """The driver reads and writes DATETIMEs with offsets in whole minutes only: it reads
    an offset with seconds (a zone's local mean time, before about 1900) rounded, which
    moves the wall-clock time and can move its day, and refuses to send one. Neo4j
    stores them."""
    return isinstance(value, datetime) and bool(
        (storable(value).utcoffset() or timedelta()) % timedelta(minutes=1)
    )


def sendable_by_driver(properties: Mapping[str, Any]) -> dict[str, Any]:
    """``properties`` as neomodel can write them: a datetime whose offset has seconds as
    the same instant in UTC, which :func:`store_exact_times` then replaces."""
    return {
        name: value.astimezone(timezone.utc) if _driver_cannot_send(value) else value
        for name, value in properties.items()
    }


async def store_exact_times(
    nodes: Sequence[MemoraNode], properties: Sequence[Mapping[str, Any]]
) -> None:
    """Store the datetimes of ``properties`` (one mapping per node, of one class) that
    :func:`sendable_by_driver` changed, exactly as given (one query, none if nothing
    changed)."""
    times = _times(type(nodes[0])) if nodes else []
    rows = [
        {
            "id": node.element_id,
            "times": {
                db: sent_form(values[name])
                for name, db in times
                if _driver_cannot_send(values.get(name))
            },
        }
        for node, values in zip(nodes, properties, strict=True)
    ]
    rows = [row for row in rows if row["times"]]
    if not rows:
        return
    assignments = ", ".join(
        f"n.{escape_identifier(db)} = coalesce("
        f"{ZonedDateTimeProperty.expand(f'row.times.{escape_identifier(db)}')}, "
        f"n.{escape_identifier(db)})"
        for _, db in times
    )
    await adb.cypher_query(
        f"UNWIND $rows AS row MATCH (n) WHERE elementId(n) = row.id SET {assignments}",
        {"rows": rows},
    )


async def lock_nodes(nodes: Sequence[MemoraNode]) -> int:
    """Take the write lock of ``nodes`` (kept until the transaction ends); how many still exist.

    Setting and removing a property locks a node without changing it.
    """
    if not nodes:
        return 0
    rows, _ = await adb.cypher_query(
        "UNWIND $ids AS id MATCH (n) WHERE elementId(n) = id "
        "SET n.memora_lock = true REMOVE n.memora_lock RETURN count(n)",
        {"ids": _ids(nodes)},
    )
    return int(rows[0][0])


async def reachable(
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
    rows, _ = await adb.cypher_query(query, {"ids": _ids(nodes)})
    by_id = {node.element_id: node for node in nodes}
    return [(by_id[row[0]], target.inflate(row[1])) for row in rows]
