"""A statement's plan as data, and the compile step that turns it into Cypher text.

A plan is a list of frozen clauses. Their text is :class:`Cypher`: literal pieces and
:class:`Var` objects, so what a clause reads and binds is known without parsing it. The
compile step (:func:`render`) names the variables (after the classes they hold, made
unique: ``user``, ``user_2``) and works out the scopes: each ``WITH`` carries, and each
subquery imports, exactly the variables a later clause still reads. A big list (a batch
of memory maps, a chain) is dropped as soon as nothing needs it, so the rows of a later
subquery do not carry it.

This module knows nothing of neomodel or of Memora: :mod:`memora_ogm.mapping` maps the
node classes, :mod:`memora_ogm.unit_of_work` builds plans from them.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from neomodel.util import escape_identifier

#: A name Cypher reads without backticks.
_PLAIN = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")

#: Names the generated subqueries and list expressions use locally; no variable of a
#: plan takes one (a pattern or FOREACH would otherwise read the outer one).
LOCAL_NAMES = frozenset(
    {"node", "row", "start", "key", "found", "pair", "a", "b", "n", "t", "k", "acc", "chain"}
    | {"kept", "known", "last", "nearest", "missing", "written", "proceed"}
    | {"reached", "counted", "linked", "r"}
)


def identifier(name: str) -> str:
    """A label, property or variable name as Cypher reads it: bare when it can be."""
    return name if _PLAIN.fullmatch(name) else escape_identifier(name)


@dataclass(frozen=True, slots=True, eq=False)
class Var:
    """A variable of a plan, compared by identity. Compiled as ``hint`` made unique
    (``memory_2``), or as ``hint`` itself when ``exact`` (``missing``)."""

    hint: str
    exact: bool = False

    def __repr__(self) -> str:
        return f"Var({self.hint!r})"


@dataclass(frozen=True, slots=True)
class Cypher:
    """Cypher text whose variables are :class:`Var` objects (named when compiled)."""

    parts: tuple[str | Var, ...]

    @property
    def uses(self) -> frozenset[Var]:
        return frozenset(part for part in self.parts if isinstance(part, Var))

    def render(self, names: Mapping[Var, str]) -> str:
        return "".join(part if isinstance(part, str) else names[part] for part in self.parts)

    def __repr__(self) -> str:
        return repr(self.render(_Hints()))


class _Hints(dict[Var, str]):
    """Names each variable by its hint (for a repr, before a plan is compiled)."""

    def __missing__(self, var: Var) -> str:
        return f"<{var.hint}>"


def cy(*pieces: str | Var | Cypher) -> Cypher:
    """The pieces as one :class:`Cypher`, joined without separators."""
    parts: list[str | Var] = []
    for piece in pieces:
        for part in piece.parts if isinstance(piece, Cypher) else (piece,):
            if isinstance(part, str) and parts and isinstance(parts[-1], str):
                parts[-1] += part
            elif part != "":
                parts.append(part)
    return Cypher(tuple(parts))


def join(separator: str, pieces: Iterable[str | Var | Cypher]) -> Cypher:
    """The pieces as one :class:`Cypher`, with ``separator`` between them."""
    joined: list[str | Var | Cypher] = []
    for piece in pieces:
        if joined:
            joined.append(separator)
        joined.append(piece)
    return cy(*joined)


# -- clauses -----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Match:
    """``OPTIONAL MATCH pattern``, binding its new variables (the head of a statement)."""

    pattern: Cypher
    binds: tuple[Var, ...]


@dataclass(frozen=True, slots=True)
class Bind:
    """``WITH <carried>, value AS var``."""

    var: Var
    value: Cypher

    @property
    def binds(self) -> tuple[Var, ...]:
        return (self.var,)


@dataclass(frozen=True, slots=True)
class Output(Bind):
    """A :class:`Bind` of a value the statement returns as ``name`` (its variable may be
    named otherwise: a node's variable keeps the name); a read projects its last outputs
    in its RETURN."""

    name: str = ""


@dataclass(frozen=True, slots=True)
class Update:
    """A clause that writes (``CREATE``, ``MERGE``, ``FOREACH``), binding what it creates."""

    text: Cypher
    binds: tuple[Var, ...] = ()


@dataclass(frozen=True, slots=True)
class Subquery:
    """``CALL (<imports>) { body }``: imports what ``body`` reads from outside, returns
    ``binds``."""

    body: Cypher
    binds: tuple[Var, ...] = ()


Clause = Match | Bind | Update | Subquery


def reads(clause: Clause) -> frozenset[Var]:
    """The variables bound before ``clause`` that it reads."""
    if isinstance(clause, Match):
        text = clause.pattern
    elif isinstance(clause, Bind):
        text = clause.value
    elif isinstance(clause, Update):
        text = clause.text
    else:
        text = clause.body
    return text.uses - frozenset(clause.binds)


# -- compiling ----------------------------------------------------------------------------


@dataclass
class Scope:
    """Names and declaration order of a plan's variables, fixed when it is compiled."""

    names: dict[Var, str] = field(default_factory=dict)
    order: dict[Var, int] = field(default_factory=dict)

    @classmethod
    def of(cls, clauses: Iterable[Clause]) -> Scope:
        """Each variable in the order it is bound, named after its hint, unique (an
        ``exact`` one as its hint: a name the statement's own text relies on)."""
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
        """The names of ``variables`` in declaration order."""
        return [self.names[var] for var in sorted(variables, key=self.order.__getitem__)]


def live_before(clauses: Sequence[Clause], needed: frozenset[Var]) -> list[frozenset[Var]]:
    """For each clause, the variables still read after it (``needed`` at the end); the
    last entry is what is read from before the first clause."""
    live = [needed]
    for clause in reversed(clauses):
        live.append((live[-1] - frozenset(clause.binds)) | reads(clause))
    live.reverse()
    return live


def render(clauses: Sequence[Clause], needed: frozenset[Var], scope: Scope) -> list[str]:
    """The lines of ``clauses`` (a body: after the head) where each ``WITH`` carries only
    what a later clause, or ``needed`` at the end, reads."""
    live = live_before(clauses, needed)
    lines: list[str] = []
    after_update = False
    for clause, after in zip(clauses, live[1:], strict=True):
        if isinstance(clause, Bind):
            carried = [*scope.listed(after - {clause.var})]
            value = clause.value.render(scope.names)
            lines.append(f"WITH {', '.join([*carried, f'{value} AS {scope.names[clause.var]}'])}")
        elif isinstance(clause, Subquery):
            imports = ", ".join(scope.listed(reads(clause)))
            carried = scope.listed((after - frozenset(clause.binds)) | reads(clause))
            # A WITH drops what is no longer read, so the subquery's rows do not carry it;
            # after a write one is needed anyway.
            head = f"WITH {', '.join(carried)} " if carried else ""
            if not carried and after_update:
                head = "WITH true AS proceed "
            lines.append(f"{head}CALL ({imports}) {{ {clause.body.render(scope.names)} }}")
        elif isinstance(clause, Update):
            lines.append(clause.text.render(scope.names))
        else:
            lines.append(f"OPTIONAL MATCH {clause.pattern.render(scope.names)}")
        after_update = isinstance(clause, Update)
    return lines


def render_head(clauses: Sequence[Clause], scope: Scope) -> list[str]:
    """The lines of the head: matches and subqueries, each keeping every variable (one
    row, which the matches only widen)."""
    lines = []
    for clause in clauses:
        if isinstance(clause, Subquery):
            imports = ", ".join(scope.listed(reads(clause)))
            lines.append(f"CALL ({imports}) {{ {clause.body.render(scope.names)} }}")
        elif isinstance(clause, Match):
            lines.append(f"OPTIONAL MATCH {clause.pattern.render(scope.names)}")
        else:
            raise TypeError(f"not a clause of a head: {clause!r}")
    return lines
