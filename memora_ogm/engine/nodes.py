"""The node classes a declaration works with, handed to it by the facade that runs it.

neomodel gives each twin a base class of its own, so each twin defines the Memora graph's
classes on its base (``_async/nodes.py``, generated into ``_sync/nodes.py``). Declarations
name no twin: each facade passes its twin's :class:`Nodes` as their first argument, and
reads inflate with what it holds (a subclass with the same labels included, as neomodel).
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, fields
from types import ModuleType
from typing import Any


def new_memory_id() -> str:
    """Memory ids are uuid4 strings, as Memora's (and valid Qdrant point ids)."""
    return str(uuid.uuid4())


@dataclass(frozen=True, eq=False)
class Nodes:
    """One twin's node classes of the Memora graph (and its migration record's)."""

    Org: Any
    User: Any
    Agent: Any
    InteractionCollection: Any
    MemoryCollection: Any
    Date: Any
    Interaction: Any
    MessageBlock: Any
    Memory: Any
    AppliedMigration: Any

    @classmethod
    def of(cls, module: ModuleType) -> Nodes:
        """The classes a twin's ``nodes`` module defines, by name."""
        return cls(**{field.name: getattr(module, field.name) for field in fields(cls)})

    @property
    def schema(self) -> tuple[Any, ...]:
        """The Memora graph's classes (the migration record is not one of them)."""
        return (
            self.Org,
            self.User,
            self.Agent,
            self.InteractionCollection,
            self.MemoryCollection,
            self.Date,
            self.Interaction,
            self.MessageBlock,
            self.Memory,
        )
