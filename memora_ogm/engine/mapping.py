"""What a statement needs of neomodel's class definitions: labels, hops, variable names
and stored properties, from the per-class tables, so hot paths build no node object.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from neomodel.util import RelationshipDirection

from memora_ogm.engine.plan import (
    Cypher,
    Piece,
    cy,
    dot,
    hop,
    identifier,
    is_null,
    keys,
    node,
    size,
)
from memora_ogm.engine.projection import table
from memora_ogm.neomodel_compat import target_class


@dataclass(frozen=True, slots=True)
class Param:
    """A prepared unit's value given when it runs: ``$name`` in its statement."""

    name: str


def present(cls: type, name: str) -> str:
    """Cypher true unless a concurrent delete emptied ``name``: one required property is
    read, where ``size(keys(node))`` reads them all."""
    spec = table(cls)
    if not spec.required:
        return cy(size(keys(name)), " > 0").render({})
    return is_null(dot(name, spec.deflate[spec.required[0]][0]), null=False).render({})


def node_properties(cls: type, values: Mapping[str, Any], defaults: bool = True) -> dict[str, Any]:
    """The stored properties of a ``cls`` node: defaults filled in, values deflated, ``None``
    not stored (as neomodel)."""
    spec = table(cls)
    stored: dict[str, Any] = {}
    for name, value in values.items():
        entry = spec.deflate.get(name)
        if entry is None:
            unknown = sorted(set(values) - set(spec.deflate))
            raise TypeError(f"{cls.__name__} has no properties {unknown}")
        if value is not None:
            db_name, as_is, deflate = entry
            kept = type(value) is as_is or type(value) is Param
            stored[db_name] = value if kept else deflate(value)
    if defaults:
        for name, db_name, deflate, default in spec.defaults:
            if values.get(name) is None:
                stored[db_name] = deflate(default())
        for name in spec.required:
            if values.get(name) is None:
                raise ValueError(f"{cls.__name__}.{name} is required")
    return stored


@functools.cache
def arrow(rel: Any, repeat: str = "") -> str:
    """One hop along ``rel`` from its declaring class, e.g. ``-[:IS_NEXT*0..]->``."""
    direction = {
        RelationshipDirection.OUTGOING: 1,
        RelationshipDirection.INCOMING: -1,
    }.get(rel.definition["direction"], 0)
    return hop(rel.definition["relation_type"], direction, repeat)


def path(start: Piece, rel: Any, then: Any | None = None, end: Piece = "()") -> Cypher:
    """``start`` one hop along ``rel``, then ``then`` 0+ times, to ``end``."""
    repeat = cy(node("", label(target_class(rel))), arrow(then, "*0..")) if then else ""
    return cy(start, arrow(rel), repeat, end)


def between(start: Piece, rel: Any, end: Piece) -> Cypher:
    """``(start)-[:KIND]->(end)``: a link's pattern."""
    return cy("(", start, ")", arrow(rel), "(", end, ")")


def relation_name(rel: Any) -> str:
    """``rel``'s type in lower case: a parameter's name."""
    return str(rel.definition["relation_type"]).lower()


@functools.cache
def label(cls: type) -> str:
    return identifier(table(cls).label)


@functools.cache
def hint(cls: type, many: bool = False) -> str:
    """A variable name for a ``cls`` node (``memory_collection``) or a list (``memories``)."""
    name = re.sub(r"(?<=[a-z0-9])([A-Z])", r"_\1", cls.__name__).lower()
    if not many:
        return name
    if name.endswith("y") and not name.endswith(("ay", "ey", "oy", "uy")):
        return name[:-1] + "ies"
    return name + ("es" if name.endswith(("s", "x")) else "s")


def node_key(cls: type) -> tuple[str, ...]:
    """The properties of ``cls``'s ``__node_key__``."""
    key: tuple[str, tuple[str, ...]] = cls.__node_key__  # type: ignore[attr-defined]
    return key[1]
