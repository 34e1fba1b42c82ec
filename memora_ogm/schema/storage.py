"""Input models of the graph layer's write methods (what an agent extracted from a conversation).

Same names and fields as Memora's storage schema, so Memora's agent can hand its objects
to memora-ogm unchanged.
"""

from __future__ import annotations

from datetime import datetime, timezone
from functools import partial

from pydantic import BaseModel, Field

from memora_ogm.schema.models import Position, UTCDateTime


class MemoryToStore(BaseModel):
    """A new memory and the positions of the messages it was extracted from."""

    memory: str = Field(description="The memory text, with user_/agent_ placeholders.")
    source_msg_block_pos: list[Position] = Field(
        description="0-based positions of the message blocks that resulted in this memory."
    )


class ContraryMemoryToStore(MemoryToStore):
    """A new memory that contradicts, and so supersedes, an existing memory of the user."""

    existing_contrary_memory_id: str = Field(
        description="The memory_id of the existing memory that was contradicted."
    )


class MemoriesAndInteraction(BaseModel):
    """An interaction's messages, its date, and the memories extracted from it.

    ``interaction_date`` defaults to the moment the object is created (Memora evaluated
    ``datetime.now()`` once at import time, so every object shared one stale date), and a
    naive date is taken as UTC, which is how the graph stores it.
    """

    interaction: list[dict[str, str]] = Field(
        default_factory=list,
        description="The messages, e.g. [{'role': 'user', 'content': 'hello'}, ...].",
    )
    interaction_date: UTCDateTime = Field(
        default_factory=partial(datetime.now, timezone.utc),
        description="When the interaction occurred.",
    )
    memories: list[MemoryToStore] = Field(
        default_factory=list, description="New memories with their source message positions."
    )
    contrary_memories: list[ContraryMemoryToStore] = Field(
        default_factory=list,
        description="New memories that contradict existing ones, with the ids they supersede.",
    )
