"""neomodel's ``install_labels`` taught the Memora schema's node keys.

:func:`extend_neomodel_schema` makes neomodel's own ``install_labels`` (and so the
``neomodel_install_labels`` CLI) also install a class's ``__node_key__``, the same
constraint ``setup()`` installs (:mod:`memora_ogm.engine.constraints`), on neomodel's own
connection.
"""

from __future__ import annotations

from typing import Any, TextIO

from neomodel import adb
from neomodel.async_.schema import AsyncSchemaManager

from memora_ogm._async.nodes import NODES
from memora_ogm.engine.constraints import node_key_statement


def extend_neomodel_schema() -> None:
    """Make neomodel's ``install_labels`` also install a class's ``__node_key__``."""
    original = AsyncSchemaManager.install_labels
    if getattr(original, "_memora_node_keys", False):
        return

    async def install_labels(
        self: AsyncSchemaManager, cls: Any, quiet: bool = True, stdout: TextIO | None = None
    ) -> None:
        await original(self, cls, quiet=quiet, stdout=stdout)
        keyed = getattr(cls, "__node_key__", None) and issubclass(cls, NODES.schema)
        if keyed:  # of the Memora graph: the migration record's is migrate()'s
            if not quiet and stdout is not None:
                stdout.write(
                    f" + Creating node key {cls.__node_key__[0]} on label {cls.__label__}\n"
                )
            # On neomodel's own connection, for neomodel's edition.
            statement = node_key_statement(cls, await adb.edition_is_enterprise())
            if statement is not None:
                await adb.cypher_query(statement)

    install_labels._memora_node_keys = True  # type: ignore[attr-defined]
    AsyncSchemaManager.install_labels = install_labels  # type: ignore[method-assign]
