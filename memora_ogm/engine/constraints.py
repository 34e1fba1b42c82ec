"""The schema install: each class's composite ``__node_key__`` (neomodel's
``unique_index`` covers one property) as ``NODE KEY`` on Enterprise, ``IS UNIQUE`` on
Community, with Memora's names; and the edition and constraint reads. No I/O.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from neomodel.util import escape_identifier

from memora_ogm.engine.call import Call, Query, nothing
from memora_ogm.engine.nodes import Nodes

#: The server's components: name, version and edition (which decides the constraints).
EDITION = """
CALL dbms.components() YIELD name, versions, edition
RETURN name, versions[0] AS version, edition
"""

CONSTRAINT_NAMES = "SHOW CONSTRAINTS YIELD name RETURN name"


def node_key_statement(cls: Any, enterprise: bool) -> str | None:
    """The CREATE CONSTRAINT statement for ``cls``'s key, generated from the class."""
    if cls.__node_key__ is None:
        return None
    name, properties = cls.__node_key__
    keys = ", ".join(f"n.{escape_identifier(prop)}" for prop in properties)
    kind = "IS NODE KEY" if enterprise else "IS UNIQUE"
    return (
        f"CREATE CONSTRAINT {escape_identifier(name)} IF NOT EXISTS "
        f"FOR (n:{escape_identifier(cls.__label__)}) REQUIRE ({keys}) {kind}"
    )


def schema_change(statements: Iterable[str]) -> Call[None]:
    """Schema commands run in one transaction."""
    *first, last = (Query(statement, {}) for statement in statements)
    return Call(last, nothing, write=True, before=tuple(first))


def node_keys(enterprise: bool, classes: Iterable[Any]) -> Call[None]:
    """Install the node keys of ``classes``; idempotent."""
    keyed = (node_key_statement(cls, enterprise) for cls in classes)
    return schema_change(statement for statement in keyed if statement is not None)


def install_node_keys(nodes: Nodes, enterprise: bool) -> Call[None]:
    """Install the Memora graph's node keys; idempotent."""
    return node_keys(enterprise, nodes.schema)


def drop_index(name: str) -> Call[None]:
    """Drop the index ``name`` if there is one (a migration's schema change)."""
    return schema_change([f"DROP INDEX {escape_identifier(name)} IF EXISTS"])


def missing_constraints(nodes: Nodes) -> Call[list[str]]:
    """The schema's node keys this database lacks (``setup()`` adds them), sorted."""

    def missing(rows: list[dict[str, str]]) -> list[str]:
        installed = {row["name"] for row in rows}
        return sorted(
            cls.__node_key__[0]
            for cls in nodes.schema
            if cls.__node_key__ is not None and cls.__node_key__[0] not in installed
        )

    return Call(Query(CONSTRAINT_NAMES, {}), missing)
