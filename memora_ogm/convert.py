"""The one place that turns query rows (node properties as maps) into the return models.

No node object is built on the way: a row is inflated through the properties of the node
class it was read with (:mod:`memora_ogm.projection`, compiled once per class) straight
into its model. The callers pass that class (``reading(Org)``, looked up once per call)
so each twin reads through its own classes.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from pydantic import BaseModel

from memora_ogm._async.nodes import Memory
from memora_ogm.placeholders import resolve_placeholders
from memora_ogm.projection import projection
from memora_ogm.schema import models

M = TypeVar("M", bound=BaseModel)


def _read(node: type, model: type[M], row: Mapping[str, Any], **given: Any) -> M:
    """``row`` read through ``node``'s properties into ``model``, with ``given``."""
    return projection(node).model(model, row, **given)


def organization(row: Mapping[str, Any], node: type) -> models.Organization:
    return _read(node, models.Organization, row)


def agent(row: Mapping[str, Any], node: type) -> models.Agent:
    return _read(node, models.Agent, row)


def user(row: Mapping[str, Any], node: type) -> models.User:
    return _read(node, models.User, row)


def message_block(row: Mapping[str, Any], node: type) -> models.MessageBlock:
    return _read(node, models.MessageBlock, row)


def memory_for_vector(row: Mapping[str, Any]) -> models.Memory:
    """A Memory's stored properties as the vector store keeps them: raw text, no sources
    (Memora's fields, which the package's class holds in both twins)."""
    return _read(Memory, models.Memory, row)


def resolved_memory(
    row: Mapping[str, Any], resolve_here: bool, memory: type, message: type
) -> models.Memory:
    """A memory map of :mod:`memora_ogm.queries` (read with the classes ``memory`` and
    ``message``); ``resolve_here`` when the server had no APOC: the text is resolved
    first, so its property inflates the same text either way. A memory whose text
    resolved to null was deleted while it was read (``NodeVanished``, from its class)."""
    if resolve_here and row["memory"] is not None:
        text = resolve_placeholders(row["memory"], row["user_name"], row["agent_label"])
        row = {**row, "memory": text}
    sources = [message_block(source, message) for source in row["message_sources"]]
    return _read(memory, models.Memory, row, message_sources=sources)


def interaction(
    fields: Mapping[str, Any],
    messages: list[models.MessageBlock],
    memories: list[models.Memory],
    node: type,
) -> models.Interaction:
    """An interaction's properties (a query row) with the messages and memories read for
    it (empty lists when they were not asked for, as Memora)."""
    return _read(node, models.Interaction, fields, messages=messages, memories=memories)
