"""One facade call's graph work, declared on the node classes and compiled into one statement.

The head matches everything the call needs and lists what is missing; the body runs only
when nothing is, so a failing call writes nothing in one round trip. The text depends on
the call's shape, never on its list lengths (lists are parameters). Each distinct datetime
travels once, in ``$times``, in the compact form ``plan.expand`` reads
(the driver's own datetime encoding costs more than the rest of a node). No I/O, Cypher
text or Memora name here: domain modules extend a unit through ``add``, ``bind``,
``param``, ``rows`` and ``output_value``.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from memora_ogm.engine.mapping import (
    Param,
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
    Bind,
    Clause,
    Cypher,
    Match,
    Output,
    Piece,
    Subquery,
    Update,
    Var,
    alias,
    assign,
    cached,
    call_subquery,
    case,
    collect,
    collected,
    count,
    create,
    cy,
    delete,
    dot,
    each,
    exists,
    expand,
    flatten,
    foreach,
    hop,
    is_null,
    items,
    join,
    match,
    merge,
    negate,
    node,
    order,
    parameter,
    properties,
    returning,
    set_,
    set_label,
    statement,
    unwind,
    with_,
)
from memora_ogm.engine.projection import projection, reading, table
from memora_ogm.neomodel_compat import target_class
from memora_ogm.properties import sent_form

#: The parameter holding each distinct datetime of a statement once.
TIMES = parameter("times")
MissingError = Callable[[Any], Exception]
"""Makes the not-found error of a match from what is missing (a key map for lists, else None)."""


@dataclass(frozen=True, slots=True)
class Ref:
    """A node (``many=False``) or a list of nodes bound in the plan."""

    expression: Var | Cypher
    cls: type
    many: bool
    #: Made by this unit of work: relationships to it are created, not merged.
    created: bool = False

    @property
    def items(self) -> Var | Cypher:
        return self.expression if self.many else cy("[", self.expression, "]")


class UnitOfWork:
    """A builder of one statement's plan.

    Each step is declared with its shape (all its text depends on) and the values it
    sends, and builds its clauses only when the statement's shape is new: most calls
    repeat a shape, and then build no plan at all (:meth:`shape`).

    ``batched`` (erasure, import, migration batches) keeps the server's cached plan
    (``CYPHER replan=skip``): the label counts a batch moves would make the server replan,
    a second or more each time, to the same plan.
    """

    def __init__(self, *, batched: bool = False) -> None:
        self.batched = batched
        self.params: dict[str, Any] = {}
        #: Each step's shape, and what builds its clauses (handed the work: a builder that
        #: held it would make every unit of work garbage for the cyclic collector).
        self._steps: list[tuple[tuple[Any, ...], Callable[[UnitOfWork], None]]] = []
        self._errors: list[MissingError] = []
        self._has_body = False
        self._writes = False
        self._outputs: list[tuple[Var, str]] = []
        #: Index in ``$times`` of each distinct (datetime, zone): one time stamps many nodes.
        self._times: dict[tuple[datetime, Any], int] = {}
        # The plan, once built: the head's matches, each check, the locks, the body.
        self._built = False
        self._head: list[Clause] = []
        self._checks: list[Cypher] = []
        self._locks: list[Clause] = []
        self._body: list[Clause] = []
        #: The steps' shapes flattened, once asked (a waiting write asks for two forms).
        self._flat: tuple[Any, ...] | None = None

    def _step(self, shape: tuple[Any, ...], build: Callable[[UnitOfWork], None]) -> None:
        self._steps.append((shape, build))
        self._flat = None

    def _later(
        self, shape: tuple[Any, ...], clause: Callable[[], Clause], *, writes: bool = False
    ) -> None:
        """A body clause of ``shape``, built by ``clause()`` if the statement is laid out."""
        self._has_body = True
        self._writes = self._writes or writes
        self._step(shape, lambda work: work._body.append(clause()))

    def add(self, clause: Clause, *, writes: bool = False) -> None:
        """Append ``clause`` to the body (an :class:`Update` or ``writes`` make a write)."""
        shape = (type(clause), clause.binds, clause.text, getattr(clause, "name", ""))
        self._later(shape, lambda: clause, writes=writes or isinstance(clause, Update))

    def bind(self, cls: type, value: Cypher, many: bool = True, created: bool = False) -> Ref:
        var = Var(hint(cls, many))
        self.add(Bind(var, value))
        return Ref(var, cls, many, created)

    def properties(self, cls: type, keys: Mapping[str, Any]) -> Cypher:
        """``name: $name, ...``: ``keys`` deflated, by stored name, as parameters."""
        return properties(self._values(cls, keys))

    def param(self, value: Any, name: str) -> str:
        """``$name`` holding ``value`` (``$name_2`` if taken by another value)."""
        if type(value) is Param:
            return parameter(value.name)
        base, number = name, 1
        while name in self.params:
            known = self.params[name]
            if type(known) is type(value) and isinstance(value, str | int) and known == value:
                return parameter(name)
            number += 1
            name = f"{base}_{number}"
        self.params[name] = value
        return parameter(name)

    def output_value(self, name: str, value: Cypher) -> Var:
        """Return ``value`` as ``name``, computed at this point of the body."""
        var = Var(name)
        self.add(Output(var, value, name))
        self._outputs.append((var, name))
        return var

    def _time(self, value: datetime) -> int:
        return self._times.setdefault((value, value.tzinfo), len(self._times))

    def _value(self, value: Any, name: str) -> str:
        if isinstance(value, datetime):
            return expand(f"{TIMES}[{self._time(value)}]").render({})
        return self.param(value, name)

    def _assigned(self, stored: Mapping[str, Any], name: str) -> Assigned:
        """SET values: one map parameter ``$name`` and the datetimes from ``$times``."""
        plain = {key: value for key, value in stored.items() if not isinstance(value, datetime)}
        return self.param(plain, name), tuple(
            (key, self._value(value, key))
            for key, value in stored.items()
            if isinstance(value, datetime)
        )

    def rows(self, cls: type, stored: Sequence[Mapping[str, Any]]) -> tuple[str, Cypher, str]:
        """The list parameter of ``stored``, the SET items giving ``node`` a ``row``, and the
        suffix of a row's plain properties: ``.p`` (``.t`` indexes ``$times``) for a class
        with datetimes, else none."""
        times = table(cls).times
        if not times:
            return self.param(stored, hint(cls, many=True)), _row_assignment(cls), ""
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
        return self.param(rows, hint(cls, many=True)), _row_assignment(cls), ".p"

    def _values(self, cls: type, keys: Mapping[str, Any]) -> dict[str, str]:
        stored = node_properties(cls, keys, defaults=False)
        return {name: self._value(value, name) for name, value in stored.items()}

    def _head_step(
        self, shape: tuple[Any, ...], clause: Callable[[], Clause], lock: Ref | None
    ) -> None:
        if self._has_body:
            raise RuntimeError("matches come before the body of a unit of work")
        self._step(shape, lambda work: work._head.append(clause()))
        if lock is not None:
            self.lock(lock)

    def _check(self, missing: MissingError, of: Var, found: Callable[[int], Cypher]) -> None:
        """Check ``number`` (the next): ``found(number)`` lists what ``of`` misses, which
        ``missing`` (given its entry) raises."""
        number = len(self._errors)
        self._errors.append(missing)
        self._step(("check", of, number), lambda work: work._checks.append(found(number)))

    def match(
        self,
        cls: type,
        missing: Callable[[], Exception] | None = None,
        *,
        lock: bool = False,
        **keys: Any,
    ) -> Ref:
        """The node of ``cls`` with ``keys``; raises ``missing()`` when there is none."""
        var = Var(hint(cls))
        values = self._values(cls, keys)
        shape = ("match", cls, var, *values, *values.values())
        return self._one(
            shape, cls, var, lambda: node(var, label(cls), properties(values)), missing, lock
        )

    def match_related(
        self,
        start: Ref,
        rel: Any,
        missing: Callable[[], Exception] | None = None,
        *,
        lock: bool = False,
    ) -> Ref:
        """The node one hop along ``rel`` from ``start`` (e.g. a user's memory collection)."""
        cls = target_class(rel)
        var = Var(hint(cls))
        shape = ("match_related", start.expression, rel, var)
        return self._one(
            shape,
            cls,
            var,
            lambda: path(node(start.expression), rel, None, node(var, label(cls))),
            missing,
            lock,
        )

    def _one(
        self,
        shape: tuple[Any, ...],
        cls: type,
        var: Var,
        pattern: Callable[[], Cypher],
        missing: Callable[[], Exception] | None,
        lock: bool,
    ) -> Ref:
        ref = Ref(var, cls, False)
        if missing is not None:
            self._check(
                lambda _: missing(), var, lambda n: case(is_null(var), f"[[{n}, null]]", "[]")
            )
        self._head_step(shape, lambda: Match(pattern(), (var,)), ref if lock else None)
        return ref

    def match_each(
        self,
        cls: type,
        keys: Sequence[Mapping[str, Any]],
        missing: Callable[[Mapping[str, Any]], Exception],
        *,
        lock: bool = False,
    ) -> Ref:
        """The nodes of ``cls`` with each of ``keys``, in order; ``missing(key)`` for the first
        key with none."""
        var, gone = Var(hint(cls, many=True)), Var(f"{hint(cls)}_missing")
        rows = [node_properties(cls, key, defaults=False) for key in keys]
        names = tuple(rows[0]) if rows else ()
        self._check(missing, gone, lambda n: each("key", gone, f"[{n}, key]"))
        param = self.param(rows, f"{hint(cls)}_keys")

        def found() -> Subquery:
            pattern = properties({name: dot("key", name) for name in names})
            return call_subquery(
                unwind(param, "key"),
                match(node("found", label(cls), pattern), optional=True),
                returning(
                    alias(collected("found"), var),
                    alias(collected(case(is_null("found"), "key")), gone),
                ),
                binds=(var, gone),
            )

        ref = Ref(var, cls, True)
        self._head_step(("match_each", cls, var, gone, names, param), found, ref if lock else None)
        return ref

    def lock(self, ref: Ref) -> None:
        """Write-lock the node(s) until commit: first in the body for matched nodes.

        Setting a label the node has takes the lock and writes nothing, so the commit has
        nothing to apply (unlike a property set and removed again).
        """
        self._writes = True
        in_body = self._has_body

        def build(work: UnitOfWork) -> None:
            clause = Update(foreach("node", ref.items, set_label("node", label(ref.cls))))
            (work._body if in_body else work._locks).append(clause)

        self._step(("lock", ref.expression, ref.many, ref.cls, in_body), build)

    def nodes(
        self, cls: type, limit: int | None = None, *, order_by: Sequence[str] = (), **keys: Any
    ) -> Ref:
        """The nodes of ``cls`` with ``keys`` (at most ``limit``, first in ``order_by``)."""
        values = self._values(cls, keys)
        found = match(
            node("node", label(cls), properties(values)), *_rest_of_key(cls, values, "node")
        )
        spec = table(cls)
        by = [dot("node", spec.deflate[name][0]) for name in order_by]
        top = "" if limit is None else self.param(limit, f"{hint(cls, True)}_limit")
        return self.bind(cls, collect(found, returning("node", order_by=by, limit=top)))

    def count(self, cls: type, *, having: Any | None = None, **keys: Any) -> Cypher:
        """How many nodes :meth:`nodes` finds (with a ``having`` relationship if given)."""
        return count_nodes(cls, self._values(cls, keys), having)

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
        """The nodes one hop along ``rel`` from ``start``, then ``then_repeat`` 0+ times,
        skipping those a concurrent delete emptied. ``limit`` stops expanding a hub early."""
        cls = target_class(then_repeat if then_repeat is not None else rel)
        var = Var(hint(cls, many=True))
        top = None if limit is None else self.param(limit, f"{var.hint}_limit")
        shape = ("reachable", start.expression, start.many, rel, then_repeat, order_by)

        def clause() -> Clause:
            found = match(
                path(node("start"), rel, then_repeat, node("node", label(cls))),
                present(cls, "node"),
            )
            by = [cy(dot("node", order_by), " DESC" if descending else "")] if order_by else []
            starts = unwind(start.items, "start")
            if top is None:
                value = collect(starts, found, returning("node", distinct=True, order_by=by))
                return Bind(var, value)
            # Rows keep only ``start``: a long chain's rows carrying the lists outgrew memory.
            return call_subquery(
                starts,
                with_("start"),
                found,
                cy(with_("node", distinct=True), *order(by, top)),
                returning(alias(collected("node"), var)),
                binds=(var,),
            )

        self._later((*shape, descending, top, var), clause)
        return Ref(var, cls, True)

    def as_list(self, ref: Ref) -> Ref:
        return Ref(ref.items, ref.cls, True, ref.created)

    def concat(self, first: Ref, second: Ref) -> Ref:
        """``first``'s nodes then ``second``'s, bound once so a link does not rebuild it per row."""
        created = first.created and second.created
        return self.bind(first.cls, cy(first.items, " + ", second.items), created=created)

    def create(self, cls: type, **values: Any) -> tuple[Ref, dict[str, Any]]:
        """A new node of ``cls`` and its stored properties (ids included)."""
        stored = node_properties(cls, values)
        var = Var(hint(cls))
        assigned = self._assigned(stored, hint(cls))

        def clause() -> Update:
            return Update(
                cy(create(node(var, label(cls))), "\n", assign_all(var, "=", assigned)), (var,)
            )

        self._later(("create", cls, var, assigned), clause, writes=True)
        return Ref(var, cls, False, created=True), stored

    def create_each(
        self, cls: type, rows: Sequence[Mapping[str, Any]]
    ) -> tuple[Ref, list[dict[str, Any]]]:
        """New nodes of ``cls``, one per row, and their stored properties."""
        stored = [node_properties(cls, row) for row in rows]
        var = Var(hint(cls, many=True))
        param, assigned, _ = self.rows(cls, stored)
        self._later(
            ("create_each", cls, var, param),
            lambda: create_rows(cls, cy(param), assigned, var),
            writes=True,
        )
        return Ref(var, cls, True, created=True), stored

    def merge(self, cls: type, **keys: Any) -> Ref:
        """The node of ``cls`` with ``keys`` (its whole key), made if missing."""
        var = Var(hint(cls))
        values = self._values(cls, keys)

        def clause() -> Update:
            return Update(merge(node(var, label(cls), properties(values))), (var,))

        self._later(("merge", cls, var, *values, *values.values()), clause, writes=True)
        return Ref(var, cls, False)

    def set(self, ref: Ref, **values: Any) -> None:
        stored = node_properties(ref.cls, values, defaults=False)
        assigned = self._assigned(stored, f"{hint(ref.cls)}_changes")

        def clause() -> Update:
            return Update(foreach("node", ref.items, assign_all("node", "+=", assigned)))

        self._later(("set", ref.expression, ref.many, assigned), clause, writes=True)

    def link(
        self,
        rel: Any,
        source: Ref,
        target: Ref,
        pairs: Sequence[tuple[int, int]] | None = None,
    ) -> None:
        """Link ``source`` to ``target`` along ``rel``: by index ``pairs`` for two lists, else
        each node with the single one. Created to a new node, else merged."""
        write = create if source.created or target.created else merge
        if pairs is None and source.many and target.many:
            raise ValueError("linking two lists needs index pairs")
        param = None if pairs is None else self.param([list(p) for p in pairs], relation_name(rel))
        ends = (source.expression, source.many, target.expression, target.many)
        self._later(
            ("link", rel, write, ends, param),
            lambda: _link(rel, write, source, target, param),
            writes=True,
        )

    def delete(self, ref: Ref) -> None:
        self._later(
            ("delete", ref.expression, ref.many),
            lambda: Update(foreach("node", ref.items, delete("node"))),
            writes=True,
        )

    def delete_emptied(self, ref: Ref, rels: Sequence[Any]) -> None:
        """Detach and delete the node(s) left with no relationship along any of ``rels``."""
        left = join(" OR ", (exists(path(node("n"), rel)) for rel in rels))
        emptied = each("n", ref.items, condition=negate(left, grouped=True))
        self.add(Update(foreach("node", emptied, delete("node"))))

    def delete_unlinked(self, ref: Ref) -> None:
        """Delete the node(s) no relationship touches any more."""
        linked = exists(cy(node("n"), hop(), node()))
        unlinked = each("n", ref.items, condition=negate(linked))
        self.add(Update(foreach("node", unlinked, delete("node", detach=False))))

    def output(self, name: str, ref: Ref, **added: Callable[[str | Var], Cypher]) -> None:
        """Return the node(s) as ``name``, projected as reads project them, plus ``added``."""
        fields = projection(reading(ref.cls))
        if ref.many:
            entries = {key: make("node") for key, make in added.items()}
            value = each("node", ref.expression, fields.map("node", **entries))
        else:
            var = ref.expression
            assert isinstance(var, Var)
            value = fields.map(var, **{key: make(var) for key, make in added.items()})
        self.output_value(name, value)

    def compiled(self, *, batched: bool = False) -> Compiled:
        """The statement compiled, holding nothing of the plan that built it (a declared
        save is some 300 objects for the cyclic collector, this some 30); with
        ``batched``, also its batched form's text, so a write can wait in a queue as this."""
        text = cached(self.shape(True), lambda: self._lay_out(True)) if batched else None
        return Compiled(self.compile(), functools.partial(_raise_missing, self._errors), text)

    def shape(self, per_row: bool = False) -> tuple[Any, ...]:
        """All the statement's text depends on: each step's shape, in order (a variable as
        its hint where it first appears and as that number after)."""
        if self._flat is None:
            pieces: list[Any] = []
            numbers: dict[Var, int] = {}
            for shape, _ in self._steps:
                flatten(shape, pieces, numbers)
            self._flat = tuple(pieces)
        return (self.batched, self._writes, per_row, *self._flat)

    def compile(self, per_row: bool = False) -> tuple[str, dict[str, Any]]:
        """The statement and its parameters; ``missing`` lists ``[check, key or null]``.

        ``per_row``: a write's batched form, run once per row of ``$batch``, each row one
        call's parameters (see :func:`memora_ogm.engine.call.batch_of`)."""
        query = cached(self.shape(per_row), lambda: self._lay_out(per_row))
        return query, {**self.params, "times": [sent_form(time) for time, _ in self._times]}

    def _build(self) -> None:
        if not self._built:
            self._built = True
            for _, build in self._steps:
                build(self)

    def _lay_out(self, per_row: bool) -> str:
        self._build()
        missing = cy(items(self._checks, " +")) if self._checks else cy("[]")
        return statement(
            self._head,
            missing,
            [*self._locks, *self._body],
            self._outputs,
            writes=self._writes,
            keep_plan=self.batched,
            per_row=per_row,
        )

    def raise_missing(self, missing: Sequence[Sequence[Any]]) -> None:
        _raise_missing(self._errors, missing)

    def __repr__(self) -> str:
        self._build()
        kind = "write" if self._writes else "read"
        return (
            f"<UnitOfWork {kind}: {len(self._head)} matches, {len(self._checks)} checks, "
            f"{len(self._locks) + len(self._body)} body clauses, "
            f"outputs {[name for _, name in self._outputs]}>"
        )


def _raise_missing(errors: Sequence[MissingError], missing: Sequence[Sequence[Any]]) -> None:
    """Raise the error of the first ``[check, entry]`` a statement found missing."""
    if missing:
        number, entry = missing[0]
        raise errors[number](entry)


#: SET values (:meth:`UnitOfWork._assigned`): the map parameter of the plain values, and
#: each datetime's name and ``$times`` entry.
Assigned = tuple[str, tuple[tuple[str, str], ...]]


def assign_all(target: Var | str, operator: str, assigned: Assigned) -> Cypher:
    """``SET target = $map, target.time = ...`` (``operator`` ``=`` or ``+=``)."""
    param, times = assigned
    return assign(
        [cy(target, f" {operator} {param}")]
        + [cy(dot(target, key), f" = {value}") for key, value in times]
    )


def _link(
    rel: Any, write: Callable[[Piece], Cypher], source: Ref, target: Ref, pairs: str | None
) -> Clause:
    """The clause of :meth:`UnitOfWork.link`."""
    if pairs is None:
        if not (source.many or target.many):
            return Update(write(between(source.expression, rel, target.expression)))
        a, b, nodes = (
            ("node", target.expression, source.expression)
            if source.many
            else (source.expression, "node", target.expression)
        )
        return Update(foreach("node", nodes, write(between(a, rel, b))))
    return call_subquery(
        unwind(pairs, "pair"),
        with_(alias(cy(source.items, "[pair[0]]"), "a"), alias(cy(target.items, "[pair[1]]"), "b")),
        _pair_link(write, rel),
    )


@functools.cache
def _row_assignment(cls: type) -> Cypher:
    """The SET items giving ``node`` a row of :meth:`UnitOfWork.rows`."""
    times = table(cls).times
    if not times:
        return cy("node = row")
    return cy(
        items(
            [cy("node = row.p")]
            + [
                cy(dot("node", name), " = ", expand(f"{TIMES}[row.t[{index}]]"))
                for index, name in enumerate(times)
            ]
        )
    )


@functools.cache
def _pair_link(write: Callable[[Piece], Cypher], rel: Any) -> Cypher:
    return write(between("a", rel, "b"))


@functools.cache
def _created(cls: type) -> Cypher:
    return create(node("node", label(cls)))


def _rest_of_key(cls: type, given: Mapping[str, Any], var: str) -> list[Cypher]:
    """For ``given`` a part of ``cls``'s key, the rest not null: the planner then seeks the
    key index by prefix instead of scanning the label."""
    node_key = getattr(cls, "__node_key__", None)
    key: tuple[str, ...] = node_key[1] if node_key else ()
    if not given or not set(given) < set(key):
        return []
    return [is_null(dot(var, name), null=False) for name in key if name not in given]


def count_nodes(cls: type, values: Mapping[str, str | Cypher], having: Any | None) -> Cypher:
    """``COUNT`` of ``cls`` nodes with ``values`` (by stored name), and ``having`` if given."""
    conditions: list[Piece] = list(_rest_of_key(cls, values, "counted"))
    if having is not None:
        target = node("", label(target_class(having)))
        conditions.append(exists(path(node("counted"), having, None, target)))
    return count(match(node("counted", label(cls), properties(values)), *conditions))


def row_properties(cls: type, key: Mapping[str, Any], source: str) -> Cypher:
    """``name: source.name, ...`` for the stored names of ``key``."""
    stored = node_properties(cls, key, defaults=False)
    return properties({name: dot(source, name) for name in stored})


class Prepared:
    """A read compiled once per twin's :class:`Nodes`, each value a :class:`Param`
    (compiling was most of a read by ids). Values may only be match keys; a not-found
    declares again, for the error's ids."""

    def __init__(self, declare: Callable[..., Any]) -> None:
        self._declare = declare
        self._statements: dict[Nodes, tuple[str, dict[str, Any]]] = {}

    def bind(self, nodes: Nodes, **values: Any) -> Compiled:
        statement = self._statements.get(nodes)
        if statement is None:
            work = UnitOfWork()
            self._declare(nodes, work, **{name: Param(name) for name in values})
            query, params = work.compile()
            clashing = set(values) & set(params)
            if clashing or work._writes or work._times:
                raise RuntimeError(f"not a read of fixed shape: {sorted(clashing)}")
            statement = self._statements[nodes] = query, params
        query, params = statement

        def raise_missing(missing: Sequence[Sequence[Any]]) -> None:
            work = UnitOfWork()
            self._declare(nodes, work, **values)
            work.raise_missing(missing)

        return Compiled((query, {**params, **values}), raise_missing)


@dataclass(frozen=True, slots=True)
class Compiled:
    """A statement compiled once (a retry reruns it as is) and its not-found errors."""

    statement: tuple[str, dict[str, Any]]
    errors: Callable[[Sequence[Sequence[Any]]], None]
    #: The text of the batched form (run once per row of ``$batch``), if compiled.
    batched: str | None = None

    def compile(self) -> tuple[str, dict[str, Any]]:
        return self.statement

    def raise_missing(self, missing: Sequence[Sequence[Any]]) -> None:
        if missing:
            self.errors(missing)


#: What ``Graph`` runs.
Statement = UnitOfWork | Compiled


def create_rows(cls: type, rows: Cypher, assigned: Cypher, var: Var) -> Subquery:
    """A subquery creating a ``cls`` node per row (``assigned`` sets ``node`` from ``row``),
    collected in order as ``var``."""
    return call_subquery(
        unwind(rows, "row"),
        _created(cls),
        set_(assigned),
        returning(alias(collected("node"), var)),
        binds=(var,),
    )
