"""Readable text for the return models and node objects, for a person at a shell.

It formats only what it is given (no queries). The models and nodes call it from
``_repr_pretty_``, so IPython shows them so while ``repr``, ``str`` and equality stay
pydantic's and neomodel's.
"""

from __future__ import annotations

from datetime import date, datetime
from typing import Any

from memora_ogm.schema import models


def when(value: datetime | date | None) -> str:
    """A timestamp to the minute with its zone, or a day."""
    if isinstance(value, datetime):
        return value.strftime("%Y-%m-%d %H:%M %Z").strip()
    return "-" if value is None else value.isoformat()


def _block(text: str, indent: str) -> str:
    """Continuation lines of a multi-line message line up under its first line."""
    return text.replace("\n", "\n" + indent)


def message_line(message: models.MessageBlock, indent: str = "") -> str:
    head = f"{indent}{message.msg_position}. {message.role}: "
    return head + _block(message.content or "", " " * len(head))


def memory_lines(memory: models.Memory, indent: str = "", origin: bool = True) -> list[str]:
    """Text, date, id and source messages; ``origin=False`` under its own interaction."""
    lines = [
        f"{indent}- {_block(memory.memory, indent + '  ')}",
        f"{indent}  obtained {when(memory.obtained_at)}, memory_id {memory.memory_id}",
    ]
    sources = memory.message_sources or []
    if memory.interaction_id is not None and (origin or not sources):
        where = f"interaction {memory.interaction_id}" if origin else "its interaction"
        if not sources:
            where += " (no source message left)"
        lines.append(f"{indent}  from {where}")
    lines.extend(message_line(source, indent + "    ") for source in sources)
    return lines


def interaction_lines(interaction: models.Interaction, indent: str = "") -> list[str]:
    lines = [
        f"{indent}Interaction {interaction.interaction_id} with agent {interaction.agent_id}",
        f"{indent}  created {when(interaction.created_at)}, updated {when(interaction.updated_at)}",
    ]
    if interaction.messages is not None:
        lines.append(f"{indent}  messages ({len(interaction.messages)}):")
        lines.extend(message_line(m, indent + "    ") for m in interaction.messages)
    if interaction.memories is not None:
        lines.append(f"{indent}  memories ({len(interaction.memories)}):")
        for memory in interaction.memories:
            lines.extend(memory_lines(memory, indent + "    ", origin=False))
    return lines


def node_line(node: Any) -> str:
    """A node as its label and properties, ``Interaction(org_id=..., ...)``; no query."""
    shown = []
    for name in type(node).defined_properties(aliases=False, rels=False):
        value = getattr(node, name, None)
        if value is not None:
            shown.append(f"{name}={when(value) if isinstance(value, date) else value!r}")
    return f"{type(node).__name__}({', '.join(shown)})"


def _one(value: object) -> list[str] | None:
    if isinstance(value, models.Interaction):
        return interaction_lines(value)
    if isinstance(value, models.Memory):
        return ["Memory", *memory_lines(value, "  ")]
    if isinstance(value, models.MessageBlock):
        return [message_line(value)]
    if isinstance(value, models.Organization):
        return [
            f"Organisation {value.org_name!r}: org_id {value.org_id}, "
            f"created {when(value.created_at)}"
        ]
    if isinstance(value, models.User):
        return [
            f"User {value.user_name!r}: user_id {value.user_id} of org {value.org_id}, "
            f"created {when(value.created_at)}"
        ]
    if isinstance(value, models.Agent):
        owner = f", for user {value.user_id}" if value.user_id else ""
        return [
            f"Agent {value.agent_label!r}: agent_id {value.agent_id} of org {value.org_id}"
            f"{owner}, created {when(value.created_at)}"
        ]
    if hasattr(type(value), "defined_properties") and hasattr(value, "element_id"):
        return [node_line(value)]
    return None


def format_value(value: object) -> str | None:
    """Readable lines for one of ours or a non-empty list/tuple of ours; else ``None``."""
    if isinstance(value, (list, tuple)) and value:
        parts = [_one(item) for item in value]
        if any(part is None for part in parts):
            return None
        counted = f"{len(value)} item{'s' if len(value) != 1 else ''}"
        body = [line for part in parts if part is not None for line in part]
        return "\n".join([f"[{counted}]", *body])
    lines = _one(value)
    return None if lines is None else "\n".join(lines)
