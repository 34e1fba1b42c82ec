"""Return models of the graph layer.

Field names, types and defaults follow Memora's ``memora.schema.models`` so that code
written against Memora keeps working with memora-ogm unchanged.
"""

from __future__ import annotations

from datetime import datetime, timezone
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


class _Readable(BaseModel):
    """IPython (and Jupyter) show a result as readable lines (``memora_ogm.pretty``).

    Only ``_repr_pretty_`` is added: ``repr``, ``str``, equality and the fields stay pydantic's.
    """

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:
        from memora_ogm.pretty import format_value

        printer.text(format_value(self) or repr(self))


class Organization(_Readable):
    """An organisation: the top-level tenant that owns users, agents and memories."""

    org_id: str = Field(description="Short UUID string identifying the organization.")
    org_name: str = Field(description="Name of the organization.")
    created_at: UTCDateTime = Field(description="When the organization was created.")


class Agent(_Readable):
    """An agent of an organisation; ``user_id`` is set only for user-specific agents."""

    org_id: str = Field(description="Short UUID string identifying the organization.")
    agent_id: str = Field(description="Short UUID string identifying the agent.")
    user_id: str | None = Field(
        default=None, description="Short UUID string of the user, for user-specific agents."
    )
    agent_label: str = Field(description="Label/name of the agent.")
    created_at: UTCDateTime = Field(description="When the agent was created.")


class User(_Readable):
    """A user of an organisation."""

    org_id: str = Field(description="Short UUID string identifying the organization.")
    user_id: str = Field(description="Short UUID string identifying the user.")
    user_name: str = Field(description="Name of the user.")
    created_at: UTCDateTime = Field(description="When the user was created.")


class MessageBlock(_Readable):
    """One message of an interaction, at its 0-based position in the chain."""

    role: str | None = Field(default=None, description="e.g. user, assistant, tool.")
    content: str | None = Field(default=None, description="The text of the message.")
    msg_position: Position = Field(description="0-based position of the message in its chain.")


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
