"""Tenant export and import (issue 14): exact round trips, and bad input refused whole.

Each test runs against the async facade and the generated sync twin, each with a
real qdrant-client store associated (the ``stores`` fixture).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from interaction_helpers import snapshot
from invariants import full_snapshot, graph_violations, vector_memories
from neo4j import Driver
from test_vector_consistency import Stores, stores
from transfer_helpers import build_organisation, public_reads, records_of

from memora_ogm.engine.nodes import Nodes
from memora_ogm.errors import OrganizationNotFound
from memora_ogm.transfer import format as transfer
from memora_ogm.transfer import validation
from memora_ogm.transfer.format import ImportConflict, ImportFormatError, JsonLinesFile

__all__ = ["stores"]  # the fixture, imported so pytest finds it here

Record = dict[str, Any]
Records = list[Record]


def write_file(path: Path, records: Records) -> Path:
    with path.open("w", encoding="utf-8") as out:
        transfer.write_records(records, out)
    return path


def org_vectors(entries: list[tuple[str, str, str]], org_id: str) -> list[tuple[str, str, str]]:
    return [entry for entry in entries if entry[1] == org_id]


async def test_round_trip_through_a_file_is_exact(
    stores: Stores, driver: Driver, tmp_path: Path
) -> None:
    memora = stores.graph
    org = await build_organisation(memora)
    other = await build_organisation(memora, "Other")
    before = await public_reads(memora, org.org_id)
    other_before = await public_reads(memora, other.org_id)
    graph_before = snapshot(driver)
    vectors_before = await vector_memories(stores.vectors)

    records = await records_of(memora.export_organization(org.org_id))
    counts = records[-1]["counts"]
    assert [records[0]["type"], records[-1]["type"]] == ["header", "end"]
    assert records[0]["format"] == "memora-ogm-export" and records[0]["version"] == 1
    assert counts == {
        "organization": 1,
        "user": 2,
        "agent": 3,
        "interaction": 3,
        "memory": 7,
        "contrary_update": 2,
    }
    assert other.org_id not in json.dumps(records)
    # Offsets are kept as written, and dates as dates.
    talk = next(r for r in records if r["type"] == "interaction" and len(r["messages"]) == 4)
    assert talk["created_at"] == "2024-05-01T23:30:15.123456+02:00"
    assert talk["updated_at"] == "2024-05-03T12:00:00+00:00"
    assert talk["dates"] == ["2024-05-01", "2024-05-02", "2024-05-03"]
    assert {r["obtained_at"][-6:] for r in records if r["type"] == "memory"} == {
        "+02:00",
        "-05:00",
        "+00:00",
    }
    path = write_file(tmp_path / "acme.jsonl", records)

    await memora.delete_organization(org.org_id)
    with pytest.raises(OrganizationNotFound):
        await memora.get_organization(org.org_id)
    summary = await memora.import_records(JsonLinesFile(path))

    assert dict(summary.created) == counts
    assert not summary.skipped
    assert await public_reads(memora, org.org_id) == before
    assert await public_reads(memora, other.org_id) == other_before
    assert snapshot(driver) == graph_before  # every node, property and link, Dates included
    assert graph_violations(driver) == []
    assert await vector_memories(stores.vectors) == vectors_before
    again = await records_of(memora.export_organization(org.org_id))
    assert again[1:] == records[1:]


async def test_import_twice_with_skip_changes_nothing(stores: Stores, driver: Driver) -> None:
    memora = stores.graph
    org = await build_organisation(memora)
    records = await records_of(memora.export_organization(org.org_id))
    before = await full_snapshot(driver, stores.vectors)

    summary = await memora.import_records(records, on_conflict="skip")

    assert not summary.created
    assert dict(summary.skipped) == {k: v for k, v in records[-1]["counts"].items() if v}
    assert await full_snapshot(driver, stores.vectors) == before
    with pytest.raises(ImportConflict, match="line 2: organization org_id="):
        await memora.import_records(records)
    assert await full_snapshot(driver, stores.vectors) == before


async def test_an_import_writes_one_statement_a_batch(stores: Stores, driver: Driver) -> None:
    """Into an organisation the graph holds nothing of: one read of what it holds, one of
    the memory ids, then one statement per batch (here a batch per run of records of one
    type: an export goes user by user), with the same graph and vectors as the
    organisation exported."""
    memora = stores.graph
    org = await build_organisation(memora)
    records = await records_of(memora.export_organization(org.org_id))
    graph_before, vectors_before = snapshot(driver), await vector_memories(stores.vectors)
    await memora.delete_organization(org.org_id)
    batches: list[int] = []
    statements = memora.graph.statements

    await memora.import_records(records, progress=lambda done, total: batches.append(done))

    kinds = [record["type"] for record in records[1:-1]]
    runs = 1 + sum(kind != previous for previous, kind in zip(kinds, kinds[1:], strict=False))
    assert len(batches) == runs
    assert memora.graph.statements - statements == 2 + len(batches)
    assert snapshot(driver) == graph_before
    assert await vector_memories(stores.vectors) == vectors_before
    assert graph_violations(driver) == []


async def test_skip_completes_a_partial_tenant(stores: Stores, driver: Driver) -> None:
    """A user deleted after an export comes back with ``skip``; ``fail`` refuses and writes
    nothing."""
    memora = stores.graph
    org = await build_organisation(memora)
    before = await public_reads(memora, org.org_id)
    graph_before = snapshot(driver)
    vectors_before = await vector_memories(stores.vectors)
    records = await records_of(memora.export_organization(org.org_id))
    await memora.delete_user(org.org_id, org.bob)
    partial = await full_snapshot(driver, stores.vectors)

    with pytest.raises(ImportConflict):
        await memora.import_records(iter(records))
    assert await full_snapshot(driver, stores.vectors) == partial

    summary = await memora.import_records(iter(records), on_conflict="skip")
    assert summary.created == {"user": 1, "interaction": 1, "memory": 1}
    assert await public_reads(memora, org.org_id) == before
    assert snapshot(driver) == graph_before
    assert await vector_memories(stores.vectors) == vectors_before


async def test_export_user_holds_that_user_only(stores: Stores, driver: Driver) -> None:
    memora = stores.graph
    org = await build_organisation(memora)
    before = await public_reads(memora, org.org_id)
    graph_before = snapshot(driver)
    vectors_before = await vector_memories(stores.vectors)

    records = await records_of(memora.export_user(org.org_id, org.ann))

    assert records[0]["scope"] == {"kind": "user", "org_id": org.org_id, "user_id": org.ann}
    assert {r["user_id"] for r in records if r["type"] in ("user", "interaction", "memory")} == {
        org.ann
    }
    assert {r["agent_id"] for r in records if r["type"] == "agent"} == {org.bot, org.anns_agent}
    assert org.bob not in json.dumps(records)
    await memora.delete_user(org.org_id, org.ann)
    summary = await memora.import_records(records, on_conflict="skip")
    assert summary.skipped == {"organization": 1, "agent": 2}
    assert await public_reads(memora, org.org_id) == before
    assert snapshot(driver) == graph_before
    assert await vector_memories(stores.vectors) == vectors_before


async def test_export_of_a_missing_tenant_fails(stores: Stores) -> None:
    memora = stores.graph
    org = await build_organisation(memora)
    with pytest.raises(OrganizationNotFound):
        await records_of(memora.export_organization("no-such-org"))
    with pytest.raises(Exception, match="User"):
        await records_of(memora.export_user(org.org_id, "no-such-user"))
    with pytest.raises(ValueError):
        memora.export_organization("")


# --------------------------------------------------------------------------- bad input


def _index(
    records: Records, kind: str, nth: int = 0, where: Callable[[Record], bool] | None = None
) -> int:
    found = [i for i, record in enumerate(records) if record["type"] == kind]
    return [i for i in found if where is None or where(records[i])][nth]


def _has_sources(record: Record) -> bool:
    """A memory with source messages: its interaction has messages, so that position 0 is
    valid and only the change under test is wrong (the export order follows random ids)."""
    return bool(record["source_positions"])


def _set(
    kind: str, where: Callable[[Record], bool] | None = None, **changes: Any
) -> Callable[[Records], tuple[Records, int]]:
    """Change fields of the first record of ``kind`` (that ``where`` accepts); the error is
    on its line."""

    def mutate(records: Records) -> tuple[Records, int]:
        index = _index(records, kind, where=where)
        records[index] = records[index] | changes
        return records, index + 1

    return mutate


def _duplicate(kind: str) -> Callable[[Records], tuple[Records, int]]:
    def mutate(records: Records) -> tuple[Records, int]:
        index = _index(records, kind)
        records.insert(index + 1, dict(records[index]))
        return records, index + 2

    return mutate


def _truncate(records: Records) -> tuple[Records, int]:
    return records[:-3], len(records) - 2


def _drop_header(records: Records) -> tuple[Records, int]:
    return records[1:], 1


#: A well-formed memory id of no memory.
GHOST = "0d5e6c8a-9b1f-4c2e-8a7d-3f4b5c6d7e8f"


def _dangling_link(records: Records) -> tuple[Records, int]:
    index = _index(records, "contrary_update")
    records[index] = records[index] | {"updated_by": GHOST}
    return records, index + 1


def _memory_id_of_two_users(records: Records) -> tuple[Records, int]:
    """A later user's memory takes an earlier user's memory id: one point for two memories."""
    first = _index(records, "memory")
    other = _index(records, "memory", where=lambda r: r["user_id"] != records[first]["user_id"])
    records[other] = records[other] | {"memory_id": records[first]["memory_id"]}
    return records, other + 1


def _respelled(
    kind: str, name: str, spell: Callable[[str], str]
) -> Callable[[Records], tuple[Records, int]]:
    def mutate(records: Records) -> tuple[Records, int]:
        index = _index(records, kind)
        records[index] = records[index] | {name: spell(records[index][name])}
        return records, index + 1

    return mutate


def _add_field(records: Records) -> tuple[Records, int]:
    index = _index(records, "memory")
    records[index] = records[index] | {"embedding": [0.1]}
    return records, index + 1


def _wrong_counts(records: Records) -> tuple[Records, int]:
    records[-1] = {"type": "end", "counts": records[-1]["counts"] | {"memory": 99}}
    return records, len(records)


BAD_INPUTS: dict[str, tuple[Callable[[Records], tuple[Records, int]], str]] = {
    "truncated": (_truncate, "without its end record"),
    "no header": (_drop_header, "first record must be the header"),
    "wrong version": (_set("header", version=2), "format version 2 is not supported"),
    "not our format": (_set("header", format="csv"), "not a memora-ogm-export file"),
    "dangling interaction": (_set("memory", interaction_id="ghost"), "'ghost' of user"),
    "dangling agent owner": (_set("agent", user_id="ghost"), "user 'ghost' is not defined"),
    "dangling contrary update": (_dangling_link, f"memory '{GHOST}' of user"),
    "other organisation": (_set("user", org_id="elsewhere"), "is not the file's"),
    "duplicate user": (_duplicate("user"), "duplicate user"),
    "duplicate memory": (_duplicate("memory"), "duplicate memory"),
    "duplicate interaction": (_duplicate("interaction"), "duplicate interaction"),
    "position out of range": (
        _set("memory", _has_sources, source_positions=[0, 99]),
        "position 99 is outside",
    ),
    "position twice": (_set("memory", _has_sources, source_positions=[0, 0]), "position twice"),
    "position not an int": (_set("memory", source_positions=["0"]), "must be an integer"),
    "position a bool": (_set("memory", source_positions=[True]), "must be an integer"),
    "timestamp a number": (_set("user", created_at=1714600000), "ISO 8601 datetime string"),
    "naive timestamp": (_set("memory", obtained_at="2024-05-01T10:00:00"), "no UTC offset"),
    "offset with a fraction of a second": (
        _set("interaction", created_at="2024-05-01T10:00:00+01:00:30.500000"),
        "not a whole number of seconds",
    ),
    "offset beyond 18 hours": (
        _set("user", created_at="2024-05-01T10:00:00+19:00"),
        "beyond Neo4j's 18 hours",
    ),
    "before year 1 in UTC": (
        _set("memory", obtained_at="0001-01-01T00:30:00+01:00"),
        "outside years 1-9999",
    ),
    "date a datetime": (_set("memory", date_obtained="2024-05-01T10:00:00+00:00"), "YYYY-MM-DD"),
    "messages not a list": (_set("interaction", messages="hi"), "list of messages"),
    "empty id": (_set("agent", agent_id=""), "`agent_id` must be a string and have a value"),
    "id a number": (_set("memory", memory_id=7), "`memory_id` must be a string"),
    "memory id not a UUID": (_set("memory", memory_id="not-a-uuid"), "is not a UUID"),
    "memory id in capitals": (_respelled("memory", "memory_id", str.upper), "canonical form"),
    "memory id in braces": (_respelled("memory", "memory_id", "{{{}}}".format), "canonical form"),
    "memory id as a URN": (_respelled("memory", "memory_id", "urn:uuid:{}".format), "canonical"),
    "contrary update in capitals": (
        _respelled("contrary_update", "updated_by", str.upper),
        "`updated_by` .* canonical form",
    ),
    "memory id of two users": (_memory_id_of_two_users, "duplicate memory"),
    "missing field": (_set("memory", memory=None), "`memory` must be a string"),
    "unknown field": (_add_field, "unknown fields embedding"),
    "unknown type": (_set("contrary_update", type="vector"), "unknown record type 'vector'"),
    "wrong counts": (_wrong_counts, "the end record counts"),
}


@pytest.mark.parametrize("case", BAD_INPUTS)
async def test_bad_input_is_refused_whole(
    case: str, stores: Stores, driver: Driver, tmp_path: Path
) -> None:
    memora = stores.graph
    org = await build_organisation(memora)
    await build_organisation(memora, "Other")
    records = await records_of(memora.export_organization(org.org_id))
    await memora.delete_organization(org.org_id)
    before = await full_snapshot(driver, stores.vectors)
    mutate, message = BAD_INPUTS[case]
    broken, line = mutate(records)

    # A list, a one-shot iterator and a file: all refused the same way.
    for given in (broken, iter(broken), JsonLinesFile(write_file(tmp_path / "in.jsonl", broken))):
        with pytest.raises(ImportFormatError, match=f"line {line}: .*{message}") as raised:
            await memora.import_records(given)
        assert raised.value.line == line
        assert await full_snapshot(driver, stores.vectors) == before


async def test_a_file_cut_mid_line_is_refused(
    stores: Stores, driver: Driver, tmp_path: Path
) -> None:
    memora = stores.graph
    org = await build_organisation(memora)
    records = await records_of(memora.export_organization(org.org_id))
    await memora.delete_organization(org.org_id)
    before = await full_snapshot(driver, stores.vectors)
    path = write_file(tmp_path / "cut.jsonl", records)
    text = path.read_text(encoding="utf-8")
    path.write_text(text[: len(text) * 2 // 3], encoding="utf-8")
    lines = path.read_text(encoding="utf-8").count("\n") + 1

    with pytest.raises(ImportFormatError, match=f"line {lines}: not valid JSON"):
        await memora.import_records(JsonLinesFile(path))
    with pytest.raises(ImportFormatError, match="must be a JSON object"):
        await memora.import_records([records[0], "organization"])
    with pytest.raises(ValueError, match="on_conflict"):
        await memora.import_records(records, on_conflict="replace")
    assert await full_snapshot(driver, stores.vectors) == before
    assert org_vectors(await vector_memories(stores.vectors), org.org_id) == []


async def test_a_format_error_comes_before_a_clash_found_earlier_in_the_input(
    stores: Stores, driver: Driver, tmp_path: Path
) -> None:
    """The checks against the graph run batch by batch as the input is validated, but a
    clash (here the organisation itself, at line 2) is raised only once the whole input
    proved valid: the format error at the last line comes first, and nothing is written."""
    memora = stores.graph
    org = await build_organisation(memora)
    records = await records_of(memora.export_organization(org.org_id))
    before = await full_snapshot(driver, stores.vectors)
    broken = [*records[:-1], {**records[-1], "counts": {}}]

    for given in (broken, iter(broken), JsonLinesFile(write_file(tmp_path / "in.jsonl", broken))):
        with pytest.raises(ImportFormatError, match=f"line {len(broken)}: the end record"):
            await memora.import_records(given)
    with pytest.raises(ImportConflict, match="line 2: organization"):
        await memora.import_records(records)
    assert await full_snapshot(driver, stores.vectors) == before


async def test_an_import_parses_each_record_once(
    stores: Stores, driver: Driver, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Validation, the checks and the writes share one parse of each record: the writes
    read the parsed batches back from the import's spool."""
    memora = stores.graph
    org = await build_organisation(memora)
    records = await records_of(memora.export_organization(org.org_id))
    graph_before = snapshot(driver)
    await memora.delete_organization(org.org_id)
    path = write_file(tmp_path / "acme.jsonl", records)
    parsed: list[int] = []
    parse = validation.parse

    def counted(nodes: Nodes, line: int, record: Any) -> Record:
        parsed.append(line)
        return parse(nodes, line, record)

    monkeypatch.setattr(validation, "parse", counted)
    await memora.import_records(JsonLinesFile(path))

    assert parsed == list(range(1, len(records) + 1))
    assert snapshot(driver) == graph_before
