"""Input models of the graph layer's write methods (what an agent extracted from a conversation).

Same names and fields as Memora's storage schema, so Memora's agent can hand its objects
to memora-ogm unchanged. They hold every check of a write: built from dicts or JSON they
check types as Memora did; :meth:`MemoriesAndInteraction.checked` (what a save or an
update calls) also checks lengths, encodability, memory ids and positions, on exact types.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime, timezone
from functools import partial
from typing import Any

from pydantic import (
    BaseModel,
    Field,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_validator,
)

from memora_ogm.properties import storable
from memora_ogm.schema.models import Position, UTCDateTime
from memora_ogm.schema.validation import (
    MAX_NAME_LENGTH,
    MAX_TEXT_LENGTH,
    check_encodable,
    check_memory_id,
    check_text,
)

#: The validation context of a write: caller objects, whose values must have exact types.
_WRITE = {"write": True}


def _writing(info: ValidationInfo) -> bool:
    return info.context is _WRITE


def _fields(value: Any, model: type[BaseModel]) -> dict[str, Any] | None:
    """``value``'s attributes named as ``model``'s fields (so Memora's own objects pass),
    copied; None for a dict or an object without them all."""
    if isinstance(value, Mapping):
        return None
    try:
        return {name: getattr(value, name) for name in model.model_fields}
    except AttributeError:
        return None


def _sequence(value: Any) -> bool:
    return isinstance(value, list | tuple)


class MemoryToStore(BaseModel):
    """A new memory and the positions of the messages it was extracted from."""

    memory: str = Field(description="The memory text, with user_/agent_ placeholders.")
    source_msg_block_pos: list[Position] = Field(
        description="0-based positions of the message blocks that resulted in this memory."
    )

    @field_validator("memory", mode="before")
    @classmethod
    def _text(cls, value: Any, info: ValidationInfo) -> Any:
        return check_text("memory", value) if _writing(info) else value

    @field_validator("source_msg_block_pos", mode="before")
    @classmethod
    def _positions(cls, value: Any, info: ValidationInfo) -> Any:
        if not _writing(info):
            return value
        if not _sequence(value):
            raise ValueError("`source_msg_block_pos` must be a list of message positions.")
        for position in value:
            if isinstance(position, bool) or not isinstance(position, int):
                raise ValueError(f"message position {position!r} must be an integer.")
        return list(value)


class ContraryMemoryToStore(MemoryToStore):
    """A new memory that contradicts, and so supersedes, an existing memory of the user."""

    existing_contrary_memory_id: str = Field(
        description="The memory_id of the existing memory that was contradicted."
    )

    @field_validator("existing_contrary_memory_id", mode="before")
    @classmethod
    def _memory_id(cls, value: Any, info: ValidationInfo) -> Any:
        return check_memory_id("existing_contrary_memory_id", value) if _writing(info) else value


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

    @field_validator("interaction", mode="before")
    @classmethod
    def _messages(cls, value: Any, info: ValidationInfo) -> Any:
        if not _writing(info):
            return value
        if not _sequence(value):
            raise ValueError("`interaction` must be a list of messages.")
        messages = []
        for index, message in enumerate(value):
            if not isinstance(message, Mapping):
                raise ValueError(f"message {index} must be a dict with `role` and `content`.")
            for key, limit in (("role", MAX_NAME_LENGTH), ("content", MAX_TEXT_LENGTH)):
                text = message.get(key)
                if not isinstance(text, str):
                    raise ValueError(f"message {index} must have a string `{key}`.")
                if len(text) > limit:
                    raise ValueError(
                        f"`{key}` of message {index} is longer than {limit} characters."
                    )
                check_encodable(f"{key} of message {index}", text)
            messages.append({"role": message["role"], "content": message["content"]})
        return messages

    @field_validator("interaction_date", mode="before")
    @classmethod
    def _datetime(cls, value: Any, info: ValidationInfo) -> Any:
        if _writing(info) and not isinstance(value, datetime):
            raise ValueError("`interaction_date` must be a datetime.")
        return value

    @field_validator("interaction_date")
    @classmethod
    def _storable(cls, value: datetime, info: ValidationInfo) -> datetime:
        return storable(value) if _writing(info) else value

    @field_validator("memories", "contrary_memories", mode="before")
    @classmethod
    def _memory_objects(cls, value: Any, info: ValidationInfo) -> Any:
        if not _writing(info):
            return value
        name = info.field_name or ""
        kind = ContraryMemoryToStore if name == "contrary_memories" else MemoryToStore
        fields = [_fields(memory, kind) for memory in value] if _sequence(value) else [None]
        if None in fields:
            raise ValueError(f"`{name}` must be a list of {kind.__name__} objects.")
        return fields

    @model_validator(mode="after")
    def _cited_messages(self, info: ValidationInfo) -> MemoriesAndInteraction:
        """Each memory cites messages of this interaction, each one once."""
        if not _writing(info):
            return self
        count = len(self.interaction)
        for memory in (*self.memories, *self.contrary_memories):
            seen: set[int] = set()
            for position in memory.source_msg_block_pos:
                if not 0 <= position < count:
                    raise ValueError(
                        f"message position {position} is outside the {count} messages."
                    )
                if position in seen:
                    raise ValueError(f"message position {position} is given twice.")
                seen.add(position)
        return self

    @classmethod
    def checked(cls, value: Any) -> MemoriesAndInteraction:
        """``value`` (this model, Memora's or any object with its fields) checked for a write
        and copied, so a caller changing its object later cannot change the write;
        ``ValueError`` naming what is wrong otherwise."""
        fields = _fields(value, cls)
        if fields is None:
            raise ValueError(
                "expected a MemoriesAndInteraction (an object with `interaction`, "
                "`interaction_date`, `memories` and `contrary_memories`)."
            )
        try:
            return cls.model_validate(fields, context=_WRITE)
        except ValidationError as error:
            cause = error.errors(include_url=False)[0].get("ctx", {}).get("error")
            raise cause if isinstance(cause, ValueError) else error from None
