"""The one place that turns nodes and query rows into the return models."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

import neo4j.time

from memora_ogm.properties import as_aware
from memora_ogm.schema import models


def native_datetime(value: Any) -> datetime:
    """A DATETIME from a query row (or an already inflated datetime), made aware."""
    if isinstance(value, neo4j.time.DateTime):
        value = value.to_native()
    return as_aware(value)


def organization(node: Any) -> models.Organization:
    return models.Organization(org_id=node.org_id, org_name=node.org_name, created_at=node.created_at)


def agent(node: Any) -> models.Agent:
    return models.Agent(
        org_id=node.org_id,
        agent_id=node.agent_id,
        user_id=node.user_id,
        agent_label=node.agent_label,
        created_at=node.created_at,
    )


def user(node: Any) -> models.User:
    return models.User(
        org_id=node.org_id, user_id=node.user_id, user_name=node.user_name, created_at=node.created_at
    )


def message_block(row: Mapping[str, Any]) -> models.MessageBlock:
    return models.MessageBlock(
        role=row.get("role"), content=row.get("content"), msg_position=row["msg_position"]
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
        obtained_at=node.obtained_at,
    )
