# Generated from memora_ogm/_async by scripts/generate_sync.py: do not edit.
"""Installing the uniqueness guarantees of the Memora schema.

neomodel's ``unique_index`` covers one property; Memora's keys are composite
(``User(org_id, user_id)`` and so on). Each node class names its key
(``__node_key__``) and this module installs it: ``NODE KEY`` on Enterprise
Edition, composite ``IS UNIQUE`` on Community Edition, with Memora's constraint
names and ``IF NOT EXISTS`` so that it is idempotent. ``setup()`` calls it, and
:func:`extend_neomodel_schema` teaches neomodel's own ``install_labels`` (and so
the ``neomodel_install_labels`` CLI) to do the same for every keyed class. The
server's edition, which decides the kind of constraint, is read here too (:data:`EDITION`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TextIO

from neomodel import db
from neomodel.sync_.schema import SchemaManager
from neomodel.util import escape_identifier

from memora_ogm._sync.nodes import NODE_CLASSES, MemoraNode

#: The server's components: name, version and edition (``community`` or ``enterprise``);
#: ``Graph.components`` runs it (the edition decides which constraints are installed).
EDITION = """
CALL dbms.components() YIELD name, versions, edition
RETURN name, versions[0] AS version, edition
"""

#: The names of the server's constraints; ``missing_node_keys`` compares them with the schema's.
CONSTRAINT_NAMES = "SHOW CONSTRAINTS YIELD name RETURN name"

#: Sends one statement: the facade's graph (``Graph.cypher``, in the setup's transaction),
#: or neomodel's own connection for neomodel's ``install_labels``.
Send = Callable[[str], object]


def _neomodel_send(statement: str) -> object:
    return db.cypher_query(statement)


def node_key_statement(cls: type[MemoraNode], enterprise: bool) -> str | None:
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


def install_node_key(cls: type[MemoraNode], enterprise: bool, send: Send = _neomodel_send) -> None:
    """Install ``cls``'s key; ``enterprise`` is the edition of the server it goes to."""
    statement = node_key_statement(cls, enterprise)
    if statement is not None:
        send(statement)


def drop_index(name: str, send: Send) -> None:
    """Drop the index ``name`` if there is one (a migration's schema change)."""
    send(f"DROP INDEX {escape_identifier(name)} IF EXISTS")


def install_node_keys(enterprise: bool, send: Send) -> None:
    """Install every node key of the Memora schema (idempotent)."""
    for cls in NODE_CLASSES:
        install_node_key(cls, enterprise, send)


def missing_node_keys(installed: set[str]) -> list[str]:
    """The schema's node keys not among the ``installed`` constraint names, sorted."""
    return sorted(
        cls.__node_key__[0]
        for cls in NODE_CLASSES
        if cls.__node_key__ is not None and cls.__node_key__[0] not in installed
    )


def extend_neomodel_schema() -> None:
    """Make neomodel's ``install_labels`` also install a class's ``__node_key__``."""
    original = SchemaManager.install_labels
    if getattr(original, "_memora_node_keys", False):
        return

    def install_labels(
        self: SchemaManager, cls: Any, quiet: bool = True, stdout: TextIO | None = None
    ) -> None:
        original(self, cls, quiet=quiet, stdout=stdout)
        if isinstance(cls, type) and issubclass(cls, MemoraNode) and cls.__node_key__:
            if not quiet and stdout is not None:
                stdout.write(
                    f" + Creating node key {cls.__node_key__[0]} on label {cls.__label__}\n"
                )
            # neomodel's own connection here, so neomodel's view of its edition.
            install_node_key(cls, db.edition_is_enterprise())

    install_labels._memora_node_keys = True  # type: ignore[attr-defined]
    SchemaManager.install_labels = install_labels  # type: ignore[method-assign]
