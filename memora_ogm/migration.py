"""Migrations: what one is (a version, a name, operations), and their calls.

Migrations are declared as data (see the repository's ``migrations/`` folder, installed
as ``memora_ogm.migrations``); the interface applies them in order, recording each in the
graph (``MemoraMigration`` nodes). Every operation is idempotent: running a migration
twice changes nothing. A migration's data changes run as batched units of work
(:mod:`memora_ogm.unit_of_work`), one statement each; dropping an index is schema work
(:mod:`memora_ogm.constraints`). No I/O; shared by both twins.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from neomodel import StringProperty

from memora_ogm._async.nodes import MemoraNode, Memory
from memora_ogm.calls import Batches, Call, Landed, Row, nothing
from memora_ogm.constraints import drop_index, install_node_keys
from memora_ogm.erasure_plans import room
from memora_ogm.mapping import between, hint, label, path, target_class
from memora_ogm.plan import (
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
from memora_ogm.projection import table
from memora_ogm.properties import ZonedDateTimeProperty
from memora_ogm.unit_of_work import Prepared, Ref, UnitOfWork


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
    """A migration applied to this database (label ``MemoraMigration``): a class of the
    async twin only, which declares the statements of both (not one of the Memora schema's
    node classes, which ``neomodel_install_labels memora_ogm.nodes`` installs)."""

    __label__ = "MemoraMigration"
    __node_key__ = ("unique_memora_migration", ("version",))

    version = StringProperty(required=True)
    name = StringProperty(required=True)
    applied_at = ZonedDateTimeProperty(default_now=True)


#: The flag a migration's batch returns when it found fewer nodes than it could take.
FINISHED = "finished"

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


def lacking(work: UnitOfWork, cls: type, rel: Any, limit: int) -> Ref:
    """At most ``limit`` nodes of ``cls`` with no relationship along ``rel`` (what a
    migration's batch still has to link)."""
    found = match(node("node", label(cls)), cy("NOT ", exists(path(node("node"), rel))))
    top = work.param(limit, f"{hint(cls, many=True)}_limit")
    return work.bind(cls, collect(found, returning("node", limit=top)))


def merge_linked(
    work: UnitOfWork, nodes: Ref, rel: Any, copied: Sequence[str], days: Mapping[str, str]
) -> None:
    """Link each of ``nodes`` along ``rel`` to the node of its target class keyed by the
    node's own ``copied`` properties and, for each ``days`` entry (target property -> the
    node's datetime property), that datetime's calendar day as the server has it (in its
    stored offset or zone), made if missing."""
    source, target = table(nodes.cls).deflate, table(target_class(rel)).deflate
    keys: dict[str, Piece] = {target[name][0]: dot("node", source[name][0]) for name in copied}
    for day, stamp in days.items():
        keys[target[day][0]] = cy("date(", dot("node", source[stamp][0]), ")")
    linked = node("linked", label(target_class(rel)), properties(keys))
    write = foreach("node", nodes.items, merge(linked), merge(between("node", rel, "linked")))
    work.add(Update(write))


def _link_batch(operation: LinkMemoriesToDates) -> UnitOfWork:
    """One batch of :class:`LinkMemoriesToDates`: up to ``batch_size`` memories without a
    day, each linked to the Date of its ``obtained_at`` (merged), in one statement."""
    work = UnitOfWork(batched=True)
    memories = lacking(work, Memory, Memory.date_obtained, operation.batch_size)
    merge_linked(
        work, memories, Memory.date_obtained, ("org_id", "user_id"), {"date": "obtained_at"}
    )
    room(work, [(memories, operation.batch_size)], FINISHED)
    return work


def _no_vectors(row: Row, changes: object) -> None:
    """A migration changes no vector."""


def apply(operation: Operation) -> Call[None] | Batches:
    """``operation``: links batch after batch until one finds fewer memories than it can
    take (a batch that runs twice links nothing twice: it merges), or a schema change."""
    if isinstance(operation, LinkMemoriesToDates):
        return Batches(
            _link_batch(operation), lambda row: bool(row[FINISHED]), _no_vectors, lambda row: None
        )
    return drop_index(operation.name)
