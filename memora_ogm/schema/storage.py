"""Input models of the graph layer's write methods (what an agent extracted from a conversation).

Same names and fields as Memora's storage schema, so Memora's agent can hand its objects
to memora-ogm unchanged. They hold the checks of a write's input: built from dicts or JSON
they check types as Memora did; :meth:`MemoriesAndInteraction.checked` (what a save or an
update calls) also checks lengths, encodability, memory ids and positions, on exact types.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from datetime import datetime, timezone
from functools import partial
from typing import Annotated, Any

from pydantic import (
    BaseModel,
    BeforeValidator,
    Field,
    ValidationError,
    ValidationInfo,
    model_validator,
)

from memora_ogm.schema.models import Position, UTCDateTime
from memora_ogm.schema.validation import (
    MAX_NAME_LENGTH,
    MAX_TEXT_LENGTH,
    check_encodable,
    check_memory_id,
    check_text,
)

#: The validation context of a write: values from caller objects, which must have exact types.
_WRITE = {"write": True}


def _on_write(check: Callable[..., Any], *arguments: Any) -> BeforeValidator:
    """A validator that runs ``check(*arguments, value)`` on a value given to a write."""

    def validate(value: Any, info: ValidationInfo) -> Any:
        return check(*arguments, value) if info.context is _WRITE else value

    return BeforeValidator(validate)


def _fields(names: tuple[str, ...], value: Any, refusal: str) -> dict[str, Any]:
    """``value``'s attributes ``names`` (so Memora's own objects pass), copied;
    ``ValueError(refusal)`` for a dict or an object without them all."""
    try:
        if not isinstance(value, Mapping):
            return {name: getattr(value, name) for name in names}
    except AttributeError:
        pass
    raise ValueError(refusal)


def _sequence(value: Any) -> bool:
    return isinstance(value, list | tuple)


def _positions(value: Any) -> list[int]:
    if not _sequence(value):
        raise ValueError("`source_msg_block_pos` must be a list of message positions.")
    for position in value:
        if isinstance(position, bool) or not isinstance(position, int):
            raise ValueError(f"message position {position!r} must be an integer.")
    return list(value)


def _messages(value: Any) -> list[dict[str, str]]:
    if not _sequence(value):
        raise ValueError("`interaction` must be a list of messages.")
    for index, message in enumerate(value):
        if not isinstance(message, Mapping):
            raise ValueError(f"message {index} must be a dict with `role` and `content`.")
        for key, limit in (("role", MAX_NAME_LENGTH), ("content", MAX_TEXT_LENGTH)):
            text = message.get(key)
            if not isinstance(text, str):
                raise ValueError(f"message {index} must have a string `{key}`.")
            if len(text) > limit:
                raise ValueError(f"`{key}` of message {index} is longer than {limit} characters.")
            check_encodable(f"{key} of message {index}", text)
    return [{"role": message["role"], "content": message["content"]} for message in value]


def _datetime(value: Any) -> datetime:
    if not isinstance(value, datetime):
        raise ValueError("`interaction_date` must be a datetime.")
    return value


def _memories(name: str, model: type[BaseModel], value: Any) -> list[dict[str, Any]]:
    refusal = f"`{name}` must be a list of {model.__name__} objects."
    if not _sequence(value):
        raise ValueError(refusal)
    names = tuple(model.model_fields)
    return [_fields(names, memory, refusal) for memory in value]


class MemoryToStore(BaseModel):
    """A new memory and the positions of the messages it was extracted from."""

    memory: Annotated[str, _on_write(check_text, "memory")] = Field(
        description="The memory text, with user_/agent_ placeholders."
    )
    source_msg_block_pos: Annotated[list[Position], _on_write(_positions)] = Field(
        description="0-based positions of the message blocks that resulted in this memory."
    )


class ContraryMemoryToStore(MemoryToStore):
    """A new memory that contradicts, and so supersedes, an existing memory of the user."""

    existing_contrary_memory_id: Annotated[
        str, _on_write(check_memory_id, "existing_contrary_memory_id")
    ] = Field(description="The memory_id of the existing memory that was contradicted.")


class MemoriesAndInteraction(BaseModel):
    """An interaction's messages, its date, and the memories extracted from it.

    ``interaction_date`` defaults to the moment the object is created (Memora evaluated
    ``datetime.now()`` once at import time, so every object shared one stale date), and a
    naive date is taken as UTC, which is how the graph stores it.
    """

    interaction: Annotated[list[dict[str, str]], _on_write(_messages)] = Field(
        default_factory=list,
        description="The messages, e.g. [{'role': 'user', 'content': 'hello'}, ...].",
    )
    interaction_date: Annotated[UTCDateTime, _on_write(_datetime)] = Field(
        default_factory=partial(datetime.now, timezone.utc),
        description="When the interaction occurred.",
    )
    memories: Annotated[list[MemoryToStore], _on_write(_memories, "memories", MemoryToStore)] = (
        Field(default_factory=list, description="New memories with their source message positions.")
    )
    contrary_memories: Annotated[
        list[ContraryMemoryToStore],
        _on_write(_memories, "contrary_memories", ContraryMemoryToStore),
    ] = Field(
        default_factory=list,
        description="New memories that contradict existing ones, with the ids they supersede.",
    )

    @model_validator(mode="after")
    def _cited_messages(self, info: ValidationInfo) -> MemoriesAndInteraction:
        """Each memory cites messages of this interaction, each one once."""
        if info.context is not _WRITE:
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
        refusal = (
            "expected a MemoriesAndInteraction (an object with `interaction`, "
            "`interaction_date`, `memories` and `contrary_memories`)."
        )
        fields = _fields(tuple(cls.model_fields), value, refusal)
        try:
            return cls.model_validate(fields, context=_WRITE)
        except ValidationError as error:
            cause = error.errors(include_url=False)[0].get("ctx", {}).get("error")
            raise cause if isinstance(cause, ValueError) else error from None
