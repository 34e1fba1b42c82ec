"""DATETIMEs in their compact forms, both ways, are exactly what the driver would make.

Read (``ZonedDateTimeProperty.compact``, then ``inflate``): the same Python datetime
as the driver's own hydration, same instant, offset and zone. Written (``sent_form``,
then ``ZonedDateTimeProperty.expand`` on the server): the same DATETIME as the driver's
own encoding of the datetime. Every facade call moves its timestamps this way, since
the driver's encoding costs more than the rest of a memory; these values are where a
shortcut would slip: before 1970 (where Neo4j's ``epochSeconds`` rounds toward zero),
sub-millisecond parts, named zones on both sides of a DST change, historic local
mean times.
"""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from typing import Any
from zoneinfo import ZoneInfo

import pytest
import pytz
from neo4j import Driver

from memora_ogm.properties import ZonedDateTimeProperty, from_compact, sendable, sent_form

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
        f"WITH datetime($value) AS t RETURN t, {ZonedDateTimeProperty.compact('t')} AS compact",
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
    sendable(datetime(2024, 5, 1, 9, 30, tzinfo=OSLO)),
    sendable(datetime(2024, 10, 27, 2, 30, fold=0, tzinfo=OSLO)),
    sendable(datetime(2024, 10, 27, 2, 30, fold=1, tzinfo=OSLO)),
    sendable(datetime(1850, 5, 1, 9, 30, 0, 654321, tzinfo=ZoneInfo("America/New_York"))),
    datetime(1969, 12, 31, 23, 59, 59, 500000, tzinfo=timezone.utc),
    datetime(1, 1, 1, 0, 0, 0, 1, tzinfo=timezone.utc),
]


@pytest.mark.parametrize("value", SENT, ids=lambda value: value.isoformat())
def test_a_sent_datetime_is_the_driver_s_datetime(neo4j_driver: Driver, value: datetime) -> None:
    records, _, _ = neo4j_driver.execute_query(
        f"WITH $value AS driver, {ZonedDateTimeProperty.expand('$sent')} AS ours "
        "RETURN toString(driver) AS driver, toString(ours) AS ours, "
        "driver.timezone AS driver_zone, ours.timezone AS our_zone",
        value=value,
        sent=sent_form(value),
    )
    record = records[0]
    assert (record["ours"], record["our_zone"]) == (record["driver"], record["driver_zone"])


def test_a_sub_minute_offset_is_refused_as_the_driver_refuses_it() -> None:
    with pytest.raises(ValueError, match="whole number of minutes"):
        sent_form(datetime(2024, 5, 1, tzinfo=timezone(timedelta(seconds=30))))
