"""The ``memora-ogm-export`` format (``docs/export-format.md``), with no I/O: its record
types, errors, datetimes, ``.jsonl`` files and the digest ``move`` compares. Records are
built in :mod:`~memora_ogm.transfer.export`, checked in
:mod:`~memora_ogm.transfer.validation` and written in :mod:`~memora_ogm.transfer.importing`.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from datetime import date, datetime
from pathlib import Path
from typing import IO, Any

from memora_ogm.errors import MemoraOGMError
from memora_ogm.properties import storable

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


def parse_datetime(value: str) -> datetime:
    """With an offset, and :func:`~memora_ogm.properties.storable`: validation refuses
    what the graph cannot store, not a later batch's write."""
    parsed = datetime.fromisoformat(value)
    if parsed.utcoffset() is None:
        raise ValueError("it has no UTC offset")
    return storable(parsed)


def parse_date(value: str) -> date:
    if len(value) != 10:
        raise ValueError("expected YYYY-MM-DD")
    return date.fromisoformat(value)


CONTENT_TYPES = (ORGANIZATION, USER, AGENT, INTERACTION, MEMORY, CONTRARY_UPDATE)


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
