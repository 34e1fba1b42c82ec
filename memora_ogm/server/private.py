"""Folders and files that only their owner may read: a Neo4j store, a password."""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path

PRIVATE_DIR_MODE = 0o700


def make_private_dir(path: Path) -> None:
    """Create ``path`` and leave it 0700 even if it existed: its store files are world-readable."""
    path.mkdir(mode=PRIVATE_DIR_MODE, parents=True, exist_ok=True)
    os.chmod(path, PRIVATE_DIR_MODE)


def write_private_file(path: Path, text: str) -> None:
    """Replace ``path`` with a new 0600 file holding ``text``, following no link.

    ``mkstemp`` makes a fresh file (never a planted link or an old file's mode), and the rename
    replaces a link at ``path`` instead of writing through it.
    """
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            out.write(text)
            out.flush()
            os.fsync(out.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise
