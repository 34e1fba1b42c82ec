# Generated from memora_ogm/_async by scripts/generate_sync.py: do not edit.
"""Applying the migrations of ``memora_ogm.migrations`` and recording them in the graph."""

from __future__ import annotations

from neomodel import StringProperty, db
from neomodel.util import escape_identifier

from memora_ogm._sync.graph import Graph, Landed, VectorChanges
from memora_ogm._sync.nodes import Date, MemoraNode, Memory
from memora_ogm._sync.ogm import connect_many, days_of, lacking
from memora_ogm._sync.schema import install_node_key
from memora_ogm.migration import DropIndex, LinkMemoriesToDates, Migration, Operation
from memora_ogm.properties import ZonedDateTimeProperty


class AppliedMigration(MemoraNode):
    """A migration applied to this database (label ``MemoraMigration``)."""

    __label__ = "MemoraMigration"
    __node_key__ = ("unique_memora_migration", ("version",))

    version = StringProperty(required=True)
    name = StringProperty(required=True)
    applied_at = ZonedDateTimeProperty(default_now=True)


def _link_memories_to_dates(graph: Graph, operation: LinkMemoriesToDates) -> None:
    """In batches: merge each memory's Date (calendar day of ``obtained_at``) and link it."""

    def batch(_: VectorChanges) -> int:
        memories = lacking(Memory, Memory.date_obtained, operation.batch_size)
        if not memories:
            return 0
        obtained_on = days_of(memories, "obtained_at")
        days = {(m.org_id, m.user_id, obtained_on[m]) for m in memories}
        dates = Date.nodes.bulk_get_or_create(
            *({"org_id": org, "user_id": user, "date": day} for org, user, day in days)
        )
        by_day = {(d.org_id, d.user_id, d.date): d for d in dates}
        connect_many(
            (
                Memory.date_obtained,
                [(m, by_day[(m.org_id, m.user_id, obtained_on[m])]) for m in memories],
            )
        )
        return len(memories)

    while graph.write(batch) == operation.batch_size:
        pass


def _drop_index(graph: Graph, operation: DropIndex) -> None:
    def drop(_: VectorChanges) -> None:
        db.cypher_query(f"DROP INDEX {escape_identifier(operation.name)} IF EXISTS")

    graph.write(drop)


def _apply(graph: Graph, operation: Operation) -> None:
    if isinstance(operation, LinkMemoriesToDates):
        _link_memories_to_dates(graph, operation)
    else:
        _drop_index(graph, operation)


def applied_versions(graph: Graph) -> list[str]:
    def read() -> list[str]:
        return sorted(node.version for node in AppliedMigration.nodes.all())

    return graph.read(read)


def run_migrations(
    graph: Graph, migrations: tuple[Migration, ...], up_to: str | None = None
) -> list[str]:
    """Apply the pending migrations (up to ``up_to`` inclusive); returns the versions applied."""
    enterprise = graph.is_enterprise()
    graph.write(lambda _: install_node_key(AppliedMigration, enterprise))
    done = set(applied_versions(graph))
    applied = []
    for migration in migrations:
        if up_to is not None and migration.version > up_to:
            break
        if migration.version in done:
            continue
        for operation in migration.operations:
            _apply(graph, operation)

        def record(_: VectorChanges, migration: Migration = migration) -> None:
            AppliedMigration(version=migration.version, name=migration.name).save()

        graph.write(record, Landed(AppliedMigration, {"version": migration.version}))
        applied.append(migration.version)
    return applied
