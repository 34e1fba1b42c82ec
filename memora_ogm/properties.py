"""neomodel properties that store Neo4j's native temporal types.

Memora writes ``created_at``/``updated_at``/``obtained_at`` with Cypher's
``datetime()`` (a zoned DATETIME) and ``Date.date`` as a DATE. neomodel's stock
``DateTimeProperty`` stores a float epoch and ``DateProperty`` an ISO string, so
a graph written with them would not be a Memora graph: these two properties keep
the native types, the way neomodel properties do it, with ``deflate``/``inflate``.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from datetime import date, datetime, timedelta, timezone, tzinfo
from typing import Any

import neo4j.time
import pytz
from neomodel.properties import Property, validator

from memora_ogm import plan

#: The largest UTC offset Neo4j stores (Java's ``ZoneOffset``), either way, to the second.
MAX_OFFSET = timedelta(hours=18)


def storable(value: datetime) -> datetime:
    """``value`` as the graph stores it: the same instant and wall-clock time, with the
    offset the Python side gives it as a fixed zone (a naive value is UTC).

    A named zone is not sent by name: Java's time-zone data can disagree with the Python
    zone (pytz's LMT, pytz's missing DST after 2037) and put the value on another day than
    its ``Date`` node. ``ValueError`` for a value the layer could store but never read
    back: outside years 1-9999 in UTC, or an offset Neo4j does not hold.
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
    """:func:`storable` ``value`` as ``[epochSeconds, nanosecond, offset]``, which
    ``ZonedDateTimeProperty.expand`` builds the DATETIME from (the driver refuses an offset
    with seconds, which Neo4j stores); a tenth of the cost of the driver's encoding."""
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
    """A DATETIME read as ``ZonedDateTimeProperty.compact`` returns it (milliseconds
    since the epoch, rounded down, then the microseconds within the millisecond)."""
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

    @staticmethod
    def compact(expression: str) -> str:
        """Cypher reading the DATETIME ``expression`` as ``[epochMillis, nanosecond,
        timezone]`` (null stays null; not ``epochSeconds``, which Neo4j rounds toward zero
        before 1970): the driver's own DATETIME costs about 35 microseconds apiece, the
        largest client cost of a page of reads, the compact form about 2."""
        return plan.compact(expression).render({})

    @staticmethod
    def expand(expression: str) -> str:
        """Cypher building the DATETIME whose :func:`sent_form` is ``expression`` (null
        stays null)."""
        return plan.expand(expression).render({})

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
        """:meth:`inflate` for a read's row: the compact form its projection returns is
        decoded without neomodel's error wrapper (the largest cost of a timestamp on a
        page of reads); any other value goes through :meth:`inflate`."""
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
