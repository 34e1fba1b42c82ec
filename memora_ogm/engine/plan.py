"""The engine's renderer, the only engine module that spells Cypher: a plan is a list of
frozen clauses whose text holds :class:`Var` objects, so what a clause reads and binds is
known without parsing. Compiling names variables after their hints (``user_2``) and makes
each ``WITH`` and subquery import carry only what a later clause reads, so a big list is
dropped as soon as nothing needs it. Nothing here knows neomodel or Memora.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from neomodel.util import escape_identifier

#: A name Cypher reads without backticks.
_PLAIN = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")

#: Local names of generated subqueries and list expressions, so no plan variable takes one
#: (a pattern or FOREACH would otherwise read the outer one).
LOCAL_NAMES = frozenset(
    {"node", "row", "start", "key", "found", "pair", "a", "b", "n", "t", "k", "acc", "chain"}
    | {"kept", "known", "last", "nearest", "missing", "written", "proceed"}
    | {"reached", "counted", "linked", "r", "one", "index"}
)


@functools.cache
def identifier(name: str) -> str:
    """A label, property or variable name as Cypher reads it: bare when it can be."""
    return name if _PLAIN.fullmatch(name) else escape_identifier(name)


@dataclass(frozen=True, slots=True, eq=False)
class Var:
    """A plan variable, compared by identity, named ``hint`` made unique (as is if ``exact``)."""

    hint: str
    exact: bool = False

    def render(self, names: Mapping[Var, str]) -> str:
        return names[self]

    def __repr__(self) -> str:
        return f"Var({self.hint!r})"


#: One level of a statement's layout.
INDENT = "  "
#: A list whose one-line form is longer than this is laid out one item per line.
WIDTH = 100


@dataclass(slots=True, eq=False)
class Cypher:
    """Cypher text whose vars are named and lines laid out when rendered. Immutable by
    convention: a frozen dataclass costs twice as much to build, a hundred per statement."""

    parts: tuple[Piece, ...]
    _uses: frozenset[Var] | None = field(default=None, repr=False)

    @property
    def uses(self) -> frozenset[Var]:
        """The variables in the text: asked for only when a new shape is laid out."""
        if self._uses is None:
            self._uses = _uses_of(self.parts)
        return self._uses

    def render(self, names: Mapping[Var, str]) -> str:
        text: list[str] = []
        self._render(names, text)
        return "".join(text)

    def _render(self, names: Mapping[Var, str], text: list[str]) -> None:
        for part in self.parts:
            kind = type(part)
            if kind is str:
                text.append(part)  # type: ignore[arg-type]
            elif kind is Var:
                text.append(names[part])  # type: ignore[index]
            elif kind is Cypher:
                part._render(names, text)  # type: ignore[union-attr]
            else:
                laid = part.render(names)  # type: ignore[union-attr]
                if laid[:1] == "\n":  # no space is left at the end of a line
                    _strip_end(text)
                text.append(laid)

    def __repr__(self) -> str:
        return repr(self.render(_Hints()))


def _strip_end(text: list[str]) -> None:
    while text and text[-1][-1:] in (" ", ""):
        text[-1] = text[-1].rstrip(" ")
        if text[-1]:
            return
        text.pop()


@dataclass(slots=True, eq=False)
class Lines:
    """Items one per line, indented; a short ``fold`` list stays on one line (``pad`` around
    it); ``close`` puts what follows on a line of its own."""

    items: tuple[Piece, ...]
    sep: str = ""
    fold: bool = False
    close: bool = True
    pad: str = ""

    def render(self, names: Mapping[Var, str]) -> str:
        items = [item if type(item) is str else item.render(names) for item in self.items]  # type: ignore[union-attr]
        flat = f"{self.sep} ".join(items)
        if self.fold and "\n" not in flat and len(flat) <= WIDTH:
            return f"{self.pad}{flat}{self.pad}"
        # An item already laid out as lines takes its place here, one level up.
        items = [_dedent(item[1:]) if item[:1] == "\n" else item for item in items]
        text = indent(f"{self.sep}\n".join(items))
        return f"\n{text}\n" if self.close else f"\n{text}"


def _uses_of(pieces: Iterable[Piece]) -> frozenset[Var]:
    found: set[Var] = set()
    for piece in pieces:
        if isinstance(piece, Var):
            found.add(piece)
        elif isinstance(piece, Cypher):
            found |= piece.uses
        elif isinstance(piece, Lines):
            found |= _uses_of(piece.items)
    return frozenset(found)


def _dedent(text: str) -> str:
    return text.removeprefix(INDENT).replace("\n" + INDENT, "\n")


def indent(text: str, depth: int = 1) -> str:
    return INDENT * depth + text.replace("\n", "\n" + INDENT * depth)


class _Hints(dict[Var, str]):
    """Names each variable by its hint, for a repr before compiling."""

    def __missing__(self, var: Var) -> str:
        return f"<{var.hint}>"


Piece = str | Var | Cypher | Lines


def cy(*pieces: Piece) -> Cypher:
    """The pieces as one :class:`Cypher`, adjacent text merged (fewer parts to render)."""
    if len(pieces) == 1 and type(pieces[0]) is Cypher:
        return pieces[0]
    parts: list[Piece] = []
    text = ""
    for piece in pieces:
        if isinstance(piece, str):
            text += piece
            continue
        if type(piece) is Cypher:
            inner = piece.parts
            if len(inner) == 1 and type(inner[0]) is str:
                text += inner[0]
                continue
        if text:
            parts.append(text)
            text = ""
        parts.append(piece)
    if text:
        parts.append(text)
    return Cypher(tuple(parts))


def join(separator: str, pieces: Iterable[Piece]) -> Cypher:
    return cy(*_joined(separator, pieces))


def _joined(separator: str, pieces: Iterable[Piece]) -> list[Piece]:
    joined: list[Piece] = []
    for piece in pieces:
        joined += [separator, piece]
    return joined[1:]


def items(pieces: Iterable[Piece], sep: str = ",", *, close: bool = False) -> Lines:
    return lines(pieces, sep, fold=True, close=close)


def lines(pieces: Iterable[Piece], sep: str = "", **layout: Any) -> Lines:
    return Lines(tuple(pieces), sep, **layout)


def subquery(keyword: str, *clauses: Piece) -> Cypher:
    return cy(f"{keyword} {{", lines(clauses), "}")


def exists(pattern: Piece) -> Cypher:
    return cy("EXISTS {", lines([pattern], fold=True, pad=" "), "}")


def mapping(subject: Piece, entries: Iterable[Piece]) -> Cypher:
    """A map projection."""
    return cy(subject, " {", items(entries, close=True), "}")


def compact(value: Piece) -> Cypher:
    """A DATETIME read as ``[epochMillis, nanosecond, timezone]``, which
    ``ZonedDateTimeProperty`` inflates in about 2 microseconds (the driver's DATETIME:
    35). ``epochSeconds`` would round toward zero before 1970."""
    return _around(
        value, "CASE WHEN % IS NULL THEN null ELSE [%.epochMillis, %.nanosecond, %.timezone] END"
    )


def expand(value: Piece) -> Cypher:
    """The DATETIME whose sent form (``memora_ogm.properties.sent_form``) ``value`` is."""
    fields = "{epochSeconds: %[0], nanosecond: %[1], timezone: %[2]}"
    return _around(value, f"CASE WHEN % IS NULL THEN null ELSE datetime({fields}) END")


def _around(value: Piece, template: str) -> Cypher:
    if type(value) is str:
        return Cypher((template.replace("%", value),))
    pieces: list[Piece] = []
    for text in template.split("%"):
        pieces += [text, value]
    return cy(*pieces[:-1])


def node(var: Piece = "", label: str = "", properties: Piece | None = None) -> Cypher:
    """``(var:Label {properties})``; no braces when ``properties`` is None."""
    label = f":{label}" if label else ""
    if properties is None:
        return cy("(", var, label, ")")
    return cy("(", var, label, " {", properties, "})")


def properties(values: Mapping[str, Piece]) -> Cypher:
    pieces: list[Piece] = []
    for name, value in values.items():
        pieces += [", ", f"{identifier(name)}: ", value]
    return cy(*pieces[1:])


def hop(kind: str = "", direction: int = 0, repeat: str = "", var: str = "") -> str:
    """``-[var:KIND*repeat]->`` (direction 1), ``<-[...]-`` (-1) or ``-[...]-`` (0)."""
    inside = var + (f":{identifier(kind)}" if kind else "") + repeat
    inside = f"[{inside}]" if inside else ""
    return {1: f"-{inside}->", -1: f"<-{inside}-"}.get(direction, f"-{inside}-")


def dot(value: Piece, name: str) -> Cypher:
    return cy(value, f".{identifier(name)}")


def is_null(value: Piece, null: bool = True) -> Cypher:
    return cy(value, " IS NULL" if null else " IS NOT NULL")


def _where(conditions: Sequence[Piece], *, fold: bool = False) -> list[Piece]:
    if not conditions:
        return []
    if fold:
        return [" WHERE ", items(conditions, " AND")]
    return [" WHERE ", *_joined(" AND ", conditions)]


def match(pattern: Piece, *conditions: Piece, optional: bool = False, fold: bool = False) -> Cypher:
    keyword = "OPTIONAL MATCH " if optional else "MATCH "
    return cy(keyword, pattern, *_where(conditions, fold=fold))


def unwind(values: Piece, alias: str) -> Cypher:
    return cy("UNWIND ", values, f" AS {alias}")


def with_(*values: Piece, conditions: Sequence[Piece] = (), distinct: bool = False) -> Cypher:
    keyword = "WITH DISTINCT " if distinct else "WITH "
    return cy(keyword, *_joined(", ", values), *_where(conditions))


def alias(value: Piece, name: Piece) -> Cypher:
    return cy(value, " AS ", name)


def returning(
    *values: Piece, distinct: bool = False, order_by: Sequence[Piece] = (), limit: Piece = ""
) -> Cypher:
    keyword = "RETURN DISTINCT " if distinct else "RETURN "
    return cy(keyword, *_joined(", ", values), *order(order_by, limit))


def order(by: Sequence[Piece], limit: Piece = "") -> list[Piece]:
    pieces: list[Piece] = [" ORDER BY ", *_joined(", ", by)] if by else []
    return pieces + [" LIMIT ", limit] if limit != "" else pieces


def create(pattern: Piece) -> Cypher:
    return cy("CREATE ", pattern)


def merge(pattern: Piece) -> Cypher:
    return cy("MERGE ", pattern)


def assign(assignments: Sequence[Piece]) -> Cypher:
    return set_(items(assignments))


def set_(assigned: Piece) -> Cypher:
    """``SET`` with its items already laid out."""
    return cy("SET ", assigned)


def set_label(var: str, label: str) -> Cypher:
    """``SET var:Label``: writes nothing when the node has it, but takes its lock."""
    return cy(f"SET {var}:{label}")


def delete(var: str, detach: bool = True) -> Cypher:
    return cy("DETACH DELETE " if detach else "DELETE ", var)


def foreach(var: str, values: Piece, *clauses: Piece) -> Cypher:
    """One clause inline, more on lines of their own."""
    body: Piece = clauses[0] if len(clauses) == 1 else lines(clauses)
    return cy(f"FOREACH ({var} IN ", values, " | " if len(clauses) == 1 else " |", body, ")")


def optional_call(imports: Sequence[str], *clauses: Piece) -> Cypher:
    return cy(f"OPTIONAL CALL ({', '.join(imports)}) {{", lines(clauses), "}")


def collect(*clauses: Piece) -> Cypher:
    return subquery("COLLECT", *clauses)


def count(*clauses: Piece) -> Cypher:
    return subquery("COUNT", *clauses)


def case(condition: Piece, then: Piece, otherwise: Piece | None = None) -> Cypher:
    rest = [] if otherwise is None else [" ELSE ", otherwise]
    return cy("CASE WHEN ", condition, " THEN ", then, *rest, " END")


def negate(condition: Piece, grouped: bool = False) -> Cypher:
    """``NOT condition``, in parentheses when ``grouped`` (a condition of several terms)."""
    return cy("NOT (", condition, ")") if grouped else cy("NOT ", condition)


def gather(pattern: Piece, value: Piece) -> Cypher:
    return cy("[", pattern, " | ", value, "]")


def each(
    var: str, values: Piece, value: Piece | None = None, condition: Piece | None = None
) -> Cypher:
    pieces = [f"[{var} IN ", values]
    if condition is not None:
        pieces += [" WHERE ", condition]
    if value is not None:
        pieces += [" | ", value]
    return cy(*pieces, "]")


def reduce(acc: str, initial: Piece, var: str, values: Piece, value: Piece) -> Cypher:
    """``reduce(acc = initial, var IN values | value)``."""
    return cy(f"reduce({acc} = ", initial, f", {var} IN ", values, " | ", value, ")")


def parameter(name: str) -> str:
    """``$name``: plain text, so a value's parameter costs no :class:`Cypher` to build."""
    return f"${name}"


@dataclass(frozen=True, slots=True)
class Function:
    """A Cypher function, so a builder calls ``size(x)`` and spells no function."""

    name: str

    def __call__(self, *args: Piece) -> Cypher:
        return cy(f"{self.name}(", *_joined(", ", args), ")")


size, coalesce, head, keys, date = map(Function, ["size", "coalesce", "head", "keys", "date"])
element_id, to_string, range_ = map(Function, ["elementId", "toString", "range"])
#: The aggregation ``collect(x)`` (:func:`collect` is the ``COLLECT`` subquery).
collected = Function("collect")


@dataclass(frozen=True, slots=True)
class Match:
    """``OPTIONAL MATCH text`` in the head of a statement."""

    text: Cypher
    binds: tuple[Var, ...]


@dataclass(frozen=True, slots=True)
class Bind:
    """``WITH <carried>, text AS var``."""

    var: Var
    text: Cypher

    @property
    def binds(self) -> tuple[Var, ...]:
        return (self.var,)


@dataclass(frozen=True, slots=True)
class Output(Bind):
    """A :class:`Bind` returned as ``name``; a read inlines its last outputs in RETURN."""

    name: str = ""


@dataclass(frozen=True, slots=True)
class Update:
    """A clause that writes (``CREATE``, ``MERGE``, ``FOREACH``), binding what it creates."""

    text: Cypher
    binds: tuple[Var, ...] = ()


@dataclass(frozen=True, slots=True)
class Subquery:
    """``CALL (<imports>) { text }``, importing what ``text`` reads from outside."""

    text: Cypher
    binds: tuple[Var, ...] = ()


Clause = Match | Bind | Update | Subquery


def call_subquery(*clauses: Piece, binds: tuple[Var, ...] = ()) -> Subquery:
    """A ``CALL { ... }`` of ``clauses``, binding ``binds`` for what follows."""
    return Subquery(cy(lines(clauses)), binds)


def reads(clause: Clause) -> frozenset[Var]:
    return clause.text.uses - frozenset(clause.binds)


@dataclass
class Scope:
    """Names and declaration order of a plan's variables, fixed when it is compiled."""

    names: dict[Var, str] = field(default_factory=dict)
    order: dict[Var, int] = field(default_factory=dict)

    @classmethod
    def of(cls, clauses: Iterable[Clause]) -> Scope:
        scope = cls()
        taken = set(LOCAL_NAMES)
        for clause in clauses:
            for var in clause.binds:
                scope.order[var] = len(scope.order)
                if var.exact:
                    scope.names[var] = identifier(var.hint)
                    continue
                name, number = var.hint, 1
                while name in taken:
                    number += 1
                    name = f"{var.hint}_{number}"
                taken.add(name)
                scope.names[var] = identifier(name)
        return scope

    def listed(self, variables: Iterable[Var]) -> list[str]:
        return [self.names[var] for var in sorted(variables, key=self.order.__getitem__)]


def live_before(clauses: Sequence[Clause], needed: frozenset[Var]) -> list[frozenset[Var]]:
    """The variables read from each clause on (one more entry: ``needed`` at the end)."""
    live = [needed]
    for clause in reversed(clauses):
        live.append((live[-1] - frozenset(clause.binds)) | reads(clause))
    live.reverse()
    return live


def _with(items: Sequence[str], last: str = "") -> str:
    """``last`` on a line of its own when the first line is long."""
    text = "WITH " + ", ".join([*items, last] if last else items)
    if last and items and len(text.split("\n", 1)[0]) > WIDTH:
        return "WITH " + ", ".join(items) + ",\n" + indent(last)
    return text.replace(" \n", "\n")


def _subquery_text(clause: Subquery, imports: frozenset[Var], scope: Scope) -> str:
    listed = ", ".join(scope.listed(imports))
    return f"CALL ({listed}) {{{clause.text.render(scope.names)}}}"


def render(
    clauses: Sequence[Clause],
    live: Sequence[frozenset[Var]],
    scope: Scope,
    imported: frozenset[Var] = frozenset(),
) -> list[str]:
    """A body's lines, each ``WITH`` carrying only what ``live`` says is read later; each
    subquery imports what it reads and ``imported``."""
    lines: list[str] = []
    after_update = False
    for clause, after in zip(clauses, live[1:], strict=True):
        if isinstance(clause, Bind):
            carried = scope.listed(after - {clause.var})
            value = clause.text.render(scope.names)
            lines.append(_with(carried, f"{value} AS {scope.names[clause.var]}"))
        elif isinstance(clause, Subquery):
            imports = reads(clause) | imported
            carried = scope.listed((after - frozenset(clause.binds)) | imports)
            # Drop what is no longer read from the subquery's rows (a write needs a WITH).
            if carried:
                lines.append(_with(carried))
            elif after_update:
                lines.append("WITH true AS proceed")
            lines.append(_subquery_text(clause, imports, scope))
        elif isinstance(clause, Update):
            lines.append(clause.text.render(scope.names))
        else:
            lines.append(f"OPTIONAL MATCH {clause.text.render(scope.names)}")
        after_update = isinstance(clause, Update)
    return lines


def render_head(
    clauses: Sequence[Clause], scope: Scope, imported: frozenset[Var] = frozenset()
) -> list[str]:
    lines = []
    for clause in clauses:
        if isinstance(clause, Subquery):
            lines.append(_subquery_text(clause, reads(clause) | imported, scope))
        elif isinstance(clause, Match):
            lines.append(f"OPTIONAL MATCH {clause.text.render(scope.names)}")
        else:
            raise TypeError(f"not a clause of a head: {clause!r}")
    return lines


Clauses = Sequence[Clause]
#: What a statement returns: each variable by its name.
Outputs = Sequence[tuple[Var, str]]
#: The head of a statement that keeps the server's cached plan (``keep_plan``).
KEEP_PLAN = "CYPHER replan=skip"


#: Statements by the shape of their declaration (:meth:`UnitOfWork.shape`), as SQLAlchemy
#: caches compiled SQL by a statement's cache key: a call of a shape seen before (most
#: calls) builds no plan, and skips naming and layout.
_statements: dict[tuple[Any, ...], str] = {}
#: More shapes than calls have means a caller's values shape its plans: start again.
_MAX_SHAPES = 1024
#: Lay out every cached statement again and compare (the test suite turns it on): a
#: declaration step whose shape leaves out something its text depends on fails loudly.
check_cached = False


def cached(key: tuple[Any, ...], lay_out: Callable[[], str]) -> str:
    """The statement of shape ``key``, laid out by ``lay_out`` the first time."""
    text = _statements.get(key)
    if text is None:
        text = lay_out()
        if len(_statements) >= _MAX_SHAPES:
            _statements.clear()
        _statements[key] = text
    elif check_cached and lay_out() != text:
        raise AssertionError(f"a statement's shape does not determine its text: {key}")
    return text


def statement(
    head: Clauses,
    missing: Cypher,
    body: Clauses,
    outputs: Outputs,
    *,
    writes: bool,
    keep_plan: bool,
    per_row: bool = False,
) -> str:
    """The statement's text: a write runs ``body`` only when ``missing`` is empty; a read
    is its matches and one RETURN. ``per_row``: a write's batched form (:func:`_per_row`)."""
    if per_row:
        lines = _per_row(head, missing, body, outputs)
    else:
        lines = (_write if writes else _read)(head, missing, body, outputs)
    if keep_plan:
        lines.insert(0, KEEP_PLAN)
    return "\n".join(lines)


#: Ends an item of a shape (an item may be many pieces).
_ITEM_END = object()


def flatten(value: Any, pieces: list[Any], numbers: dict[Var, int]) -> None:
    """Append ``value``'s shape to ``pieces``: a variable as its hint where it first appears
    and as that number after, tuples and Cypher item by item, any other value (text, a
    class, a relationship, a flag) as itself."""
    kind = type(value)
    if kind is Var:
        number = numbers.get(value)
        if number is None:
            numbers[value] = len(numbers)
            pieces.append((Var, value.hint, value.exact))
        else:
            pieces.append(number)
        return
    if kind is tuple:
        pieces.append(tuple)
        parts = value
    elif kind is Cypher:
        parts = value.parts
    elif kind is Lines:
        pieces.append((Lines, value.sep, value.fold, value.close, value.pad))
        parts = value.items
    else:
        pieces.append(value)
        return
    for part in parts:
        if type(part) in _PLAIN_KINDS:
            pieces.append(part)
        elif type(part) is Var and part in numbers:
            pieces.append(numbers[part])
        else:
            flatten(part, pieces, numbers)
        if kind is Lines:
            pieces.append(_ITEM_END)
    pieces.append(_ITEM_END)


#: Kinds of shape items taken as they are (a class or a relationship is too, one level down).
_PLAIN_KINDS = frozenset({str, int, bool, type(None)})


#: The parameter of a batched write: one row per call, each that call's parameters and
#: its ``index`` in the batch.
BATCH = "batch"
#: The variable of a batched write holding the current row.
ENTRY = "one"
_PARAMETER = re.compile(r"\$([A-Za-z_][A-Za-z0-9_]*)")


def _write(
    head: Clauses,
    missing: Cypher,
    body: Clauses,
    outputs: Outputs,
    row: Var | None = None,
) -> list[str]:
    """A write's lines; with ``row``, every clause sees it (carried and imported)."""
    flag = Var("missing", exact=True)
    scope = Scope.of([*head, Bind(flag, missing), *body])
    carried = frozenset() if row is None else frozenset({row})
    if row is not None:
        scope.names[row], scope.order[row] = ENTRY, -1
    returned = frozenset(var for var, _ in outputs)
    live = live_before(body, returned | carried)
    imports = live[0] | {flag} | carried
    names = ", ".join(scope.listed(imports))
    inner = [scope.names[var] for var, _ in outputs]
    index = [] if row is None else [f"{ENTRY}.index AS index"]
    return [
        *render_head(head, scope, carried),
        _with(scope.listed(imports - {flag}), f"{missing.render(scope.names)} AS missing"),
        f"OPTIONAL CALL ({names}) {{",
        indent(f"WITH {names} WHERE missing = []"),
        *map(indent, render(body, live, scope, carried)),
        indent(_return(inner or ["true AS written"])),
        "}",
        _return([*index, "missing", *_returned(outputs, scope, {})]),
    ]


def _per_row(head: Clauses, missing: Cypher, body: Clauses, outputs: Outputs) -> list[str]:
    """A write run once per row of ``$batch``: the single write's clauses, each of its
    parameters read from the row instead (``$user_id`` is ``one.user_id``), the row
    carried through every clause, and the row's index returned with what it missed.
    Rows run in turn, so the nodes they lock are taken in the rows' order."""
    lines = _write(head, missing, body, outputs, Var(ENTRY, exact=True))
    rows = [_PARAMETER.sub(rf"{ENTRY}.\1", line) for line in lines]
    return [f"UNWIND {parameter(BATCH)} AS {ENTRY}", *rows]


def _read(head: Clauses, missing: Cypher, body: Clauses, outputs: Outputs) -> list[str]:
    body = list(body)
    last: list[Output] = []
    while body and isinstance(output := body[-1], Output):
        last.insert(0, output)
        body.pop()
    inlined = {output.var: output.text for output in last}
    scope = Scope.of([*head, *body])
    needed = missing.uses.union(*(value.uses for value in inlined.values()))
    needed |= frozenset(var for var, _ in outputs if var not in inlined)
    return [
        *render_head(head, scope),
        *render(body, live_before(body, needed), scope),
        _return([f"{missing.render(scope.names)} AS missing", *_returned(outputs, scope, inlined)]),
    ]


def _returned(outputs: Outputs, scope: Scope, inlined: Mapping[Var, Cypher]) -> list[str]:
    returned = []
    for var, name in outputs:
        value = inlined[var].render(scope.names) if var in inlined else scope.names[var]
        key = identifier(name)
        returned.append(value if value == key else f"{value} AS {key}")
    return returned


def _return(returned: Sequence[str]) -> str:
    return cy("RETURN ", items(returned)).render({})
