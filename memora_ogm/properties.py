"""neomodel properties that store Neo4j's native DATETIME and DATE, as Memora writes them
(neomodel's stock ones store a float epoch and an ISO string).
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from datetime import date, datetime, timedelta, timezone, tzinfo
from typing import Any

import neo4j.time
import pytz
from neomodel.properties import Property, validator

#: The largest UTC offset Neo4j stores (Java's ``ZoneOffset``), either way, to the second.
MAX_OFFSET = timedelta(hours=18)


def storable(value: datetime) -> datetime:
    """``value`` with its Python offset as a fixed zone (naive is UTC).

    Not sent by zone name: Java's zone data can disagree with Python's (pytz's LMT, no DST
    after 2037) and move it off its ``Date``'s day. ``ValueError`` for what could not be
    read back (outside years 1-9999 in UTC, or an offset Neo4j does not hold).
    """
    offset = value.utcoffset()
    if offset is None:  # naive (or a tzinfo that gives no offset): UTC
        return value.replace(tzinfo=timezone.utc)
    if offset % timedelta(seconds=1):
        raise ValueError(
            f"{value!r}: its UTC offset {offset} is not a whole number of seconds, "
            "which Neo4j needs"
        )
    if abs(offset) > MAX_OFFSET:
        raise ValueError(f"{value!r}: its UTC offset {offset} is beyond Neo4j's 18 hours")
    wall = value.replace(tzinfo=None)
    if wall - datetime.min < offset or datetime.max - wall < -offset:
        raise ValueError(
            f"{value!r} is outside years 1-9999 in UTC, where Python cannot read it back"
        )
    return value if type(value.tzinfo) is timezone else value.replace(tzinfo=timezone(offset))


@functools.cache
def offset_name(offset: timedelta) -> str:
    """A fixed offset as Neo4j names it: ``+05:45``, or ``-04:56:02`` with seconds."""
    seconds = offset // timedelta(seconds=1)
    hours, rest = divmod(abs(seconds), 3600)
    minutes, second = divmod(rest, 60)
    name = f"{'-' if seconds < 0 else '+'}{hours:02d}:{minutes:02d}"
    return f"{name}:{second:02d}" if second else name


_EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)


def sent_form(value: datetime) -> list[Any]:
    """``[epochSeconds, nanosecond, offset]`` for ``expand``: a tenth of the driver's
    encoding cost, and offsets with seconds (which the driver refuses) pass."""
    stored = storable(value)
    offset = stored.utcoffset()
    assert offset is not None
    seconds, microsecond = divmod((stored - _EPOCH) // timedelta(microseconds=1), 1_000_000)
    return [seconds, microsecond * 1000, offset_name(offset)]


@functools.cache
def _zone(name: str) -> tzinfo:
    """The zone the driver gives a DATETIME whose ``timezone`` is ``name`` (pytz's)."""
    if name == "Z":
        return pytz.utc
    if name[0] in "+-":
        parts = [int(part) for part in name[1:].split(":")]
        seconds = parts[0] * 3600 + parts[1] * 60 + (parts[2] if len(parts) > 2 else 0)
        sign = -1 if name[0] == "-" else 1
        if seconds % 60:
            return timezone(timedelta(seconds=sign * seconds))
        return pytz.FixedOffset(sign * seconds // 60)
    return pytz.timezone(name)


def from_compact(value: Sequence[Any]) -> datetime:
    """A DATETIME from the compact form reads return (``memora_ogm.engine.plan.compact``)."""
    milliseconds, nanosecond, zone = value
    seconds, millisecond = divmod(milliseconds, 1000)
    microsecond = millisecond * 1000 + nanosecond // 1000 % 1000
    return datetime.fromtimestamp(seconds, _zone(zone)).replace(microsecond=microsecond)


class ZonedDateTimeProperty(Property[datetime]):
    """A zoned Neo4j DATETIME, read back as a timezone-aware ``datetime``.

    :param default_now: default to the time each node is created.
    """

    form_field_class = "DateTimeField"

    def __init__(self, default_now: bool = False, **kwargs: Any) -> None:
        if default_now:
            if "default" in kwargs:
                raise ValueError("default_now and default cannot both be set")
            kwargs["default"] = functools.partial(datetime.now, timezone.utc)
        super().__init__(**kwargs)

    @validator
    def inflate(self, value: Any) -> datetime:
        if isinstance(value, list | tuple):
            value = from_compact(value)
        if isinstance(value, neo4j.time.DateTime):
            value = value.to_native()
        if not isinstance(value, datetime):
            raise ValueError(f"DATETIME expected, got {type(value).__name__}")
        return value if value.tzinfo is not None else value.replace(tzinfo=timezone.utc)

    def inflate_read(self, value: Any) -> datetime:
        """:meth:`inflate` minus neomodel's error wrapper for the compact form (its largest
        cost on a page of reads)."""
        if type(value) is list:
            return from_compact(value)
        inflated: datetime = self.inflate(value)
        return inflated

    @validator
    def deflate(self, value: Any) -> datetime:
        if not isinstance(value, datetime):
            raise ValueError(f"datetime expected, got {type(value).__name__}")
        return storable(value)


class NativeDateProperty(Property[date]):
    """A Neo4j DATE, read back as a ``datetime.date``."""

    form_field_class = "DateField"

    @validator
    def inflate(self, value: Any) -> date:
        if isinstance(value, neo4j.time.Date):
            return value.to_native()
        if isinstance(value, date) and not isinstance(value, datetime):
            return value
        raise ValueError(f"DATE expected, got {type(value).__name__}")

    @validator
    def deflate(self, value: Any) -> date:
        if isinstance(value, datetime):
            raise ValueError("a date is expected, not a datetime")
        if not isinstance(value, date):
            raise ValueError(f"date expected, got {type(value).__name__}")
        return value
