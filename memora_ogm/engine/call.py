"""Facade calls declared apart from running them: each facade method checks its arguments
and declares a :class:`Call` (or :class:`Batches`): statement, result mapping, vector
changes, and what shows it landed. No I/O, so both twins share them and tests compile
them offline.
"""

from __future__ import annotations

import functools
import inspect
import typing
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Generic, TypeVar

from neo4j import Record
from pydantic import BaseModel

from memora_ogm import observe
from memora_ogm.engine import convert
from memora_ogm.engine.plan import BATCH
from memora_ogm.engine.unit_of_work import Ref, Statement, UnitOfWork
from memora_ogm.errors import NodeVanished
from memora_ogm.schema.models import Memory as MemoryModel

T = TypeVar("T")
M = TypeVar("M", bound=BaseModel)
F = TypeVar("F", bound=Callable[..., Any])
Row = dict[str, Any]


class VectorChanges:
    """What one write transaction changes in the vector store (``removed`` kept for a failed
    commit to put back). Untracked (no store), the memories given are never built.
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
    """What shows an unanswered commit took effect: the ``cls`` node with ``keys`` exists
    (``present``) or is gone."""

    cls: type
    keys: Mapping[str, Any]
    present: bool = True

    def probe(self) -> UnitOfWork:
        probe = UnitOfWork()
        probe.output("node", probe.match(self.cls, **self.keys))
        return probe


@dataclass(frozen=True)
class Query:
    """A read of :mod:`memora_ogm.engine.queries`; its result gets all rows (a unit's gets one)."""

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
    """One facade call, run by ``Graph.execute``: auto-commit, unless it changes an attached
    vector store or has ``before`` statements; then a transaction applies the vector
    changes just before the graph commits.
    """

    #: None for a call with nothing to ask the server (a batch of no ids).
    statement: Statement | Query | None
    #: The return value, of the statement's one row (its rows for a :class:`Query`).
    result: Callable[[Any], T]
    write: bool = False
    vectors: Vectors | None = None
    #: Without it, a write whose commit goes unanswered runs again (maybe twice).
    landed: Landed | None = None
    before: tuple[Statement | Query, ...] = ()
    #: What the facade's log says once the call succeeded (ids only, never a caller's text).
    log: str = ""
    #: A write that may share a transaction with others of its shape (``None``: never):
    #: a batch takes its rows' locks in the order of this key (the user's, then the day's).
    batch_key: tuple[str, ...] | None = None
    #: Writes of one node (an interaction) with the same key keep their call order: never
    #: in one batch, never two in flight.
    serial: tuple[str, ...] | None = None


def sealed(call: Call[T]) -> Call[T]:
    """A coalescing write as it waits for its transaction: its unit of work compiled alone
    and batched, without the plan that built it. Waiting writes live through a round trip,
    long enough for the cyclic collector to move them to its oldest generation, whose
    full collections then walk the caller's heap as well."""
    work = call.statement
    assert isinstance(work, UnitOfWork), "only a unit of work's write coalesces"
    return replace(call, statement=work.compiled(batched=True))


def batch_of(rows: Sequence[tuple[tuple[str, ...], dict[str, Any]]]) -> dict[str, Any]:
    """The parameters of a batched write (``UnitOfWork.compile(per_row=True)``): a row per
    call, each its parameters and its ``index`` in ``rows``, in the order of the calls'
    batch keys, so that concurrent batches lock shared nodes in one order."""
    ordered = sorted(range(len(rows)), key=lambda index: rows[index][0])
    return {BATCH: [{**rows[index][1], "index": index} for index in ordered]}


def changed(work: UnitOfWork, ref: Ref, name: str, model: type[M], **values: Any) -> Call[M]:
    """Set ``values`` on ``ref`` and return it as ``model`` (a rename)."""
    work.set(ref, **values)
    work.output(name, ref)
    return Call(work, convert.output(name, ref.cls, model), write=True)


@dataclass(frozen=True)
class Batches:
    """One statement run as separate writes until ``done``; ``carried`` gives the next
    batch's parameters."""

    statement: UnitOfWork
    done: Callable[[Row], bool]
    vectors: Vectors
    landed: Callable[[Row], Landed | None]
    carried: Callable[[Row], dict[str, Any]] = field(default=lambda row: {})
    log: str = ""


def row_of(record: Record) -> dict[str, Any]:
    """A record as a dict of its values as they came: not ``record.data()``, which walks
    every nested value for entities (a large share of a page read's client time)."""
    return dict(zip(record.keys(), record, strict=True))


def answer(statement: Statement | Query, rows: list[dict[str, Any]]) -> Any:
    """What a call's result is of: a hand-written read's rows, a unit of work's one row."""
    return rows if isinstance(statement, Query) else only_row(statement, rows)


def only_row(work: Statement, rows: list[dict[str, Any]]) -> dict[str, Any]:
    """The one row of a unit of work's statement, after raising what it found missing."""
    if not rows:
        # One row by construction; none means a concurrent transaction deleted a node.
        raise NodeVanished("a node was deleted while the statement ran")
    work.raise_missing(rows[0]["missing"])
    return rows[0]


def method_of(declare: Callable[..., Any], given: int, run: F) -> F:
    """``run`` as the method of ``declare``: its name, documentation and signature, less
    the ``given`` first parameters the interface puts in, returning what its call does."""
    signature = inspect.signature(declare)
    this = inspect.Parameter("self", inspect.Parameter.POSITIONAL_ONLY)
    parameters = [this, *list(signature.parameters.values())[given:]]
    declared = typing.get_type_hints(declare)["return"]  # Call[models.User], or Batches
    returns = typing.get_args(declared)[0] if typing.get_origin(declared) is Call else None
    functools.update_wrapper(run, declare, updated=())
    del run.__wrapped__  # type: ignore[attr-defined]
    run.__signature__ = signature.replace(  # type: ignore[attr-defined]
        parameters=parameters, return_annotation=returns
    )
    return observe.observed("neo4j")(run)
