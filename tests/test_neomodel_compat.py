"""neomodel's private attributes (issue 50): the package touches them only in
``memora_ogm/neomodel_compat.py``, and each one listed there is still on the installed
neomodel's objects, so a neomodel release that drops one fails here by name. No server.
"""

from __future__ import annotations

import ast
from collections.abc import Mapping
from importlib.metadata import version

from neomodel import adb, db
from neomodel.async_.connection import AsyncConnectionManager
from neomodel.sync_.connection import ConnectionManager
from test_one_way import _modules

from memora_ogm import nodes
from memora_ogm.neomodel_compat import PRIVATE

#: An object of each class: some of the attributes are set by ``__init__``.
SAMPLES = (
    adb,
    db,
    AsyncConnectionManager(),
    ConnectionManager(),
    nodes.AsyncMemory.contrary_update,
    nodes.Memory.contrary_update,
)


def _missing(private: Mapping[type, tuple[str, ...]]) -> list[str]:
    """``Class.attribute`` for each listed attribute that the sample of its class lacks."""
    return [
        f"{owner.__name__}.{attribute}"
        for owner, attributes in private.items()
        for sample in [next(sample for sample in SAMPLES if isinstance(sample, owner))]
        for attribute in attributes
        if not hasattr(sample, attribute)
    ]


def test_every_private_attribute_used_is_on_the_installed_neomodel() -> None:
    missing = _missing(PRIVATE)
    assert not missing, f"neomodel {version('neomodel')} no longer has {', '.join(missing)}"


def test_a_removed_attribute_is_named() -> None:
    assert _missing({type(db): ("_connection", "_gone")}) == ["Database._gone"]


def test_only_the_compat_module_touches_them() -> None:
    """No other module reads or writes a listed attribute, or swaps an object's class."""
    names = {"__class__", "_session", "_active_transaction", *sum(PRIVATE.values(), ())}
    touching = {
        (name, node.attr)
        for name, module in _modules().items()
        for node in ast.walk(module)
        if isinstance(node, ast.Attribute) and node.attr in names
    }
    assert {name for name, _ in touching} == {"neomodel_compat.py"}, touching
