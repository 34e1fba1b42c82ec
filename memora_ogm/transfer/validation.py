"""Checking an input record by record: each record type is a :class:`Shape` of its node
class, which gives its properties and checks. A record refers only to records before
it, so validation streams, keeping ids.
"""

from __future__ import annotations

import functools
import reprlib
import uuid
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import date
from typing import Any

from neomodel.properties import Property

from memora_ogm.engine.mapping import node_key
from memora_ogm.engine.nodes import Nodes, new_memory_id
from memora_ogm.properties import NativeDateProperty, ZonedDateTimeProperty
from memora_ogm.schema.validation import (
    MAX_NAME_LENGTH,
    MAX_TEXT_LENGTH,
    check_encodable,
    check_id,
    check_memory_id,
    check_name,
    check_text,
)
from memora_ogm.transfer.format import (
    AGENT,
    CONTENT_TYPES,
    CONTRARY_UPDATE,
    END,
    FORMAT_NAME,
    FORMAT_VERSION,
    HEADER,
    INTERACTION,
    MAX_RECORD_BYTES,
    MEMORY,
    ORGANIZATION,
    USER,
    ImportFormatError,
    Record,
    dumps,
    parse_date,
    parse_datetime,
)

Check = Callable[[str, Any], Any]


def _or_null(check: Check) -> Check:
    return lambda name, value: None if value is None else check(name, value)


def _parsed(parse: Callable[[str], Any], expected: str, described: str) -> Check:
    def check(name: str, value: Any) -> Any:
        if not isinstance(value, str):
            raise ValueError(f"`{name}` must be {expected}, not {_kind(value)}.")
        try:
            return parse(value)
        except ValueError as error:
            raise ValueError(f"`{name}` is not {described}: {error}") from None

    return check


_datetime = _parsed(
    parse_datetime, "an ISO 8601 datetime string", "an ISO 8601 datetime with offset"
)
_date = _parsed(parse_date, "a YYYY-MM-DD string", "a YYYY-MM-DD date")


def _dates(name: str, value: Any) -> list[date]:
    if not isinstance(value, list):
        raise ValueError(f"`{name}` must be a list of dates, not {_kind(value)}.")
    days = [_date(f"{name}[{index}]", item) for index, item in enumerate(value)]
    if len(set(days)) != len(days):
        raise ValueError(f"`{name}` names a date twice.")
    return days


def _messages(name: str, value: Any) -> list[dict[str, str]]:
    if not isinstance(value, list):
        raise ValueError(f"`{name}` must be a list of messages, not {_kind(value)}.")
    for index, message in enumerate(value):
        if not isinstance(message, dict) or message.keys() != {"role", "content"}:
            raise ValueError(f"message {index} must be an object with `role` and `content`.")
        for key, limit in (("role", MAX_NAME_LENGTH), ("content", MAX_TEXT_LENGTH)):
            text = message[key]
            if not isinstance(text, str):
                raise ValueError(f"`{key}` of message {index} must be a string.")
            if len(text) > limit:
                raise ValueError(f"`{key}` of message {index} is longer than {limit} characters.")
            if not text.isascii():
                check_encodable(f"{key} of message {index}", text)
    return value


def _positions(name: str, value: Any) -> list[int]:
    if not isinstance(value, list):
        raise ValueError(f"`{name}` must be a list of message positions, not {_kind(value)}.")
    for position in value:
        if isinstance(position, bool) or not isinstance(position, int):
            raise ValueError(f"message position {_shown(position)} must be an integer.")
        if position < 0:
            raise ValueError(f"message position {position} is negative.")
    if len(set(value)) != len(value):
        raise ValueError(f"`{name}` names a message position twice.")
    return value


def _kind(value: Any) -> str:
    return "null" if value is None else type(value).__name__


#: A caller's value in an error message, shortened and never recursed into deeply.
_shown = reprlib.repr


def record_bytes(line: int, record: Any) -> int:
    """``record``'s size as UTF-8 JSON, checked against :data:`MAX_RECORD_BYTES`."""
    try:
        size = len(dumps(record).encode("utf-8"))
    except RecursionError:
        raise ImportFormatError(line, "the record is nested too deeply.") from None
    except (TypeError, ValueError) as error:
        raise ImportFormatError(line, f"the record is not JSON: {error}") from None
    if size > MAX_RECORD_BYTES:
        raise ImportFormatError(
            line, f"the record has {size} bytes of JSON, more than {MAX_RECORD_BYTES}."
        )
    return size


def _check(prop: Property[Any], name: str) -> Check:
    """A property's check, from its type and name (``*_id`` may be null unless required
    or defaulted; ``*_name`` and ``*_label`` are names, other strings texts)."""
    if isinstance(prop, ZonedDateTimeProperty):
        return _datetime
    if isinstance(prop, NativeDateProperty):
        return _date
    if prop.has_default and prop.default is new_memory_id:
        return check_memory_id
    if name.endswith("_id"):
        return check_id if prop.required or prop.has_default else _or_null(check_id)
    return check_name if name.endswith(("_name", "_label")) else check_text


@dataclass(frozen=True)
class Shape:
    """A content record type: the properties of ``cls``, then ``extras`` with their checks."""

    cls: type
    extras: Mapping[str, Check] = field(default_factory=dict)
    #: The file order of the properties where v1 differs from key-then-class order.
    order: tuple[str, ...] | None = None
    #: A link between two nodes of ``cls``: its properties are the key.
    link: bool = False

    @functools.cached_property
    def key(self) -> tuple[str, ...]:
        return node_key(self.cls)

    @functools.cached_property
    def properties(self) -> tuple[str, ...]:
        if self.order is not None:
            return self.order
        if self.link:
            return self.key
        rest = self.cls.defined_properties(aliases=False, rels=False)  # type: ignore[attr-defined]
        return self.key + tuple(name for name in rest if name not in self.key)

    @functools.cached_property
    def fields(self) -> dict[str, Check]:
        """Every field but ``type``, in file order, with its (converting) check."""
        defined = self.cls.defined_properties(aliases=False, rels=False)  # type: ignore[attr-defined]
        return {name: _check(defined[name], name) for name in self.properties} | dict(self.extras)

    @functools.cached_property
    def names(self) -> set[str]:
        return {"type", *self.fields}


@functools.cache
def shapes(nodes: Nodes) -> dict[str, Shape]:
    """Every content record type, in export order, from ``nodes``' properties (the same
    for both twins)."""
    return {
        ORGANIZATION: Shape(nodes.Org),
        USER: Shape(nodes.User),
        AGENT: Shape(
            nodes.Agent, order=("org_id", "agent_id", "agent_label", "user_id", "created_at")
        ),
        INTERACTION: Shape(nodes.Interaction, {"dates": _dates, "messages": _messages}),
        MEMORY: Shape(
            nodes.Memory,
            {"date_obtained": _or_null(_date), "source_positions": _positions},
            (
                "org_id",
                "user_id",
                "memory_id",
                "interaction_id",
                "agent_id",
                "memory",
                "obtained_at",
            ),
        ),
        CONTRARY_UPDATE: Shape(nodes.Memory, {"updated_by": check_memory_id}, link=True),
    }


def parse(nodes: Nodes, line: int, record: Any) -> Record:
    """A content record with its values converted; header and end as they are."""
    if not isinstance(record, dict):
        raise ImportFormatError(line, f"a record must be a JSON object, not {_kind(record)}.")
    kind = record.get("type")
    if kind in (HEADER, END):
        return record
    if not isinstance(kind, str) or kind not in CONTENT_TYPES:
        raise ImportFormatError(line, f"unknown record type {_shown(kind)}.")
    shape = shapes(nodes)[kind]
    fields = shape.fields
    if record.keys() != shape.names:
        missing = [name for name in fields if name not in record]
        if missing:
            raise ImportFormatError(line, f"{kind} record lacks {', '.join(missing)}.")
        unknown = sorted(set(record) - set(fields) - {"type"})
        raise ImportFormatError(line, f"{kind} record has unknown fields {', '.join(unknown)}.")
    parsed: Record = {"type": kind}
    for name, check in fields.items():
        try:
            parsed[name] = check(name, record[name])
        except (ValueError, TypeError) as error:
            raise ImportFormatError(line, f"{kind} record: {error}") from None
    return parsed


@dataclass
class Validator:
    """Checks an input record by record (``feed``, then ``finish``), keeping only ids. A
    memory id appears once whatever its user: the store would hold one point for two."""

    nodes: Nodes
    line: int = 0
    org_id: str | None = None
    users: set[str] = field(default_factory=set)
    agents: set[str] = field(default_factory=set)
    #: (user_id, interaction_id) -> message count.
    interactions: dict[tuple[str, str], int] = field(default_factory=dict)
    #: memory_id -> user_id of its memory.
    memories: dict[str, str] = field(default_factory=dict)
    links: set[tuple[str, str, str]] = field(default_factory=set)
    counts: Counter[str] = field(default_factory=Counter)
    ended: bool = False

    def fail(self, problem: str) -> ImportFormatError:
        return ImportFormatError(self.line, problem)

    def feed(self, record: Any, line_bytes: int | None = None) -> tuple[Record, int]:
        """The record parsed, and its JSON size: ``line_bytes``, the line it was read
        from, when given; a parsed content record's compact JSON is no longer."""
        self.line += 1
        if self.ended:
            raise self.fail("nothing may follow the end record.")
        parsed = parse(self.nodes, self.line, record)
        kind = parsed["type"]
        if line_bytes is None or kind in (HEADER, END):
            line_bytes = record_bytes(self.line, record)
        if self.line == 1:
            if kind != HEADER:
                raise self.fail("the first record must be the header.")
            self._header(parsed)
        elif kind == HEADER:
            raise self.fail("a second header.")
        elif kind == END:
            self._end(parsed)
        elif self.line == 2 and kind != ORGANIZATION:
            raise self.fail("the organization must follow the header.")
        else:
            if kind != ORGANIZATION and parsed["org_id"] != self.org_id:
                raise self.fail(f"org_id {parsed['org_id']!r} is not the file's {self.org_id!r}.")
            user_id = parsed.get("user_id") if kind not in (ORGANIZATION, USER) else None
            if user_id is not None and user_id not in self.users:
                raise self.fail(f"user {user_id!r} is not defined before this line.")
            getattr(self, f"_{kind}")(parsed)
            self.counts[kind] += 1
        return parsed, line_bytes

    def finish(self) -> Counter[str]:
        if not self.ended:
            raise ImportFormatError(
                self.line + 1,
                "the input ends without its end record (it is truncated or incomplete).",
            )
        return self.counts

    def _header(self, record: Record) -> None:
        if record.get("format") != FORMAT_NAME:
            raise self.fail(f"not a {FORMAT_NAME} file (format {_shown(record.get('format'))}).")
        version = record.get("version")
        if version != FORMAT_VERSION or isinstance(version, bool):
            raise self.fail(
                f"format version {_shown(version)} is not supported "
                f"(this is version {FORMAT_VERSION})."
            )

    def _end(self, record: Record) -> None:
        counts = record.get("counts")
        expected = {kind: self.counts.get(kind, 0) for kind in CONTENT_TYPES}
        if counts != expected:
            raise self.fail(
                f"the end record counts {_shown(counts)}, the input holds {expected!r}."
            )
        self.ended = True

    def _organization(self, record: Record) -> None:
        if self.org_id is not None:
            raise self.fail("a second organization.")
        self.org_id = record["org_id"]

    def _user(self, record: Record) -> None:
        if record["user_id"] in self.users:
            raise self.fail(f"duplicate user {record['user_id']!r}.")
        self.users.add(record["user_id"])

    def _agent(self, record: Record) -> None:
        if record["agent_id"] in self.agents:
            raise self.fail(f"duplicate agent {record['agent_id']!r}.")
        self.agents.add(record["agent_id"])

    def _interaction(self, record: Record) -> None:
        key = (record["user_id"], record["interaction_id"])
        if key in self.interactions:
            raise self.fail(f"duplicate interaction {record['interaction_id']!r}.")
        self.interactions[key] = len(record["messages"])

    def _memory(self, record: Record) -> None:
        if record["memory_id"] in self.memories:
            raise self.fail(f"duplicate memory {record['memory_id']!r}.")
        messages = self.interactions.get((record["user_id"], record["interaction_id"]))
        if messages is None:
            raise self.fail(
                f"interaction {record['interaction_id']!r} of user {record['user_id']!r} "
                "is not defined before this line."
            )
        for position in record["source_positions"]:
            if position >= messages:
                raise self.fail(
                    f"message position {position} is outside the {messages} messages of "
                    f"interaction {record['interaction_id']!r}."
                )
        self.memories[record["memory_id"]] = record["user_id"]

    def _contrary_update(self, record: Record) -> None:
        older, newer = record["memory_id"], record["updated_by"]
        for memory_id in (older, newer):
            if self.memories.get(memory_id) != record["user_id"]:
                raise self.fail(
                    f"memory {memory_id!r} of user {record['user_id']!r} "
                    "is not defined before this line."
                )
        if older == newer:
            raise self.fail(f"memory {older!r} cannot update itself.")
        link = (record["user_id"], older, newer)
        if link in self.links:
            raise self.fail(f"duplicate contrary_update {older!r} -> {newer!r}.")
        self.links.add(link)


def validate(nodes: Nodes, records: Iterable[Any]) -> Counter[str]:
    """The content records of each type of a whole, valid input."""
    validator = Validator(nodes)
    for record in records:
        validator.feed(record)
    return validator.finish()


class Rekeying:
    """New memory ids for a copy of a tenant; call it on every parsed record, in order."""

    def __init__(self) -> None:
        self.new_ids: dict[str, str] = {}

    def __call__(self, record: Record) -> Record:
        if record["type"] == MEMORY:
            new_id = self.new_ids.setdefault(record["memory_id"], str(uuid.uuid4()))
            return record | {"memory_id": new_id}
        if record["type"] == CONTRARY_UPDATE:
            return record | {
                name: self.new_ids[record[name]] for name in ("memory_id", "updated_by")
            }
        return record
