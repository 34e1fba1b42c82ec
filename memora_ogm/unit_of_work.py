"""One facade call's graph work, compiled into one generated Cypher statement.

A call declares, in terms of the node classes and their relationship attributes,
what it matches (with the not-found error each missing node raises), locks,
creates, merges, links, reads and deletes; :meth:`UnitOfWork.compile` turns that
into a single statement with every caller value as a parameter. Existence checks
ride in the statement: its head ``OPTIONAL MATCH``\\ es everything the call needs,
lists what is missing, and the body (locks and writes) runs only when nothing is,
so a call that fails writes nothing and costs one round trip. The statement text
depends on the shape of the call (and on which of its datetimes are equal), never
on how many messages or memories it carries: lists travel as parameters and are
``UNWIND``\\ ed. Each distinct datetime travels once, in ``$times``, in the compact
form ``ZonedDateTimeProperty.expand`` turns back into a DATETIME on the server: the
driver's own encoding of a datetime costs more than the rest of a node.

This module does no I/O and is shared by both twins: ``Graph.run`` executes a
unit of work in the current transaction. New nodes get their properties from
per-class tables computed once from the neomodel class definitions (defaults
such as shortuuid ids and ``default_now`` timestamps, then each property's
``deflate``), so no node object is built and no per-instance introspection runs
on the hot paths.
"""

from __future__ import annotations

import functools
import itertools
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from neomodel.properties import Property
from neomodel.util import RelationshipDirection, escape_identifier

from memora_ogm.projection import projection, reading, stored_as_is
from memora_ogm.properties import ZonedDateTimeProperty, sent_form

#: Set and removed again to take a node's write lock without changing it.
LOCK_PROPERTY = "memora_lock"

MissingError = Callable[[Any], Exception]
"""Makes the not-found error of a match from what is missing (a key map for lists, else None)."""


@dataclass(frozen=True)
class ClassTable:
    """What writing a node of one class needs, computed once from its definition."""

    label: str
    #: Attribute name -> (database name, the type a value is stored as it is, or None,
    #: deflate). neomodel's deflate wraps each value in an error handler; a plain string
    #: property (no choices, no maximum length) stores a ``str`` as it is, an integer
    #: property an ``int``, so those skip it. Any other value still goes through it.
    deflate: Mapping[str, tuple[str, type | None, Callable[[Any], Any]]]
    #: (attribute name, database name, deflate, default factory) of each default.
    defaults: tuple[tuple[str, str, Callable[[Any], Any], Callable[[], Any]], ...]
    #: Required attributes without a default.
    required: tuple[str, ...]
    #: Database names of the properties stored as datetimes (see ``UnitOfWork._time``).
    times: tuple[str, ...]


@functools.cache
def table(cls: type) -> ClassTable:
    """The :class:`ClassTable` of ``cls``, built on first use."""
    properties: dict[str, Property[Any]] = {
        name: value
        for base in reversed(cls.__mro__)
        for name, value in vars(base).items()
        if isinstance(value, Property)
    }
    return ClassTable(
        label=cls.__label__,  # type: ignore[attr-defined]
        deflate={
            name: (prop.get_db_property_name(name), stored_as_is(prop), prop.deflate)
            for name, prop in properties.items()
        },
        defaults=tuple(
            (name, prop.get_db_property_name(name), prop.deflate, prop.default_value)
            for name, prop in properties.items()
            if prop.has_default
        ),
        required=tuple(
            name for name, prop in properties.items() if prop.required and not prop.has_default
        ),
        times=tuple(
            prop.get_db_property_name(name)
            for name, prop in properties.items()
            if isinstance(prop, ZonedDateTimeProperty)
        ),
    )


def node_properties(cls: type, values: Mapping[str, Any], defaults: bool = True) -> dict[str, Any]:
    """The stored properties of a node of ``cls``: defaults filled in, each value deflated.

    ``None`` is not stored (as neomodel); an unknown name is a programming error. Only
    the given values, defaults and required names are visited, not every property.
    """
    spec = table(cls)
    stored: dict[str, Any] = {}
    for name, value in values.items():
        entry = spec.deflate.get(name)
        if entry is None:
            unknown = sorted(set(values) - set(spec.deflate))
            raise TypeError(f"{cls.__name__} has no properties {unknown}")
        if value is not None:
            db_name, as_is, deflate = entry
            kept = type(value) is as_is or type(value) is Param
            stored[db_name] = value if kept else deflate(value)
    if defaults:
        for name, db_name, deflate, default in spec.defaults:
            if values.get(name) is None:
                stored[db_name] = deflate(default())
        for name in spec.required:
            if values.get(name) is None:
                raise ValueError(f"{cls.__name__}.{name} is required")
    return stored


def target_class(rel: Any) -> type:
    """The node class a relationship attribute points at (resolving names given as strings)."""
    if not isinstance(rel._raw_class, str):
        return rel._raw_class  # type: ignore[no-any-return]
    if "node_class" not in rel.definition:
        rel.lookup_node_class()
    return rel.definition["node_class"]  # type: ignore[no-any-return]


@functools.cache
def arrow(rel: Any, repeat: str = "") -> str:
    """One hop along ``rel`` from its declaring class, e.g. ``-[:IS_NEXT*0..]->``."""
    kind = f":{escape_identifier(rel.definition['relation_type'])}{repeat}"
    direction = rel.definition["direction"]
    if direction == RelationshipDirection.OUTGOING:
        return f"-[{kind}]->"
    if direction == RelationshipDirection.INCOMING:
        return f"<-[{kind}]-"
    return f"-[{kind}]-"


@functools.cache
def _label(cls: type) -> str:
    return escape_identifier(table(cls).label)


#: A property or variable name as Cypher reads it, escaped once per name.
_name = functools.cache(escape_identifier)


@dataclass(frozen=True, slots=True)
class Param:
    """A value a :class:`Prepared` unit of work is given when it runs: ``$name`` in its
    statement."""

    name: str


@dataclass(frozen=True, slots=True)
class Output:
    """An output in the body: its projection where it was declared (what a write has
    changed by then)."""

    value: str
    name: str

    def __str__(self) -> str:
        return f"WITH *, {self.value} AS {self.name}"


@dataclass(frozen=True)
class Ref:
    """A node (``many=False``) or a list of nodes bound in the statement."""

    expression: str
    cls: type
    many: bool
    #: Made by this unit of work: relationships to it are created, not merged.
    created: bool = False

    @property
    def items(self) -> str:
        """The Cypher list of the node(s)."""
        return self.expression if self.many else f"[{self.expression}]"


class UnitOfWork:
    """A builder for one statement (see the module docstring); no I/O."""

    def __init__(self) -> None:
        self.params: dict[str, Any] = {}
        self._head: list[str] = []
        self._checks: list[tuple[str, MissingError]] = []
        self._locks: list[str] = []
        self._body: list[str | Output] = []
        self._writes = False
        self._outputs: list[str] = []
        self._counter = itertools.count()
        self._times: list[datetime] = []
        self._time_index: dict[tuple[datetime, Any], int] = {}

    # -- names ------------------------------------------------------------------------

    def _var(self) -> str:
        return f"v{next(self._counter)}"

    def _param(self, value: Any) -> str:
        if type(value) is Param:
            return f"${value.name}"
        name = f"p{len(self.params)}"
        self.params[name] = value
        return f"${name}"

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

    def _value(self, value: Any) -> str:
        """A parameter holding ``value`` (a datetime: its entry of ``$times``)."""
        if isinstance(value, datetime):
            return ZonedDateTimeProperty.expand(f"$times[{self._time(value)}]")
        return self._param(value)

    def _assign(self, var: str, stored: Mapping[str, Any], operator: str) -> str:
        """SET items giving ``var`` the ``stored`` properties (``=`` replaces, ``+=`` adds):
        one map parameter, and its datetimes from ``$times``."""
        plain = {name: value for name, value in stored.items() if not isinstance(value, datetime)}
        items = [f"{var} {operator} {self._param(plain)}"]
        items.extend(
            f"{var}.{_name(name)} = {self._value(value)}"
            for name, value in stored.items()
            if isinstance(value, datetime)
        )
        return ", ".join(items)

    def _rows(self, cls: type, stored: Sequence[Mapping[str, Any]]) -> tuple[str, str, str]:
        """A list parameter of ``stored`` rows, the SET items that give ``node`` the
        properties of ``row``, and where a row keeps its plain properties (``row`` plus
        this suffix). For a class with datetime properties, ``.p`` maps the plain ones and
        ``.t`` indexes ``$times`` for each datetime (null where a row has none); a class
        without is sent as the rows themselves."""
        times = table(cls).times
        if not times:
            return self._param(stored), "node = row", ""
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
            f"node.{_name(name)} = " + ZonedDateTimeProperty.expand(f"$times[row.t[{index}]]")
            for index, name in enumerate(times)
        ]
        return self._param(rows), ", ".join(items), ".p"

    def _keys(self, cls: type, keys: Mapping[str, Any], source: str | None = None) -> str:
        """``{name: $p, ...}`` for ``keys`` deflated, or ``{name: source.name}`` for a row."""
        stored = node_properties(cls, keys, defaults=False)
        if source is not None:
            return ", ".join(f"{_name(name)}: {source}.{_name(name)}" for name in stored)
        return ", ".join(f"{_name(name)}: {self._value(value)}" for name, value in stored.items())

    def _head_only(self) -> None:
        if self._body:
            raise RuntimeError("matches come before the body of a unit of work")

    def _check(self, ref: Ref, missing: MissingError | None, lock: bool) -> Ref:
        if missing is not None:
            number = len(self._checks)
            self._checks.append(
                (f"CASE WHEN {ref.expression} IS NULL THEN [[{number}, null]] ELSE [] END", missing)
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
        var = self._var()
        self._head.append(f"OPTIONAL MATCH ({var}:{_label(cls)} {{{self._keys(cls, keys)}}})")
        return self._check(Ref(var, cls, False), missing and (lambda _: missing()), lock)

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
        var, cls = self._var(), target_class(rel)
        self._head.append(f"OPTIONAL MATCH ({start.expression}){arrow(rel)}({var}:{_label(cls)})")
        return self._check(Ref(var, cls, False), missing and (lambda _: missing()), lock)

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
        var = self._var()
        rows = [node_properties(cls, key, defaults=False) for key in keys]
        pattern = self._keys(cls, keys[0] if keys else {}, source="key") if keys else ""
        self._head.append(
            f"CALL () {{ UNWIND {self._param(rows)} AS key "
            f"OPTIONAL MATCH (found:{_label(cls)} {{{pattern}}}) "
            f"RETURN collect(found) AS {var}, "
            f"collect(CASE WHEN found IS NULL THEN key END) AS {var}_missing }}"
        )
        self._checks.append((f"[key IN {var}_missing | [{len(self._checks)}, key]]", missing))
        ref = Ref(var, cls, True)
        if lock:
            self.lock(ref)
        return ref

    # -- body: locks, reads and writes, run only when nothing is missing --------------------

    def lock(self, ref: Ref) -> None:
        """Take the write lock of the node(s) until the transaction ends.

        The locks of matched nodes come first in the body; a lock taken later in the
        body (of nodes found there) comes where it is declared.
        """
        self._writes = True
        name = _name(LOCK_PROPERTY)
        (self._body if self._body else self._locks).append(
            f"FOREACH (node IN {ref.items} | SET node.{name} = true REMOVE node.{name})"
        )

    def _bind(self, cls: type, expression: str, many: bool, created: bool = False) -> Ref:
        var = self._var()
        self._body.append(f"WITH *, {expression} AS {var}")
        return Ref(var, cls, many, created)

    def nodes(self, cls: type, limit: int | None = None, **keys: Any) -> Ref:
        """Every node of ``cls`` with the property values ``keys`` (e.g. all of one user),
        or at most ``limit`` of them.

        When ``keys`` are a part of the class's key, the rest of the key must exist too
        (as it does for every keyed node): the planner then seeks the key's index by its
        prefix instead of scanning the label.
        """
        match = f"MATCH (node:{_label(cls)} {{{self._keys(cls, keys)}}})"
        node_key = getattr(cls, "__node_key__", None)
        key: tuple[str, ...] = node_key[1] if node_key else ()
        if keys and set(keys) < set(key):
            rest = [f"node.{_name(name)} IS NOT NULL" for name in key if name not in keys]
            match += f" WHERE {' AND '.join(rest)}"
        top = "" if limit is None else f" LIMIT {self._param(limit)}"
        return self._bind(cls, f"COLLECT {{ {match} RETURN node{top} }}", True)

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
            f"(:{_label(target_class(rel))}){arrow(then_repeat, '*0..')}"
            if then_repeat is not None
            else ""
        )
        order = (
            f" ORDER BY node.{_name(order_by)}{' DESC' if descending else ''}" if order_by else ""
        )
        match = f"MATCH (start){hops}(node:{_label(cls)}) WHERE size(keys(node)) > 0"
        if limit is None:
            return self._bind(
                cls,
                f"COLLECT {{ UNWIND {start.items} AS start {match} RETURN DISTINCT node{order} }}",
                True,
            )
        # A subquery of its own that keeps only ``start``: the server counts what each row
        # carries, and a long chain's rows carrying the statement's lists outgrew its memory.
        var = self._var()
        self._body.append(
            f"WITH * CALL ({_vars(start)}) {{ UNWIND {start.items} AS start WITH start {match} "
            f"WITH DISTINCT node{order} LIMIT {self._param(limit)} "
            f"RETURN collect(node) AS {var} }}"
        )
        return Ref(var, cls, True)

    def as_list(self, ref: Ref) -> Ref:
        """The node(s) as a list."""
        return Ref(ref.items, ref.cls, True, ref.created)

    def concat(self, first: Ref, second: Ref) -> Ref:
        """``first``'s nodes then ``second``'s (e.g. the kept head of a chain and its new tail)."""
        return Ref(
            f"({first.items} + {second.items})", first.cls, True, first.created and second.created
        )

    def create(self, cls: type, **values: Any) -> tuple[Ref, dict[str, Any]]:
        """A new node of ``cls``; returns it and its stored properties (ids included)."""
        stored = node_properties(cls, values)
        var = self._var()
        self._writes = True
        self._body.append(f"CREATE ({var}:{_label(cls)}) SET {self._assign(var, stored, '=')}")
        return Ref(var, cls, False, created=True), stored

    def create_each(
        self, cls: type, rows: Sequence[Mapping[str, Any]]
    ) -> tuple[Ref, list[dict[str, Any]]]:
        """New nodes of ``cls``, one per row, in order; returns them and their properties."""
        stored = [node_properties(cls, row) for row in rows]
        var = self._var()
        self._writes = True
        param, assign, _ = self._rows(cls, stored)
        self._body.append(_create_rows(cls, param, assign, var))
        return Ref(var, cls, True, created=True), stored

    def keep_common_prefix(
        self, stored: Ref, rows: Sequence[Mapping[str, Any]], compared: Sequence[str]
    ) -> tuple[Ref, Ref]:
        """Make the ordered list ``stored`` hold ``rows``: keep its longest prefix whose
        ``compared`` properties equal the rows', delete the rest, and create nodes of its
        class for the rows after that prefix. Returns the kept nodes and the new ones.

        The prefix is found by the statement itself, so rewriting a list (an interaction's
        chain, on update) needs no read of it first.
        """
        cls = stored.cls
        spec = table(cls)
        names = [spec.deflate[field][0] for field in compared]
        if set(names) & set(spec.times):
            raise ValueError("datetimes cannot be compared here")
        given, kept, made = self._var(), self._var(), self._var()
        self._writes = True
        param, assign, plain = self._rows(cls, [node_properties(cls, row) for row in rows])
        same = " AND ".join(
            f"{stored.items}[k].{name} = {given}[k]{plain}.{name}" for name in map(_name, names)
        )
        self._body.append(f"WITH *, {param} AS {given}")
        self._body.append(
            f"WITH *, coalesce(head([k IN range(0, size({given}) - 1) "
            f"WHERE k >= size({stored.items}) OR NOT coalesce({same}, false)]), "
            f"size({given})) AS {kept}"
        )
        self._body.append(f"FOREACH (node IN {stored.items}[{kept}..] | DETACH DELETE node)")
        self._body.append(_create_rows(cls, f"{given}[{kept}..]", assign, made, given, kept))
        return Ref(f"{stored.items}[..{kept}]", cls, True), Ref(made, cls, True, created=True)

    def merge(self, cls: type, **keys: Any) -> Ref:
        """The node of ``cls`` with ``keys`` (its whole key), made if missing."""
        var = self._var()
        self._writes = True
        self._body.append(f"MERGE ({var}:{_label(cls)} {{{self._keys(cls, keys)}}})")
        return Ref(var, cls, False)

    def set(self, ref: Ref, **values: Any) -> None:
        """Set properties of the node(s)."""
        stored = node_properties(ref.cls, values, defaults=False)
        self._writes = True
        self._body.append(
            f"FOREACH (node IN {ref.items} | SET {self._assign('node', stored, '+=')})"
        )

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
        self._writes = True
        if pairs is None:
            if source.many and target.many:
                raise ValueError("linking two lists needs index pairs")
            if not (source.many or target.many):
                self._body.append(f"{verb} ({source.expression}){arrow(rel)}({target.expression})")
                return
            a, b, nodes = (
                ("node", target.expression, source.expression)
                if source.many
                else (source.expression, "node", target.expression)
            )
            self._body.append(f"FOREACH (node IN {nodes} | {verb} ({a}){arrow(rel)}({b}))")
            return
        self._body.append(
            f"WITH * CALL ({_vars(source, target)}) {{ "
            f"UNWIND {self._param([list(pair) for pair in pairs])} AS pair "
            f"WITH {source.items}[pair[0]] AS a, {target.items}[pair[1]] AS b "
            f"{verb} (a){arrow(rel)}(b) }}"
        )

    def delete(self, ref: Ref) -> None:
        """Detach and delete the node(s)."""
        self._writes = True
        self._body.append(f"FOREACH (node IN {ref.items} | DETACH DELETE node)")

    def delete_emptied(self, ref: Ref, rels: Sequence[Any]) -> None:
        """Detach and delete those of the node(s) that have no relationship along any of
        ``rels`` any more (an interaction whose messages and memories are gone)."""
        self._writes = True
        left = " OR ".join(f"EXISTS {{ (n){arrow(rel)}() }}" for rel in rels)
        self._body.append(
            f"FOREACH (node IN [n IN {ref.items} WHERE NOT ({left})] | DETACH DELETE node)"
        )

    def delete_unlinked(self, ref: Ref) -> None:
        """Delete those of the node(s) that no relationship touches any more."""
        self._writes = True
        self._body.append(
            f"FOREACH (node IN [n IN {ref.items} WHERE NOT EXISTS {{ (n)--() }}] | DELETE node)"
        )

    def output(self, name: str, ref: Ref) -> None:
        """Return the properties of the node(s) as ``name`` (read where this is called), as
        the class the reads go through projects them (:mod:`memora_ogm.projection`)."""
        fields = projection(reading(ref.cls))
        value = (
            f"[node IN {ref.expression} | {fields.map('node')}]"
            if ref.many
            else fields.map(ref.expression)
        )
        self._body.append(Output(value, _name(name)))
        self._outputs.append(_name(name))

    # -- the statement --------------------------------------------------------------------

    def compile(self) -> tuple[str, dict[str, Any]]:
        """The statement and its parameters; it returns ``missing`` and the outputs.

        ``missing`` lists ``[check number, key]`` for each missing thing (the key is null
        for a single node). A write computes it first and runs its body only when it is
        empty; a read is its matches and one RETURN, which computes it and projects the
        outputs declared last.
        """
        missing = " + ".join(check for check, _ in self._checks) or "[]"
        if self._writes:
            lines = [*self._head, f"WITH *, {missing} AS missing", "OPTIONAL CALL (*) {"]
            lines.append("WITH * WHERE missing = []")
            lines.extend(self._locks)
            lines.extend(map(str, self._body))
            lines.append("RETURN " + (", ".join(self._outputs) or "true AS written"))
            lines.append("}")
            lines.append("RETURN " + ", ".join(["missing", *self._outputs]))
        else:
            body = list(self._body)
            last: dict[str, str] = {}
            while body and isinstance(output := body[-1], Output):
                last[output.name] = output.value
                body.pop()
            returned = [
                f"{last[name]} AS {name}" if name in last else name for name in self._outputs
            ]
            lines = [*self._head, *map(str, body)]
            lines.append("RETURN " + ", ".join([f"{missing} AS missing", *returned]))
        return "\n".join(lines), {**self.params, "times": [sent_form(t) for t in self._times]}

    def raise_missing(self, missing: Sequence[Sequence[Any]]) -> None:
        """Raise the error of the first missing thing the statement reported, if any."""
        if missing:
            number, entry = missing[0]
            raise self._checks[number][1](entry)

    def delete_everything(self, limit: int) -> None:
        """Delete one batch of the whole graph, whatever its labels (the test helpers'
        clean; the schema stays): up to ``limit`` relationships, then, when that took the
        last of them, up to ``limit`` nodes. Outputs ``deleted`` (the nodes deleted) and
        ``emptied`` (whether the graph is empty now).

        Relationships go first so that no batch grows with a node's degree: a day or a
        collection of a long run links hundreds of thousands of nodes.
        """
        self._writes = True
        rels, nodes, batch = self._var(), self._var(), self._param(limit)
        self._body.append(
            f"WITH *, COLLECT {{ MATCH ()-[r]->() RETURN r LIMIT {batch} }} AS {rels}"
        )
        self._body.append(f"FOREACH (r IN {rels} | DELETE r)")
        self._body.append(
            f"WITH *, CASE WHEN size({rels}) < {batch} "
            f"THEN COLLECT {{ MATCH (n) RETURN n LIMIT {batch} }} ELSE [] END AS {nodes}"
        )
        self._body.append(f"FOREACH (node IN {nodes} | DELETE node)")
        self._body.append(f"WITH *, size({nodes}) AS deleted")
        self._body.append(f"WITH *, size({rels}) < {batch} AND size({nodes}) < {batch} AS emptied")
        self._outputs.extend(["deleted", "emptied"])

    # -- migrations ------------------------------------------------------------------------

    def lacking(self, cls: type, rel: Any, limit: int) -> Ref:
        """At most ``limit`` nodes of ``cls`` with no relationship along ``rel`` (what a
        migration's batch still has to link)."""
        match = f"MATCH (node:{_label(cls)}) WHERE NOT EXISTS {{ (node){arrow(rel)}() }}"
        return self._bind(
            cls, f"COLLECT {{ {match} RETURN node LIMIT {self._param(limit)} }}", True
        )

    def merge_linked(
        self, nodes: Ref, rel: Any, copied: Sequence[str], days: Mapping[str, str]
    ) -> None:
        """Link each of ``nodes`` along ``rel`` to the node of its target class keyed by
        the node's own ``copied`` properties and, for each ``days`` entry (target property
        -> the node's datetime property), that datetime's calendar day as the server has
        it (in its stored offset or zone), made if missing."""
        source, target = table(nodes.cls), table(target_class(rel))
        keys = [
            f"{_name(target.deflate[name][0])}: node.{_name(source.deflate[name][0])}"
            for name in copied
        ] + [
            f"{_name(target.deflate[day][0])}: date(node.{_name(source.deflate[stamp][0])})"
            for day, stamp in days.items()
        ]
        self._writes = True
        self._body.append(
            f"FOREACH (node IN {nodes.items} | MERGE (linked:{_label(target_class(rel))} "
            f"{{{', '.join(keys)}}}) MERGE (node){arrow(rel)}(linked))"
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
        match = f"MATCH (node:{_label(cls)} {{{self._keys(cls, keys)}}})"
        if after is not None:
            match += f" WHERE node.{_name(names[-1])} > {self._param(after)}"
        order = ", ".join(f"node.{_name(name)}" for name in names)
        return self._bind(
            cls,
            f"COLLECT {{ {match} RETURN node ORDER BY {order} LIMIT {self._param(limit)} }}",
            True,
        )

    def output_each(self, name: str, ref: Ref, **related: Related) -> None:
        """:meth:`output` of a list, each node's map adding, per name of ``related``, the
        list of what it reaches (a page of interactions with their messages and days)."""
        fields = projection(reading(ref.cls))
        reached = {key: value.collect("node") for key, value in related.items()}
        self._body.append(
            Output(f"[node IN {ref.items} | {fields.map('node', **reached)}]", _name(name))
        )
        self._outputs.append(_name(name))

    # -- batches: operations of the tenant import (memora_ogm._async.transfer) -------------

    def find_each(self, cls: type, keys: Sequence[Mapping[str, Any]]) -> Ref:
        """Those of the nodes of ``cls`` with each of ``keys`` that exist (an index seek a
        key), in no order, with no not-found check: what an import finds there already."""
        rows = [node_properties(cls, key, defaults=False) for key in keys]
        pattern = self._keys(cls, keys[0], source="key") if keys else ""
        return self._bind(
            cls,
            f"COLLECT {{ UNWIND {self._param(rows)} AS key "
            f"MATCH (node:{_label(cls)} {{{pattern}}}) RETURN node }}",
            True,
        )

    def nodes_in(self, cls: type, name: str, values: Sequence[Any]) -> Ref:
        """The nodes of ``cls`` whose property ``name`` is one of ``values``: one pass over
        the label when no index starts with ``name``, so give many values at a time."""
        db_name = table(cls).deflate[name][0]
        return self._bind(
            cls,
            f"COLLECT {{ MATCH (node:{_label(cls)}) WHERE node.{_name(db_name)} "
            f"IN {self._param(list(values))} RETURN node }}",
            True,
        )

    def related_each(self, starts: Ref, rel: Any) -> Ref:
        """For each node of ``starts``, in order, the node one hop along ``rel`` (null when
        there is none): the collections of a batch's users."""
        cls = target_class(rel)
        return self._bind(
            cls,
            f"[start IN {starts.items} | head([(start){arrow(rel)}(node:{_label(cls)}) | node])]",
            True,
        )

    def merge_each(self, cls: type, rows: Sequence[Mapping[str, Any]]) -> Ref:
        """The nodes of ``cls`` with each of ``rows`` (a whole key each), made where
        missing, in order: a batch's days, as :meth:`merge` is one call's."""
        stored = [node_properties(cls, row, defaults=False) for row in rows]
        var = self._var()
        self._writes = True
        pattern = self._keys(cls, rows[0], source="row") if rows else ""
        self._body.append(
            f"WITH * CALL () {{ UNWIND {self._param(stored)} AS row "
            f"MERGE (node:{_label(cls)} {{{pattern}}}) RETURN collect(node) AS {var} }}"
        )
        return Ref(var, cls, True)

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
        order = _name(order_by)
        verb = "CREATE" if source.created else "MERGE"
        self._writes = True
        self._body.append(
            f"WITH * CALL ({_vars(source, starts)}) {{ "
            f"UNWIND {self._param([[j, wanted] for j, wanted in groups.items()])} AS chain "
            f"WITH {source.items} AS sources, {starts.items}[chain[0]] AS start, "
            "chain[1] AS wanted "
            "WITH sources, wanted, COLLECT { MATCH (start)"
            f"{arrow(first)}(:{_label(target_class(first))}){arrow(then, '*0..')}"
            f"(node:{_label(cls)}) RETURN node ORDER BY node.{order} }} AS nodes "
            "UNWIND wanted AS link "
            "WITH sources[link[0]] AS a, nodes[link[1]] AS b, link[1] AS position "
            f"WHERE b.{order} = position {verb} (a){arrow(rel)}(b) }}"
        )

    def output_reached(self, name: str, starts: Ref, rel: Any, fields: Sequence[str]) -> None:
        """Return as ``name``, for each node of ``starts`` in order, the ``fields`` (as a
        list) of each node one hop along ``rel`` from it: the links a batch finds there."""
        cls = target_class(rel)
        spec = table(cls)
        values = ", ".join(f"node.{_name(spec.deflate[field][0])}" for field in fields)
        self._body.append(
            Output(
                f"[start IN {starts.items} | "
                f"[(start){arrow(rel)}(node:{_label(cls)}) | [{values}]]]",
                _name(name),
            )
        )
        self._outputs.append(_name(name))


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

    def collect(self, start: str) -> str:
        """Cypher of the list, for the node ``start``; nodes a concurrent delete left
        without properties are skipped."""
        first, *repeat = self.rels
        cls = target_class(repeat[0] if repeat else first)
        hops = arrow(first) + (
            f"(:{_label(target_class(first))}){arrow(repeat[0], '*0..')}" if repeat else ""
        )
        spec = table(cls)
        names = [_name(spec.deflate[name][0]) for name in self.properties]
        values = [f"reached.{name}" for name in names]
        value = values[0] if len(values) == 1 else f"[{', '.join(values)}]"
        where = ["size(keys(reached)) > 0"] + [
            f"reached.{_name(spec.deflate[name][0])} = {start}.{_name(spec.deflate[name][0])}"
            for name in self.same
        ]
        order = (
            f" ORDER BY reached.{_name(spec.deflate[self.order_by][0])}" if self.order_by else ""
        )
        return (
            f"COLLECT {{ MATCH ({start}){hops}(reached:{_label(cls)}) "
            f"WHERE {' AND '.join(where)} RETURN {value}{order} }}"
        )


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


#: What ``Graph`` runs: a unit of work, or a prepared read bound to a call's values.
Statement = UnitOfWork | Bound


def _create_rows(cls: type, rows: str, assign: str, var: str, *imports: str) -> str:
    """A subquery creating a node of ``cls`` per row of ``rows``, collected in order as
    ``var``."""
    return (
        f"WITH * CALL ({', '.join(imports)}) {{ UNWIND {rows} AS row "
        f"CREATE (node:{_label(cls)}) SET {assign} RETURN collect(node) AS {var} }}"
    )


def _vars(*refs: Ref) -> str:
    """The variables a subquery over ``refs`` imports."""
    names: list[str] = []
    for ref in refs:
        for name in _variables(ref.expression):
            if name not in names:
                names.append(name)
    return ", ".join(names)


@functools.cache
def _variables(expression: str) -> list[str]:
    return re.findall(r"\bv\d+\b", expression)
