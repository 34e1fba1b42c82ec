"""Return models of the graph layer.

Field names, types and defaults follow Memora's ``memora.schema.models`` so that code
written against Memora keeps working with memora-ogm unchanged.
"""

from __future__ import annotations

from datetime import date, datetime, timezone
from typing import Annotated, Any

from pydantic import AfterValidator, BaseModel, BeforeValidator, Field


def _assume_utc(value: datetime) -> datetime:
    """Attach UTC to a naive datetime, as the graph does when it stores one."""
    return value if value.tzinfo is not None else value.replace(tzinfo=timezone.utc)


def _reject_bool(value: object) -> object:
    """Refuse booleans, which pydantic's lax mode would otherwise accept as 0 and 1."""
    if isinstance(value, bool):
        raise ValueError("a message position must be an integer, not a boolean")
    return value


UTCDateTime = Annotated[datetime, AfterValidator(_assume_utc)]
"""A datetime that is always timezone-aware: naive input is taken as UTC (SPEC section 3)."""

Position = Annotated[int, BeforeValidator(_reject_bool)]
"""A 0-based message position: an int (or a numeric string, as Memora allowed), never a bool."""


def when(value: datetime | date | None) -> str:
    """A timestamp to the minute with its zone, or a day, for a person to read."""
    if isinstance(value, datetime):
        return value.strftime("%Y-%m-%d %H:%M %Z").strip()
    return "-" if value is None else value.isoformat()


def _block(text: str, indent: str) -> str:
    """Continuation lines of a multi-line text line up under its first line."""
    return text.replace("\n", "\n" + indent)


def node_line(node: Any) -> str:
    """A neomodel node as its label and properties, ``Interaction(org_id=..., ...)``; no query."""
    shown = []
    for name in type(node).defined_properties(aliases=False, rels=False):
        value = getattr(node, name, None)
        if value is not None:
            shown.append(f"{name}={when(value) if isinstance(value, date) else value!r}")
    return f"{type(node).__name__}({', '.join(shown)})"


class _Readable(BaseModel):
    """IPython (and Jupyter) show a result as its :meth:`lines`.

    Only ``_repr_pretty_`` is added: ``repr``, ``str``, equality and the fields stay pydantic's.
    """

    def lines(self, indent: str = "") -> list[str]:
        """This result as lines for a person at a shell (no query)."""
        raise NotImplementedError

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:
        printer.text("\n".join(self.lines()))


class Organization(_Readable):
    """An organisation: the top-level tenant that owns users, agents and memories."""

    org_id: str = Field(description="Short UUID string identifying the organization.")
    org_name: str = Field(description="Name of the organization.")
    created_at: UTCDateTime = Field(description="When the organization was created.")

    def lines(self, indent: str = "") -> list[str]:
        return [
            f"{indent}Organisation {self.org_name!r}: org_id {self.org_id}, "
            f"created {when(self.created_at)}"
        ]


class Agent(_Readable):
    """An agent of an organisation; ``user_id`` is set only for user-specific agents."""

    org_id: str = Field(description="Short UUID string identifying the organization.")
    agent_id: str = Field(description="Short UUID string identifying the agent.")
    user_id: str | None = Field(
        default=None, description="Short UUID string of the user, for user-specific agents."
    )
    agent_label: str = Field(description="Label/name of the agent.")
    created_at: UTCDateTime = Field(description="When the agent was created.")

    def lines(self, indent: str = "") -> list[str]:
        owner = f", for user {self.user_id}" if self.user_id else ""
        return [
            f"{indent}Agent {self.agent_label!r}: agent_id {self.agent_id} of org {self.org_id}"
            f"{owner}, created {when(self.created_at)}"
        ]


class User(_Readable):
    """A user of an organisation."""

    org_id: str = Field(description="Short UUID string identifying the organization.")
    user_id: str = Field(description="Short UUID string identifying the user.")
    user_name: str = Field(description="Name of the user.")
    created_at: UTCDateTime = Field(description="When the user was created.")

    def lines(self, indent: str = "") -> list[str]:
        return [
            f"{indent}User {self.user_name!r}: user_id {self.user_id} of org {self.org_id}, "
            f"created {when(self.created_at)}"
        ]


class MessageBlock(_Readable):
    """One message of an interaction, at its 0-based position in the chain."""

    role: str | None = Field(default=None, description="e.g. user, assistant, tool.")
    content: str | None = Field(default=None, description="The text of the message.")
    msg_position: Position = Field(description="0-based position of the message in its chain.")

    def line(self, indent: str = "") -> str:
        head = f"{indent}{self.msg_position}. {self.role}: "
        return head + _block(self.content or "", " " * len(head))

    def lines(self, indent: str = "") -> list[str]:
        return [self.line(indent)]


class Memory(_Readable):
    """A memory extracted from an interaction.

    ``interaction_id`` and ``message_sources`` are optional because a memory returned by
    a vector search carries neither, and a memory whose source messages were truncated
    away by an update has no message sources.
    """

    org_id: str = Field(description="Short UUID string identifying the organization.")
    agent_id: str = Field(description="Short UUID string identifying the agent.")
    user_id: str = Field(description="Short UUID string identifying the user.")
    interaction_id: str | None = Field(
        default=None, description="Short UUID string of the interaction it was sourced from."
    )
    memory_id: str = Field(description="Full UUID string identifying the memory.")
    memory: str = Field(description="The memory text (placeholders resolved on reads).")
    obtained_at: UTCDateTime = Field(description="When the memory was obtained.")
    message_sources: list[MessageBlock] | None = Field(
        default=None, description="The messages of the interaction that triggered the memory."
    )

    def entry_lines(self, indent: str = "", origin: bool = True) -> list[str]:
        """Text, date, id and source messages; ``origin=False`` under its own interaction."""
        lines = [
            f"{indent}- {_block(self.memory, indent + '  ')}",
            f"{indent}  obtained {when(self.obtained_at)}, memory_id {self.memory_id}",
        ]
        sources = self.message_sources or []
        if self.interaction_id is not None and (origin or not sources):
            where = f"interaction {self.interaction_id}" if origin else "its interaction"
            if not sources:
                where += " (no source message left)"
            lines.append(f"{indent}  from {where}")
        lines.extend(source.line(indent + "    ") for source in sources)
        return lines

    def lines(self, indent: str = "") -> list[str]:
        return [f"{indent}Memory", *self.entry_lines(indent + "  ")]

    def id_memory_and_timestamp_dict(self) -> dict[str, str]:
        """Compact form with the id, used by Memora's agent when prompting an LLM."""
        return {
            "memory_id": self.memory_id,
            "memory": self.memory,
            "obtained_at": str(self.obtained_at),
        }

    def memory_and_timestamp_dict(self) -> dict[str, str]:
        """Compact form without the id, used by Memora's agent when prompting an LLM."""
        return {"memory": self.memory, "obtained_at": str(self.obtained_at)}


class Interaction(_Readable):
    """An interaction (a conversation thread) with its messages and memories when requested."""

    org_id: str = Field(description="Short UUID string identifying the organization.")
    user_id: str = Field(description="Short UUID string identifying the user.")
    agent_id: str = Field(description="Short UUID string identifying the agent.")
    interaction_id: str = Field(description="Short UUID string identifying the interaction.")
    created_at: UTCDateTime = Field(description="When the interaction was created.")
    updated_at: UTCDateTime = Field(description="When the interaction was last updated.")
    messages: list[MessageBlock] | None = Field(
        default=None, description="The messages of the interaction, ordered by position."
    )
    memories: list[Memory] | None = Field(
        default=None, description="The memories obtained across all occurrences of the interaction."
    )

    def lines(self, indent: str = "") -> list[str]:
        lines = [
            f"{indent}Interaction {self.interaction_id} with agent {self.agent_id}",
            f"{indent}  created {when(self.created_at)}, updated {when(self.updated_at)}",
        ]
        if self.messages is not None:
            lines.append(f"{indent}  messages ({len(self.messages)}):")
            lines.extend(message.line(indent + "    ") for message in self.messages)
        if self.memories is not None:
            lines.append(f"{indent}  memories ({len(self.memories)}):")
            for memory in self.memories:
                lines.extend(memory.entry_lines(indent + "    ", origin=False))
        return lines
