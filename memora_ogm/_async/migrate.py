"""Applying the migrations of ``memora_ogm.migrations`` and recording them in the graph.

A migration's data changes run as compiled units of work (:mod:`memora_ogm.unit_of_work`)
in large batches, one statement each; dropping an index is schema work
(:func:`memora_ogm._async.schema.drop_index`).
"""

from __future__ import annotations

from neomodel import StringProperty

from memora_ogm._async.graph import Graph, Landed, nothing
from memora_ogm._async.nodes import MemoraNode, Memory
from memora_ogm._async.schema import drop_index, install_node_key
from memora_ogm.erasure_plans import room
from memora_ogm.migration import (
    LinkMemoriesToDates,
    Migration,
    Operation,
    lacking,
    merge_linked,
)
from memora_ogm.properties import ZonedDateTimeProperty
from memora_ogm.unit_of_work import Prepared, UnitOfWork


class AppliedMigration(MemoraNode):
    """A migration applied to this database (label ``MemoraMigration``)."""

    __label__ = "MemoraMigration"
    __node_key__ = ("unique_memora_migration", ("version",))

    version = StringProperty(required=True)
    name = StringProperty(required=True)
    applied_at = ZonedDateTimeProperty(default_now=True)


#: The flag a migration's batch returns when it found fewer nodes than it could take.
FINISHED = "finished"


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


async def _link_memories_to_dates(graph: Graph, operation: LinkMemoriesToDates) -> None:
    """Batch after batch until one finds fewer memories than it can take; a batch that
    runs twice links nothing twice (it merges)."""
    batch = _link_batch(operation)
    while not await graph.write_unit(batch, lambda row: bool(row[FINISHED])):
        pass


async def _apply(graph: Graph, operation: Operation) -> None:
    if isinstance(operation, LinkMemoriesToDates):
        await _link_memories_to_dates(graph, operation)
    else:
        name = operation.name
        await graph.write(lambda _: drop_index(name, graph.cypher))


#: The versions applied, declared and compiled once.
APPLIED = Prepared(lambda work: work.output("applied", work.nodes(AppliedMigration)))


async def applied_versions(graph: Graph) -> list[str]:
    return await graph.read_unit(
        APPLIED.bind(), lambda row: sorted(node["version"] for node in row["applied"])
    )


async def run_migrations(
    graph: Graph, migrations: tuple[Migration, ...], up_to: str | None = None
) -> list[str]:
    """Apply the pending migrations (up to ``up_to`` inclusive); returns the versions applied."""
    enterprise = await graph.is_enterprise()
    await graph.write(lambda _: install_node_key(AppliedMigration, enterprise, graph.cypher))
    done = set(await applied_versions(graph))
    applied = []
    for migration in migrations:
        if up_to is not None and migration.version > up_to:
            break
        if migration.version in done:
            continue
        for operation in migration.operations:
            await _apply(graph, operation)

        record = UnitOfWork()
        record.create(AppliedMigration, version=migration.version, name=migration.name)
        landed = Landed(AppliedMigration, {"version": migration.version})
        await graph.write_unit(record, nothing, landed=landed)
        applied.append(migration.version)
    return applied
