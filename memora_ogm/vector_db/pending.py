"""Vector changes whose graph commit is not known to have landed, kept until settled.

A write records what its vector half touches here before applying it, and closes the
record once its commit's outcome is known. A record left open (a commit whose outcome
could not be learnt, or a process killed between the vector half and the commit) is
*pending*: the graph decides it later (``vector_changes.settle_journal``), keeping the
points of the memories that exist and removing the rest. A store keeps its journal
(:meth:`Journal.kept_by`), so the graphs that share a store share it.

Each process appends to a file of its own in the store's folder, locked while the
process lives: another process that can lock it knows its owner died, and takes its
open records over. Lines are flushed to the operating system, not synced to the disk:
they survive the process, not the machine (``memora-ogm check --repair`` covers that).
A store with no folder (in memory, or one passed in) keeps its records in memory.
"""

from __future__ import annotations

import fcntl
import json
import logging
import os
import threading
import uuid
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from memora_ogm import fork

logger = logging.getLogger("memora_ogm")

#: A process's file is emptied once nothing in it is open and it grew past this size.
COMPACT_AT = 1 << 20
SUFFIX = ".jsonl"


@dataclass(frozen=True)
class Pending:
    """What one write's vector half touched: the memory ids it added or removed, and
    the users and organisations whose points it purged."""

    key: str
    memory_ids: tuple[str, ...] = ()
    users: tuple[tuple[str, str], ...] = ()
    organizations: tuple[str, ...] = ()

    def line(self) -> dict[str, Any]:
        return {
            "open": self.key,
            "memory_ids": list(self.memory_ids),
            "users": [list(user) for user in self.users],
            "organizations": list(self.organizations),
        }

    @classmethod
    def of_line(cls, line: dict[str, Any]) -> Pending:
        return cls(
            line["open"],
            tuple(line["memory_ids"]),
            tuple((org, user) for org, user in line["users"]),
            tuple(line["organizations"]),
        )


def open_records(lines: Iterable[str]) -> list[Pending]:
    """The records of a journal's lines that were opened and never closed; a torn last
    line (the process died writing it) is skipped."""
    opened: dict[str, Pending] = {}
    for text in lines:
        try:
            line = json.loads(text)
        except ValueError:
            continue
        if "open" in line:
            opened[line["open"]] = Pending.of_line(line)
        else:
            opened.pop(line.get("close", ""), None)
    return list(opened.values())


class Journal:
    """The pending records of one vector store in this process (see the module)."""

    #: Taken to give a store its journal, so that threads sharing the store share one.
    _keeping = threading.Lock()

    @classmethod
    def kept_by(cls, store: Any) -> Journal:
        """The journal ``store`` keeps as its ``pending_journal``, made on first use (in
        its ``pending_folder`` if it names one)."""
        with cls._keeping:
            journal: Journal | None = getattr(store, "pending_journal", None)
            if journal is None:
                folder = getattr(store, "pending_folder", None)
                journal = store.pending_journal = cls(None if folder is None else Path(folder))
            return journal

    def __init__(self, folder: Path | None) -> None:
        self.folder = folder
        self._lock = threading.Lock()
        self._file: IO[str] | None = None
        #: Records begun and not yet closed: writes in flight, and held ones.
        self._open: dict[str, Pending] = {}
        #: Records whose outcome is unknown, to settle.
        self._held: dict[str, Pending] = {}
        #: Whether dead processes' files were looked for (once per process).
        self._adopted = False
        fork.register(self)

    @property
    def unsettled(self) -> bool:
        """Whether records are held to settle (no I/O: asked after every write); those of
        ended processes are looked for only by :meth:`pending`."""
        return bool(self._held)

    def begin(
        self,
        memory_ids: Iterable[str],
        users: Iterable[tuple[str, str]] = (),
        organizations: Iterable[str] = (),
    ) -> Pending:
        """Record a write's vector half before it is applied."""
        record = Pending(uuid.uuid4().hex, tuple(memory_ids), tuple(users), tuple(organizations))
        with self._lock:
            self._write(record.line())
            self._open[record.key] = record
        return record

    def close(self, record: Pending) -> None:
        """The record's outcome is known and both stores agree on it."""
        with self._lock:
            self._open.pop(record.key, None)
            self._held.pop(record.key, None)
            self._write({"close": record.key})
            self._compact()

    def hold(self, record: Pending) -> None:
        """The record's commit has an unknown outcome: settle it once the graph answers."""
        with self._lock:
            self._held[record.key] = record

    def pending(self) -> list[Pending]:
        """The records to settle: held ones, and those of processes that died with
        records open (taken over into this process's file, and their files removed)."""
        with self._lock:
            if not self._adopted:
                self._adopted = True
                for record in self._adopt():
                    self._write(record.line())
                    self._open[record.key] = self._held[record.key] = record
            return list(self._held.values())

    def take(self) -> list[Pending]:
        """The records to settle, each given to one caller only: closed once settled, or
        held again if settling failed."""
        records = self.pending()
        with self._lock:
            taken = [record for record in records if self._held.pop(record.key, None)]
        return taken

    def _adopt(self) -> list[Pending]:
        if self.folder is None or not self.folder.is_dir():
            return []
        own = self._file.name if self._file is not None else None
        records: list[Pending] = []
        for path in sorted(self.folder.glob(f"*{SUFFIX}")):
            if str(path) == own:
                continue
            try:
                with path.open("r+", encoding="utf-8") as other:
                    try:
                        fcntl.flock(other, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    except BlockingIOError:
                        continue  # its process lives
                    records.extend(open_records(other))
                    path.unlink(missing_ok=True)
            except FileNotFoundError:
                continue  # another process took it over first
        if records:
            logger.warning("settling %d vector changes left by ended processes", len(records))
        return records

    def _write(self, line: dict[str, Any]) -> None:
        if self.folder is None:
            return
        if self._file is None:
            self.folder.mkdir(parents=True, exist_ok=True)
            path = self.folder / f"{os.getpid()}-{uuid.uuid4().hex[:8]}{SUFFIX}"
            self._file = path.open("a", encoding="utf-8")
            fcntl.flock(self._file, fcntl.LOCK_EX)
        self._file.write(json.dumps(line, separators=(",", ":")) + "\n")
        self._file.flush()

    def _compact(self) -> None:
        if self._file is not None and not self._open and self._file.tell() > COMPACT_AT:
            self._file.truncate(0)
            self._file.seek(0)

    def forget_inherited(self) -> None:
        """A forked child keeps none of its parent's records or its file (closing the
        child's descriptor leaves the parent's lock held)."""
        self._lock = threading.Lock()
        if self._file is not None:
            self._file.close()
        self._file = None
        self._open, self._held = {}, {}
