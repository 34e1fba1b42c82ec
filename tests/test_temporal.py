"""DATETIMEs read in their compact form (``ZonedDateTimeProperty.compact``) come back
exactly as the driver would build them: same instant, same offset, same zone.

Every facade read returns its timestamps this way, since the driver's own hydration
costs more than the rest of a memory; these values are where a shortcut would slip:
before 1970 (where Neo4j's ``epochSeconds`` rounds toward zero), sub-millisecond
parts, named zones on both sides of a DST change, historic local mean times.
"""

from __future__ import annotations

from typing import Any

import pytest
from neo4j import Driver

from memora_ogm.properties import ZonedDateTimeProperty, from_compact

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
