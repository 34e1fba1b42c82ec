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
from zoneinfo import ZoneInfo

import neo4j.time
import pytz
from neomodel.properties import Property, validator


def as_aware(value: datetime) -> datetime:
    """A naive datetime is taken as UTC; an aware one is kept as it is."""
    return value if value.tzinfo is not None else value.replace(tzinfo=timezone.utc)


def sendable(value: datetime) -> datetime:
    """``value`` as the driver can send it: a ``zoneinfo`` zone as the same zone of pytz.

    The driver works out a zone's offset by handing the zone a datetime of its own
    class, which CPython's ``ZoneInfo`` reads as if it were a ``datetime``: a wrong
    offset, or a crash of the process. The same instant in the same named zone from
    pytz (a dependency of the driver, which handles it) is stored the same way.
    """
    zone = value.tzinfo
    if isinstance(zone, ZoneInfo):
        return value.astimezone(pytz.timezone(zone.key))
    return value


_EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)


def sent_form(value: datetime) -> list[Any]:
    """An aware ``value`` as ``[epochSeconds, nanosecond, timezone]``, from which
    ``ZonedDateTimeProperty.expand`` builds the DATETIME the driver would have sent: a
    named zone (pytz's ``zone``, zoneinfo's ``key``) by its name, any other zone by its
    offset. Encoding it here costs a tenth of the driver's encoding."""
    zone = getattr(value.tzinfo, "zone", None) or getattr(value.tzinfo, "key", None)
    if not isinstance(zone, str) or not zone:
        offset = value.utcoffset()
        if offset is None or offset % timedelta(minutes=1):
            raise ValueError(f"{value!r}: a zone offset is a whole number of minutes")
        minutes = offset // timedelta(minutes=1)
        zone = f"{'-' if minutes < 0 else '+'}{abs(minutes) // 60:02d}:{abs(minutes) % 60:02d}"
    seconds, microsecond = divmod((value - _EPOCH) // timedelta(microseconds=1), 1_000_000)
    return [seconds, microsecond * 1000, zone]


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


def utc_now() -> datetime:
    return datetime.now(timezone.utc)


class ZonedDateTimeProperty(Property[datetime]):
    """A zoned Neo4j DATETIME, read back as a timezone-aware ``datetime``.

    :param default_now: default to the time each node is created (not the time
        the class was defined).
    """

    form_field_class = "DateTimeField"

    def __init__(self, default_now: bool = False, **kwargs: Any) -> None:
        if default_now:
            if "default" in kwargs:
                raise ValueError("default_now and default cannot both be set")
            kwargs["default"] = utc_now
        super().__init__(**kwargs)

    @staticmethod
    def compact(expression: str) -> str:
        """Cypher reading the DATETIME ``expression`` as ``[epochMillis, nanosecond,
        timezone]`` (null stays null), which :meth:`inflate` reads back. Not
        ``epochSeconds``, which Neo4j rounds toward zero before 1970.

        The driver builds each DATETIME it receives through its own pure-Python time
        classes, about 35 microseconds apiece, the largest client cost of a page of
        interactions or memories; the compact form costs about 2.
        """
        return (
            f"CASE WHEN {expression} IS NULL THEN null ELSE "
            f"[{expression}.epochMillis, {expression}.nanosecond, {expression}.timezone] END"
        )

    @staticmethod
    def expand(expression: str) -> str:
        """Cypher building the DATETIME whose :func:`sent_form` is ``expression`` (null
        stays null)."""
        return (
            f"CASE WHEN {expression} IS NULL THEN null ELSE datetime({{epochSeconds: "
            f"{expression}[0], nanosecond: {expression}[1], timezone: {expression}[2]}}) END"
        )

    @validator
    def inflate(self, value: Any) -> datetime:
        if isinstance(value, list | tuple):
            value = from_compact(value)
        if isinstance(value, neo4j.time.DateTime):
            value = value.to_native()
        if not isinstance(value, datetime):
            raise ValueError(f"DATETIME expected, got {type(value).__name__}")
        return as_aware(value)

    @validator
    def deflate(self, value: Any) -> datetime:
        if not isinstance(value, datetime):
            raise ValueError(f"datetime expected, got {type(value).__name__}")
        # The driver sends an aware datetime as a zoned DATETIME.
        return sendable(as_aware(value))


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
