"""The one place that turns nodes and query rows into the return models."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

import neo4j.time

from memora_ogm.errors import NodeVanished
from memora_ogm.placeholders import resolve_placeholders
from memora_ogm.properties import as_aware
from memora_ogm.schema import models


def native_datetime(value: Any) -> datetime:
    """A DATETIME from a query row (or an already inflated datetime), made aware.

    Every timestamp of the schema is set when its node is created, so a missing one
    means the node was deleted while it was being read (:class:`NodeVanished`).
    """
    if value is None:
        raise NodeVanished("a node was deleted while it was read")
    if isinstance(value, neo4j.time.DateTime):
        value = value.to_native()
    return as_aware(value)


def _present(fields: Mapping[str, Any], *names: str) -> Mapping[str, Any]:
    """``fields`` when the properties ``names``, set on every node of its label, are there.

    A transaction that deletes a node while a read loads it can leave the read with
    some of its properties and not others: a missing one means :class:`NodeVanished`.
    """
    if any(fields.get(name) is None for name in names):
        raise NodeVanished("a node was deleted while it was read")
    return fields


def organization(node: Any) -> models.Organization:
    return models.Organization(
        org_id=node.org_id, org_name=node.org_name, created_at=native_datetime(node.created_at)
    )


def agent(node: Any) -> models.Agent:
    return models.Agent(
        org_id=node.org_id,
        agent_id=node.agent_id,
        user_id=node.user_id,
        agent_label=node.agent_label,
        created_at=native_datetime(node.created_at),
    )


def user(node: Any) -> models.User:
    return models.User(
        org_id=node.org_id,
        user_id=node.user_id,
        user_name=node.user_name,
        created_at=native_datetime(node.created_at),
    )


def _position(value: Any) -> int:
    if value is None:
        raise NodeVanished("a message was deleted while it was read")
    return int(value)


def message_block(row: Mapping[str, Any]) -> models.MessageBlock:
    return models.MessageBlock(
        role=row.get("role"),
        content=row.get("content"),
        msg_position=_position(row["msg_position"]),
    )


def memory_for_vector(node: Any) -> models.Memory:
    """A Memory node as the vector store keeps it: raw text, no sources."""
    return models.Memory(
        org_id=node.org_id,
        agent_id=node.agent_id,
        user_id=node.user_id,
        interaction_id=node.interaction_id,
        memory_id=node.memory_id,
        memory=node.memory,
        obtained_at=native_datetime(node.obtained_at),
    )


def message(node: Any) -> models.MessageBlock:
    """A MessageBlock node."""
    return models.MessageBlock(
        role=node.role, content=node.content, msg_position=_position(node.msg_position)
    )


def resolved_memory(row: Mapping[str, Any], resolve_here: bool) -> models.Memory:
    """A memory map of :mod:`memora_ogm.queries`; ``resolve_here`` when the server had no APOC.

    A memory without its text or ids was deleted while it was read (:class:`NodeVanished`).
    """
    text = _present(row, "memory", "org_id", "agent_id", "user_id", "memory_id")["memory"]
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
    """An interaction's properties (a query map or ``node.__properties__``) with the messages
    and memories read for it (empty lists when they were not asked for, as Memora)."""
    _present(fields, "org_id", "user_id", "agent_id", "interaction_id")
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
