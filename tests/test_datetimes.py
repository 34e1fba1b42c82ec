"""Odd datetimes: every one the layer stores it can read back and delete, and its day is one.

An interaction's or a memory's day is the calendar day of the stored DATETIME in the
offset it is stored with: the ``Date`` node it links to and the page query's
``date(updated_at)`` must both be that day, or the interaction is saved and never
listed. The layer stores the offset the Python side used (a named zone would let Java's
time-zone data pick another one on the server). What it cannot store, read back and
delete (outside years 1-9999 in UTC, offsets Neo4j does not hold) is refused with a
``ValueError`` before anything is written, on save, update and import.
"""

from __future__ import annotations

from datetime import date, datetime, timedelta, timezone
from typing import Any

import pytest
import pytz
from interaction_helpers import (
    DAY,
    World,
    chat,
    conversation,
    make_world,
    rows,
    save,
    snapshot,
    update,
    value,
)
from transfer_helpers import records_of

from memora_ogm.transfer.format import ImportFormatError

NEW_YORK = pytz.timezone("America/New_York")


def offset(hours: int, minutes: int = 0, seconds: int = 0) -> timezone:
    sign = -1 if hours < 0 else 1
    return timezone(sign * timedelta(hours=abs(hours), minutes=minutes, seconds=seconds))


#: Datetimes the layer stores, each near a midnight where getting its day wrong shows.
STORABLE = {
    # The common pytz misuse: a pytz zone given as tzinfo takes its first offset, LMT
    # (-4:56); sent as "America/New_York" the server makes it 00:54 EDT of the next day.
    "pytz-lmt": datetime(2021, 7, 1, 23, 58, tzinfo=NEW_YORK),
    # pytz knows no DST after 2037 (EST in July), Java's rules do (EDT): sent by name
    # the server puts it on the next day.
    "pytz-after-2037": NEW_YORK.localize(datetime(2040, 7, 1, 23, 30)),
    # New York's local mean time to the second, as Java and zoneinfo know it.
    "second-offset": datetime(1850, 3, 1, 23, 59, 30, tzinfo=offset(-4, 56, 2)),
    "half-hour": datetime(2024, 5, 2, 0, 10, tzinfo=offset(5, 30)),
    "45-minutes": datetime(2024, 5, 1, 23, 50, tzinfo=offset(5, 45)),
    "chatham": datetime(2024, 5, 2, 0, 5, tzinfo=offset(12, 45)),
    "last-microsecond": datetime(2024, 5, 1, 23, 59, 59, 999999, tzinfo=offset(-9, 30)),
    "year-1": datetime(1, 1, 1, 0, 0, tzinfo=offset(-1)),
    "year-9999": datetime(9999, 12, 31, 23, 59, 59, 999999, tzinfo=offset(1)),
}


def stored_days(driver: Any) -> list[dict[str, Any]]:
    """Each interaction's and memory's stored offset, day in that offset and Date nodes."""
    return rows(
        driver,
        "MATCH (n) WHERE n:Interaction OR n:Memory "
        "WITH n, coalesce(n.updated_at, n.obtained_at) AS at "
        "RETURN labels(n)[0] AS label, at.offsetSeconds AS offset, date(at) AS day, "
        "[(n)-[:HAS_OCCURRENCE_ON|DATE_OBTAINED]->(d:Date) | d.date] AS dates "
        "ORDER BY label",
    )


def offset_seconds(when: datetime) -> int:
    """The UTC offset of an aware ``when``, in seconds (as Neo4j's ``offsetSeconds``)."""
    offset = when.utcoffset()
    assert offset is not None
    return offset // timedelta(seconds=1)


def _same(read: datetime, when: datetime) -> None:
    """``read`` is ``when``: the same instant in the same offset."""
    assert (read, read.utcoffset()) == (when, when.utcoffset())


async def _listed(memora: Any, world: World, interaction_id: str, when: datetime) -> None:
    """Both pages and get_interaction list the interaction and its memory at ``when``."""
    interactions = await memora.get_all_user_interactions(world.org_id, world.user_id)
    assert [found.interaction_id for found in interactions] == [interaction_id]
    _same(interactions[0].updated_at, when)
    memories = await memora.get_all_user_memories(world.org_id, world.user_id)
    assert [found.memory for found in memories] == ["m"]
    _same(memories[0].obtained_at, when)
    found = await memora.get_interaction(world.org_id, world.user_id, interaction_id)
    _same(found.updated_at, when)
    _same(found.memories[0].obtained_at, when)


@pytest.mark.parametrize("when", STORABLE.values(), ids=STORABLE.keys())
async def test_a_save_is_listed_on_the_day_of_its_stored_offset(
    memora: Any, driver: Any, when: datetime
) -> None:
    world = await make_world(memora)
    interaction_id, returned = await memora.save_interaction_with_memories(
        world.org_id, world.agent_id, world.user_id, conversation(chat("hi"), when, [("m", [0])])
    )
    _same(returned, when)
    expected = {"offset": offset_seconds(when), "day": when.date()}
    for stored in stored_days(driver):
        assert {"offset": stored["offset"], "day": stored["day"].to_native()} == expected
        assert [day.to_native() for day in stored["dates"]] == [when.date()]
    await _listed(memora, world, interaction_id, when)

    await memora.delete_user_interaction_and_its_memories(
        world.org_id, world.user_id, interaction_id
    )
    assert value(driver, "MATCH (n) WHERE n:Interaction OR n:Memory OR n:Date RETURN count(n)") == 0
    await save(memora, world, conversation(chat("hi"), when, [("m", [0])]))
    await memora.delete_organization(world.org_id)
    assert value(driver, "MATCH (n) RETURN count(n)") == 0


@pytest.mark.parametrize("when", STORABLE.values(), ids=STORABLE.keys())
async def test_an_update_is_listed_on_the_day_of_its_stored_offset(
    memora: Any, driver: Any, when: datetime
) -> None:
    world = await make_world(memora)
    interaction_id = await save(memora, world, conversation(chat("hi"), DAY))
    _, returned = await update(
        memora, world, interaction_id, conversation(chat("hi"), when, [("m", [0])])
    )
    _same(returned, when)
    interaction, memory = stored_days(driver)
    assert interaction["offset"] == offset_seconds(when)
    assert interaction["day"].to_native() == when.date()
    assert sorted(day.to_native() for day in interaction["dates"]) == sorted(
        {DAY.date(), when.date()}
    )
    assert [day.to_native() for day in memory["dates"]] == [when.date()]
    await _listed(memora, world, interaction_id, when)
    await memora.delete_organization(world.org_id)
    assert value(driver, "MATCH (n) RETURN count(n)") == 0


#: Datetimes the layer cannot store, read back and delete, with what the error says.
UNSTORABLE = {
    "min-plus-one-hour": (datetime.min.replace(tzinfo=offset(1)), "years 1-9999 in UTC"),
    "max-minus-one-hour": (datetime.max.replace(tzinfo=offset(-1)), "years 1-9999 in UTC"),
    "min-plus-seconds": (datetime.min.replace(tzinfo=offset(0, 0, 1)), "years 1-9999 in UTC"),
    "offset-over-18-hours": (datetime(2024, 5, 1, tzinfo=offset(19)), "18 hours"),
    "sub-second-offset": (
        datetime(2024, 5, 1, tzinfo=timezone(timedelta(seconds=30, microseconds=5))),
        "whole number of seconds",
    ),
}


@pytest.mark.parametrize(("when", "error"), UNSTORABLE.values(), ids=UNSTORABLE.keys())
async def test_a_datetime_the_graph_cannot_hold_is_refused_before_writing(
    memora: Any, driver: Any, when: datetime, error: str
) -> None:
    world = await make_world(memora)
    interaction_id = await save(memora, world, conversation(chat("hi"), DAY, [("m", [0])]))
    before = snapshot(driver)
    with pytest.raises(ValueError, match=error):
        await save(memora, world, conversation(chat("hi"), when, [("n", [0])]))
    with pytest.raises(ValueError, match=error):
        await update(memora, world, interaction_id, conversation(chat("ho"), when, [("n", [0])]))
    assert snapshot(driver) == before
    await memora.delete_organization(world.org_id)
    assert value(driver, "MATCH (n) RETURN count(n)") == 0


async def _exported(memora: Any, world: World, when: datetime) -> list[dict[str, Any]]:
    """The organisation with one interaction at ``when``, exported, then deleted."""
    await save(memora, world, conversation(chat("hi"), when, [("m", [0])]))
    records = await records_of(memora.export_organization(world.org_id))
    await memora.delete_organization(world.org_id)
    return records


async def test_an_import_keeps_second_level_offsets(memora: Any, driver: Any) -> None:
    """Import and export keep them, on every node type (the driver alone would round
    them to minutes on the way out and refuse them on the way in)."""
    world = await make_world(memora)
    when = STORABLE["second-offset"]
    records = await _exported(memora, world, when)
    assert {r["obtained_at"] for r in records if r["type"] == "memory"} == {when.isoformat()}
    for record in records:
        if record["type"] in ("organization", "user", "agent"):
            record["created_at"] = when.isoformat()

    await memora.import_records(records)
    interactions = await memora.get_all_user_interactions(world.org_id, world.user_id)
    _same(interactions[0].updated_at, when)
    _same((await memora.get_organization(world.org_id)).created_at, when)
    _same((await memora.get_user(world.org_id, world.user_id)).created_at, when)
    for stored in stored_days(driver):
        assert stored["offset"] == offset_seconds(when)
        assert [day.to_native() for day in stored["dates"]] == [when.date()]
    again = await records_of(memora.export_organization(world.org_id))
    assert again[1:] == records[1:]  # all but the header (its export time)


@pytest.mark.parametrize(("when", "error"), UNSTORABLE.values(), ids=UNSTORABLE.keys())
async def test_an_import_refuses_a_datetime_the_graph_cannot_hold(
    memora: Any, driver: Any, when: datetime, error: str
) -> None:
    world = await make_world(memora)
    records = await _exported(memora, world, DAY)
    for record in records:
        if record["type"] == "memory":
            record["obtained_at"] = when.isoformat()
            record["date_obtained"] = date(2024, 5, 1).isoformat()
    with pytest.raises(ImportFormatError, match=error):
        await memora.import_records(records)
    assert value(driver, "MATCH (n) RETURN count(n)") == 0
