"""The tenant transfer's statements, with no I/O: keyset pages with what each node reaches
or counts (``inspect`` too), and the import's statements on many nodes at a time."""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from memora_ogm.engine.mapping import (
    between,
    hint,
    label,
    node_properties,
    path,
    present,
    relation_name,
)
from memora_ogm.engine.nodes import Nodes
from memora_ogm.engine.plan import (
    Cypher,
    Piece,
    Var,
    alias,
    call_subquery,
    collect,
    collected,
    create,
    cy,
    dot,
    each,
    gather,
    head,
    join,
    match,
    merge,
    node,
    returning,
    unwind,
    with_,
)
from memora_ogm.engine.projection import table
from memora_ogm.engine.unit_of_work import Prepared, Ref, UnitOfWork, count_nodes, row_properties
from memora_ogm.neomodel_compat import target_class


def page(work: UnitOfWork, cls: type, order_by: str, after: Any, limit: Any, **keys: Any) -> Ref:
    """At most ``limit`` nodes of ``cls`` with ``keys`` after ``after``, in ``order_by`` order:
    ORDER BY names the whole key, so the planner reads the key's index and stops early."""
    spec = table(cls)
    names = [spec.deflate[name][0] for name in dict.fromkeys([*keys, order_by])]
    after_key = (
        [] if after is None else [cy(dot("node", names[-1]), " > ", work.param(after, "after"))]
    )
    found = match(node("node", label(cls), work.properties(cls, keys)), *after_key)
    top = work.param(limit, f"{hint(cls, many=True)}_limit")
    by = [dot("node", name) for name in names]
    return work.bind(cls, collect(found, returning("node", order_by=by, limit=top)))


@dataclass(frozen=True)
class Related:
    """The stored ``properties`` of the nodes reached along ``rels`` (the first hop, then
    the second 0+ times), in ``order_by`` order, whose ``same`` properties match."""

    rels: tuple[Any, ...]
    properties: tuple[str, ...]
    order_by: str | None = None
    same: tuple[str, ...] = ()

    def cypher(self, start: str | Var) -> Cypher:
        """Nodes a concurrent delete left without properties are skipped."""
        first, *repeat = self.rels
        cls = target_class(repeat[0] if repeat else first)
        stored = table(cls).deflate
        values = [dot("reached", stored[name][0]) for name in self.properties]
        value = values[0] if len(values) == 1 else cy("[", join(", ", values), "]")
        keys = [stored[name][0] for name in self.same]
        where: list[Piece] = [present(cls, "reached")]
        where += [cy(dot("reached", key), " = ", dot(start, key)) for key in keys]
        by = [dot("reached", stored[self.order_by][0])] if self.order_by else []
        pattern = path(
            node(start), first, repeat[0] if repeat else None, node("reached", label(cls))
        )
        return collect(match(pattern, *where), returning(value, order_by=by))


@dataclass(frozen=True)
class Count:
    """The number of nodes of ``cls`` whose ``same`` properties match (with a ``having``
    relationship, if given), found by index: a node counts even when nothing links it."""

    cls: type
    same: tuple[str, ...]
    having: Any | None = None

    def cypher(self, start: str | Var) -> Cypher:
        names = [table(self.cls).deflate[name][0] for name in self.same]
        return count_nodes(self.cls, {name: dot(start, name) for name in names}, self.having)


def output_each(work: UnitOfWork, name: str, ref: Ref, **related: Related | Count) -> None:
    """:meth:`UnitOfWork.output` of the nodes, each map adding ``related`` by name."""
    work.output(name, ref, **{key: value.cypher for key, value in related.items()})


@dataclass(frozen=True)
class Part:
    """A node class paged through by ``key``, with what each row brings along."""

    cls: type
    key: str
    related: tuple[tuple[str, Related], ...] = ()


@functools.cache
def page_read(part: Part, owner: tuple[str, ...], first: bool) -> Prepared:
    """The read of a page of ``part`` (the first, or one after a key), compiled once."""

    def declare(_: Nodes, work: UnitOfWork, limit: Any, after: Any = None, **keys: Any) -> None:
        nodes = page(work, part.cls, part.key, after, limit, **keys)
        output_each(work, "page", nodes, **dict(part.related))

    return Prepared(declare)


def find_each(work: UnitOfWork, cls: type, keys: Sequence[Mapping[str, Any]]) -> Ref:
    """The nodes of ``cls`` with ``keys`` that exist, in no order."""
    rows = [node_properties(cls, key, defaults=False) for key in keys]
    pattern = row_properties(cls, keys[0], "key") if keys else ""
    return work.bind(
        cls,
        collect(
            unwind(work.param(rows, f"{hint(cls)}_keys"), "key"),
            match(node("node", label(cls), pattern)),
            returning("node"),
        ),
    )


def nodes_in(work: UnitOfWork, cls: type, name: str, values: Sequence[Any]) -> Ref:
    db_name = table(cls).deflate[name][0]
    given = work.param(list(values), f"{db_name}_values")
    found = match(node("node", label(cls)), cy(dot("node", db_name), f" IN {given}"))
    return work.bind(cls, collect(found, returning("node")))


def related_each(work: UnitOfWork, starts: Ref, rel: Any) -> Ref:
    """For each node of ``starts``, in order, the node one hop along ``rel`` (or null)."""
    cls = target_class(rel)
    reached = gather(path(node("start"), rel, None, node("node", label(cls))), "node")
    return work.bind(cls, each("start", starts.items, head(reached)))


def merge_each(work: UnitOfWork, cls: type, rows: Sequence[Mapping[str, Any]]) -> Ref:
    """The nodes of ``cls`` with each of ``rows`` (whole keys), merged, in order."""
    stored = [node_properties(cls, row, defaults=False) for row in rows]
    var = Var(hint(cls, many=True))
    pattern = row_properties(cls, rows[0], "row") if rows else ""
    work.add(
        call_subquery(
            unwind(work.param(stored, f"{hint(cls)}_keys"), "row"),
            merge(node("node", label(cls), pattern)),
            returning(alias(collected("node"), var)),
            binds=(var,),
        ),
        writes=True,
    )
    return Ref(cy(var), cls, True)


def link_in_chains(
    work: UnitOfWork,
    rel: Any,
    source: Ref,
    starts: Ref,
    first: Any,
    then: Any,
    order_by: str,
    links: Sequence[tuple[int, int, int]],
) -> None:
    """For each ``(i, j, position)`` of ``links``, link node ``i`` of ``source`` along
    ``rel`` to the node at ``position`` (its ``order_by``) of node ``j``'s chain (``first``,
    then ``then``). Each chain is read once; a position it lacks links nothing."""
    groups: dict[int, list[list[int]]] = {}
    for i, j, position in links:
        groups.setdefault(j, []).append([i, position])
    cls = target_class(then)
    write = create if source.created else merge
    chains = work.param([[j, wanted] for j, wanted in groups.items()], relation_name(rel))
    chain = path(node("start"), first, then, node("node", label(cls)))
    nodes = collect(match(chain), returning("node", order_by=[dot("node", order_by)]))
    work.add(
        call_subquery(
            unwind(chains, "chain"),
            with_(
                alias(source.items, "sources"),
                alias(cy(starts.items, "[chain[0]]"), "start"),
                alias("chain[1]", "wanted"),
            ),
            with_("sources", "wanted", alias(nodes, "nodes")),
            unwind("wanted", "link"),
            with_(
                alias("sources[link[0]]", "a"),
                alias("nodes[link[1]]", "b"),
                alias("link[1]", "position"),
                conditions=[cy(dot("b", order_by), " = position")],
            ),
            write(between("a", rel, "b")),
        ),
        writes=True,
    )


def output_reached(
    work: UnitOfWork, name: str, starts: Ref, rel: Any, fields: Sequence[str]
) -> None:
    """Output as ``name``, per node of ``starts``, the ``fields`` of each node along ``rel``."""
    cls = target_class(rel)
    stored = table(cls).deflate
    values = cy("[", join(", ", (dot("node", stored[field][0]) for field in fields)), "]")
    reached = gather(path(node("start"), rel, None, node("node", label(cls))), values)
    work.output_value(name, each("start", starts.items, reached))


def weight(part: Part, page: list[tuple[dict[str, Any], dict[str, Any]]]) -> tuple[int, int]:
    """Nodes and characters a page brought, which size the next page."""
    nodes = chars = 0
    for values, row in page:
        nodes += 1
        chars += sum(len(value) for value in values.values() if type(value) is str)
        for name, _ in part.related:
            reached = row[name]
            nodes += len(reached)
            for item in reached:
                if type(item) is list:
                    chars += sum(len(value) for value in item if type(value) is str)
                elif type(item) is str:
                    chars += len(item)
    return nodes, chars
