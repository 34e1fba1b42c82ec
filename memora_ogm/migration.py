"""What a migration is: a version, a name and the operations it performs, and what its
batches declare on a unit of work (:func:`lacking`, :func:`merge_linked`).

Migrations are declared as data (see the repository's ``migrations/`` folder,
installed as ``memora_ogm.migrations``) so that the async runner and its
generated sync twin (``memora_ogm._async.migrate``) apply the very same list.
Every operation is idempotent: running a migration twice changes nothing.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from memora_ogm.mapping import hint, label, path, target_class
from memora_ogm.plan import (
    Piece,
    Update,
    collect,
    cy,
    dot,
    exists,
    foreach,
    match,
    merge,
    node,
    properties,
    returning,
)
from memora_ogm.projection import table
from memora_ogm.unit_of_work import Ref, UnitOfWork


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


def lacking(work: UnitOfWork, cls: type, rel: Any, limit: int) -> Ref:
    """At most ``limit`` nodes of ``cls`` with no relationship along ``rel`` (what a
    migration's batch still has to link)."""
    found = match(node("node", label(cls)), cy("NOT ", exists(path(node("node"), rel))))
    top = work.param(limit, f"{hint(cls, many=True)}_limit")
    return work.bind(cls, collect(found, returning("node", limit=top)))


def merge_linked(
    work: UnitOfWork, nodes: Ref, rel: Any, copied: Sequence[str], days: Mapping[str, str]
) -> None:
    """Link each of ``nodes`` along ``rel`` to the node of its target class keyed by the
    node's own ``copied`` properties and, for each ``days`` entry (target property -> the
    node's datetime property), that datetime's calendar day as the server has it (in its
    stored offset or zone), made if missing."""
    source, target = table(nodes.cls).deflate, table(target_class(rel)).deflate
    keys: dict[str, Piece] = {target[name][0]: dot("node", source[name][0]) for name in copied}
    for day, stamp in days.items():
        keys[target[day][0]] = cy("date(", dot("node", source[stamp][0]), ")")
    linked = node("linked", label(target_class(rel)), properties(keys))
    write = foreach(
        "node", nodes.items, merge(linked), merge(path(node("node"), rel, None, node("linked")))
    )
    work.add(Update(write))
