# Generated from memora_ogm/_async by scripts/generate_sync.py: do not edit.
"""Tenant export, import and move, in the format of :mod:`memora_ogm.transfer`.

Exports page through the tenant by key (:mod:`memora_ogm._async.paging`), each page one
compiled read statement that brings the nodes back as projected maps with what their
records need (an interaction's messages and days, a memory's sources, day and newer
memories), so memory stays flat whatever the tenant's size and no node object is built.

Imports check the whole input first (:class:`memora_ogm.transfer.Validator`) and, in the
same pass, against the graph: that none of it exists yet (``on_conflict="fail"``) or
that what exists holds exactly the record's values (``"skip"``), and that no memory id
belongs to another tenant; that pass parses each record once and keeps the parsed
batches in a temporary file. Only then do they write, a batch of records per write
transaction (bounded in rows and bytes), each one unit of work
(:mod:`memora_ogm.unit_of_work`), its interactions and memories declared as the save
path declares its own (:func:`declare_interactions`), and the memories added to the
associated vector store with their batch, all or nothing. Each batch is read back,
declared and compiled in a thread of the import's own while the batch before it is
written, so that the server does not wait for Python.
"""

from __future__ import annotations

import copy
import os
import pickle
import tempfile
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import IO, Any, Literal, TypeVar

from memora_ogm import convert, telemetry, transfer
from memora_ogm._sync.compat import result_of
from memora_ogm._sync.component import GraphComponent
from memora_ogm._sync.graph import Graph, Landed, VectorChanges
from memora_ogm._sync.interaction import (
    InteractionWrite,
    NewInteraction,
    NewMemory,
    declare_interactions,
)
from memora_ogm._sync.nodes import (
    Agent,
    Interaction,
    InteractionCollection,
    MemoraNode,
    Memory,
    MemoryCollection,
    MessageBlock,
    Org,
    User,
)
from memora_ogm._sync.organization import match_org
from memora_ogm._sync.paging import Part, pages
from memora_ogm._sync.user import match_user
from memora_ogm.errors import (
    AgentNotFound,
    InteractionNotFound,
    MemoraOGMError,
    MemoryNotFound,
    OrganizationNotFound,
    UserNotFound,
)
from memora_ogm.projection import projection, reading
from memora_ogm.transfer import ImportConflict, MemoryIdsTaken, Record, Rekeying
from memora_ogm.unit_of_work import Compiled, Ref, Related, UnitOfWork
from memora_ogm.validation import check_flag, check_ids

N = TypeVar("N", bound=MemoraNode)

#: A user's contrary updates held back until the last of the user's memories is exported.
EXPORT_HELD_UPDATES = 50_000
#: Records a move's export reports its progress after, each time.
MOVE_PROGRESS_RECORDS = 500
#: Rows written per import transaction, at most: a record counts one, and one more for
#: each of its messages (long conversations end a batch early).
IMPORT_BATCH_ROWS = 5_000
#: Bytes of records (as JSON lines) written per import transaction, at most; a single
#: record is bounded by :data:`memora_ogm.transfer.MAX_RECORD_BYTES`.
IMPORT_BATCH_BYTES = 16 * 1024 * 1024
#: Memory ids looked up per statement when checking that no other tenant holds them.
MEMORY_ID_CHECK_SIZE = 10_000

OnConflict = Literal["fail", "skip"]
RecordStream = Iterator[Record]
"""What an export returns (a plain iterator in the sync twin)."""
Progress = Callable[[int, int], None]
"""Called after each written batch with (records done, records in the input)."""


@dataclass
class ImportSummary:
    """What an import did, per record type: created, and skipped as already there."""

    created: Counter[str] = field(default_factory=Counter)
    skipped: Counter[str] = field(default_factory=Counter)


class MoveVerificationFailed(MemoraOGMError):
    """After a move's import the two servers do not hold the same content; the source
    organisation was left in place."""


# --------------------------------------------------------------------------- export


_USERS = Part(User, "user_id")
_AGENTS = Part(Agent, "agent_id")
_INTERACTIONS = Part(
    Interaction,
    "interaction_id",
    (
        (
            "messages",
            Related(
                (Interaction.first_message, MessageBlock.is_next),
                ("role", "content"),
                order_by="msg_position",
            ),
        ),
        ("dates", Related((Interaction.has_occurrence_on,), ("date",))),
    ),
)
_MEMORIES = Part(
    Memory,
    "memory_id",
    (
        ("sources", Related((Memory.message_source,), ("msg_position",))),
        ("days", Related((Memory.date_obtained,), ("date",))),
        # The newer memories superseding it, of the same user (as the record requires).
        (
            "newer",
            Related(
                (Memory.contrary_update,),
                ("memory_id",),
                order_by="memory_id",
                same=("org_id", "user_id"),
            ),
        ),
    ),
)


def _interaction(values: dict[str, Any], row: dict[str, Any]) -> Record:
    return transfer.interaction(values, row["messages"], [day.to_native() for day in row["dates"]])


def _memory(values: dict[str, Any], row: dict[str, Any]) -> Record:
    days = row["days"]
    return transfer.memory(values, row["sources"], days[0].to_native() if days else None)


def _user_content(graph: Graph, org_id: str, user_id: str) -> Iterator[Record]:
    """A user's interactions, memories, then contrary updates, each in key order.

    The contrary updates come with the memories' pages and are held back until the last
    memory; past :data:`EXPORT_HELD_UPDATES` of them, the rest are read again after the
    memories, from the last memory whose updates are held.
    """
    owned = {"org_id": org_id, "user_id": user_id}
    for page in pages(graph, _INTERACTIONS, **owned):
        for values, row in page:
            yield _interaction(values, row)
    held: list[tuple[str, str]] = []
    rest: str | None = None  # the last memory whose updates are held, once they overflow
    for page in pages(graph, _MEMORIES, **owned):
        for values, row in page:
            yield _memory(values, row)
            if rest is None:
                held.extend((values["memory_id"], newer) for newer in row["newer"])
                if len(held) > EXPORT_HELD_UPDATES:
                    rest = values["memory_id"]
    for older, newer in held:
        yield transfer.contrary_update(org_id, user_id, older, newer)
    if rest is not None:
        for page in pages(graph, _MEMORIES, rest, **owned):
            for values, row in page:
                for newer in row["newer"]:
                    yield transfer.contrary_update(org_id, user_id, values["memory_id"], newer)


def export_records(graph: Graph, org_id: str, user_id: str | None) -> Iterator[Record]:
    """The organisation (or one user of it) as records: header first, end last."""
    tenant = UnitOfWork()
    found = match_org(tenant, org_id)
    if user_id is not None:
        match_user(tenant, org_id, user_id)
    tenant.output("org", found)
    org = graph.read_unit(tenant, lambda row: projection(reading(Org)).values(row["org"]))
    counts: Counter[str] = Counter()
    scope = "organization" if user_id is None else "user"
    yield transfer.header(scope, org_id, user_id, graph.database)
    yield transfer.organization(org)
    counts[transfer.ORGANIZATION] += 1
    users = {"org_id": org_id} if user_id is None else {"org_id": org_id, "user_id": user_id}
    for page in pages(graph, _USERS, **users):
        counts[transfer.USER] += len(page)
        for values, _ in page:
            yield transfer.user(values)
    for page in pages(graph, _AGENTS, org_id=org_id):
        for values, _ in page:
            if user_id is None or values["user_id"] in (None, user_id):
                counts[transfer.AGENT] += 1
                yield transfer.agent(values)
    for page in pages(graph, _USERS, **users):
        for values, _ in page:
            for record in _user_content(graph, org_id, values["user_id"]):
                counts[record["type"]] += 1
                yield record
    yield transfer.end(counts)


# --------------------------------------------------------------------------- import


Batch = list[tuple[int, Record]]
"""Content records of one type with their line numbers, written in one transaction."""


def _validated(
    records: Iterable[Any], validator: transfer.Validator, rekeying: Rekeying | None
) -> Iterator[tuple[int, Record, int]]:
    """The content records of ``records`` as ``validator`` checks and parses them (and
    re-keyed when ``rekeying``), each with its line number and size in bytes."""
    for record, line_bytes in transfer.sized(records):
        parsed, size = validator.feed_sized(record, line_bytes)
        if parsed["type"] in (transfer.HEADER, transfer.END):
            continue
        yield validator.line, (parsed if rekeying is None else rekeying(parsed)), size


def _batches(records: Iterable[tuple[int, Record, int]]) -> Iterator[tuple[str, Batch]]:
    """Consecutive content records of one type, each batch within the rows and bytes of
    one import transaction."""
    kind: str | None = None
    batch: Batch = []
    rows = size = 0
    for line, record, length in records:
        count = 1 + len(record.get("messages", ()))
        if batch and (
            record["type"] != kind
            or rows + count > IMPORT_BATCH_ROWS
            or size + length > IMPORT_BATCH_BYTES
        ):
            assert kind is not None
            yield kind, batch
            batch, rows, size = [], 0, 0
        kind = record["type"]
        batch.append((line, record))
        rows += count
        size += length
    if batch:
        assert kind is not None
        yield kind, batch


#: Per record type: the node class and the properties that make its key (org_id first).
KEYS: dict[str, tuple[type, tuple[str, ...]]] = {
    transfer.ORGANIZATION: (Org, ("org_id",)),
    transfer.USER: (User, ("org_id", "user_id")),
    transfer.AGENT: (Agent, ("org_id", "agent_id")),
    transfer.INTERACTION: (Interaction, ("org_id", "user_id", "interaction_id")),
    transfer.MEMORY: (Memory, ("org_id", "user_id", "memory_id")),
}


#: Per record type: the node properties, besides the key, that ``skip`` compares.
VALUES: dict[str, tuple[str, ...]] = {
    transfer.ORGANIZATION: ("org_name", "created_at"),
    transfer.USER: ("user_name", "created_at"),
    transfer.AGENT: ("agent_label", "user_id", "created_at"),
    transfer.INTERACTION: ("agent_id", "created_at", "updated_at"),
    transfer.MEMORY: ("interaction_id", "agent_id", "memory", "obtained_at"),
}


def _describe(kind: str, record: Record) -> str:
    cls, key = KEYS[kind]
    return f"{kind} " + ", ".join(f"{name}={record[name]!r}" for name in key)


Found = Callable[[dict[str, Any]], Any]
"""What a read's row gives the import."""


def _existing(kind: str, batch: Batch) -> tuple[UnitOfWork, Found]:
    """A read of the values of ``batch``'s nodes that the graph already holds (an index
    seek a record), and what gives them by key from its row."""
    cls, key = KEYS[kind]
    work = UnitOfWork(batched=True)
    work.output("found", work.find_each(cls, [_values(record, *key) for _, record in batch]))
    fields = projection(reading(cls))

    def found(row: dict[str, Any]) -> dict[tuple[str, ...], dict[str, Any]]:
        values = [fields.values(node) for node in row["found"]]
        return {tuple(node[name] for name in key): node for node in values}

    return work, found


def _new_of(
    kind: str,
    batch: Batch,
    existing: dict[tuple[str, ...], dict[str, Any]],
    on_conflict: OnConflict,
) -> list[Record]:
    """The records of ``batch`` whose nodes are not in ``existing``.

    An existing one fails with ``"fail"``; with ``"skip"`` it is skipped only when its
    node holds exactly the record's values, so that an import never links to, or adds
    to, a node the input does not describe (an organisation named by its id alone, a
    memory of the same id with another text).
    """
    new = []
    for line, record in batch:
        node = existing.get(_key(kind, record))
        if node is None:
            new.append(record)
        elif on_conflict == "fail":
            raise ImportConflict(line, _describe(kind, record))
        else:
            differing = [name for name in VALUES[kind] if node.get(name) != record[name]]
            if differing:
                raise ImportConflict(
                    line,
                    _describe(kind, record),
                    f"exists with other values of {', '.join(differing)}; "
                    "on_conflict='skip' only skips what the input describes exactly",
                )
    return new


def _key(kind: str, record: Record) -> tuple[str, ...]:
    return tuple(record[name] for name in KEYS[kind][1])


def _link(record: Record) -> tuple[str, str, str]:
    return (record["user_id"], record["memory_id"], record["updated_by"])


def _values(record: Record, *names: str) -> dict[str, Any]:
    return {name: record[name] for name in names}


def _existing_links(records: list[Record]) -> tuple[UnitOfWork, Found]:
    """A read of the ``CONTRARY_UPDATE`` links of ``records`` that the graph already holds."""
    org_id = records[0]["org_id"]
    older = sorted({(record["user_id"], record["memory_id"]) for record in records})
    work = UnitOfWork(batched=True)
    memories = work.match_each(
        Memory,
        [
            {"org_id": org_id, "user_id": user_id, "memory_id": memory_id}
            for user_id, memory_id in older
        ],
        lambda key: MemoryNotFound(org_id, key["user_id"], key["memory_id"]),
    )
    work.output_reached("newer", memories, Memory.contrary_update, ("user_id", "memory_id"))

    def found(row: dict[str, Any]) -> set[tuple[str, str, str]]:
        return {
            (user_id, memory_id, newer_id)
            for (user_id, memory_id), newer in zip(older, row["newer"], strict=True)
            for newer_user, newer_id in newer
            if newer_user == user_id
        }

    return work, found


def _new_records(graph: Graph, kind: str, batch: Batch, on_conflict: OnConflict) -> list[Record]:
    """The records of ``batch`` not in the graph yet; an existing one fails unless skipped.

    With ``"fail"`` the whole input was found new before the first write, so nothing is
    read again (a node made meanwhile by another writer fails on its key).
    """
    records = [record for _, record in batch]
    if on_conflict == "fail":
        return records
    if kind == transfer.CONTRARY_UPDATE:
        work, found = _existing_links(records)
        linked = found(graph.run(work))
        return [record for record in records if _link(record) not in linked]
    work, found = _existing(kind, batch)
    return _new_of(kind, batch, found(graph.run(work)), on_conflict)


Created = list[dict[str, Any]]
"""The stored properties of the memories a batch's write creates (for the vector store)."""


def _users(
    work: UnitOfWork, org_id: str, records: Iterable[Record], lock: bool = True
) -> tuple[Ref, dict[str, int]]:
    """The users of ``records`` (write-locked, as every write to their interactions and
    memories does), and each one's index among them."""
    user_ids = sorted({record["user_id"] for record in records if record["user_id"] is not None})
    users = work.match_each(
        User,
        [{"org_id": org_id, "user_id": user_id} for user_id in user_ids],
        lambda key: UserNotFound(org_id, key["user_id"]),
        lock=lock,
    )
    return users, {user_id: index for index, user_id in enumerate(user_ids)}


def _org(work: UnitOfWork, org_id: str) -> Ref:
    """The organisation, write-locked: an import into it takes turns with its deletion."""
    return work.match(Org, lambda: OrganizationNotFound(org_id), lock=True, org_id=org_id)


def _write_organizations(work: UnitOfWork, batch: list[Record], new: list[Record]) -> Created:
    work.create_each(Org, [_values(record, "org_id", "org_name", "created_at") for record in new])
    return []


def _write_users(work: UnitOfWork, batch: list[Record], new: list[Record]) -> Created:
    """The users with their two collections, as ``create_user`` makes them."""
    org = _org(work, new[0]["org_id"])
    fields = ("org_id", "user_id", "user_name", "created_at")
    users, _ = work.create_each(User, [_values(record, *fields) for record in new])
    owned = [_values(record, "org_id", "user_id") for record in new]
    pairs = [(n, n) for n in range(len(new))]
    work.link(User.belongs_to, users, org)
    work.link(User.interactions_in, users, work.create_each(InteractionCollection, owned)[0], pairs)
    work.link(User.has_memories, users, work.create_each(MemoryCollection, owned)[0], pairs)
    return []


def _write_agents(work: UnitOfWork, batch: list[Record], new: list[Record]) -> Created:
    """The new agents, and the links of the batch's agents, new or skipped alike, to the
    organisation and their users: a user imported again after its deletion gets its own
    agents back (merged)."""
    org_id = batch[0]["org_id"]
    org = _org(work, org_id)
    users, index = _users(work, org_id, batch, lock=False)
    made = {record["agent_id"] for record in new}
    kept = [record for record in batch if record["agent_id"] not in made]
    existing = work.match_each(
        Agent,
        [_values(record, "org_id", "agent_id") for record in kept],
        lambda key: AgentNotFound(org_id, key["agent_id"]),
    )
    fields = ("org_id", "agent_id", "agent_label", "user_id", "created_at")
    created, _ = work.create_each(Agent, [_values(record, *fields) for record in new])
    for agents, records in ((created, new), (existing, kept)):
        work.link(Org.has_agent, org, agents)
        work.link(
            User.has_agent,
            users,
            agents,
            [
                (index[record["user_id"]], n)
                for n, record in enumerate(records)
                if record["user_id"] is not None
            ],
        )
    return []


def _write_interactions(work: UnitOfWork, batch: list[Record], new: list[Record]) -> Created:
    users, index = _users(work, new[0]["org_id"], new)
    fields = ("org_id", "user_id", "agent_id", "interaction_id", "created_at", "updated_at")
    declare_interactions(
        work,
        InteractionWrite(
            interactions_in=work.related_each(users, User.interactions_in),
            new=[
                NewInteraction(
                    index[record["user_id"]],
                    _values(record, *fields),
                    record["messages"],
                    record["dates"],
                )
                for record in new
            ],
        ),
    )
    return []


def _write_memories(work: UnitOfWork, batch: list[Record], new: list[Record]) -> Created:
    org_id = new[0]["org_id"]
    users, index = _users(work, org_id, new)
    sources = sorted({(record["user_id"], record["interaction_id"]) for record in new})
    interactions = work.match_each(
        Interaction,
        [
            {"org_id": org_id, "user_id": user_id, "interaction_id": interaction_id}
            for user_id, interaction_id in sources
        ],
        lambda key: InteractionNotFound(org_id, key["user_id"], key["interaction_id"]),
    )
    position = {source: n for n, source in enumerate(sources)}
    fields = ("org_id", "user_id", "agent_id", "interaction_id", "memory_id", "memory")
    _, memories = declare_interactions(
        work,
        InteractionWrite(
            memories_in=work.related_each(users, User.has_memories),
            existing=interactions,
            memories=[
                NewMemory(
                    owner=index[record["user_id"]],
                    interaction=position[(record["user_id"], record["interaction_id"])],
                    properties=_values(record, *fields, "obtained_at"),
                    sources=record["source_positions"],
                    day=record["date_obtained"],
                )
                for record in new
            ],
        ),
    )
    return memories


def _write_contrary_updates(work: UnitOfWork, batch: list[Record], new: list[Record]) -> Created:
    """Link the pairs (merged): it creates no node of its own, so a batch whose commit
    went unanswered runs again, and finds what landed linked already."""
    org_id = new[0]["org_id"]
    _users(work, org_id, new)
    ids = sorted({(r["user_id"], r[name]) for r in new for name in ("memory_id", "updated_by")})
    memories = work.match_each(
        Memory,
        [
            {"org_id": org_id, "user_id": user_id, "memory_id": memory_id}
            for user_id, memory_id in ids
        ],
        lambda key: MemoryNotFound(org_id, key["user_id"], key["memory_id"]),
    )
    index = {key: n for n, key in enumerate(ids)}
    work.link(
        Memory.contrary_update,
        memories,
        memories,
        [
            (index[(r["user_id"], r["memory_id"])], index[(r["user_id"], r["updated_by"])])
            for r in new
        ],
    )
    return []


Writer = Callable[[UnitOfWork, list[Record], list[Record]], Created]

#: Per record type: what declares the write of a batch (all its records, the new ones).
WRITERS: dict[str, Writer] = {
    transfer.ORGANIZATION: _write_organizations,
    transfer.USER: _write_users,
    transfer.AGENT: _write_agents,
    transfer.INTERACTION: _write_interactions,
    transfer.MEMORY: _write_memories,
    transfer.CONTRARY_UPDATE: _write_contrary_updates,
}


def _created_first(kind: str, created: list[Record]) -> Landed | None:
    """What shows that an import batch took effect when its commit goes unanswered: the
    node of the first record it created exists. None when it created no node (links
    only, merged): it may simply run again."""
    if not created or kind not in KEYS:
        return None
    cls, key = KEYS[kind]
    return Landed(cls, {name: created[0][name] for name in key})


def _taken_memory_ids(
    graph: Graph, owners: dict[str, tuple[int, str, str]]
) -> dict[str, tuple[str, str]]:
    """The ``(org_id, user_id)`` of another tenant (or user) holding one of ``owners``'
    memory ids, by id.

    ``owners`` maps a memory id to the line, org_id and user_id of its record. The key's
    index starts with org_id, so this reads the Memory label; hence many ids a statement.
    """
    work = UnitOfWork()
    work.output("found", work.nodes_in(Memory, "memory_id", sorted(owners)))

    def found(row: dict[str, Any]) -> dict[str, tuple[str, str]]:
        return {
            node["memory_id"]: (node["org_id"], node["user_id"])
            for node in row["found"]
            if (node["org_id"], node["user_id"]) != owners[node["memory_id"]][1:]
        }

    return graph.read_unit(work, found)


def _kinds_held(graph: Graph, org_id: str) -> set[str]:
    """The record types of which the graph holds some node of ``org_id`` (a seek of each
    key's index by its prefix): the records of any other type have nothing to clash with,
    and their batches are not looked up one by one."""
    work = UnitOfWork()
    for kind, (cls, _) in KEYS.items():
        work.output(kind, work.nodes(cls, 1, org_id=org_id))
    return graph.read_unit(work, lambda row: {kind for kind in KEYS if row[kind]})


class _InputCheck:
    """The input against the graph, a batch at a time as it is validated: a record whose
    node exists (``"fail"``) or exists with other values (``"skip"``), or whose memory id
    is another tenant's (both modes; a re-keyed copy has fresh ids).

    The first clash is kept, and raised by :meth:`finish` once the whole input proved
    valid: a format error anywhere comes first, as when the input was checked whole
    before the graph.
    """

    def __init__(self, graph: Graph, on_conflict: OnConflict, memory_ids: bool) -> None:
        self.graph = graph
        self.on_conflict = on_conflict
        self.memory_ids = memory_ids
        #: The record types of which the graph holds some node of the organisation.
        self.held: set[str] | None = None
        #: Memory ids waiting to be looked up, with the line, org_id and user_id of each.
        self.owners: dict[str, tuple[int, str, str]] = {}
        self.clash: ImportConflict | MemoryIdsTaken | None = None

    def batch(self, kind: str, batch: Batch) -> None:
        """Check a batch, unless a clash was found already."""
        if self.clash is None:
            try:
                self._check(kind, batch)
            except (ImportConflict, MemoryIdsTaken) as clash:
                self.clash = clash

    def finish(self) -> None:
        """After the last batch of a valid input: look up the memory ids left, then raise
        the first clash, if any."""
        if self.clash is None and self.owners:
            try:
                self._check_owners()
            except MemoryIdsTaken as clash:
                self.clash = clash
        if self.clash is not None:
            raise self.clash

    def _check(self, kind: str, batch: Batch) -> None:
        if self.held is None:  # the organization's record comes first
            self.held = _kinds_held(self.graph, batch[0][1]["org_id"])
        if kind in self.held:
            existing = self.graph.read_unit(*_existing(kind, batch))
            _new_of(kind, batch, existing, self.on_conflict)  # raises on the first clash
        if kind == transfer.MEMORY and self.memory_ids:
            for line, record in batch:
                self.owners[record["memory_id"]] = (line, record["org_id"], record["user_id"])
            if len(self.owners) >= MEMORY_ID_CHECK_SIZE:
                self._check_owners()

    def _check_owners(self) -> None:
        taken = _taken_memory_ids(self.graph, self.owners)
        if taken:
            first = min(self.owners[memory_id][0] for memory_id in taken)
            raise MemoryIdsTaken(first, taken)
        self.owners.clear()


def _validate_and_check(
    graph: Graph,
    records: Iterable[Any],
    on_conflict: OnConflict,
    rekeying: Rekeying | None,
    spool: IO[bytes],
) -> Counter[str]:
    """Validate ``records`` whole and check them against the graph (:class:`_InputCheck`)
    in one pass, which parses each record once and spools the parsed batches for the
    writes (pickled): memory stays flat, and the writes get exactly what was checked.
    Returns the number of content records of each type."""
    validator = transfer.Validator()
    check = _InputCheck(graph, on_conflict, memory_ids=rekeying is None)
    for kind, batch in _batches(_validated(records, validator, rekeying)):
        check.batch(kind, batch)
        pickle.dump((kind, batch), spool, pickle.HIGHEST_PROTOCOL)
    counts = validator.finish()
    check.finish()
    return counts


def _spooled(spool: IO[bytes]) -> Iterator[tuple[str, Batch]]:
    """The batches :func:`_validate_and_check` spooled, in order."""
    spool.seek(0)
    while True:
        try:
            yield pickle.load(spool)
        except EOFError:
            return


def _declared(kind: str, batch: Batch, new: list[Record]) -> tuple[Compiled, Created] | None:
    """The compiled write of a batch whose ``new`` records are not in the graph yet, with
    the memories it creates; None when there is nothing to write."""
    if not new and kind != transfer.AGENT:  # skipped agents are linked again
        return None
    unit = UnitOfWork(batched=True)
    memories = WRITERS[kind](unit, [record for _, record in batch], new)
    return unit.compiled(), memories


@dataclass(frozen=True)
class _Ready:
    """A batch read back from the spool, and its write declared and compiled when what is
    new is known ahead: everything, with ``"fail"`` (whose check found none of it in the
    graph). Made ready in a thread while the batch before it is written."""

    kind: str
    batch: Batch
    new: list[Record] | None
    declared: tuple[Compiled, Created] | None


def _next_ready(batches: Iterator[tuple[str, Batch]], on_conflict: OnConflict) -> _Ready | None:
    """The next batch, made ready; None after the last."""
    for kind, batch in batches:
        if on_conflict == "skip":
            return _Ready(kind, batch, None, None)
        new = [record for _, record in batch]
        return _Ready(kind, batch, new, _declared(kind, batch, new))
    return None


def import_records(
    graph: Graph,
    records: Iterable[Any],
    on_conflict: OnConflict = "fail",
    progress: Progress | None = None,
    rekey: bool = False,
) -> ImportSummary:
    """Validate ``records`` whole, check them against the graph, then write them a batch
    per transaction.

    A batch whose commit goes unanswered is not simply run again (its records would then
    exist: a conflict in ``"fail"`` mode, and in ``"skip"`` mode its vectors undone and
    not written again): the server is asked whether the batch's first created node
    exists, and the import goes on as if the answer had come, or runs the batch again.
    """
    if on_conflict not in ("fail", "skip"):
        raise ValueError("`on_conflict` must be 'fail' or 'skip'.")
    if check_flag("rekey", rekey) and on_conflict != "fail":
        raise ValueError(
            "`rekey` makes a new copy, which has nothing to skip: use on_conflict='fail'."
        )
    rekeying = Rekeying() if rekey else None
    summary = ImportSummary()
    with (
        tempfile.TemporaryFile(prefix="memora-ogm-import-") as spool,
        ThreadPoolExecutor(1, thread_name_prefix="memora-ogm-import") as ahead,
    ):
        counts = _validate_and_check(graph, records, on_conflict, rekeying, spool)
        total = sum(counts.values())
        done = 0
        batches = _spooled(spool)
        coming = ahead.submit(_next_ready, batches, on_conflict)
        while (ready := result_of(coming)) is not None:
            coming = ahead.submit(_next_ready, batches, on_conflict)
            planned: list[int] = []  # how many records the batch's first attempt found new

            def work(
                changes: VectorChanges, ready: _Ready = ready, planned: list[int] = planned
            ) -> Landed | None:
                new, declared = ready.new, ready.declared
                if new is None:  # "skip": what is new is read in the write's transaction
                    new = _new_records(graph, ready.kind, ready.batch, on_conflict)
                    declared = _declared(ready.kind, ready.batch, new)
                planned.append(len(new))
                if declared is not None:
                    statement, memories = declared
                    graph.run(statement)
                    changes.add(convert.memory_for_vector(memory) for memory in memories)
                return _created_first(ready.kind, new)

            graph.write(work, lambda landed: landed)
            telemetry.batch()
            # The first attempt's count: a later one, after an unanswered commit of links
            # that landed (they show no node of their own), finds them there already.
            created = planned[0]
            for counter, count in (
                (summary.created, created),
                (summary.skipped, len(ready.batch) - created),
            ):
                if count:
                    counter[ready.kind] += count
            done += len(ready.batch)
            if progress is not None:
                progress(done, total)
    return summary


# --------------------------------------------------------------------------- facade


class Neo4jTransfer(GraphComponent):
    def export_organization(self, org_id: str) -> RecordStream:
        """The whole organisation as records of the ``memora-ogm-export`` format (JSON-ready
        dicts), streamed a page per read transaction; see ``docs/export-format.md``.

        Bad ids raise at once; a missing organisation when the iteration starts.
        """
        check_ids(org_id=org_id)
        return export_records(self.graph, org_id, None)

    def export_user(self, org_id: str, user_id: str) -> RecordStream:
        """One user with the organisation, its org-wide agents and the user's own agents."""
        check_ids(org_id=org_id, user_id=user_id)
        return export_records(self.graph, org_id, user_id)

    def import_records(
        self,
        records: Iterable[Any],
        on_conflict: OnConflict = "fail",
        progress: Progress | None = None,
        rekey: bool = False,
    ) -> ImportSummary:
        """Import an export: nothing is written unless the whole input is valid and fits
        the graph.

        ``on_conflict="fail"`` refuses an input any of whose nodes exist already
        (:class:`~memora_ogm.transfer.ImportConflict`, nothing written); ``"skip"``
        keeps what exists and writes the rest, so importing twice (or again after an
        interrupted import) is harmless, but refuses, before writing, an input naming an
        existing node with other values. Either way an input whose memory ids belong to
        another tenant is refused (:class:`~memora_ogm.transfer.MemoryIdsTaken`): a
        memory id is unique across the graph, as the vector store's point id. ``rekey``
        imports a copy (another org_id, a restore beside the original) with new memory
        ids, ``contrary_update`` links following them. Malformed input raises
        :class:`~memora_ogm.transfer.ImportFormatError` naming its line.
        """
        summary = import_records(self.graph, records, on_conflict, progress, rekey)
        self.logger.info("imported %s", dict(summary.created))
        return summary


def content_digest(source: Neo4jTransfer, org_id: str) -> transfer.Digest:
    """The content digest of a fresh export of ``org_id``."""
    digest = transfer.Digest()
    for record in source.export_organization(org_id):
        digest.add(record)
    return digest


def _without_vector_store(component: Neo4jTransfer) -> Neo4jTransfer:
    """``component`` on the same connection, with no vector store: the graph side of a
    move whose two sides share one store, which keeps the points both sides name."""
    view = copy.copy(component)
    view.graph = copy.copy(component.graph)
    view.graph.vector_db = None
    return view


@dataclass
class MoveReport:
    digest: str
    counts: Counter[str]
    imported: ImportSummary


def move_organization(
    source: Neo4jTransfer,
    target: Neo4jTransfer,
    org_id: str,
    on_conflict: OnConflict = "fail",
    progress: Callable[[str, int, int | None], None] | None = None,
) -> MoveReport:
    """Export ``org_id`` from ``source``, import it into ``target``, check that both now
    export the same content, and only then delete it at ``source``.

    The export is spooled to a temporary file, so memory stays flat. When the check
    fails, :class:`MoveVerificationFailed` is raised and the source is left as it was.
    ``progress(stage, done, total)`` reports each stage.

    When both sides have the same vector store object, the import's upserts leave its
    points as they were (same ids, same payload) and the source is deleted from its
    graph only: deleting its points would delete the target's.
    """

    def report(stage: str, done: int, total: int | None) -> None:
        if progress is not None:
            progress(stage, done, total)

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
    return MoveReport(expected, exported.counts, imported)
