"""An interaction's chain of messages, as an update rewrites it without reading it first:
the statement finds the longest unchanged prefix, deletes the rest and creates the tail.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from memora_ogm.engine.mapping import hint, node_properties
from memora_ogm.engine.plan import (
    Bind,
    Update,
    Var,
    coalesce,
    cy,
    delete,
    each,
    foreach,
    head,
    identifier,
    items,
    range_,
    size,
)
from memora_ogm.engine.projection import table
from memora_ogm.engine.unit_of_work import Ref, UnitOfWork, create_rows


def keep_common_prefix(
    work: UnitOfWork, stored: Ref, rows: Sequence[Mapping[str, Any]], compared: Sequence[str]
) -> tuple[Ref, Ref]:
    """Make ``stored`` hold ``rows``: keep the longest prefix equal on ``compared``, delete
    the rest, create the tail (read from the parameter, not carried). Returns kept, new."""
    cls = stored.cls
    spec = table(cls)
    names = [spec.deflate[field][0] for field in compared]
    if set(names) & set(spec.times):
        raise ValueError("datetimes cannot be compared here")
    kept, made = Var(f"{hint(cls, many=True)}_kept"), Var(hint(cls, many=True))
    given, assign, plain = work.rows(cls, [node_properties(cls, row) for row in rows])
    same = items(
        [
            cy(stored.items, f"[k].{name} = {given}[k]{plain}.{name}")
            for name in map(identifier, names)
        ],
        " AND",
    )
    changed = items([cy("k >= ", size(stored.items)), cy("NOT ", coalesce(same, "false"))], " OR")
    first_changed = each("k", range_("0", cy(size(given), " - 1")), condition=changed)
    work.add(Bind(kept, coalesce(head(first_changed), size(given))))
    work.add(Update(foreach("node", cy(stored.items, "[", kept, "..]"), delete("node"))))
    work.add(create_rows(cls, cy(f"{given}[", kept, "..]"), assign, made))
    return Ref(cy(stored.items, "[..", kept, "]"), cls, True), Ref(
        cy(made), cls, True, created=True
    )
