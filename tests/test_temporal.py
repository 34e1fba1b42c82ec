"""DATETIMEs in their compact forms, both ways, are exactly what the driver would make.

Read (``plan.compact``, then ``inflate``): the same Python datetime
as the driver's own hydration, same instant, offset and zone. Written (``sent_form``,
then ``plan.expand`` on the server): the same DATETIME as the driver's
own encoding of the datetime as the graph stores it (``storable``: its offset, never
a zone's name). Every facade call moves its timestamps this way, since
the driver's encoding costs more than the rest of a memory; these values are where a
shortcut would slip: before 1970 (where Neo4j's ``epochSeconds`` rounds toward zero),
sub-millisecond parts, named zones on both sides of a DST change, historic local
mean times, offsets with seconds (which the driver cannot send).
"""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from typing import Any
from zoneinfo import ZoneInfo

import pytest
import pytz
from neo4j import Driver

from memora_ogm.engine import plan
from memora_ogm.properties import ZonedDateTimeProperty, from_compact, sent_form, storable

VALUES = [
    "2024-05-01T09:30:00.123456789Z",
    "2024-05-01T09:30:00+02:00",
    "2024-05-01T09:30:00-05:30",
    "2024-05-01T09:30:00[Europe/Oslo]",
    "2024-03-31T02:30:00[Europe/Oslo]",
    "2024-10-27T02:30:00+01:00[Europe/Oslo]",
    "2024-10-27T02:30:00+02:00[Europe/Oslo]",
    "1850-05-01T09:30:00.654321[America/New_York]",
    "1969-12-31T23:59:59.5Z",
    "1969-12-31T23:59:59.9995Z",
    "1969-12-31T23:59:59.000001Z",
    "1900-01-01T00:00:00.000001+01:00",
    "0001-01-01T00:00:00.000001Z",
    "9999-12-31T23:59:59.999999Z",
]


def _read(driver: Driver, value: str | None) -> Any:
    records, _, _ = driver.execute_query(
        f"WITH datetime($value) AS t RETURN t, {plan.compact('t').render({})} AS compact",
        value=value,
    )
    return records[0]


@pytest.mark.parametrize("value", VALUES)
def test_a_compact_datetime_is_the_driver_s_datetime(neo4j_driver: Driver, value: str) -> None:
    record = _read(neo4j_driver, value)
    expected = record["t"].to_native()
    read = from_compact(record["compact"])
    assert read == expected
    assert read.isoformat() == expected.isoformat()
    assert repr(read.tzinfo) == repr(expected.tzinfo)
    assert ZonedDateTimeProperty().inflate(record["compact"]) == expected


def test_a_missing_datetime_stays_missing(neo4j_driver: Driver) -> None:
    assert _read(neo4j_driver, None)["compact"] is None


OSLO = ZoneInfo("Europe/Oslo")
SENT = [
    datetime(2024, 5, 1, 9, 30, 0, 123456, tzinfo=timezone.utc),
    datetime(2024, 5, 1, 9, 30, tzinfo=timezone(timedelta(hours=2))),
    datetime(2024, 5, 1, 9, 30, tzinfo=timezone(timedelta(hours=-5, minutes=-30))),
    pytz.utc.localize(datetime(2024, 5, 1, 9, 30)),
    datetime(2024, 5, 1, 9, 30, tzinfo=OSLO),
    datetime(2024, 10, 27, 2, 30, fold=0, tzinfo=OSLO),
    datetime(2024, 10, 27, 2, 30, fold=1, tzinfo=OSLO),
    # zoneinfo's LMT has seconds (-4:56:02), which the driver cannot send: pytz's has not
    pytz.timezone("America/New_York").localize(datetime(1850, 5, 1, 9, 30, 0, 654321)),
    datetime(2021, 7, 1, 23, 58, tzinfo=pytz.timezone("America/New_York")),
    datetime(9999, 12, 31, 23, 59, 59, 999999, tzinfo=timezone(timedelta(hours=18))),
    datetime(1969, 12, 31, 23, 59, 59, 500000, tzinfo=timezone.utc),
    datetime(1, 1, 1, 0, 0, 0, 1, tzinfo=timezone.utc),
]


@pytest.mark.parametrize("value", SENT, ids=lambda value: value.isoformat())
def test_a_sent_datetime_is_the_driver_s_datetime(neo4j_driver: Driver, value: datetime) -> None:
    records, _, _ = neo4j_driver.execute_query(
        f"WITH $value AS driver, {plan.expand('$sent').render({})} AS ours "
        "RETURN toString(driver) AS driver, toString(ours) AS ours, "
        "driver.timezone AS driver_zone, ours.timezone AS our_zone",
        value=storable(value),
        sent=sent_form(value),
    )
    record = records[0]
    assert (record["ours"], record["our_zone"]) == (record["driver"], record["driver_zone"])


def test_an_offset_with_seconds_is_sent_exactly(neo4j_driver: Driver) -> None:
    """The driver refuses it; Neo4j stores it, and it reads back the same."""
    value = datetime(
        1850, 3, 1, 23, 59, 30, tzinfo=timezone(-timedelta(hours=4, minutes=56, seconds=2))
    )
    records, _, _ = neo4j_driver.execute_query(
        f"WITH {plan.expand('$sent').render({})} AS t "
        f"RETURN toString(t) AS text, date(t) AS day, {plan.compact('t').render({})} AS t",
        sent=sent_form(value),
    )
    assert records[0]["text"] == "1850-03-01T23:59:30-04:56:02"
    assert records[0]["day"].to_native() == value.date()
    read = from_compact(records[0]["t"])
    assert (read, read.utcoffset()) == (value, value.utcoffset())


@pytest.mark.parametrize(
    ("value", "error"),
    [
        (datetime(2024, 5, 1, tzinfo=timezone(timedelta(seconds=30, microseconds=5))), "seconds"),
        (datetime(2024, 5, 1, tzinfo=timezone(timedelta(hours=18, seconds=1))), "18 hours"),
        (datetime.min.replace(tzinfo=timezone(timedelta(seconds=1))), "years 1-9999 in UTC"),
        (datetime.max.replace(tzinfo=timezone(-timedelta(seconds=1))), "years 1-9999"),
    ],
)
def test_what_the_graph_cannot_hold_is_refused(value: datetime, error: str) -> None:
    with pytest.raises(ValueError, match=error):
        storable(value)
    with pytest.raises(ValueError, match=error):
        sent_form(value)
