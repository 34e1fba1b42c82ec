"""Memory ids across tenants, and the edges of an import (issue 20, items 5, 6 and 11).

A memory's graph key is (org_id, user_id, memory_id) but its vector store point id is
the memory id alone: an id is unique across the whole graph, in one spelling. A copy
of a tenant imports with new ids; a skip-mode import only skips what it describes
exactly; lines and transactions of an import are bounded. Each test runs against the
async facade and the generated sync twin, each with a real qdrant-client store.
"""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

import pytest
from interaction_helpers import World, chat, conversation, save, saved_memory, update
from invariants import full_snapshot, graph_violations, vector_memories
from neo4j import Driver
from test_vector_consistency import Stores, stores
from transfer_helpers import build_organisation, records_of

from memora_ogm.errors import MemoryNotFound, NotFoundError
from memora_ogm.transfer import export
from memora_ogm.transfer import format as transfer
from memora_ogm.transfer.format import (
    ImportConflict,
    ImportFormatError,
    JsonLinesFile,
    MemoryIdsTaken,
)

__all__ = ["stores"]  # the fixture, imported so pytest finds it here

Record = dict[str, Any]


def org_vectors(entries: list[tuple[str, str, str]], org_id: str) -> list[tuple[str, str, str]]:
    return [entry for entry in entries if entry[1] == org_id]


def as_org(records: list[Record], org_id: str) -> list[Record]:
    """The export with every record moved to ``org_id``: a copy, a split, a restore under
    a new id."""
    return [record | {"org_id": org_id} if "org_id" in record else record for record in records]


async def test_a_copy_under_another_org_id_needs_new_memory_ids(
    stores: Stores, driver: Driver
) -> None:
    memora = stores.graph
    org = await build_organisation(memora)
    records = await records_of(memora.export_organization(org.org_id))
    originals = {
        r["memory_id"]: (r["org_id"], r["user_id"]) for r in records if r["type"] == "memory"
    }
    vectors_before = await vector_memories(stores.vectors)
    before = await full_snapshot(driver, stores.vectors)
    copy = as_org(records, "acme-copy")

    for on_conflict in ("fail", "skip"):
        with pytest.raises(MemoryIdsTaken, match="belong to another tenant") as raised:
            await memora.import_records(copy, on_conflict=on_conflict)
        assert raised.value.taken == originals
        assert min(originals) in str(raised.value)
        assert await full_snapshot(driver, stores.vectors) == before
    with pytest.raises(ValueError, match="rekey"):
        await memora.import_records(copy, on_conflict="skip", rekey=True)

    summary = await memora.import_records(iter(copy), rekey=True)

    assert dict(summary.created) == {k: v for k, v in records[-1]["counts"].items() if v}
    copied = await records_of(memora.export_organization("acme-copy"))
    new_ids = {r["memory_id"] for r in copied if r["type"] == "memory"}
    assert len(new_ids) == len(originals) and not new_ids & set(originals)
    assert all(str(uuid.UUID(memory_id)) == memory_id for memory_id in new_ids)
    # The same memories and the same contrary_update chains, under the new ids.
    by_text = {(r["user_id"], r["memory"]): r["memory_id"] for r in copied if r["type"] == "memory"}
    renamed = {
        r["memory_id"]: by_text[(r["user_id"], r["memory"])]
        for r in records
        if r["type"] == "memory"
    }

    def content(exported: list[Record], ids: dict[str, str]) -> list[Record]:
        rows = []
        for record in exported[1:-1]:
            record = record | {"org_id": "acme-copy"}
            for name in ("memory_id", "updated_by"):
                if name in record:
                    record[name] = ids.get(record[name], record[name])
            rows.append(record)
        return sorted(rows, key=transfer.dumps)

    assert content(copied, {}) == content(records, renamed)
    tea = renamed[
        next(r["memory_id"] for r in records if r.get("memory", "").endswith("likes tea"))
    ]
    green = by_text[(org.ann, f"user_{org.ann} prefers green tea")]
    history = await memora.get_user_memory_history("acme-copy", org.ann, green)
    assert [memory.memory_id for memory in history][-1] == tea
    vectors = await vector_memories(stores.vectors)
    assert org_vectors(vectors, org.org_id) == org_vectors(vectors_before, org.org_id)
    assert sorted(entry[0] for entry in org_vectors(vectors, "acme-copy")) == sorted(new_ids)
    assert graph_violations(driver) == []

    await memora.delete_organization("acme-copy")
    assert await vector_memories(stores.vectors) == vectors_before
    assert await full_snapshot(driver, stores.vectors) == before


async def test_one_memory_id_under_another_user_is_refused(stores: Stores, driver: Driver) -> None:
    """In the same organisation too: Bob's memory may not take an id Ann's memory holds."""
    memora = stores.graph
    org = await build_organisation(memora)
    records = await records_of(memora.export_user(org.org_id, org.bob))
    anns = next(
        r
        for r in await records_of(memora.export_user(org.org_id, org.ann))
        if r["type"] == "memory"
    )
    await memora.delete_user(org.org_id, org.bob)
    before = await full_snapshot(driver, stores.vectors)
    index = next(i for i, r in enumerate(records) if r["type"] == "memory")
    records[index] = records[index] | {"memory_id": anns["memory_id"]}

    with pytest.raises(MemoryIdsTaken, match=f"line {index + 1}: memory ids {anns['memory_id']}"):
        await memora.import_records(records, on_conflict="skip")
    assert await full_snapshot(driver, stores.vectors) == before


SPELLINGS = {
    "capitals": str.upper,
    "braces": lambda memory_id: "{" + memory_id + "}",
    "urn": lambda memory_id: "urn:uuid:" + memory_id,
    "no hyphens": lambda memory_id: memory_id.replace("-", ""),
    "not a uuid": lambda memory_id: "not-a-uuid",
}


@pytest.mark.parametrize("spelling", SPELLINGS)
async def test_memory_ids_enter_in_one_spelling(
    spelling: str, stores: Stores, driver: Driver
) -> None:
    """Every method taking a memory id refuses another spelling with ValueError (no memory
    can have it), before anything is read or written; a well-formed id of no memory is
    still not found, or left out."""
    memora = stores.graph
    org_id = (await memora.create_organization("Acme")).org_id
    user_id = (await memora.create_user(org_id, "Ann")).user_id
    agent_id = (await memora.create_agent(org_id, "Bot")).agent_id
    world = World(org_id, user_id, agent_id)
    interaction_id, memory_id = await saved_memory(memora, world, "Ann lives in Oslo")
    odd = SPELLINGS[spelling](memory_id)
    before = await full_snapshot(driver, stores.vectors)
    key = {"org_id": org_id, "user_id": user_id, "memory_id": odd}
    superseding = conversation(chat("I moved"), contrary=[("Ann lives in Rome", [0], odd)])

    calls = {
        "get_user_memory": lambda: memora.get_user_memory(org_id, user_id, odd),
        "get_user_memory_history": lambda: memora.get_user_memory_history(org_id, user_id, odd),
        "delete_user_memory": lambda: memora.delete_user_memory(org_id, user_id, odd),
        "fetch_user_memories_resolved": lambda: memora.fetch_user_memories_resolved([key]),
        "fetch_user_memories_resolved_batch": lambda: memora.fetch_user_memories_resolved_batch(
            [[], [key]]
        ),
        "save_interaction_with_memories": lambda: save(memora, world, superseding),
        "update_interaction_and_memories": lambda: update(
            memora, world, interaction_id, superseding
        ),
    }
    for name, call in calls.items():
        with pytest.raises(ValueError, match="memory_id") as raised:
            await call()
        assert not isinstance(raised.value, NotFoundError), name
        assert await full_snapshot(driver, stores.vectors) == before, name

    missing = str(uuid.uuid4())
    assert (await memora.get_user_memory(org_id, user_id, memory_id)).memory_id == memory_id
    with pytest.raises(MemoryNotFound):
        await memora.get_user_memory(org_id, user_id, missing)
    assert await memora.fetch_user_memories_resolved([key | {"memory_id": missing}]) == []


async def test_skip_only_skips_what_the_input_describes_exactly(
    stores: Stores, driver: Driver
) -> None:
    """An input naming an existing organisation (or memory) with other values would attach
    users to it, or link contrary updates to its memories: refused before writing."""
    memora = stores.graph
    org = await build_organisation(memora)
    records = await records_of(memora.export_organization(org.org_id))
    before = await full_snapshot(driver, stores.vectors)
    # Another organisation that happens to have the same id, with a user of its own.
    stranger = [
        records[0],
        records[1] | {"org_name": "Impostor"},
        {
            "type": "user",
            "org_id": org.org_id,
            "user_id": "mallory",
            "user_name": "Mallory",
            "created_at": "2024-05-01T10:00:00+00:00",
        },
        {
            "type": "end",
            "counts": dict.fromkeys(transfer.CONTENT_TYPES, 0) | {"organization": 1, "user": 1},
        },
    ]
    with pytest.raises(ImportConflict, match="line 2: organization .* other values of org_name"):
        await memora.import_records(stranger, on_conflict="skip")
    assert await full_snapshot(driver, stores.vectors) == before

    # The same memory ids with other texts, one superseding the other.
    changed = [
        record | {"memory": record["memory"] + " (changed)"}
        if record["type"] == "memory"
        else record
        for record in records
    ]
    first = next(i for i, r in enumerate(changed) if r["type"] == "memory")
    with pytest.raises(ImportConflict, match=f"line {first + 1}: memory .* other values of memory"):
        await memora.import_records(changed, on_conflict="skip")
    assert await full_snapshot(driver, stores.vectors) == before

    # The input as exported is skipped whole.
    summary = await memora.import_records(records, on_conflict="skip")
    assert not summary.created
    assert await full_snapshot(driver, stores.vectors) == before


def _header() -> Record:
    return export.header("organization", "big", None, None)


def _tenant(interactions: int, content: str) -> list[Record]:
    """An organisation with one user whose interactions each hold three long messages."""
    day = "2024-05-01T10:00:00+00:00"
    records = [
        _header(),
        {"type": "organization", "org_id": "big", "org_name": "Big", "created_at": day},
        {"type": "user", "org_id": "big", "user_id": "ann", "user_name": "Ann", "created_at": day},
        {
            "type": "agent",
            "org_id": "big",
            "agent_id": "bot",
            "agent_label": "Bot",
            "user_id": None,
            "created_at": day,
        },
    ]
    for n in range(interactions):
        records.append(
            {
                "type": "interaction",
                "org_id": "big",
                "user_id": "ann",
                "interaction_id": f"talk-{n:03}",
                "agent_id": "bot",
                "created_at": day,
                "updated_at": day,
                "dates": ["2024-05-01"],
                "messages": chat(content, content, content),
            }
        )
    counts = {"organization": 1, "user": 1, "agent": 1, "interaction": interactions}
    records.append({"type": "end", "counts": dict.fromkeys(transfer.CONTENT_TYPES, 0) | counts})
    return records


async def test_import_transactions_are_bounded_by_bytes(stores: Stores, driver: Driver) -> None:
    """60 interactions of 3 messages of 100,000 characters (18 MB) are well under the row
    and message bounds, but not under the byte bound: two transactions, not one."""
    memora = stores.graph
    records = _tenant(60, "x" * 100_000)
    batches: list[int] = []

    summary = await memora.import_records(
        records, progress=lambda done, total: batches.append(done)
    )

    assert summary.created == {"organization": 1, "user": 1, "agent": 1, "interaction": 60}
    interaction_batches = [done - 3 for done in batches[3:]]
    assert len(interaction_batches) == 2 and interaction_batches[-1] == 60
    sizes = [len(transfer.dumps(record).encode()) for record in records[4:-1]]
    assert sum(sizes[: interaction_batches[0]]) <= 16 * 1024 * 1024
    rows, _, _ = driver.execute_query(
        "MATCH (:Interaction {org_id: 'big'})-[:FIRST_MESSAGE|IS_NEXT*]->(m:MessageBlock) "
        "RETURN count(m) AS messages, min(size(m.content)) AS shortest"
    )
    assert (rows[0]["messages"], rows[0]["shortest"]) == (180, 100_000)
    assert graph_violations(driver) == []


def _nested(depth: int) -> Any:
    value: Any = []
    for _ in range(depth):
        value = [value]
    return value


async def test_deep_and_huge_lines_are_refused_clearly(
    stores: Stores, driver: Driver, tmp_path: Path
) -> None:
    memora = stores.graph
    header = transfer.dumps(_header())
    before = await full_snapshot(driver, stores.vectors)

    deep = tmp_path / "deep.jsonl"
    deep.write_text(f"{header}\n{'[' * 200_000}{']' * 200_000}\n", encoding="utf-8")
    with pytest.raises(ImportFormatError, match="line 2: the record is nested too deeply"):
        await memora.import_records(JsonLinesFile(deep))
    # A caller's own records: a header field nested as deep, and a position.
    records = _tenant(1, "hi")
    for given in (
        [records[0] | {"source": _nested(200_000)}, *records[1:]],
        iter([records[0] | {"source": _nested(200_000)}, *records[1:]]),
    ):
        with pytest.raises(ImportFormatError, match="line 1: the record is nested too deeply"):
            await memora.import_records(given)
    with pytest.raises(ImportFormatError, match=r"line 1: unknown record type \[\[\["):
        await memora.import_records([{"type": _nested(200_000)}])

    huge = tmp_path / "huge.jsonl"
    with huge.open("w", encoding="utf-8") as out:
        out.write(header + "\n")
        out.write('{"type":"organization","org_id":"' + "x" * transfer.MAX_RECORD_BYTES + '"}\n')
    with pytest.raises(
        ImportFormatError,
        match=f"line 2: the line is longer than {transfer.MAX_RECORD_BYTES} bytes",
    ):
        await memora.import_records(JsonLinesFile(huge))
    assert await full_snapshot(driver, stores.vectors) == before
