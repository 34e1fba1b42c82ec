"""Every use of neomodel's private attributes, for both twins, in this one module.

neomodel gives no public way to read the database ``adb``/``db`` uses, to learn the class
a relationship attribute names before its first query, or to have its process-wide
connection manager see a driver bound in one context (a request's, a thread's). A
neomodel release may rename what this reads: ``tests/test_neomodel_compat.py`` checks
:data:`PRIVATE` against the installed neomodel and names what it no longer has.
"""

from __future__ import annotations

from contextvars import ContextVar
from typing import Any

from neomodel.async_.connection import AsyncConnectionManager
from neomodel.async_.database import AsyncDatabase
from neomodel.async_.relationship_manager import AsyncRelationshipDefinition
from neomodel.sync_.connection import ConnectionManager
from neomodel.sync_.database import Database
from neomodel.sync_.relationship_manager import RelationshipDefinition

#: The private attributes used here, by the neomodel class whose objects have them.
PRIVATE: dict[type, tuple[str, ...]] = {
    AsyncDatabase: ("_connection", "_database_name"),
    Database: ("_connection", "_database_name"),
    AsyncConnectionManager: ("_database_name",),
    ConnectionManager: ("_database_name",),
    AsyncRelationshipDefinition: ("_raw_class",),
    RelationshipDefinition: ("_raw_class",),
}


def database_name(database: Any) -> str | None:
    """The database ``database`` (``adb`` or ``db``) sends to in this context."""
    name: str | None = database._database_name
    return name


def target_class(rel: Any) -> type:
    """The node class a relationship attribute points at (looked up if named by a string)."""
    if not isinstance(rel._raw_class, str):
        return rel._raw_class  # type: ignore[no-any-return]
    if "node_class" not in rel.definition:
        rel.lookup_node_class()
    return rel.definition["node_class"]  # type: ignore[no-any-return]


def context_view(
    manager: type,
    driver: ContextVar[Any],
    database: ContextVar[tuple[str | None] | None],
) -> type:
    """A subclass of neomodel's connection manager class ``manager`` that sees the driver
    and database bound in this context (``driver``, ``database``), else its own.

    neomodel checks for a driver before every query, even on a bound transaction; its slot
    is process-wide and the application's, so where one is bound neomodel reads that one.
    """
    own_database = manager._database_name  # type: ignore[attr-defined]

    class ContextView(manager):  # type: ignore[misc]
        @property
        def driver(self) -> Any:
            return driver.get() or self.__dict__.get("driver")

        @driver.setter
        def driver(self, value: Any) -> None:
            self.__dict__["driver"] = value

        @property
        def _database_name(self) -> str | None:
            bound = database.get()
            name: str | None = own_database.fget(self) if bound is None else bound[0]
            return name

        @_database_name.setter
        def _database_name(self, name: str | None) -> None:
            own_database.fset(self, name)

    return ContextView


def view_in_context(database: Any, view: type) -> None:
    """Give the connection manager of ``database`` (``adb`` or ``db``) the class ``view``
    from :func:`context_view`, its state and behaviour kept; once, by what binds neomodel
    to a driver of its own."""
    manager = database._connection
    if type(manager) in view.__bases__:
        manager.__class__ = view
