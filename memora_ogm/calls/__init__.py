"""Facade calls declared apart from running them: what a call sends, and what it means.

Each public method of the facade is a short function here (a module per domain) that
checks its arguments and declares a :class:`Call` (or, for an erasure, :class:`Batches`):
its statement, the mapping of its answer to the return model, its vector changes, and
what shows that it took effect when its commit goes unanswered. No I/O: both twins share
them, ``tests/test_compile.py`` compiles them without a server, ``Graph`` runs them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from pydantic import BaseModel

from memora_ogm import convert
from memora_ogm.schema.models import Memory as MemoryModel
from memora_ogm.unit_of_work import Ref, Statement, UnitOfWork

T = TypeVar("T")
M = TypeVar("M", bound=BaseModel)
Row = dict[str, Any]


class VectorChanges:
    """The memories one write transaction adds to and removes from the vector store
    (``removed`` as they were, for a failed commit to put back); a purge clears all the
    store holds for a user or organisation. Untracked (no vector store), nothing is
    recorded and the memories given are never built.
    """

    def __init__(self, tracked: bool = True) -> None:
        self.tracked = tracked
        self.added: list[MemoryModel] = []
        self.removed: list[MemoryModel] = []
        self.purged_users: list[tuple[str, str]] = []
        self.purged_organizations: list[str] = []

    def add(self, memories: Iterable[MemoryModel]) -> None:
        if self.tracked:
            self.added.extend(memories)

    def remove(self, memories: Iterable[MemoryModel]) -> None:
        if self.tracked:
            self.removed.extend(memories)

    def purge_user(self, org_id: str, user_id: str) -> None:
        if self.tracked:
            self.purged_users.append((org_id, user_id))

    def purge_organization(self, org_id: str) -> None:
        if self.tracked:
            self.purged_organizations.append(org_id)

    def __bool__(self) -> bool:
        return bool(self.added or self.removed or self.purged_users or self.purged_organizations)


@dataclass(frozen=True)
class Landed:
    """What shows that a write took effect when its commit went unanswered (it commits
    whole or not at all): the node of ``cls`` with ``keys`` exists (``present``), or no
    longer does (a delete)."""

    cls: type
    keys: Mapping[str, Any]
    present: bool = True

    def probe(self) -> UnitOfWork:
        """The read that answers: it outputs ``node``, null when there is none."""
        probe = UnitOfWork()
        probe.output("node", probe.match(self.cls, **self.keys))
        return probe


@dataclass(frozen=True)
class Query:
    """A hand-written read of :mod:`memora_ogm.queries` with its parameters; its call's
    result is of all its rows (a unit of work's is of its one row)."""

    text: str
    params: dict[str, Any]

    def compile(self) -> tuple[str, dict[str, Any]]:
        return self.text, self.params


def nothing(_: Any) -> None:
    """The result of a write that returns nothing."""


Vectors = Callable[[Row, VectorChanges], None]
"""Records, from a write's row, what it changes in the vector store."""


@dataclass(frozen=True)
class Call(Generic[T]):
    """One facade call, declared: run by ``Graph.execute``.

    A read runs as one auto-commit statement. A write does too unless it changes the
    vector store (when one is attached) or has statements to run ``before`` it: then it
    runs in a transaction whose vector changes are applied just before the graph commits.
    """

    #: None for a call with nothing to ask the server (a batch of no ids).
    statement: Statement | Query | None
    #: The return value, of the statement's one row (its rows for a :class:`Query`).
    result: Callable[[Any], T]
    write: bool = False
    vectors: Vectors | None = None
    #: What shows the write took effect if its commit goes unanswered; without it, the
    #: write runs again then (it may run twice).
    landed: Landed | None = None
    #: Statements of the same transaction that run first (a delete's locks).
    before: tuple[Statement | Query, ...] = ()
    #: What the facade's log says once the call succeeded (ids only, never a caller's text).
    log: str = ""


def changed(work: UnitOfWork, ref: Ref, name: str, model: type[M], **values: Any) -> Call[M]:
    """Set ``values`` on the node ``ref`` and return it (as ``name``) as ``model``: a rename."""
    work.set(ref, **values)
    work.output(name, ref)
    return Call(work, convert.output(name, ref.cls, model), write=True)


@dataclass(frozen=True)
class Batches:
    """One statement run batch after batch, each a write of its own, until ``done``
    (an erasure of any size).

    ``vectors`` records each batch's vector changes, ``landed`` what shows a batch took
    effect, and ``carried`` the parameters a batch passes on to the next one.
    """

    statement: UnitOfWork
    done: Callable[[Row], bool]
    vectors: Vectors
    landed: Callable[[Row], Landed | None]
    carried: Callable[[Row], dict[str, Any]] = field(default=lambda row: {})
    log: str = ""
