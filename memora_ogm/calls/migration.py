"""Migrations: what one is (a version, a name, operations), and their calls.

Migrations are declared as data (the repository's ``migrations/`` folder, installed as
``memora_ogm.migrations``); the interface applies them in order, recording each in the
graph (``MemoraMigration`` nodes). Every operation is idempotent. Data changes run as
batched units of work; dropping an index is schema work. No I/O.
"""

from __future__ import annotations

from dataclasses import dataclass

from memora_ogm.engine.call import Batches, Call, Landed, nothing
from memora_ogm.engine.constraints import drop_index, node_keys
from memora_ogm.engine.erasure import FINISHED, room
from memora_ogm.engine.mapping import between, hint, label, path
from memora_ogm.engine.nodes import Nodes
from memora_ogm.engine.plan import (
    Piece,
    Update,
    collect,
    cy,
    date,
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


#: The versions applied, declared and compiled once.
APPLIED = Prepared(lambda nodes, work: work.output("applied", work.nodes(nodes.AppliedMigration)))


def applied_migrations(nodes: Nodes) -> Call[list[str]]:
    """The versions of the migrations this database has had, oldest first."""
    return Call(APPLIED.bind(nodes), lambda row: sorted(node["version"] for node in row["applied"]))


def install_record(nodes: Nodes, enterprise: bool) -> Call[None]:
    """The key of the migrations' records."""
    return node_keys(enterprise, [nodes.AppliedMigration])


def record(nodes: Nodes, migration: Migration) -> Call[None]:
    """Record ``migration`` as applied."""
    work = UnitOfWork()
    work.create(nodes.AppliedMigration, version=migration.version, name=migration.name)
    landed = Landed(nodes.AppliedMigration, {"version": migration.version})
    return Call(
        work, nothing, write=True, landed=landed, log=f"applied migration {migration.version}"
    )


def _link_batch(nodes: Nodes, operation: LinkMemoriesToDates) -> UnitOfWork:
    """Up to ``batch_size`` memories without a day linked to their ``obtained_at``'s Date
    (made if missing)."""
    work = UnitOfWork(batched=True)
    rel = nodes.Memory.date_obtained
    found = match(node("node", label(nodes.Memory)), cy("NOT ", exists(path(node("node"), rel))))
    top = work.param(operation.batch_size, f"{hint(nodes.Memory, many=True)}_limit")
    memories = work.bind(nodes.Memory, collect(found, returning("node", limit=top)))
    day: dict[str, Piece] = {name: dot("node", name) for name in ("org_id", "user_id")}
    day["date"] = date(dot("node", "obtained_at"))
    linked = node("linked", label(nodes.Date), properties(day))
    link = merge(between("node", rel, "linked"))
    work.add(Update(foreach("node", memories.items, merge(linked), link)))
    room(work, [(memories, operation.batch_size)], FINISHED)
    return work


def apply(nodes: Nodes, operation: Operation) -> Call[None] | Batches:
    """``operation``'s call: batches until one has room left (a rerun merges, harmless),
    or a schema change."""
    if isinstance(operation, LinkMemoriesToDates):
        batch = _link_batch(nodes, operation)
        return Batches(batch, lambda row: bool(row[FINISHED]), lambda *_: None, lambda _: None)
    return drop_index(operation.name)
