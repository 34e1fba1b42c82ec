"""The ``memora-ogm-export`` format (``docs/export-format.md``), with no I/O: records,
their validation, ``.jsonl`` files and the digest ``move`` compares.

Each record type is a :class:`Shape` of its node class, which gives its properties and
checks. A record refers only to records before it, so validation streams, keeping ids.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import reprlib
import uuid
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from datetime import date, datetime
from pathlib import Path
from typing import IO, Any

from neomodel.properties import Property

from memora_ogm.calls.organization import match_org
from memora_ogm.calls.user import match_user
from memora_ogm.engine.call import Call
from memora_ogm.engine.mapping import node_key
from memora_ogm.engine.nodes import Nodes, new_memory_id
from memora_ogm.engine.pages import Part, Related
from memora_ogm.engine.projection import projection, reading
from memora_ogm.engine.unit_of_work import UnitOfWork
from memora_ogm.errors import MemoraOGMError
from memora_ogm.properties import NativeDateProperty, ZonedDateTimeProperty, storable
from memora_ogm.schema.validation import (
    MAX_NAME_LENGTH,
    MAX_TEXT_LENGTH,
    check_encodable,
    check_id,
    check_memory_id,
    check_name,
    check_text,
)

FORMAT_NAME = "memora-ogm-export"
FORMAT_VERSION = 1

HEADER = "header"
ORGANIZATION = "organization"
USER = "user"
AGENT = "agent"
INTERACTION = "interaction"
MEMORY = "memory"
CONTRARY_UPDATE = "contrary_update"
END = "end"

#: Longest record as UTF-8 JSON (an interaction with its messages): it bounds a batch.
MAX_RECORD_BYTES = 64 * 1024 * 1024


Record = dict[str, Any]


class ImportFormatError(MemoraOGMError, ValueError):
    """The input of an import is malformed; ``line`` is its 1-based line (record) number."""

    def __init__(self, line: int, problem: str) -> None:
        super().__init__(f"line {line}: {problem}")
        self.line = line


class ImportConflict(MemoraOGMError):
    """An imported record exists already (``"fail"``) or with other values (``"skip"``)."""

    def __init__(
        self, line: int, what: str, problem: str = "already exists (on_conflict='fail')"
    ) -> None:
        super().__init__(f"line {line}: {what} {problem}")
        self.line = line


class MemoryIdsTaken(ImportConflict):
    """Memory ids (``taken``: id -> its ``(org_id, user_id)``) held by another tenant."""

    def __init__(self, line: int, taken: Mapping[str, tuple[str, str]]) -> None:
        shown = sorted(taken.items())
        listed = ", ".join(
            f"{memory_id} (org_id={org_id!r}, user_id={user_id!r})"
            for memory_id, (org_id, user_id) in shown[:10]
        )
        more = f" and {len(shown) - 10} more" if len(shown) > 10 else ""
        super().__init__(
            line,
            f"memory ids {listed}{more}",
            "belong to another tenant's memories; memory ids are unique across the "
            "whole graph (import a copy with new memory ids: rekey=True, or --new-memory-ids)",
        )
        self.taken = dict(taken)


class MoveVerificationFailed(MemoraOGMError):
    """After a move's import the servers differ; the source was left in place."""


@dataclass
class ImportSummary:
    """Records created and skipped (already there) per type."""

    created: Counter[str] = field(default_factory=Counter)
    skipped: Counter[str] = field(default_factory=Counter)


@dataclass
class MoveReport:
    digest: str
    counts: Counter[str]
    imported: ImportSummary


def dump_datetime(value: datetime) -> str:
    """ISO 8601 with the value's own offset (``+02:00``), never converted to UTC."""
    if value.tzinfo is None or value.utcoffset() is None:
        raise ValueError(f"a zoned datetime is expected, got the naive {value!r}")
    return value.isoformat()


def _parse_datetime(value: str) -> datetime:
    """With an offset, and :func:`~memora_ogm.properties.storable`: validation refuses
    what the graph cannot store, not a later batch's write."""
    parsed = datetime.fromisoformat(value)
    if parsed.utcoffset() is None:
        raise ValueError("it has no UTC offset")
    return storable(parsed)


def _parse_date(value: str) -> date:
    if len(value) != 10:
        raise ValueError("expected YYYY-MM-DD")
    return date.fromisoformat(value)


def header(scope: str, org_id: str, user_id: str | None, database: str | None) -> Record:
    from memora_ogm import __version__

    return {
        "type": HEADER,
        "format": FORMAT_NAME,
        "version": FORMAT_VERSION,
        "exported_at": dump_datetime(datetime.now().astimezone()),
        "source": {"software": f"memora-ogm {__version__}", "database": database},
        "scope": {"kind": scope, "org_id": org_id, "user_id": user_id},
    }


def record(nodes: Nodes, kind: str, values: Mapping[str, Any], **extras: Any) -> Record:
    """A ``kind`` record: its properties from the node's inflated ``values``, then ``extras``."""
    made: Record = {"type": kind}
    for name in shapes(nodes)[kind].properties:
        value = values[name]
        made[name] = dump_datetime(value) if isinstance(value, datetime) else value
    made.update(extras)
    return made


def interaction(nodes: Nodes, node: Mapping[str, Any], row: Mapping[str, Any]) -> Record:
    return record(
        nodes,
        INTERACTION,
        node,
        dates=sorted(day.iso_format() for day in row["dates"]),
        messages=[{"role": role, "content": content} for role, content in row["messages"]],
    )


def memory(nodes: Nodes, node: Mapping[str, Any], row: Mapping[str, Any]) -> Record:
    return record(
        nodes,
        MEMORY,
        node,
        date_obtained=row["days"][0].iso_format() if row["days"] else None,
        source_positions=sorted(row["sources"]),
    )


def end(counts: Mapping[str, int]) -> Record:
    return {"type": END, "counts": {kind: counts.get(kind, 0) for kind in CONTENT_TYPES}}


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
    _parse_datetime, "an ISO 8601 datetime string", "an ISO 8601 datetime with offset"
)
_date = _parsed(_parse_date, "a YYYY-MM-DD string", "a YYYY-MM-DD date")


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


CONTENT_TYPES = (ORGANIZATION, USER, AGENT, INTERACTION, MEMORY, CONTRARY_UPDATE)


def tenant(nodes: Nodes, org_id: str, user_id: str | None) -> Call[dict[str, Any]]:
    """An export's first read: the organisation's values (its user must exist too)."""
    work = UnitOfWork()
    found = match_org(nodes, work, org_id)
    if user_id is not None:
        match_user(nodes, work, org_id, user_id)
    work.output("org", found)
    return Call(work, lambda row: projection(reading(nodes.Org)).values(row["org"]))


@dataclass(frozen=True)
class ExportPages:
    """What an export pages through, with what each row brings along."""

    users: Part
    agents: Part
    interactions: Part
    memories: Part


@functools.cache
def export_pages(nodes: Nodes) -> ExportPages:
    messages = Related(
        (nodes.Interaction.first_message, nodes.MessageBlock.is_next),
        ("role", "content"),
        "msg_position",
    )
    occurred = Related((nodes.Interaction.has_occurrence_on,), ("date",))
    sources = Related((nodes.Memory.message_source,), ("msg_position",))
    obtained = Related((nodes.Memory.date_obtained,), ("date",))
    newer = Related(
        (nodes.Memory.contrary_update,), ("memory_id",), "memory_id", ("org_id", "user_id")
    )
    return ExportPages(
        Part(nodes.User, "user_id"),
        Part(nodes.Agent, "agent_id"),
        Part(nodes.Interaction, "interaction_id", (("messages", messages), ("dates", occurred))),
        Part(
            nodes.Memory, "memory_id", (("sources", sources), ("days", obtained), ("newer", newer))
        ),
    )


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


def dumps(record: Record) -> str:
    return json.dumps(record, ensure_ascii=False, separators=(",", ":"))


def write_records(records: Iterable[Record], out: IO[str]) -> int:
    """Write ``records`` as JSON Lines; how many."""
    count = 0
    for record in records:
        out.write(dumps(record) + "\n")
        count += 1
    return count


class JsonLinesFile:
    """A ``.jsonl`` file as a re-iterable of records, read a line at a time (flat memory);
    a line over :data:`MAX_RECORD_BYTES` is refused without being read whole."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)

    def __iter__(self) -> Iterator[Any]:
        return (record for record, _ in self.sized())

    def sized(self) -> Iterator[tuple[Any, int]]:
        """Each record with its line's length in bytes, line break excluded."""
        with self.path.open("rb") as lines:
            number = 0
            while line := lines.readline(MAX_RECORD_BYTES + 2):  # the record and b"\r\n"
                number += 1
                length = len(line.rstrip(b"\r\n"))
                if length > MAX_RECORD_BYTES:
                    raise ImportFormatError(
                        number, f"the line is longer than {MAX_RECORD_BYTES} bytes."
                    )
                yield _loads(number, line), length


def _loads(number: int, line: bytes) -> Any:
    try:
        return json.loads(line.decode("utf-8"))
    except UnicodeDecodeError as error:
        raise ImportFormatError(number, f"not UTF-8 ({error.reason}).") from None
    except json.JSONDecodeError as error:
        raise ImportFormatError(
            number, f"not valid JSON ({error.msg}); is the file truncated?"
        ) from None
    except RecursionError:
        raise ImportFormatError(number, "the record is nested too deeply.") from None


class Digest:
    """A fingerprint of an export's content records (exports are sorted by ids)."""

    def __init__(self) -> None:
        self._hash = hashlib.sha256()
        self.counts: Counter[str] = Counter()

    def add(self, record: Record) -> None:
        if record["type"] in (HEADER, END):
            return
        self.counts[record["type"]] += 1
        self._hash.update(json.dumps(record, sort_keys=True, ensure_ascii=False).encode())
        self._hash.update(b"\n")

    def hexdigest(self) -> str:
        return self._hash.hexdigest()
