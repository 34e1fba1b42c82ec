# Generated from memora_ogm/_async by scripts/generate_sync.py: do not edit.
"""Tenant export, import and move (:mod:`memora_ogm.transfer.format`), in flat memory. Imports
check the whole input in one pass that spools it, then write a batch per transaction,
the next one compiled in a thread meanwhile so that the server does not wait for Python.
"""

from __future__ import annotations

import copy
import os
import pickle
import tempfile
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import IO, Any

from memora_ogm import observe
from memora_ogm._sync.compat import result_of
from memora_ogm._sync.component import GraphComponent
from memora_ogm._sync.graph import Graph, Landed, Work
from memora_ogm._sync.paging import pages
from memora_ogm.engine import convert
from memora_ogm.schema.validation import check_flag, check_ids
from memora_ogm.transfer import export, validation
from memora_ogm.transfer import format as transfer
from memora_ogm.transfer.format import (
    MoveVerificationFailed as MoveVerificationFailed,  # re-exported
)
from memora_ogm.transfer.importing import (
    OnConflict,
    Ready,
    batches,
    created_first,
    kinds_held,
    memories_with_ids,
    new_records,
    ready_batches,
    validated,
    write_of,
)

#: A user's contrary updates held back until the user's last memory is exported.
EXPORT_HELD_UPDATES = 50_000
MOVE_PROGRESS_RECORDS = 500
#: Memory ids a statement checks no other tenant holds.
MEMORY_ID_CHECK_SIZE = 10_000

RecordStream = Iterator[transfer.Record]
#: Called after each written batch with (records done, records in the input).
Progress = Callable[[int, int], None]


def _user_content(graph: Graph, org_id: str, user_id: str) -> RecordStream:
    """A user's interactions, memories, then contrary updates, in key order: past
    :data:`EXPORT_HELD_UPDATES`, the memories' updates are read again after them."""
    owned = {"org_id": org_id, "user_id": user_id}
    for page in pages(graph, export.export_pages(graph.nodes).interactions, **owned):
        for values, row in page:
            yield export.interaction(graph.nodes, values, row)
    held: list[tuple[str, str]] = []
    rest: str | None = None  # the last memory whose updates are held, once they overflow
    for page in pages(graph, export.export_pages(graph.nodes).memories, **owned):
        for values, row in page:
            yield export.memory(graph.nodes, values, row)
            if rest is None:
                held.extend((values["memory_id"], newer) for newer in row["newer"])
                if len(held) > EXPORT_HELD_UPDATES:
                    rest = values["memory_id"]
    for older, newer in held:
        yield export.record(
            graph.nodes, transfer.CONTRARY_UPDATE, {**owned, "memory_id": older}, updated_by=newer
        )
    if rest is not None:
        for page in pages(graph, export.export_pages(graph.nodes).memories, rest, **owned):
            for values, row in page:
                for newer in row["newer"]:
                    yield export.record(
                        graph.nodes, transfer.CONTRARY_UPDATE, values, updated_by=newer
                    )


def export_records(graph: Graph, org_id: str, user_id: str | None) -> RecordStream:
    org = graph.execute(export.tenant, org_id, user_id)
    counts: Counter[str] = Counter()
    scope = "organization" if user_id is None else "user"
    yield export.header(scope, org_id, user_id, graph.database)
    yield export.record(graph.nodes, transfer.ORGANIZATION, org)
    counts[transfer.ORGANIZATION] += 1
    users = {"org_id": org_id} if user_id is None else {"org_id": org_id, "user_id": user_id}
    for page in pages(graph, export.export_pages(graph.nodes).users, **users):
        counts[transfer.USER] += len(page)
        for values, _ in page:
            yield export.record(graph.nodes, transfer.USER, values)
    for page in pages(graph, export.export_pages(graph.nodes).agents, org_id=org_id):
        for values, _ in page:
            if user_id is None or values["user_id"] in (None, user_id):
                counts[transfer.AGENT] += 1
                yield export.record(graph.nodes, transfer.AGENT, values)
    for page in pages(graph, export.export_pages(graph.nodes).users, **users):
        for values, _ in page:
            for record in _user_content(graph, org_id, values["user_id"]):
                counts[record["type"]] += 1
                yield record
    yield export.end(counts)


def _check_owners(graph: Graph, owners: dict[str, tuple[int, str, str]]) -> None:
    """Raise :class:`MemoryIdsTaken` if another tenant holds an id of ``owners``; else clear it."""
    taken = {
        found["memory_id"]: (found["org_id"], found["user_id"])
        for found in graph.execute(memories_with_ids, owners)
        if (found["org_id"], found["user_id"]) != owners[found["memory_id"]][1:]
    }
    if taken:
        raise transfer.MemoryIdsTaken(min(owners[memory_id][0] for memory_id in taken), taken)
    owners.clear()


def _validate_and_check(
    graph: Graph,
    records: Iterable[Any],
    on_conflict: OnConflict,
    rekeying: validation.Rekeying | None,
    spool: IO[bytes],
) -> Counter[str]:
    """Validate ``records`` and check them against the graph in one pass, spooling the
    parsed batches: the writes get exactly what was checked. The first clash is raised
    once the whole input proved valid: a format error anywhere comes first."""
    validator = validation.Validator(graph.nodes)
    held: set[str] | None = None  # the record types the graph holds some node of
    owners: dict[str, tuple[int, str, str]] = {}  # memory ids to look up
    clash: transfer.ImportConflict | None = None
    for kind, batch in batches(validated(records, validator, rekeying)):
        try:
            if held is None:  # the organization's record comes first
                held = graph.execute(kinds_held, batch[0][1]["org_id"])
            if clash is None and kind in held:
                graph.execute(new_records, kind, batch, on_conflict)
            if clash is None and kind == transfer.MEMORY and rekeying is None:
                owners.update(
                    (r["memory_id"], (line, r["org_id"], r["user_id"])) for line, r in batch
                )
                if len(owners) >= MEMORY_ID_CHECK_SIZE:
                    _check_owners(graph, owners)
        except transfer.ImportConflict as error:  # MemoryIdsTaken too
            clash = error
        pickle.dump((kind, batch), spool, pickle.HIGHEST_PROTOCOL)
    counts = validator.finish()
    if clash is None and owners:
        _check_owners(graph, owners)
    if clash is not None:
        raise clash
    return counts


class Neo4jTransfer(GraphComponent):
    @observe.observed("neo4j")
    def export_organization(self, org_id: str) -> RecordStream:
        """The organisation as ``memora-ogm-export`` records (JSON-ready dicts), streamed
        a page per read. Bad ids raise at once; a missing organisation on iteration."""
        check_ids(org_id=org_id)
        return export_records(self.graph, org_id, None)

    @observe.observed("neo4j")
    def export_user(self, org_id: str, user_id: str) -> RecordStream:
        """One user with the organisation, its org-wide agents and the user's own agents."""
        check_ids(org_id=org_id, user_id=user_id)
        return export_records(self.graph, org_id, user_id)

    @observe.observed("neo4j")
    def import_records(
        self,
        records: Iterable[Any],
        on_conflict: OnConflict = "fail",
        progress: Progress | None = None,
        rekey: bool = False,
    ) -> transfer.ImportSummary:
        """Import an export; nothing is written unless the whole input is valid and fits.

        ``on_conflict="fail"`` refuses an input any of whose nodes exist
        (:class:`~memora_ogm.transfer.format.ImportConflict`); ``"skip"`` writes only what is
        missing (importing again is harmless) but refuses an existing node with other
        values. Memory ids of another tenant are refused
        (:class:`~memora_ogm.transfer.format.MemoryIdsTaken`); ``rekey`` imports a copy with new
        memory ids. Malformed input raises :class:`~memora_ogm.transfer.format.ImportFormatError`.

        A batch whose commit goes unanswered is not blindly run again (its records would
        clash): the server is asked whether its first created node exists.
        """
        if on_conflict not in ("fail", "skip"):
            raise ValueError("`on_conflict` must be 'fail' or 'skip'.")
        if check_flag("rekey", rekey) and on_conflict != "fail":
            raise ValueError(
                "`rekey` makes a new copy, which has nothing to skip: use on_conflict='fail'."
            )
        rekeying = validation.Rekeying() if rekey else None
        summary = transfer.ImportSummary()
        with (
            tempfile.TemporaryFile(prefix="memora-ogm-import-") as spool,
            ThreadPoolExecutor(1, thread_name_prefix="memora-ogm-import") as ahead,
        ):
            counts = _validate_and_check(self.graph, records, on_conflict, rekeying, spool)
            total = sum(counts.values())
            done = 0
            nodes = self.graph.nodes
            written = ready_batches(nodes, spool, on_conflict)
            coming = ahead.submit(next, written, None)
            while (ready := result_of(coming)) is not None:
                coming = ahead.submit(next, written, None)
                planned: list[int] = []  # the records each attempt found new

                def write_batch(
                    work: Work, ready: Ready = ready, planned: list[int] = planned
                ) -> Landed | None:
                    new, declared = ready.new, ready.declared
                    if new is None:  # "skip": what is new is read in the write's transaction
                        new = work.run(new_records(nodes, ready.kind, ready.batch, on_conflict))
                        declared = write_of(nodes, ready.kind, ready.batch, new)
                    planned.append(len(new))
                    if declared is not None:
                        statement, memories = declared
                        work.send(statement)
                        work.changes.add(
                            convert.memory_for_vector(nodes, memory) for memory in memories
                        )
                    return created_first(nodes, ready.kind, new)

                self.graph.transaction(write_batch, lambda landed: landed)
                observe.batch()
                # The first attempt's count: a rerun finds landed links there already. A
                # Counter's += keeps positive counts only.
                summary.created += Counter({ready.kind: planned[0]})
                summary.skipped += Counter({ready.kind: len(ready.batch) - planned[0]})
                done += len(ready.batch)
                if progress is not None:
                    progress(done, total)
        self.logger.info("imported %s", dict(summary.created))
        return summary


def content_digest(source: Neo4jTransfer, org_id: str) -> transfer.Digest:
    digest = transfer.Digest()
    for record in source.export_organization(org_id):
        digest.add(record)
    return digest


def _without_vector_store(component: Neo4jTransfer) -> Neo4jTransfer:
    """``component`` with no vector store: a move's source sharing the target's store."""
    view = copy.copy(component)
    view.graph = copy.copy(component.graph)
    view.graph.vector_db = None
    return view


def move_organization(
    source: Neo4jTransfer,
    target: Neo4jTransfer,
    org_id: str,
    on_conflict: OnConflict = "fail",
    progress: Callable[[str, int, int | None], None] | None = None,
) -> transfer.MoveReport:
    """Export ``org_id`` from ``source`` (spooled to a file), import it into ``target``,
    and delete it at ``source`` only when both export the same content, else raise
    :class:`MoveVerificationFailed`. ``progress(stage, done, total)`` reports each stage.
    Sides sharing one vector store keep its points: the source is deleted from its graph.
    """
    report = progress or (lambda stage, done, total: None)
    handle, path = tempfile.mkstemp(prefix="memora-ogm-move-", suffix=".jsonl")
    try:
        exported = transfer.Digest()
        with os.fdopen(handle, "w", encoding="utf-8") as spool:
            done = 0
            for record in source.export_organization(org_id):
                exported.add(record)
                spool.write(transfer.dumps(record) + "\n")
                done += 1
                if done % MOVE_PROGRESS_RECORDS == 0:
                    report("export", done, None)
            report("export", done, done)
        imported = target.import_records(
            transfer.JsonLinesFile(path),
            on_conflict,
            progress=lambda done, total: report("import", done, total),
        )
    finally:
        os.unlink(path)
    report("verify", 0, 2)
    at_target = content_digest(target, org_id)
    report("verify", 1, 2)
    at_source = content_digest(source, org_id)
    report("verify", 2, 2)
    expected = exported.hexdigest()
    if at_target.hexdigest() != expected or at_source.hexdigest() != expected:
        raise MoveVerificationFailed(
            f"organization {org_id!r} was not deleted at the source: after the import the "
            f"target holds {dict(at_target.counts)} (digest {at_target.hexdigest()[:12]}), "
            f"the source {dict(at_source.counts)} (digest {at_source.hexdigest()[:12]}), "
            f"the export {dict(exported.counts)} (digest {expected[:12]})."
        )
    vectors = source.graph.vector_db
    shared = vectors is not None and vectors is target.graph.vector_db
    (_without_vector_store(source) if shared else source).delete_organization(org_id)
    report("delete", 1, 1)
    return transfer.MoveReport(expected, exported.counts, imported)
