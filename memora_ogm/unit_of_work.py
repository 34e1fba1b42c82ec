"""One facade call's graph work, planned and compiled into one generated Cypher statement.

A call declares, in terms of the node classes and their relationship attributes,
what it matches (with the not-found error each missing node raises), locks,
creates, merges, links, reads and deletes. Each declaration appends frozen clauses
to the unit's plan (:mod:`memora_ogm.plan`); :meth:`UnitOfWork.compile` names the
variables after their classes, works out what each ``WITH`` carries and each subquery
imports, and returns a single statement with every caller value as a parameter named
after its property (``$org_id``). Existence checks ride in the statement: its head
``OPTIONAL MATCH``\\ es everything the call needs, lists what is missing, and the body
(locks and writes) runs only when nothing is, so a call that fails writes nothing and
costs one round trip. The statement text depends on the shape of the call (and on which
of its datetimes are equal), never on how many messages or memories it carries: lists
travel as parameters and are ``UNWIND``\\ ed. Each distinct datetime travels once, in
``$times``, in the compact form ``ZonedDateTimeProperty.expand`` turns back into a
DATETIME on the server: the driver's own encoding of a datetime costs more than the rest
of a node.

This module does no I/O and is shared by both twins: ``Graph.run`` executes a unit of
work in the current transaction. The mapping to the class definitions is in
:mod:`memora_ogm.mapping`; operations of one domain (an interaction's chain in
:mod:`memora_ogm.chains`, an erasure's bounded batches in :mod:`memora_ogm.erasure_plans`)
live in their domain's module and use :meth:`UnitOfWork.add`, :meth:`UnitOfWork.param`,
:meth:`UnitOfWork.rows` and :meth:`UnitOfWork.output_value`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from memora_ogm.mapping import (
    Param,
    arrow,
    hint,
    label,
    node_properties,
    present,
    relation_name,
    table,
    target_class,
)
from memora_ogm.plan import (
    Bind,
    Clause,
    Cypher,
    Match,
    Output,
    Scope,
    Subquery,
    Update,
    Var,
    cy,
    identifier,
    join,
    live_before,
    render,
    render_head,
)
from memora_ogm.projection import projection, reading
from memora_ogm.properties import ZonedDateTimeProperty, sent_form

#: The head of a batched unit's statement (see ``UnitOfWork(batched=True)``).
KEEP_PLAN = "CYPHER replan=skip"

MissingError = Callable[[Any], Exception]
"""Makes the not-found error of a match from what is missing (a key map for lists, else None)."""


@dataclass(frozen=True, slots=True)
class Ref:
    """A node (``many=False``) or a list of nodes bound in the plan."""

    expression: Cypher
    cls: type
    many: bool
    #: Made by this unit of work: relationships to it are created, not merged.
    created: bool = False

    @property
    def items(self) -> Cypher:
        """The Cypher list of the node(s)."""
        return self.expression if self.many else cy("[", self.expression, "]")


def _of(var: Var, cls: type, many: bool, created: bool = False) -> Ref:
    return Ref(cy(var), cls, many, created)


class UnitOfWork:
    """A builder of one statement's plan (see the module docstring); no I/O.

    ``batched`` marks a statement run batch after batch while it changes the graph a
    lot (an erasure, an import, a migration): its statement keeps the server's cached
    plan (``CYPHER replan=skip``). Each batch moves the label counts, and once they
    drift far enough the server plans the statement again, every ten seconds at most;
    for these long statements that costs a second or more each time, while their plans,
    anchored on the key indexes, come out the same.
    """

    def __init__(self, *, batched: bool = False) -> None:
        self.batched = batched
        self.params: dict[str, Any] = {}
        self._head: list[Clause] = []
        self._checks: list[tuple[Cypher, MissingError]] = []
        self._locks: list[Clause] = []
        self._body: list[Clause] = []
        self._writes = False
        self._outputs: list[tuple[Var, str]] = []
        self._times: list[datetime] = []
        self._time_index: dict[tuple[datetime, Any], int] = {}

    # -- the extension points of domain modules ----------------------------------------

    def add(self, clause: Clause) -> None:
        """Append ``clause`` to the body (an :class:`Update` makes the unit a write)."""
        self._writes = self._writes or isinstance(clause, Update)
        self._body.append(clause)

    def param(self, value: Any, name: str) -> str:
        """``$name`` holding ``value`` (``$name_2`` if ``name`` holds another value; a
        :class:`Param` is its own name)."""
        if type(value) is Param:
            return f"${value.name}"
        base, number = name, 1
        while name in self.params:
            known = self.params[name]
            if type(known) is type(value) and isinstance(value, str | int) and known == value:
                return f"${name}"
            number += 1
            name = f"{base}_{number}"
        self.params[name] = value
        return f"${name}"

    def output_value(self, name: str, value: Cypher) -> Var:
        """Return ``value`` as ``name`` (computed where this is called)."""
        var = Var(name)
        self.add(Output(var, value, name))
        self._outputs.append((var, name))
        return var

    # -- values -------------------------------------------------------------------------

    def _time(self, value: datetime) -> int:
        """The index of ``value`` in the statement's ``$times``, one entry per distinct
        datetime (the same instant in another zone is another datetime): a call stamps
        many nodes with one time, sent once."""
        key = (value, value.tzinfo)
        index = self._time_index.get(key)
        if index is None:
            index = self._time_index[key] = len(self._times)
            self._times.append(value)
        return index

    def _value(self, value: Any, name: str) -> str:
        """A parameter holding ``value`` (a datetime: its entry of ``$times``)."""
        if isinstance(value, datetime):
            return ZonedDateTimeProperty.expand(f"$times[{self._time(value)}]")
        return self.param(value, name)

    def _assign(
        self, target: Var | str, stored: Mapping[str, Any], operator: str, name: str
    ) -> Cypher:
        """SET items giving ``target`` the ``stored`` properties (``=`` replaces, ``+=``
        adds): one map parameter ``$name``, and its datetimes from ``$times``."""
        plain = {key: value for key, value in stored.items() if not isinstance(value, datetime)}
        items: list[Cypher] = [cy(target, f" {operator} {self.param(plain, name)}")]
        items.extend(
            cy(target, f".{identifier(key)} = {self._value(value, key)}")
            for key, value in stored.items()
            if isinstance(value, datetime)
        )
        return join(", ", items)

    def rows(self, cls: type, stored: Sequence[Mapping[str, Any]]) -> tuple[str, str, str]:
        """A list parameter of ``stored`` rows (named after the class), the SET items that
        give ``node`` the properties of ``row``, and where a row keeps its plain properties
        (``row`` plus this suffix). For a class with datetime properties, ``.p`` maps the
        plain ones and ``.t`` indexes ``$times`` for each datetime (null where a row has
        none); a class without is sent as the rows themselves."""
        times = table(cls).times
        if not times:
            return self.param(stored, hint(cls, many=True)), "node = row", ""
        rows = [
            {
                "p": {k: v for k, v in properties.items() if k not in times},
                "t": [
                    None if properties.get(name) is None else self._time(properties[name])
                    for name in times
                ],
            }
            for properties in stored
        ]
        items = ["node = row.p"] + [
            f"node.{identifier(name)} = " + ZonedDateTimeProperty.expand(f"$times[row.t[{index}]]")
            for index, name in enumerate(times)
        ]
        return self.param(rows, hint(cls, many=True)), ", ".join(items), ".p"

    def _values(self, cls: type, keys: Mapping[str, Any]) -> dict[str, str]:
        """``keys`` deflated, by stored name, each as its parameter (``$name``)."""
        stored = node_properties(cls, keys, defaults=False)
        return {name: self._value(value, name) for name, value in stored.items()}

    def _keys(self, cls: type, keys: Mapping[str, Any], source: str | None = None) -> str:
        """``{name: $name, ...}`` for ``keys`` deflated, or ``{name: source.name}`` for a row."""
        if source is not None:
            stored = node_properties(cls, keys, defaults=False)
            return ", ".join(f"{identifier(name)}: {source}.{identifier(name)}" for name in stored)
        return _pattern(self._values(cls, keys))

    def _head_only(self) -> None:
        if self._body:
            raise RuntimeError("matches come before the body of a unit of work")

    def _check(self, ref: Ref, missing: MissingError | None, lock: bool) -> Ref:
        if missing is not None:
            number = len(self._checks)
            self._checks.append(
                (
                    cy(
                        "CASE WHEN ",
                        ref.expression,
                        f" IS NULL THEN [[{number}, null]] ELSE [] END",
                    ),
                    missing,
                )
            )
        if lock:
            self.lock(ref)
        return ref

    # -- head: what the call needs ------------------------------------------------------

    def match(
        self,
        cls: type,
        missing: Callable[[], Exception] | None = None,
        *,
        lock: bool = False,
        **keys: Any,
    ) -> Ref:
        """The node of ``cls`` with ``keys``; ``missing()`` is raised when there is none."""
        self._head_only()
        var = Var(hint(cls))
        pattern = cy("(", var, f":{label(cls)} {{{self._keys(cls, keys)}}})")
        self._head.append(Match(pattern, (var,)))
        return self._check(_of(var, cls, False), missing and (lambda _: missing()), lock)

    def match_related(
        self,
        start: Ref,
        rel: Any,
        missing: Callable[[], Exception] | None = None,
        *,
        lock: bool = False,
    ) -> Ref:
        """The node one hop along ``rel`` from ``start`` (e.g. a user's memory collection)."""
        self._head_only()
        cls = target_class(rel)
        var = Var(hint(cls))
        pattern = cy("(", start.expression, f"){arrow(rel)}(", var, f":{label(cls)})")
        self._head.append(Match(pattern, (var,)))
        return self._check(_of(var, cls, False), missing and (lambda _: missing()), lock)

    def match_each(
        self,
        cls: type,
        keys: Sequence[Mapping[str, Any]],
        missing: Callable[[Mapping[str, Any]], Exception],
        *,
        lock: bool = False,
    ) -> Ref:
        """The nodes of ``cls`` with each of ``keys``, in that order; ``missing(key)`` for the
        first key with no node."""
        self._head_only()
        var, gone = Var(hint(cls, many=True)), Var(f"{hint(cls)}_missing")
        rows = [node_properties(cls, key, defaults=False) for key in keys]
        pattern = self._keys(cls, keys[0] if keys else {}, source="key") if keys else ""
        self._head.append(
            Subquery(
                cy(
                    f"UNWIND {self.param(rows, f'{hint(cls)}_keys')} AS key "
                    f"OPTIONAL MATCH (found:{label(cls)} {{{pattern}}}) "
                    "RETURN collect(found) AS ",
                    var,
                    ", collect(CASE WHEN found IS NULL THEN key END) AS ",
                    gone,
                ),
                (var, gone),
            )
        )
        self._checks.append((cy("[key IN ", gone, f" | [{len(self._checks)}, key]]"), missing))
        ref = _of(var, cls, True)
        if lock:
            self.lock(ref)
        return ref

    # -- body: locks, reads and writes, run only when nothing is missing --------------------

    def lock(self, ref: Ref) -> None:
        """Take the write lock of the node(s) until the transaction ends.

        The locks of matched nodes come first in the body; a lock taken later in the
        body (of nodes found there) comes where it is declared.

        The lock is taken by setting a label the node has already: the server takes the
        node's write lock before it finds the label there, and writes nothing, so the
        commit has nothing to apply for it (a property set and removed again would make
        each locked node a write of its commit). ``tests/test_unit_of_work.py`` holds a
        second writer off with it.
        """
        self._writes = True
        clause = Update(cy("FOREACH (node IN ", ref.items, f" | SET node:{label(ref.cls)})"))
        (self._body if self._body else self._locks).append(clause)

    def _bind(self, cls: type, expression: Cypher, many: bool, created: bool = False) -> Ref:
        var = Var(hint(cls, many))
        self.add(Bind(var, expression))
        return _of(var, cls, many, created)

    def nodes(
        self, cls: type, limit: int | None = None, *, order_by: Sequence[str] = (), **keys: Any
    ) -> Ref:
        """Every node of ``cls`` with the property values ``keys`` (e.g. all of one user),
        or at most ``limit`` of them: the first ones in ``order_by`` order when given (the
        oldest users of an organisation: ``order_by=("created_at", "user_id")``).

        When ``keys`` are a part of the class's key, the rest of the key must exist too
        (as it does for every keyed node): the planner then seeks the key's index by its
        prefix instead of scanning the label.
        """
        values = self._values(cls, keys)
        rest = _where(_rest_of_key(cls, values, "node"))
        match = f"MATCH (node:{label(cls)} {{{_pattern(values)}}}){rest}"
        spec = table(cls)
        order = ", ".join(f"node.{identifier(spec.deflate[name][0])}" for name in order_by)
        ordered = f" ORDER BY {order}" if order else ""
        top = "" if limit is None else f" LIMIT {self.param(limit, f'{hint(cls, True)}_limit')}"
        return self._bind(cls, cy(f"COLLECT {{ {match} RETURN node{ordered}{top} }}"), True)

    def count(self, cls: type, *, having: Any | None = None, **keys: Any) -> Cypher:
        """The number of nodes of ``cls`` with the property values ``keys`` (found as
        :meth:`nodes` finds them), of those with a relationship along ``having`` when
        given (memories a newer one superseded: ``having=Memory.contrary_update``): a
        value for :meth:`output_value`."""
        return cy(_count(cls, self._values(cls, keys), having))

    def reachable(
        self,
        start: Ref,
        rel: Any,
        then_repeat: Any | None = None,
        order_by: str | None = None,
        *,
        descending: bool = False,
        limit: int | None = None,
    ) -> Ref:
        """The nodes one hop along ``rel`` from ``start``'s node(s), then ``then_repeat`` 0+ times.

        ``reachable(interaction, Interaction.first_message, MessageBlock.is_next,
        "msg_position")`` is an interaction's chain in order. Nodes a concurrent delete
        left without properties are skipped. With ``limit``, at most that many: the
        first ones in order, or (unordered) the first found, so a hub such as a
        collection is only expanded as far as a batch needs.
        """
        cls = target_class(then_repeat if then_repeat is not None else rel)
        hops = arrow(rel) + (
            f"(:{label(target_class(rel))}){arrow(then_repeat, '*0..')}"
            if then_repeat is not None
            else ""
        )
        order = (
            f" ORDER BY node.{identifier(order_by)}{' DESC' if descending else ''}"
            if order_by
            else ""
        )
        match = f"MATCH (start){hops}(node:{label(cls)}) WHERE {present(cls, 'node')}"
        if limit is None:
            return self._bind(
                cls,
                cy(
                    "COLLECT { UNWIND ",
                    start.items,
                    f" AS start {match} RETURN DISTINCT node{order} }}",
                ),
                True,
            )
        # A subquery of its own that keeps only ``start``: the server counts what each row
        # carries, and a long chain's rows carrying the statement's lists outgrew its memory.
        var = Var(hint(cls, many=True))
        self.add(
            Subquery(
                cy(
                    "UNWIND ",
                    start.items,
                    f" AS start WITH start {match} "
                    f"WITH DISTINCT node{order} LIMIT {self.param(limit, f'{var.hint}_limit')} "
                    "RETURN collect(node) AS ",
                    var,
                ),
                (var,),
            )
        )
        return _of(var, cls, True)

    def as_list(self, ref: Ref) -> Ref:
        """The node(s) as a list."""
        return Ref(ref.items, ref.cls, True, ref.created)

    def concat(self, first: Ref, second: Ref) -> Ref:
        """``first``'s nodes then ``second``'s (e.g. the kept head of a chain and its new tail),
        bound once: a list indexed by each row of a link is not rebuilt per row."""
        created = first.created and second.created
        return self._bind(first.cls, cy(first.items, " + ", second.items), True, created)

    def create(self, cls: type, **values: Any) -> tuple[Ref, dict[str, Any]]:
        """A new node of ``cls``; returns it and its stored properties (ids included)."""
        stored = node_properties(cls, values)
        var = Var(hint(cls))
        assign = self._assign(var, stored, "=", hint(cls))
        self.add(Update(cy("CREATE (", var, f":{label(cls)}) SET ", assign), (var,)))
        return _of(var, cls, False, created=True), stored

    def create_each(
        self, cls: type, rows: Sequence[Mapping[str, Any]]
    ) -> tuple[Ref, list[dict[str, Any]]]:
        """New nodes of ``cls``, one per row, in order; returns them and their properties."""
        stored = [node_properties(cls, row) for row in rows]
        var = Var(hint(cls, many=True))
        param, assign, _ = self.rows(cls, stored)
        self._writes = True
        self.add(create_rows(cls, cy(param), assign, var))
        return _of(var, cls, True, created=True), stored

    def merge(self, cls: type, **keys: Any) -> Ref:
        """The node of ``cls`` with ``keys`` (its whole key), made if missing."""
        var = Var(hint(cls))
        self.add(Update(cy("MERGE (", var, f":{label(cls)} {{{self._keys(cls, keys)}}})"), (var,)))
        return _of(var, cls, False)

    def set(self, ref: Ref, **values: Any) -> None:
        """Set properties of the node(s)."""
        stored = node_properties(ref.cls, values, defaults=False)
        assign = self._assign("node", stored, "+=", f"{hint(ref.cls)}_changes")
        self.add(Update(cy("FOREACH (node IN ", ref.items, " | SET ", assign, ")")))

    def link(
        self,
        rel: Any,
        source: Ref,
        target: Ref,
        pairs: Sequence[tuple[int, int]] | None = None,
    ) -> None:
        """Link ``source`` to ``target`` along ``rel`` (an attribute of ``source``'s class).

        ``pairs`` index the two lists; without it, the two single nodes, or every node of
        one list with the single node on the other side. Relationships to a node made here
        are created, others merged (linking twice is harmless).
        """
        verb = "CREATE" if source.created or target.created else "MERGE"
        hop = arrow(rel)
        if pairs is None:
            if source.many and target.many:
                raise ValueError("linking two lists needs index pairs")
            if not (source.many or target.many):
                self.add(
                    Update(cy(f"{verb} (", source.expression, f"){hop}(", target.expression, ")"))
                )
                return
            a, b, nodes = (
                ("node", target.expression, source.expression)
                if source.many
                else (source.expression, "node", target.expression)
            )
            self.add(Update(cy("FOREACH (node IN ", nodes, f" | {verb} (", a, f"){hop}(", b, "))")))
            return
        param = self.param([list(pair) for pair in pairs], relation_name(rel))
        self._writes = True
        self.add(
            Subquery(
                cy(
                    f"UNWIND {param} AS pair WITH ",
                    source.items,
                    "[pair[0]] AS a, ",
                    target.items,
                    f"[pair[1]] AS b {verb} (a){hop}(b)",
                )
            )
        )

    def delete(self, ref: Ref) -> None:
        """Detach and delete the node(s)."""
        self.add(Update(cy("FOREACH (node IN ", ref.items, " | DETACH DELETE node)")))

    def delete_emptied(self, ref: Ref, rels: Sequence[Any]) -> None:
        """Detach and delete those of the node(s) that have no relationship along any of
        ``rels`` any more (an interaction whose messages and memories are gone)."""
        left = " OR ".join(f"EXISTS {{ (n){arrow(rel)}() }}" for rel in rels)
        self.add(
            Update(
                cy(
                    "FOREACH (node IN [n IN ",
                    ref.items,
                    f" WHERE NOT ({left})] | DETACH DELETE node)",
                )
            )
        )

    def delete_unlinked(self, ref: Ref) -> None:
        """Delete those of the node(s) that no relationship touches any more."""
        self.add(
            Update(
                cy(
                    "FOREACH (node IN [n IN ",
                    ref.items,
                    " WHERE NOT EXISTS { (n)--() }] | DELETE node)",
                )
            )
        )

    def output(self, name: str, ref: Ref) -> None:
        """Return the properties of the node(s) as ``name`` (read where this is called), as
        the class the reads go through projects them (:mod:`memora_ogm.projection`)."""
        self.output_each(name, ref)

    def delete_everything(self, limit: int) -> None:
        """Delete one batch of the whole graph, whatever its labels (the test helpers'
        clean; the schema stays): up to ``limit`` relationships, then, when that took the
        last of them, up to ``limit`` nodes. Outputs ``deleted`` (the nodes deleted) and
        ``emptied`` (whether the graph is empty now).

        Relationships go first so that no batch grows with a node's degree: a day or a
        collection of a long run links hundreds of thousands of nodes.
        """
        relationships, nodes = Var("relationships"), Var("nodes")
        batch = self.param(limit, "limit")
        self.add(Bind(relationships, cy(f"COLLECT {{ MATCH ()-[r]->() RETURN r LIMIT {batch} }}")))
        self.add(Update(cy("FOREACH (r IN ", relationships, " | DELETE r)")))
        self.add(
            Bind(
                nodes,
                cy(
                    "CASE WHEN size(",
                    relationships,
                    f") < {batch} THEN COLLECT {{ MATCH (n) RETURN n LIMIT {batch} }} ELSE [] END",
                ),
            )
        )
        self.add(Update(cy("FOREACH (node IN ", nodes, " | DELETE node)")))
        self.output_value("deleted", cy("size(", nodes, ")"))
        self.output_value(
            "emptied",
            cy("size(", relationships, f") < {batch} AND size(", nodes, f") < {batch}"),
        )

    # -- migrations ------------------------------------------------------------------------

    def lacking(self, cls: type, rel: Any, limit: int) -> Ref:
        """At most ``limit`` nodes of ``cls`` with no relationship along ``rel`` (what a
        migration's batch still has to link)."""
        match = f"MATCH (node:{label(cls)}) WHERE NOT EXISTS {{ (node){arrow(rel)}() }}"
        top = self.param(limit, f"{hint(cls, many=True)}_limit")
        return self._bind(cls, cy(f"COLLECT {{ {match} RETURN node LIMIT {top} }}"), True)

    def merge_linked(
        self, nodes: Ref, rel: Any, copied: Sequence[str], days: Mapping[str, str]
    ) -> None:
        """Link each of ``nodes`` along ``rel`` to the node of its target class keyed by
        the node's own ``copied`` properties and, for each ``days`` entry (target property
        -> the node's datetime property), that datetime's calendar day as the server has
        it (in its stored offset or zone), made if missing."""
        source, target = table(nodes.cls), table(target_class(rel))
        keys = [
            f"{identifier(target.deflate[name][0])}: node.{identifier(source.deflate[name][0])}"
            for name in copied
        ] + [
            f"{identifier(target.deflate[day][0])}: "
            f"date(node.{identifier(source.deflate[stamp][0])})"
            for day, stamp in days.items()
        ]
        self.add(
            Update(
                cy(
                    "FOREACH (node IN ",
                    nodes.items,
                    f" | MERGE (linked:{label(target_class(rel))} {{{', '.join(keys)}}}) "
                    f"MERGE (node){arrow(rel)}(linked))",
                )
            )
        )

    # -- keyset pages (tenant exports) ------------------------------------------------------

    def page(self, cls: type, order_by: str, after: Any, limit: Any, **keys: Any) -> Ref:
        """A keyset page: at most ``limit`` nodes of ``cls`` with the property values
        ``keys``, in ``order_by`` order, those after ``after`` (from the first when None).

        With ``keys`` and ``order_by`` the class's whole key (a user's interactions by
        id), the ORDER BY names the whole key, so the planner reads the key's index in
        order from ``after`` and stops after the page, whatever the tenant's size.
        """
        spec = table(cls)
        names = [spec.deflate[name][0] for name in dict.fromkeys([*keys, order_by])]
        match = f"MATCH (node:{label(cls)} {{{self._keys(cls, keys)}}})"
        if after is not None:
            match += f" WHERE node.{identifier(names[-1])} > {self.param(after, 'after')}"
        order = ", ".join(f"node.{identifier(name)}" for name in names)
        top = self.param(limit, f"{hint(cls, many=True)}_limit")
        return self._bind(
            cls, cy(f"COLLECT {{ {match} RETURN node ORDER BY {order} LIMIT {top} }}"), True
        )

    def output_each(self, name: str, ref: Ref, **related: Related | Count) -> None:
        """:meth:`output` of the node(s), each node's map adding, per name of ``related``,
        the list of what it reaches (a page of interactions with their messages and days)
        or the number of nodes counted for it (a user's memories)."""
        fields = projection(reading(ref.cls))
        if ref.many:
            reached = {key: value.cypher("node") for key, value in related.items()}
            value = cy("[node IN ", ref.expression, f" | {fields.map('node', **reached)}]")
        else:
            # The projection's text with the node's expression where its variable goes.
            reached = {key: value.cypher("\x00") for key, value in related.items()}
            pieces = fields.map("\x00", **reached).split("\x00")
            parts: list[str | Cypher] = [pieces[0]]
            for piece in pieces[1:]:
                parts += [ref.expression, piece]
            value = cy(*parts)
        self.output_value(name, value)

    # -- batches: operations of the tenant import (memora_ogm._async.transfer) -------------

    def find_each(self, cls: type, keys: Sequence[Mapping[str, Any]]) -> Ref:
        """Those of the nodes of ``cls`` with each of ``keys`` that exist (an index seek a
        key), in no order, with no not-found check: what an import finds there already."""
        rows = [node_properties(cls, key, defaults=False) for key in keys]
        pattern = self._keys(cls, keys[0], source="key") if keys else ""
        return self._bind(
            cls,
            cy(
                f"COLLECT {{ UNWIND {self.param(rows, f'{hint(cls)}_keys')} AS key "
                f"MATCH (node:{label(cls)} {{{pattern}}}) RETURN node }}"
            ),
            True,
        )

    def nodes_in(self, cls: type, name: str, values: Sequence[Any]) -> Ref:
        """The nodes of ``cls`` whose property ``name`` is one of ``values``: one pass over
        the label when no index starts with ``name``, so give many values at a time."""
        db_name = table(cls).deflate[name][0]
        return self._bind(
            cls,
            cy(
                f"COLLECT {{ MATCH (node:{label(cls)}) WHERE node.{identifier(db_name)} "
                f"IN {self.param(list(values), f'{db_name}_values')} RETURN node }}"
            ),
            True,
        )

    def related_each(self, starts: Ref, rel: Any) -> Ref:
        """For each node of ``starts``, in order, the node one hop along ``rel`` (null when
        there is none): the collections of a batch's users."""
        cls = target_class(rel)
        return self._bind(
            cls,
            cy(
                "[start IN ",
                starts.items,
                f" | head([(start){arrow(rel)}(node:{label(cls)}) | node])]",
            ),
            True,
        )

    def merge_each(self, cls: type, rows: Sequence[Mapping[str, Any]]) -> Ref:
        """The nodes of ``cls`` with each of ``rows`` (a whole key each), made where
        missing, in order: a batch's days, as :meth:`merge` is one call's."""
        stored = [node_properties(cls, row, defaults=False) for row in rows]
        var = Var(hint(cls, many=True))
        pattern = self._keys(cls, rows[0], source="row") if rows else ""
        self._writes = True
        self.add(
            Subquery(
                cy(
                    f"UNWIND {self.param(stored, f'{hint(cls)}_keys')} AS row "
                    f"MERGE (node:{label(cls)} {{{pattern}}}) RETURN collect(node) AS ",
                    var,
                ),
                (var,),
            )
        )
        return _of(var, cls, True)

    def link_in_chains(
        self,
        rel: Any,
        source: Ref,
        starts: Ref,
        first: Any,
        then: Any,
        order_by: str,
        links: Sequence[tuple[int, int, int]],
    ) -> None:
        """Link node ``i`` of ``source`` along ``rel`` to the node at ``position`` of the
        chain of node ``j`` of ``starts`` (``first``, then ``then`` repeated, in
        ``order_by`` order, which holds each node's position), for each ``(i, j,
        position)`` of ``links``: memories to the messages of interactions stored before.

        Each chain is read once, whatever the number of links into it; a position the
        chain does not hold links nothing.
        """
        groups: dict[int, list[list[int]]] = {}
        for i, j, position in links:
            groups.setdefault(j, []).append([i, position])
        cls = target_class(then)
        order = identifier(order_by)
        verb = "CREATE" if source.created else "MERGE"
        chains = self.param([[j, wanted] for j, wanted in groups.items()], relation_name(rel))
        self._writes = True
        self.add(
            Subquery(
                cy(
                    f"UNWIND {chains} AS chain WITH ",
                    source.items,
                    " AS sources, ",
                    starts.items,
                    "[chain[0]] AS start, chain[1] AS wanted "
                    "WITH sources, wanted, COLLECT { MATCH (start)"
                    f"{arrow(first)}(:{label(target_class(first))}){arrow(then, '*0..')}"
                    f"(node:{label(cls)}) RETURN node ORDER BY node.{order} }} AS nodes "
                    "UNWIND wanted AS link "
                    "WITH sources[link[0]] AS a, nodes[link[1]] AS b, link[1] AS position "
                    f"WHERE b.{order} = position {verb} (a){arrow(rel)}(b)",
                )
            )
        )

    def output_reached(self, name: str, starts: Ref, rel: Any, fields: Sequence[str]) -> None:
        """Return as ``name``, for each node of ``starts`` in order, the ``fields`` (as a
        list) of each node one hop along ``rel`` from it: the links a batch finds there."""
        cls = target_class(rel)
        spec = table(cls)
        values = ", ".join(f"node.{identifier(spec.deflate[field][0])}" for field in fields)
        self.output_value(
            name,
            cy(
                "[start IN ",
                starts.items,
                f" | [(start){arrow(rel)}(node:{label(cls)}) | [{values}]]]",
            ),
        )

    # -- the statement --------------------------------------------------------------------

    def _missing(self) -> Cypher:
        return join(" + ", [check for check, _ in self._checks]) if self._checks else cy("[]")

    def compiled(self) -> Compiled:
        """The unit compiled once, to be run (and run again on a retry) as it is: the
        declaring and compiling can be done ahead, away from the write."""
        return Compiled(self, self.compile())

    def compile(self) -> tuple[str, dict[str, Any]]:
        """The statement and its parameters; it returns ``missing`` and the outputs.

        ``missing`` lists ``[check number, key]`` for each missing thing (the key is null
        for a single node). A write computes it first and runs its body only when it is
        empty; a read is its matches and one RETURN, which computes it and projects the
        outputs declared last.
        """
        missing = self._missing()
        if self._writes:
            lines = self._compile_write(missing)
        else:
            lines = self._compile_read(missing)
        if self.batched:
            lines.insert(0, KEEP_PLAN)
        return "\n".join(lines), {**self.params, "times": [sent_form(t) for t in self._times]}

    def _returned(self, scope: Scope, inlined: Mapping[Var, Cypher]) -> list[str]:
        """The outputs as the statement returns them, each under its name."""
        returned = []
        for var, name in self._outputs:
            value = inlined[var].render(scope.names) if var in inlined else scope.names[var]
            key = identifier(name)
            returned.append(value if value == key else f"{value} AS {key}")
        return returned

    def _compile_write(self, missing: Cypher) -> list[str]:
        flag = Var("missing", exact=True)
        body = [*self._locks, *self._body]
        scope = Scope.of([*self._head, Bind(flag, missing), *body])
        outputs = frozenset(var for var, _ in self._outputs)
        imports = live_before(body, outputs)[0] | {flag}
        carried = scope.listed(imports - {flag})
        names = ", ".join(scope.listed(imports))
        inner = [scope.names[var] for var, _ in self._outputs]
        return [
            *render_head(self._head, scope),
            f"WITH {', '.join([*carried, f'{missing.render(scope.names)} AS missing'])}",
            f"OPTIONAL CALL ({names}) {{",
            f"WITH {names} WHERE missing = []",
            *render(body, outputs, scope),
            "RETURN " + (", ".join(inner) or "true AS written"),
            "}",
            "RETURN " + ", ".join(["missing", *self._returned(scope, {})]),
        ]

    def _compile_read(self, missing: Cypher) -> list[str]:
        body = list(self._body)
        last: list[Output] = []
        while body and isinstance(output := body[-1], Output):
            last.insert(0, output)
            body.pop()
        inlined = {output.var: output.value for output in last}
        scope = Scope.of([*self._head, *body])
        needed = missing.uses.union(*(value.uses for value in inlined.values()))
        needed |= frozenset(var for var, _ in self._outputs if var not in inlined)
        return [
            *render_head(self._head, scope),
            *render(body, needed, scope),
            "RETURN "
            + ", ".join(
                [f"{missing.render(scope.names)} AS missing", *self._returned(scope, inlined)]
            ),
        ]

    def raise_missing(self, missing: Sequence[Sequence[Any]]) -> None:
        """Raise the error of the first missing thing the statement reported, if any."""
        if missing:
            number, entry = missing[0]
            raise self._checks[number][1](entry)

    def explain(self) -> str:
        """The plan as a reader checks it: its clauses in order, the compiled statement and
        its parameters (lists by their length)."""
        clauses = [
            *(f"head   {clause!r}" for clause in self._head),
            *(f"check  {check!r}" for check, _ in self._checks),
            *(f"lock   {clause!r}" for clause in self._locks),
            *(f"body   {clause!r}" for clause in self._body),
        ]
        query, params = self.compile()
        values = [
            f"${name} = "
            + (
                f"<{len(value)} items>"
                if isinstance(value, list) and len(value) > 3
                else repr(value)
            )
            for name, value in params.items()
        ]
        return "\n".join(["plan:", *clauses, "statement:", query, "parameters:", *values])

    def __repr__(self) -> str:
        kind = "write" if self._writes else "read"
        return (
            f"<UnitOfWork {kind}: {len(self._head)} matches, {len(self._checks)} checks, "
            f"{len(self._locks) + len(self._body)} body clauses, "
            f"outputs {[name for _, name in self._outputs]}>"
        )


@dataclass(frozen=True)
class Related:
    """What :meth:`UnitOfWork.output_each` adds to each node's map: along ``rels`` from
    the node (the first hop, then the second repeated 0+ times), the values of
    ``properties`` of each node reached (one value each, or a list when several) as they
    are stored (no compact DATETIME form), in ``order_by`` order, of those whose ``same``
    properties equal the node's properties of the same names."""

    rels: tuple[Any, ...]
    properties: tuple[str, ...]
    order_by: str | None = None
    same: tuple[str, ...] = ()

    def cypher(self, start: str) -> str:
        """Cypher of the list, for the node ``start`` (a local name of the projection);
        nodes a concurrent delete left without properties are skipped."""
        first, *repeat = self.rels
        cls = target_class(repeat[0] if repeat else first)
        hops = arrow(first) + (
            f"(:{label(target_class(first))}){arrow(repeat[0], '*0..')}" if repeat else ""
        )
        spec = table(cls)
        names = [identifier(spec.deflate[name][0]) for name in self.properties]
        values = [f"reached.{name}" for name in names]
        value = values[0] if len(values) == 1 else f"[{', '.join(values)}]"
        where = [present(cls, "reached")] + [
            f"reached.{identifier(spec.deflate[name][0])} = "
            f"{start}.{identifier(spec.deflate[name][0])}"
            for name in self.same
        ]
        order = (
            f" ORDER BY reached.{identifier(spec.deflate[self.order_by][0])}"
            if self.order_by
            else ""
        )
        return (
            f"COLLECT {{ MATCH ({start}){hops}(reached:{label(cls)}) "
            f"WHERE {' AND '.join(where)} RETURN {value}{order} }}"
        )


@dataclass(frozen=True)
class Count:
    """What :meth:`UnitOfWork.output_each` adds to each node's map: the number of nodes
    of ``cls`` whose ``same`` properties equal the node's properties of the same names,
    of those with a relationship along ``having`` when given. The nodes are found by
    their key's index, not along relationships: a node counts even when nothing links
    it (``memora-ogm inspect`` counts what the graph holds)."""

    cls: type
    same: tuple[str, ...]
    having: Any | None = None

    def cypher(self, start: str) -> str:
        """Cypher of the number, for the node ``start`` (a local name of the projection)."""
        names = [table(self.cls).deflate[name][0] for name in self.same]
        return _count(
            self.cls, {name: f"{start}.{identifier(name)}" for name in names}, self.having
        )


def _pattern(values: Mapping[str, str]) -> str:
    """The properties of a node pattern: ``name: value, ...`` by stored name."""
    return ", ".join(f"{identifier(name)}: {value}" for name, value in values.items())


def _where(conditions: Sequence[str]) -> str:
    return f" WHERE {' AND '.join(conditions)}" if conditions else ""


def _rest_of_key(cls: type, given: Mapping[str, str], var: str) -> list[str]:
    """When the properties ``given`` (by stored name) are a part of ``cls``'s key, that
    ``var`` has the rest of it (as every keyed node has): the planner then seeks the
    key's index by its prefix instead of scanning the label."""
    node_key = getattr(cls, "__node_key__", None)
    key: tuple[str, ...] = node_key[1] if node_key else ()
    if not given or not set(given) < set(key):
        return []
    return [f"{var}.{identifier(name)} IS NOT NULL" for name in key if name not in given]


def _count(cls: type, values: Mapping[str, str], having: Any | None) -> str:
    """``COUNT`` of the nodes of ``cls`` with the property ``values`` (Cypher by stored
    name), of those with a relationship along ``having`` when given."""
    conditions = _rest_of_key(cls, values, "counted")
    if having is not None:
        target = label(target_class(having))
        conditions.append(f"EXISTS {{ (counted){arrow(having)}(:{target}) }}")
    return f"COUNT {{ MATCH (counted:{label(cls)} {{{_pattern(values)}}}){_where(conditions)} }}"


class Prepared:
    """A read whose statement depends on which values it is given, never on the values:
    declared and compiled once, then bound to each call's values.

    ``declare(work, **values)`` declares the unit as a call would; the first
    :meth:`bind` runs it with each value a :class:`Param`, so the statement names them
    (``$org_id``) instead of holding them. For a read of one node or one list by its
    ids, declaring and compiling was most of the layer's own work. Only values that
    reach the statement as match keys can be parameters; the declaration must not look
    at them (a read declared this way does not). A not-found answer declares the unit
    again with the call's values, so the error is the one that unit raises, naming them.
    """

    def __init__(self, declare: Callable[..., Any]) -> None:
        self._declare = declare
        self._statement: tuple[str, dict[str, Any]] | None = None

    def bind(self, **values: Any) -> Bound:
        if self._statement is None:
            work = UnitOfWork()
            self._declare(work, **{name: Param(name) for name in values})
            query, params = work.compile()
            clashing = set(values) & set(params)
            if clashing or work._writes or work._times:
                raise RuntimeError(f"not a read of fixed shape: {sorted(clashing)}")
            self._statement = query, params
        return Bound(self, self._statement, values)

    def declared(self, **values: Any) -> UnitOfWork:
        """The unit of work declared with the call's own values."""
        work = UnitOfWork()
        self._declare(work, **values)
        return work


@dataclass(frozen=True, slots=True)
class Bound:
    """A :class:`Prepared` read with one call's values; run like a unit of work."""

    prepared: Prepared
    statement: tuple[str, dict[str, Any]]
    values: dict[str, Any]

    def compile(self) -> tuple[str, dict[str, Any]]:
        query, params = self.statement
        return query, {**params, **self.values}

    def raise_missing(self, missing: Sequence[Sequence[Any]]) -> None:
        if missing:
            self.prepared.declared(**self.values).raise_missing(missing)


@dataclass(frozen=True)
class Compiled:
    """A unit of work with its statement compiled (:meth:`UnitOfWork.compiled`)."""

    work: UnitOfWork
    statement: tuple[str, dict[str, Any]]

    def compile(self) -> tuple[str, dict[str, Any]]:
        return self.statement

    def raise_missing(self, missing: Sequence[Sequence[Any]]) -> None:
        self.work.raise_missing(missing)


#: What ``Graph`` runs: a unit of work (compiled or not), or a prepared read bound to a
#: call's values.
Statement = UnitOfWork | Compiled | Bound


def create_rows(cls: type, rows: Cypher, assign: str, var: Var) -> Subquery:
    """A subquery creating a node of ``cls`` per row of ``rows``, collected in order as
    ``var``."""
    return Subquery(
        cy(
            "UNWIND ",
            rows,
            f" AS row CREATE (node:{label(cls)}) SET {assign} RETURN collect(node) AS ",
            var,
        ),
        (var,),
    )
