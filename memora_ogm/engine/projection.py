"""Per-class tables built once from ``defined_properties``: writes deflate through them,
reads project a node as a map and inflate it back, so a new property needs no other edit.
Reads go through the class neomodel inflates the label with (:func:`reading`): a
subclass's extra properties are read too; the return models keep Memora's fields only.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar, cast

from neomodel.properties import IntegerProperty, Property, StringProperty
from pydantic import BaseModel

from memora_ogm.engine.plan import Cypher, Var, compact, cy, identifier, mapping
from memora_ogm.errors import NodeVanished
from memora_ogm.properties import ZonedDateTimeProperty

N = TypeVar("N", bound=type)
M = TypeVar("M", bound=BaseModel)


def stored_as_is(prop: Property[Any]) -> type | None:
    """The type ``prop`` inflates and deflates unchanged, if any: such values skip
    neomodel's error-handling wrapper."""
    if type(prop) is StringProperty and prop.choices is None and prop.max_length is None:
        return str
    if type(prop) is IntegerProperty:
        return int
    return None


def _inflater(prop: Property[Any]) -> Callable[[Any], Any]:
    """``prop.inflate``, or exactly our DATETIME's compact-form reader (a subclass may differ)."""
    if type(prop) is ZonedDateTimeProperty:
        return prop.inflate_read
    return prop.inflate


@dataclass(frozen=True, slots=True)
class Field:
    name: str
    db_name: str
    #: Values of this type are kept as they are; others go through ``inflate``.
    as_is: type | None
    inflate: Callable[[Any], Any]
    #: Every node of the schema has it, so a row without it is a node deleted meanwhile.
    always: bool
    zoned: bool


def _schema_class(cls: type) -> type:
    """The least derived class of ``cls``'s MRO declaring the same label set."""
    labels = frozenset(cls.inherited_labels())  # type: ignore[attr-defined]
    for base in reversed(cls.__mro__):
        if "__label__" in vars(base) and frozenset(base.inherited_labels()) == labels:  # type: ignore[attr-defined]
            return base
    return cls


#: db name, name, as-is type, inflate, always.
_Step = tuple[str, str, type | None, Callable[[Any], Any], bool]


class ClassTable:
    """What writing and reading one class's nodes need, computed once."""

    def __init__(self, cls: type) -> None:
        self.cls = cls
        self.label: str = cls.__label__  # type: ignore[attr-defined]
        schema = _schema_class(cls)
        schema_names = set(schema.defined_properties(aliases=False, rels=False))  # type: ignore[attr-defined]
        properties: dict[str, Property[Any]] = cls.defined_properties(  # type: ignore[attr-defined]
            aliases=False, rels=False
        )
        self.fields = tuple(
            Field(
                name=name,
                db_name=prop.get_db_property_name(name),
                as_is=stored_as_is(prop),
                inflate=_inflater(prop),
                always=name in schema_names and (prop.required or prop.has_default),
                zoned=isinstance(prop, ZonedDateTimeProperty),
            )
            for name, prop in properties.items()
        )
        db_name = {field.name: field.db_name for field in self.fields}
        #: Attribute name -> (database name, the type stored as it is or None, deflate).
        self.deflate: dict[str, tuple[str, type | None, Callable[[Any], Any]]] = {
            field.name: (field.db_name, field.as_is, properties[field.name].deflate)
            for field in self.fields
        }
        #: (attribute name, database name, deflate, default factory) of each default.
        self.defaults = tuple(
            (name, db_name[name], prop.deflate, prop.default_value)
            for name, prop in properties.items()
            if prop.has_default
        )
        self.required = tuple(
            name for name, prop in properties.items() if prop.required and not prop.has_default
        )
        #: Database names of the DATETIME properties (sent through ``$times``).
        self.times = tuple(field.db_name for field in self.fields if field.zoned)
        self._plans: dict[type[BaseModel] | None, tuple[_Step, ...]] = {}
        self._maps: dict[str, Cypher] = {}

    def map(self, variable: str | Var, **expressions: str | Cypher) -> Cypher:
        """A map projection of ``variable`` (DATETIMEs compact), ``expressions`` added."""
        plain = not expressions and type(variable) is str
        if plain and variable in self._maps:
            return self._maps[variable]
        entries: list[str | Cypher] = []
        for field in self.fields:
            key = identifier(field.db_name)
            if field.db_name in expressions:
                entries.append(cy(f"{key}: ", expressions.pop(field.db_name)))
            elif field.zoned:
                entries.append(cy(f"{key}: ", compact(cy(variable, f".{key}"))))
            else:
                entries.append(f".{key}")
        entries.extend(cy(f"{identifier(key)}: ", value) for key, value in expressions.items())
        projected = mapping(variable, entries)
        if plain:
            self._maps[variable] = projected  # type: ignore[index]
        return projected

    def values(self, row: Mapping[str, Any]) -> dict[str, Any]:
        """A row of stored properties, inflated."""
        return self._inflated(row, self._steps(None))

    def model(self, model: type[M], row: Mapping[str, Any], **given: Any) -> M:
        """``model`` of a row plus ``given``; fields it lacks are only checked for presence."""
        return model(**self._inflated(row, self._steps(model)), **given)

    def _steps(self, model: type[BaseModel] | None) -> tuple[_Step, ...]:
        steps = self._plans.get(model)
        if steps is None:
            steps = self._plans[model] = tuple(
                (field.db_name, field.name, field.as_is, field.inflate, field.always)
                for field in self.fields
                if model is None or field.always or field.name in model.model_fields
            )
        return steps

    def _inflated(self, row: Mapping[str, Any], steps: tuple[_Step, ...]) -> dict[str, Any]:
        """Raises :class:`NodeVanished` for a node deleted while read (properties missing)."""
        values: dict[str, Any] = {}
        for db_name, name, as_is, inflate, always in steps:
            value = row.get(db_name)
            if value is None:
                if always:
                    raise NodeVanished(
                        f"a {self.cls.__name__} was deleted while it was read (no {db_name})"
                    )
            elif type(value) is not as_is:
                value = inflate(value)
            values[name] = value
        return values


@functools.cache
def table(cls: type) -> ClassTable:
    return ClassTable(cls)


projection = table


def reading(cls: N) -> N:
    """The most derived subclass of ``cls`` with its label set, as neomodel inflates
    them; two unrelated ones are a ``TypeError``, as in neomodel."""
    pending: list[type] = cls.__subclasses__()
    if not pending:
        return cls
    labels = frozenset(cls.inherited_labels())  # type: ignore[attr-defined]
    chosen: type = cls
    while pending:
        sub = pending.pop()
        pending.extend(sub.__subclasses__())
        if "__label__" not in vars(sub) or frozenset(sub.inherited_labels()) != labels:  # type: ignore[attr-defined]
            continue
        if issubclass(sub, chosen):
            chosen = sub
        elif not issubclass(chosen, sub):
            raise TypeError(
                f"{chosen.__qualname__} and {sub.__qualname__} both declare the labels "
                f"{sorted(labels)}: the reads cannot tell which one to inflate them with"
            )
    return cast(N, chosen)
