"""Keyset pages of a tenant's nodes (for exports, the consistency check and settling):
the key's index serves every page, and a page's size adapts to its nodes' weight."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any, Protocol, TypeVar

from memora_ogm import observe
from memora_ogm.calls.consistency import Tenant
from memora_ogm.engine.call import Call
from memora_ogm.engine.nodes import Nodes
from memora_ogm.engine.pages import Part, page_read, weight
from memora_ogm.engine.projection import projection, reading
from memora_ogm.schema import models
from memora_ogm.transfer.export import export_pages

T = TypeVar("T")

#: Nodes a page brings back at most (an interaction's messages and days count).
PAGE_NODES = 20_000
#: Characters of text (messages, memories) a page brings back at most.
PAGE_CHARS = 8 * 1024 * 1024
#: Nodes of a tenant's first page of a kind, before the size of its nodes is known.
FIRST_PAGE = 500


#: A node of a page: its inflated properties, and its row as read.
Row = tuple[dict[str, Any], dict[str, Any]]


class Reader(Protocol):
    """What paging and settling use of a ``Graph`` (whose module imports settling)."""

    nodes: Nodes

    async def run(self, call: Call[T]) -> T: ...

    async def memory_ids_held(self, memory_ids: list[str]) -> set[str]: ...


async def pages(
    graph: Reader, part: Part, after: str | None = None, **owner: str
) -> AsyncIterator[list[Row]]:
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
        page = await graph.run(Call(read, lambda row: inflated(row["page"])))
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


def memory_of(values: dict[str, Any]) -> models.Memory:
    """A memory as its point should describe it (a point names no interaction)."""
    return models.Memory(
        **{name: value for name, value in values.items() if name != "interaction_id"}
    )


async def _keys(graph: Reader, part: Part, **owner: str) -> AsyncIterator[str]:
    async for page in pages(graph, part, **owner):
        for values, _ in page:
            yield values[part.key]


async def tenants(graph: Reader, org_id: str | None) -> set[Tenant]:
    """The graph's users, of one organisation or all."""
    orgs = (
        [org_id]
        if org_id is not None
        else [org async for org in _keys(graph, Part(graph.nodes.Org, "org_id"))]
    )
    return {
        (org, user)
        for org in orgs
        async for user in _keys(graph, export_pages(graph.nodes).users, org_id=org)
    }


async def memory_pages(graph: Reader, tenant: Tenant) -> AsyncIterator[list[models.Memory]]:
    """The tenant's memories, a page at a time, in id order."""
    part = Part(graph.nodes.Memory, "memory_id")
    async for page in pages(graph, part, org_id=tenant[0], user_id=tenant[1]):
        yield [memory_of(values) for values, _ in page]
