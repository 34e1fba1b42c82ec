"""The one place that turns query rows (node properties as maps) into the return models.

No node object is built on the way: a row is read straight into its model.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

import neo4j.time

from memora_ogm.errors import NodeVanished
from memora_ogm.placeholders import resolve_placeholders
from memora_ogm.properties import as_aware, from_compact
from memora_ogm.schema import models


def native_datetime(value: Any) -> datetime:
    """A DATETIME from a query row (compact, see ``ZonedDateTimeProperty.compact``, or as
    the driver gives it, or already inflated), made aware.

    Every timestamp of the schema is set when its node is created, so a missing one
    means the node was deleted while it was being read (:class:`NodeVanished`).
    """
    if value is None:
        raise NodeVanished("a node was deleted while it was read")
    if isinstance(value, list):
        return from_compact(value)
    if isinstance(value, neo4j.time.DateTime):
        value = value.to_native()
    return as_aware(value)


def _field(row: Mapping[str, Any], name: str) -> Any:
    """A property of a row; a node deleted while it was read comes back as an empty map,
    and its missing timestamp then makes ``native_datetime`` raise NodeVanished."""
    return row.get(name)


MEMORY_IDS = ("org_id", "user_id", "agent_id", "interaction_id", "memory_id")
INTERACTION_IDS = ("org_id", "user_id", "agent_id", "interaction_id")


def _any_missing(row: Mapping[str, Any], names: tuple[str, ...]) -> bool:
    return any(row.get(name) is None for name in names)


def organization(row: Mapping[str, Any]) -> models.Organization:
    return models.Organization(
        org_id=_field(row, "org_id"),
        org_name=_field(row, "org_name"),
        created_at=native_datetime(_field(row, "created_at")),
    )


def agent(row: Mapping[str, Any]) -> models.Agent:
    return models.Agent(
        org_id=_field(row, "org_id"),
        agent_id=_field(row, "agent_id"),
        user_id=_field(row, "user_id"),
        agent_label=_field(row, "agent_label"),
        created_at=native_datetime(_field(row, "created_at")),
    )


def user(row: Mapping[str, Any]) -> models.User:
    return models.User(
        org_id=_field(row, "org_id"),
        user_id=_field(row, "user_id"),
        user_name=_field(row, "user_name"),
        created_at=native_datetime(_field(row, "created_at")),
    )


def _position(value: Any) -> int:
    if value is None:
        raise NodeVanished("a message was deleted while it was read")
    return int(value)


def message_block(row: Mapping[str, Any]) -> models.MessageBlock:
    return models.MessageBlock(
        role=_field(row, "role"),
        content=_field(row, "content"),
        msg_position=_position(row["msg_position"]),
    )


def memory_for_vector(row: Mapping[str, Any]) -> models.Memory:
    """A Memory's properties as the vector store keeps them: raw text, no sources."""
    return models.Memory(
        org_id=_field(row, "org_id"),
        agent_id=_field(row, "agent_id"),
        user_id=_field(row, "user_id"),
        interaction_id=_field(row, "interaction_id"),
        memory_id=_field(row, "memory_id"),
        memory=_field(row, "memory"),
        obtained_at=native_datetime(_field(row, "obtained_at")),
    )


def resolved_memory(row: Mapping[str, Any], resolve_here: bool) -> models.Memory:
    """A memory map of :mod:`memora_ogm.queries`; ``resolve_here`` when the server had no APOC.

    A memory without text or ids was deleted while it was read (:class:`NodeVanished`):
    a projection reads properties one by one, so a delete can land between them.
    """
    text = row["memory"]
    if text is None or _any_missing(row, MEMORY_IDS):
        raise NodeVanished("a memory was deleted while it was read")
    if resolve_here:
        text = resolve_placeholders(text, row["user_name"], row["agent_label"])
    return models.Memory(
        org_id=row["org_id"],
        agent_id=row["agent_id"],
        user_id=row["user_id"],
        interaction_id=row["interaction_id"],
        memory_id=row["memory_id"],
        memory=text,
        obtained_at=native_datetime(row["obtained_at"]),
        message_sources=[message_block(source) for source in row["message_sources"]],
    )


def interaction(
    fields: Mapping[str, Any], messages: list[models.MessageBlock], memories: list[models.Memory]
) -> models.Interaction:
    """An interaction's properties (a query row) with the messages
    and memories read for it (empty lists when they were not asked for, as Memora)."""
    if _any_missing(fields, INTERACTION_IDS):
        raise NodeVanished("an interaction was deleted while it was read")
    return models.Interaction(
        org_id=fields["org_id"],
        user_id=fields["user_id"],
        agent_id=fields["agent_id"],
        interaction_id=fields["interaction_id"],
        created_at=native_datetime(fields["created_at"]),
        updated_at=native_datetime(fields["updated_at"]),
        messages=messages,
        memories=memories,
    )
