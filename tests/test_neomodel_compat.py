"""neomodel's private attributes (issue 50): the package reads and writes them only in
``memora_ogm/neomodel_compat.py``, and each one it lists is still on the installed
neomodel's objects, so a neomodel release that drops one fails here by name instead of
somewhere in a query. No server: nothing is sent.
"""

from __future__ import annotations

import ast
from collections.abc import Mapping
from importlib.metadata import version

from neomodel import adb, db
from neomodel.async_.connection import AsyncConnectionManager
from neomodel.async_.database import AsyncDatabase
from neomodel.async_.relationship_manager import AsyncRelationshipDefinition
from neomodel.sync_.connection import ConnectionManager
from neomodel.sync_.database import Database
from neomodel.sync_.relationship_manager import RelationshipDefinition
from test_one_way import _modules

from memora_ogm import nodes
from memora_ogm.neomodel_compat import PRIVATE

#: An object of each neomodel class that :data:`PRIVATE` names, by the class's name: some
#: of the attributes are set by ``__init__``, so the class alone does not show them.
SAMPLES: Mapping[str, tuple[object, ...]] = {
    "AsyncDatabase, Database (adb, db)": (adb, db),
    "AsyncConnectionManager, ConnectionManager": (
        AsyncConnectionManager(),
        ConnectionManager(),
    ),
    "AsyncRelationshipDefinition, RelationshipDefinition": (
        nodes.AsyncMemory.contrary_update,
        nodes.Memory.contrary_update,
    ),
}
#: The classes the samples must be of (a sample of another class would prove nothing).
CLASSES = {
    "AsyncDatabase, Database (adb, db)": (AsyncDatabase, Database),
    "AsyncConnectionManager, ConnectionManager": (AsyncConnectionManager, ConnectionManager),
    "AsyncRelationshipDefinition, RelationshipDefinition": (
        AsyncRelationshipDefinition,
        RelationshipDefinition,
    ),
}


def _missing(private: Mapping[str, tuple[str, ...]]) -> list[str]:
    """``Class.attribute`` for each listed attribute a sample of its class lacks."""
    return [
        f"{type(sample).__name__}.{attribute}"
        for owners, attributes in private.items()
        for sample in SAMPLES[owners]
        for attribute in attributes
        if not hasattr(sample, attribute)
    ]


def test_the_samples_are_of_the_listed_classes() -> None:
    assert SAMPLES.keys() == CLASSES.keys() == PRIVATE.keys()
    for owners, samples in SAMPLES.items():
        assert all(map(isinstance, samples, CLASSES[owners])), owners


def test_every_private_attribute_used_is_on_the_installed_neomodel() -> None:
    missing = _missing(PRIVATE)
    assert not missing, (
        f"neomodel {version('neomodel')} no longer has {', '.join(missing)}, which "
        "memora_ogm/neomodel_compat.py uses"
    )


def test_a_removed_attribute_is_named() -> None:
    removed = {"AsyncDatabase, Database (adb, db)": ("_connection", "_gone")}
    assert _missing(removed) == ["AsyncDatabase._gone", "Database._gone"]


def test_only_the_compat_module_touches_them() -> None:
    """No other module reads or writes a listed attribute, or swaps an object's class."""
    names = {attribute for attributes in PRIVATE.values() for attribute in attributes}
    names |= {"_session", "_active_transaction", "__class__"}
    touching = {
        (module_name, node.attr)
        for module_name, module in _modules().items()
        for node in ast.walk(module)
        if isinstance(node, ast.Attribute) and node.attr in names
    }
    assert {module_name for module_name, _ in touching} == {"neomodel_compat.py"}, touching
