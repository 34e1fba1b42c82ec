"""Set-at-a-time operations on node objects, for the migrations.

neomodel connects one relationship per query (``node.rel.connect(other)``). These
helpers do the same work for many nodes in one query, generated from a
relationship attribute of the node classes (``Memory.date_obtained``), never from
domain knowledge written by hand. The facade's own calls use
:mod:`memora_ogm.unit_of_work` instead.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, TypeVar

from neomodel import adb
from neomodel.util import escape_identifier

from memora_ogm._async.nodes import MemoraNode
from memora_ogm.unit_of_work import arrow

N = TypeVar("N", bound=MemoraNode)


def _ids(nodes: Sequence[MemoraNode]) -> list[str]:
    ids = [node.element_id for node in nodes]
    if None in ids:
        raise ValueError("only saved nodes can be linked in bulk")
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


async def lacking(cls: type[N], rel: Any, count: int) -> list[N]:
    """Up to ``count`` nodes of ``cls`` that have no ``rel`` relationship at all."""
    query = (
        f"MATCH (n:{escape_identifier(cls.__label__)}) "
        f"WHERE NOT EXISTS {{ (n){arrow(rel)}() }} "
        "RETURN n LIMIT $count"
    )
    rows, _ = await adb.cypher_query(query, {"count": count})
    return [cls.inflate(row[0]) for row in rows]
