"""Applying the migrations of ``memora_ogm.migrations`` and recording them in the graph."""

from __future__ import annotations

from neomodel import StringProperty, adb
from neomodel.util import escape_identifier

from memora_ogm._async.graph import Graph, Landed, VectorChanges
from memora_ogm._async.nodes import Date, MemoraNode, Memory
from memora_ogm._async.ogm import connect_many, days_of, lacking
from memora_ogm._async.schema import install_node_key
from memora_ogm.migration import DropIndex, LinkMemoriesToDates, Migration, Operation
from memora_ogm.properties import ZonedDateTimeProperty


class AppliedMigration(MemoraNode):
    """A migration applied to this database (label ``MemoraMigration``)."""

    __label__ = "MemoraMigration"
    __node_key__ = ("unique_memora_migration", ("version",))

    version = StringProperty(required=True)
    name = StringProperty(required=True)
    applied_at = ZonedDateTimeProperty(default_now=True)


async def _link_memories_to_dates(graph: Graph, operation: LinkMemoriesToDates) -> None:
    """In batches: merge each memory's Date (calendar day of ``obtained_at``) and link it."""

    async def batch(_: VectorChanges) -> int:
        memories = await lacking(Memory, Memory.date_obtained, operation.batch_size)
        if not memories:
            return 0
        obtained_on = await days_of(memories, "obtained_at")
        days = {(m.org_id, m.user_id, obtained_on[m]) for m in memories}
        dates = await Date.nodes.bulk_get_or_create(
            *({"org_id": org, "user_id": user, "date": day} for org, user, day in days)
        )
        by_day = {(d.org_id, d.user_id, d.date): d for d in dates}
        await connect_many(
            (
                Memory.date_obtained,
                [(m, by_day[(m.org_id, m.user_id, obtained_on[m])]) for m in memories],
            )
        )
        return len(memories)

    while await graph.write(batch) == operation.batch_size:
        pass


async def _drop_index(graph: Graph, operation: DropIndex) -> None:
    async def drop(_: VectorChanges) -> None:
        await adb.cypher_query(f"DROP INDEX {escape_identifier(operation.name)} IF EXISTS")

    await graph.write(drop)


async def _apply(graph: Graph, operation: Operation) -> None:
    if isinstance(operation, LinkMemoriesToDates):
        await _link_memories_to_dates(graph, operation)
    else:
        await _drop_index(graph, operation)


async def applied_versions(graph: Graph) -> list[str]:
    async def read() -> list[str]:
        return sorted(node.version for node in await AppliedMigration.nodes.all())

    return await graph.read(read)


async def run_migrations(
    graph: Graph, migrations: tuple[Migration, ...], up_to: str | None = None
) -> list[str]:
    """Apply the pending migrations (up to ``up_to`` inclusive); returns the versions applied."""
    enterprise = await graph.is_enterprise()
    await graph.write(lambda _: install_node_key(AppliedMigration, enterprise))
    done = set(await applied_versions(graph))
    applied = []
    for migration in migrations:
        if up_to is not None and migration.version > up_to:
            break
        if migration.version in done:
            continue
        for operation in migration.operations:
            await _apply(graph, operation)

        async def record(_: VectorChanges, migration: Migration = migration) -> None:
            await AppliedMigration(version=migration.version, name=migration.name).save()

        await graph.write(record, Landed(AppliedMigration, {"version": migration.version}))
        applied.append(migration.version)
    return applied
