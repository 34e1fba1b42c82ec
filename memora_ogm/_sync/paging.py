# Generated from memora_ogm/_async by scripts/generate_sync.py: do not edit.
"""Keyset pages of a tenant's nodes (for exports and the consistency check): the key's
index serves every page, and a page's size adapts to its nodes' weight."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from memora_ogm import observe
from memora_ogm._sync.graph import Graph
from memora_ogm.engine.call import Call
from memora_ogm.engine.pages import Part, page_read, weight
from memora_ogm.engine.projection import projection, reading

#: Nodes a page brings back at most (an interaction's messages and days count).
PAGE_NODES = 20_000
#: Characters of text (messages, memories) a page brings back at most.
PAGE_CHARS = 8 * 1024 * 1024
#: Nodes of a tenant's first page of a kind, before the size of its nodes is known.
FIRST_PAGE = 500


#: A node of a page: its inflated properties, and its row as read.
Row = tuple[dict[str, Any], dict[str, Any]]


def pages(graph: Graph, part: Part, after: str | None = None, **owner: str) -> Iterator[list[Row]]:
    """The ``owner``'s nodes of ``part`` after ``after``, in key order, a page per read,
    sized by the last page within :data:`PAGE_NODES` and :data:`PAGE_CHARS`."""
    fields = projection(reading(part.cls))
    limit = FIRST_PAGE

    def inflated(rows: list[dict[str, Any]]) -> list[Row]:
        return [(fields.values(row), row) for row in rows]

    while True:
        values: dict[str, Any] = {"limit": limit, **owner}
        if after is not None:
            values["after"] = after
        read = page_read(part, tuple(owner), after is None).bind(graph.nodes, **values)
        page = graph.run(Call(read, lambda row: inflated(row["page"])))
        observe.batch()
        if page:
            yield page
        if len(page) < limit:
            return
        after = page[-1][0][part.key]
        nodes, chars = weight(part, page)
        limit = max(
            1, min(PAGE_NODES * len(page) // nodes, PAGE_CHARS * len(page) // max(chars, 1))
        )
