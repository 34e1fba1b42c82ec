"""Query rows into return models, inflated through the twin's node classes
straight into the model, with no node object built.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, TypeVar

from pydantic import BaseModel

from memora_ogm.engine.nodes import Nodes
from memora_ogm.engine.projection import projection, reading
from memora_ogm.placeholders import resolve_placeholders
from memora_ogm.schema import models

M = TypeVar("M", bound=BaseModel)


def read(node: type, model: type[M], row: Mapping[str, Any], **given: Any) -> M:
    """``row`` read through ``node``'s properties into ``model``, with ``given``."""
    return projection(node).model(model, row, **given)


def output(name: str, cls: type, model: type[M]) -> Callable[[Mapping[str, Any]], M]:
    """What reads the node a statement returns as ``name`` into ``model``."""
    return lambda row: read(reading(cls), model, row[name])


def outputs(name: str, cls: type, model: type[M]) -> Callable[[Mapping[str, Any]], list[M]]:
    """What reads the list of nodes a statement returns as ``name`` into ``model``."""

    def read_all(row: Mapping[str, Any]) -> list[M]:
        fields = projection(reading(cls))
        return [fields.model(model, node) for node in row[name]]

    return read_all


def organization(row: Mapping[str, Any], node: type) -> models.Organization:
    return read(node, models.Organization, row)


def memory_for_vector(nodes: Nodes, row: Mapping[str, Any]) -> models.Memory:
    """A Memory's stored properties as the vector store keeps them: raw text, no sources."""
    return read(nodes.Memory, models.Memory, row)


def resolved_memory(
    row: Mapping[str, Any], resolve_here: bool, memory: type, message: type
) -> models.Memory:
    """A memory map of :mod:`memora_ogm.engine.queries`, resolved here first without APOC; a null
    text is a memory deleted while read (``NodeVanished``)."""
    if resolve_here and row["memory"] is not None:
        text = resolve_placeholders(row["memory"], row["user_name"], row["agent_label"])
        row = {**row, "memory": text}
    sources = _blocks(row["message_sources"], message)
    return read(memory, models.Memory, row, message_sources=sources)


def interaction(
    fields: Mapping[str, Any],
    messages: list[Mapping[str, Any]],
    memories: list[models.Memory],
    node: type,
    message: type,
) -> models.Interaction:
    """An interaction row with its messages and memories (empty when not asked for)."""
    blocks = _blocks(messages, message)
    return read(node, models.Interaction, fields, messages=blocks, memories=memories)


def _blocks(rows: list[Mapping[str, Any]], message: type) -> list[models.MessageBlock]:
    fields = projection(message)
    return [fields.model(models.MessageBlock, row) for row in rows]
