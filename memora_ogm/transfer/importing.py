"""What the tenant import declares, with no I/O: its batches, their checks against the
graph and their writes, from :func:`memora_ogm.transfer.validation.shapes`."""

from __future__ import annotations

import pickle
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from datetime import date
from typing import IO, Any, Literal

from memora_ogm.calls.interaction import link_chains, messages_of
from memora_ogm.calls.organization import match_org
from memora_ogm.engine.call import Call, Landed
from memora_ogm.engine.mapping import node_key
from memora_ogm.engine.nodes import Nodes
from memora_ogm.engine.pages import (
    find_each,
    link_in_chains,
    merge_each,
    nodes_in,
    output_reached,
    related_each,
)
from memora_ogm.engine.projection import projection, reading
from memora_ogm.engine.unit_of_work import Compiled, Ref, UnitOfWork
from memora_ogm.errors import AgentNotFound, InteractionNotFound, MemoryNotFound, UserNotFound
from memora_ogm.transfer import format as transfer
from memora_ogm.transfer import validation
from memora_ogm.transfer.format import ImportConflict, Record
from memora_ogm.transfer.validation import Rekeying, shapes

#: Rows an import transaction writes at most: one a record, and one a message.
IMPORT_BATCH_ROWS = 5_000
#: Bytes of records (as JSON lines) an import transaction writes at most.
IMPORT_BATCH_BYTES = 16 * 1024 * 1024

OnConflict = Literal["fail", "skip"]
#: Records of one type with their line numbers, written in one transaction.
Batch = list[tuple[int, Record]]
Row = dict[str, Any]
#: The stored properties of the memories a batch's write creates (for the vector store).
Created = list[dict[str, Any]]
NODE_TYPES = transfer.CONTENT_TYPES[:-1]  # all but contrary updates, which link memories


def validated(
    records: Iterable[Any], validator: validation.Validator, rekeying: Rekeying | None
) -> Iterator[tuple[int, Record, int]]:
    """The content records parsed (and re-keyed), with their line numbers and sizes."""
    read: Iterable[tuple[Any, int | None]] = (
        records.sized()
        if isinstance(records, transfer.JsonLinesFile)
        else ((record, None) for record in records)
    )
    for record, line_bytes in read:
        parsed, size = validator.feed(record, line_bytes)
        if parsed["type"] in (transfer.HEADER, transfer.END):
            continue
        yield validator.line, (parsed if rekeying is None else rekeying(parsed)), size


def batches(records: Iterable[tuple[int, Record, int]]) -> Iterator[tuple[str, Batch]]:
    """Consecutive records of one type, within one transaction's rows and bytes."""
    batch: Batch = []
    rows = size = 0
    for line, record, length in records:
        count = 1 + len(record.get("messages", ()))
        if batch and (
            record["type"] != batch[0][1]["type"]
            or rows + count > IMPORT_BATCH_ROWS
            or size + length > IMPORT_BATCH_BYTES
        ):
            yield batch[0][1]["type"], batch
            batch, rows, size = [], 0, 0
        batch.append((line, record))
        rows += count
        size += length
    if batch:
        yield batch[0][1]["type"], batch


def _key_values(nodes: Nodes, kind: str, record: Record) -> dict[str, Any]:
    return {name: record[name] for name in shapes(nodes)[kind].key}


def new_records(
    nodes: Nodes, kind: str, batch: Batch, on_conflict: OnConflict
) -> Call[list[Record]]:
    """The records of ``batch`` new to the graph; with ``"skip"`` an existing node must hold
    exactly the record's values: an import never adds to a node the input does not describe."""
    if kind == transfer.CONTRARY_UPDATE:
        return _new_links(nodes, [record for _, record in batch])
    shape = shapes(nodes)[kind]
    work = UnitOfWork(batched=True)
    work.output(
        "found", find_each(work, shape.cls, [_key_values(nodes, kind, r) for _, r in batch])
    )
    fields = projection(reading(shape.cls))

    def new(row: Row) -> list[Record]:
        values = [fields.values(node) for node in row["found"]]
        existing = {tuple(node[name] for name in shape.key): node for node in values}
        made = []
        for line, record in batch:
            node = existing.get(tuple(record[name] for name in shape.key))
            if node is None:
                made.append(record)
                continue
            described = f"{kind} " + ", ".join(f"{name}={record[name]!r}" for name in shape.key)
            if on_conflict == "fail":
                raise ImportConflict(line, described)
            differing = [name for name in shape.properties if node.get(name) != record[name]]
            if differing:
                raise ImportConflict(
                    line,
                    described,
                    f"exists with other values of {', '.join(differing)}; "
                    "on_conflict='skip' only skips what the input describes exactly",
                )
        return made

    return Call(work, new)


def _new_links(nodes: Nodes, records: list[Record]) -> Call[list[Record]]:
    org_id = records[0]["org_id"]
    older = sorted({(record["user_id"], record["memory_id"]) for record in records})
    work = UnitOfWork(batched=True)
    memories = _owned(nodes, work, nodes.Memory, org_id, older)
    output_reached(work, "newer", memories, nodes.Memory.contrary_update, ("user_id", "memory_id"))

    def new(row: Row) -> list[Record]:
        linked = {
            (user_id, memory_id, newer_id)
            for (user_id, memory_id), newer in zip(older, row["newer"], strict=True)
            for newer_user, newer_id in newer
            if newer_user == user_id
        }
        return [r for r in records if (r["user_id"], r["memory_id"], r["updated_by"]) not in linked]

    return Call(work, new)


def memories_with_ids(nodes: Nodes, memory_ids: Iterable[str]) -> Call[list[dict[str, Any]]]:
    """The memories of ``memory_ids``, any tenant's (a label scan: give many ids)."""
    work = UnitOfWork()
    work.output("found", nodes_in(work, nodes.Memory, "memory_id", sorted(memory_ids)))
    fields = projection(reading(nodes.Memory))
    return Call(work, lambda row: [fields.values(node) for node in row["found"]])


def kinds_held(nodes: Nodes, org_id: str) -> Call[set[str]]:
    """The record types with some node of ``org_id`` (others have nothing to clash with)."""
    work = UnitOfWork()
    for kind in NODE_TYPES:
        work.output(kind, work.nodes(shapes(nodes)[kind].cls, 1, org_id=org_id))
    return Call(work, lambda row: {kind for kind in NODE_TYPES if row[kind]})


def _properties(nodes: Nodes, kind: str, record: Record) -> dict[str, Any]:
    return {name: record[name] for name in shapes(nodes)[kind].properties}


def _owned(
    nodes: Nodes, work: UnitOfWork, cls: type, org_id: str, ids: list[tuple[str, str]]
) -> Ref:
    """The memories or interactions of ``ids`` (user_id, own id), in order; all must exist."""
    name, missing = (
        node_key(cls)[-1],
        MemoryNotFound if cls is nodes.Memory else InteractionNotFound,
    )
    return work.match_each(
        cls,
        [{"org_id": org_id, "user_id": user, name: own} for user, own in ids],
        lambda key: missing(org_id, key["user_id"], key[name]),
    )


def _users(
    nodes: Nodes, work: UnitOfWork, org_id: str, records: Iterable[Record], lock: bool = True
) -> tuple[Ref, dict[str, int]]:
    """The users of ``records`` (write-locked, as saves lock them) and their indexes."""
    user_ids = sorted({record["user_id"] for record in records if record["user_id"] is not None})
    users = work.match_each(
        nodes.User,
        [{"org_id": org_id, "user_id": user_id} for user_id in user_ids],
        lambda key: UserNotFound(org_id, key["user_id"]),
        lock=lock,
    )
    return users, {user_id: index for index, user_id in enumerate(user_ids)}


def _write_organizations(
    nodes: Nodes, work: UnitOfWork, batch: list[Record], new: list[Record]
) -> Created:
    work.create_each(
        nodes.Org, [_properties(nodes, transfer.ORGANIZATION, record) for record in new]
    )
    return []


def _write_users(nodes: Nodes, work: UnitOfWork, batch: list[Record], new: list[Record]) -> Created:
    org = match_org(nodes, work, new[0]["org_id"], lock=True)  # takes turns with its deletion
    users, _ = work.create_each(
        nodes.User, [_properties(nodes, transfer.USER, record) for record in new]
    )
    owned = [_key_values(nodes, transfer.USER, record) for record in new]
    pairs = [(n, n) for n in range(len(new))]
    work.link(nodes.User.belongs_to, users, org)
    work.link(
        nodes.User.interactions_in,
        users,
        work.create_each(nodes.InteractionCollection, owned)[0],
        pairs,
    )
    work.link(
        nodes.User.has_memories, users, work.create_each(nodes.MemoryCollection, owned)[0], pairs
    )
    return []


def _write_agents(
    nodes: Nodes, work: UnitOfWork, batch: list[Record], new: list[Record]
) -> Created:
    """The new agents, and links (merged) of all the batch's agents: a user imported again
    after its deletion gets its agents back."""
    org_id = batch[0]["org_id"]
    org = match_org(nodes, work, org_id, lock=True)
    users, index = _users(nodes, work, org_id, batch, lock=False)
    made = {record["agent_id"] for record in new}
    kept = [record for record in batch if record["agent_id"] not in made]
    existing = work.match_each(
        nodes.Agent,
        [_key_values(nodes, transfer.AGENT, record) for record in kept],
        lambda key: AgentNotFound(org_id, key["agent_id"]),
    )
    created, _ = work.create_each(
        nodes.Agent, [_properties(nodes, transfer.AGENT, record) for record in new]
    )
    for agents, records in ((created, new), (existing, kept)):
        work.link(nodes.Org.has_agent, org, agents)
        work.link(
            nodes.User.has_agent,
            users,
            agents,
            [
                (index[record["user_id"]], n)
                for n, record in enumerate(records)
                if record["user_id"] is not None
            ],
        )
    return []


def _days(
    nodes: Nodes, work: UnitOfWork, links: list[tuple[int, Record, date]]
) -> tuple[Ref, list[tuple[int, int]]]:
    """The Date nodes of ``links`` (index, owner, day), merged, and the pairs to them;
    shared with other writers, so declared after what is new."""
    keys = list(dict.fromkeys((r["org_id"], r["user_id"], day) for _, r, day in links))
    days = merge_each(
        work, nodes.Date, [{"org_id": org, "user_id": user, "date": day} for org, user, day in keys]
    )
    index = {key: k for k, key in enumerate(keys)}
    return days, [(n, index[(r["org_id"], r["user_id"], day)]) for n, r, day in links]


def _write_interactions(
    nodes: Nodes, work: UnitOfWork, batch: list[Record], new: list[Record]
) -> Created:
    """Interactions and chains, then links to what others share, in a save's lock order."""
    users, index = _users(nodes, work, new[0]["org_id"], new)
    collections = related_each(work, users, nodes.User.interactions_in)
    interactions, _ = work.create_each(
        nodes.Interaction, [_properties(nodes, transfer.INTERACTION, record) for record in new]
    )
    chain, _ = work.create_each(
        nodes.MessageBlock, [row for record in new for row in messages_of(record["messages"])]
    )
    link_chains(nodes, work, interactions, chain, [len(record["messages"]) for record in new])
    work.link(
        nodes.InteractionCollection.had_interaction,
        collections,
        interactions,
        [(index[record["user_id"]], i) for i, record in enumerate(new)],
    )
    days, occurrences = _days(
        nodes, work, [(i, record, day) for i, record in enumerate(new) for day in record["dates"]]
    )
    work.link(nodes.Interaction.has_occurrence_on, interactions, days, occurrences)
    return []


def _write_memories(
    nodes: Nodes, work: UnitOfWork, batch: list[Record], new: list[Record]
) -> Created:
    """Memories and links to their sources, then to what others share (in lock order)."""
    org_id = new[0]["org_id"]
    users, index = _users(nodes, work, org_id, new)
    sources = sorted({(record["user_id"], record["interaction_id"]) for record in new})
    interactions = _owned(nodes, work, nodes.Interaction, org_id, sources)
    position = {key: n for n, key in enumerate(sources)}
    source = [position[(record["user_id"], record["interaction_id"])] for record in new]
    collections = related_each(work, users, nodes.User.has_memories)
    memories, created = work.create_each(
        nodes.Memory, [_properties(nodes, transfer.MEMORY, record) for record in new]
    )
    work.link(nodes.Memory.interaction_source, memories, interactions, list(enumerate(source)))
    link_in_chains(
        work,
        nodes.Memory.message_source,
        memories,
        interactions,
        nodes.Interaction.first_message,
        nodes.MessageBlock.is_next,
        "msg_position",
        [
            (n, source[n], position)
            for n, record in enumerate(new)
            for position in sorted(record["source_positions"])
        ],
    )
    work.link(
        nodes.MemoryCollection.includes,
        collections,
        memories,
        [(index[record["user_id"]], n) for n, record in enumerate(new)],
    )
    days, obtained = _days(
        nodes,
        work,
        [
            (n, record, record["date_obtained"])
            for n, record in enumerate(new)
            if record["date_obtained"] is not None
        ],
    )
    # Links no interaction to a day: it keeps the statement as it was (tests/golden).
    work.link(nodes.Interaction.has_occurrence_on, interactions, days, [])
    work.link(nodes.Memory.date_obtained, memories, days, obtained)
    return created


def _write_contrary_updates(
    nodes: Nodes, work: UnitOfWork, batch: list[Record], new: list[Record]
) -> Created:
    """Merged links and no node: a batch whose commit went unanswered simply runs again."""
    org_id = new[0]["org_id"]
    _users(nodes, work, org_id, new)
    ids = sorted({(r["user_id"], r[name]) for r in new for name in ("memory_id", "updated_by")})
    memories = _owned(nodes, work, nodes.Memory, org_id, ids)
    index = {key: n for n, key in enumerate(ids)}
    work.link(
        nodes.Memory.contrary_update,
        memories,
        memories,
        [
            (index[(r["user_id"], r["memory_id"])], index[(r["user_id"], r["updated_by"])])
            for r in new
        ],
    )
    return []


#: Per record type: the write of a batch (all its records, the new ones).
WRITERS: dict[str, Callable[[Nodes, UnitOfWork, list[Record], list[Record]], Created]] = {
    transfer.ORGANIZATION: _write_organizations,
    transfer.USER: _write_users,
    transfer.AGENT: _write_agents,
    transfer.INTERACTION: _write_interactions,
    transfer.MEMORY: _write_memories,
    transfer.CONTRARY_UPDATE: _write_contrary_updates,
}


def write_of(
    nodes: Nodes, kind: str, batch: Batch, new: list[Record]
) -> tuple[Compiled, Created] | None:
    """The compiled write of the ``new`` records, with the memories it creates, or None."""
    if not new and kind != transfer.AGENT:  # skipped agents are linked again
        return None
    unit = UnitOfWork(batched=True)
    memories = WRITERS[kind](nodes, unit, [record for _, record in batch], new)
    return unit.compiled(), memories


def created_first(nodes: Nodes, kind: str, created: list[Record]) -> Landed | None:
    """The first new node, showing that an unanswered commit took effect (None: rerun)."""
    if not created or kind not in NODE_TYPES:
        return None
    return Landed(shapes(nodes)[kind].cls, _key_values(nodes, kind, created[0]))


@dataclass(frozen=True)
class Ready:
    """A spooled batch, with its write compiled ahead (in a thread, while the batch before
    is written) when what is new is known: all of it, with ``"fail"``."""

    kind: str
    batch: Batch
    new: list[Record] | None
    declared: tuple[Compiled, Created] | None


def ready_batches(nodes: Nodes, spool: IO[bytes], on_conflict: OnConflict) -> Iterator[Ready]:
    spool.seek(0)
    while True:
        try:
            kind, batch = pickle.load(spool)
        except EOFError:
            return
        if on_conflict == "skip":
            yield Ready(kind, batch, None, None)
        else:
            new = [record for _, record in batch]
            yield Ready(kind, batch, new, write_of(nodes, kind, batch, new))
