"""Migrations: what one is (a version, a name, operations), and their calls.

Migrations are declared as data (the repository's ``migrations/`` folder, installed as
``memora_ogm.migrations``); the interface applies them in order, recording each in the
graph (``MemoraMigration`` nodes). Every operation is idempotent. Data changes run as
batched units of work; dropping an index is schema work. No I/O.
"""

from __future__ import annotations

from dataclasses import dataclass

from neomodel import StringProperty

from memora_ogm._async.nodes import Date, MemoraNode, Memory
from memora_ogm.engine.call import Batches, Call, Landed, nothing
from memora_ogm.engine.constraints import drop_index, install_node_keys
from memora_ogm.engine.erasure import FINISHED, room
from memora_ogm.engine.mapping import between, hint, label, path
from memora_ogm.engine.plan import (
    Piece,
    Update,
    collect,
    cy,
    dot,
    exists,
    foreach,
    match,
    merge,
    node,
    properties,
    returning,
)
from memora_ogm.engine.unit_of_work import Prepared, UnitOfWork
from memora_ogm.properties import ZonedDateTimeProperty


@dataclass(frozen=True)
class LinkMemoriesToDates:
    """Link every ``Memory`` without one to its ``Date`` with ``DATE_OBTAINED``."""

    batch_size: int = 5_000


@dataclass(frozen=True)
class DropIndex:
    """Drop a named index if it exists."""

    name: str


Operation = LinkMemoriesToDates | DropIndex


@dataclass(frozen=True)
class Migration:
    version: str
    name: str
    operations: tuple[Operation, ...]


class AppliedMigration(MemoraNode):
    """A migration applied to this database: async twin only (it declares both twins'
    statements), outside the Memora schema's node classes."""

    __label__ = "MemoraMigration"
    __node_key__ = ("unique_memora_migration", ("version",))

    version = StringProperty(required=True)
    name = StringProperty(required=True)
    applied_at = ZonedDateTimeProperty(default_now=True)


#: The versions applied, declared and compiled once.
APPLIED = Prepared(lambda work: work.output("applied", work.nodes(AppliedMigration)))


def applied_migrations() -> Call[list[str]]:
    """The versions of the migrations this database has had, oldest first."""
    return Call(APPLIED.bind(), lambda row: sorted(node["version"] for node in row["applied"]))


def install_record(enterprise: bool) -> Call[None]:
    """The key of the migrations' records."""
    return install_node_keys(enterprise, [AppliedMigration])


def record(migration: Migration) -> Call[None]:
    """Record ``migration`` as applied."""
    work = UnitOfWork()
    work.create(AppliedMigration, version=migration.version, name=migration.name)
    landed = Landed(AppliedMigration, {"version": migration.version})
    return Call(
        work, nothing, write=True, landed=landed, log=f"applied migration {migration.version}"
    )


def _link_batch(operation: LinkMemoriesToDates) -> UnitOfWork:
    """Up to ``batch_size`` memories without a day linked to their ``obtained_at``'s Date
    (made if missing)."""
    work = UnitOfWork(batched=True)
    rel = Memory.date_obtained
    found = match(node("node", label(Memory)), cy("NOT ", exists(path(node("node"), rel))))
    top = work.param(operation.batch_size, f"{hint(Memory, many=True)}_limit")
    memories = work.bind(Memory, collect(found, returning("node", limit=top)))
    day: dict[str, Piece] = {name: dot("node", name) for name in ("org_id", "user_id")}
    day["date"] = cy("date(", dot("node", "obtained_at"), ")")
    linked = node("linked", label(Date), properties(day))
    link = merge(between("node", rel, "linked"))
    work.add(Update(foreach("node", memories.items, merge(linked), link)))
    room(work, [(memories, operation.batch_size)], FINISHED)
    return work


def apply(operation: Operation) -> Call[None] | Batches:
    """``operation``'s call: batches until one has room left (a rerun merges, harmless),
    or a schema change."""
    if isinstance(operation, LinkMemoriesToDates):
        batch = _link_batch(operation)
        return Batches(batch, lambda row: bool(row[FINISHED]), lambda *_: None, lambda _: None)
    return drop_index(operation.name)
