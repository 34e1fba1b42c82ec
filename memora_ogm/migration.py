"""What a migration is: a version, a name and the operations it performs.

Migrations are declared as data (see the repository's ``migrations/`` folder,
installed as ``memora_ogm.migrations``) so that the async runner and its
generated sync twin (``memora_ogm._async.migrate``) apply the very same list.
Every operation is idempotent: running a migration twice changes nothing.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class LinkMemoriesToDates:
    """Link every ``Memory`` without one to its ``Date`` with ``DATE_OBTAINED``."""

    batch_size: int = 5_000


@dataclass(frozen=True)
class DropIndex:
    """Drop a named index if it exists."""

    name: str


Operation = LinkMemoriesToDates | DropIndex


@dataclass(frozen=True)
class Migration:
    version: str
    name: str
    operations: tuple[Operation, ...]
