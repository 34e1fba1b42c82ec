"""Tests of the pydantic models: Memora-compatible fields, defaults and validation."""

from __future__ import annotations

import time
from datetime import datetime, timedelta, timezone
from types import SimpleNamespace

import pytest
from pydantic import BaseModel, ValidationError

from memora_ogm.schema.models import Agent, Interaction, Memory, MessageBlock, Organization, User
from memora_ogm.schema.storage import (
    ContraryMemoryToStore,
    MemoriesAndInteraction,
    MemoryToStore,
)

OBTAINED = datetime(2024, 5, 17, 9, 30, 15, 123456, tzinfo=timezone.utc)


def make_memory(**overrides: object) -> Memory:
    fields: dict[str, object] = {
        "org_id": "org",
        "agent_id": "agent",
        "user_id": "user",
        "memory_id": "0b8f2f0e-6a43-4e8c-9d1e-7f5b7a0c1d2e",
        "memory": "user_abc likes green tea",
        "obtained_at": OBTAINED,
    }
    fields.update(overrides)
    return Memory.model_validate(fields)


def test_interaction_date_is_the_creation_time_of_each_object() -> None:
    before = datetime.now(timezone.utc)
    first = MemoriesAndInteraction()
    time.sleep(0.02)
    second = MemoriesAndInteraction()
    after = datetime.now(timezone.utc)

    assert first.interaction_date.tzinfo is not None
    assert before <= first.interaction_date < second.interaction_date <= after
    assert second.interaction_date - first.interaction_date >= timedelta(milliseconds=20)


def test_memories_and_interaction_defaults_are_empty_and_not_shared() -> None:
    first = MemoriesAndInteraction()
    second = MemoriesAndInteraction()
    first.interaction.append({"role": "user", "content": "hi"})
    first.memories.append(MemoryToStore(memory="m", source_msg_block_pos=[0]))

    assert second.interaction == []
    assert second.memories == []
    assert second.contrary_memories == []


def test_naive_datetimes_are_taken_as_utc_and_aware_ones_kept() -> None:
    naive = datetime(2024, 1, 2, 3, 4, 5)
    plus_two = datetime(2024, 1, 2, 3, 4, 5, tzinfo=timezone(timedelta(hours=2)))

    assert MemoriesAndInteraction(interaction_date=naive).interaction_date == naive.replace(
        tzinfo=timezone.utc
    )
    assert make_memory(obtained_at=plus_two).obtained_at.utcoffset() == timedelta(hours=2)
    org = Organization(org_id="o", org_name="Acme", created_at=naive)
    assert org.created_at.tzinfo is timezone.utc


def test_memory_dict_helpers_match_memora() -> None:
    memory = make_memory()

    assert memory.id_memory_and_timestamp_dict() == {
        "memory_id": memory.memory_id,
        "memory": "user_abc likes green tea",
        "obtained_at": "2024-05-17 09:30:15.123456+00:00",
    }
    assert memory.memory_and_timestamp_dict() == {
        "memory": "user_abc likes green tea",
        "obtained_at": str(OBTAINED),
    }


def test_optional_fields_default_to_none() -> None:
    memory = make_memory()
    assert memory.interaction_id is None
    assert memory.message_sources is None

    interaction = Interaction(
        org_id="o",
        user_id="u",
        agent_id="a",
        interaction_id="i",
        created_at=OBTAINED,
        updated_at=OBTAINED,
    )
    assert interaction.messages is None
    assert interaction.memories is None

    agent = Agent(org_id="o", agent_id="a", agent_label="helper", created_at=OBTAINED)
    assert agent.user_id is None
    assert MessageBlock(msg_position=0) == MessageBlock(role=None, content=None, msg_position=0)


def test_nested_lists_validate_into_models() -> None:
    interaction = Interaction.model_validate(
        {
            "org_id": "o",
            "user_id": "u",
            "agent_id": "a",
            "interaction_id": "i",
            "created_at": "2024-05-17T09:30:15+00:00",
            "updated_at": OBTAINED,
            "messages": [{"role": "user", "content": "hi", "msg_position": 0}],
            "memories": [make_memory(message_sources=[MessageBlock(msg_position=0)])],
        }
    )
    assert interaction.messages == [MessageBlock(role="user", content="hi", msg_position=0)]
    assert interaction.memories is not None
    assert interaction.memories[0].message_sources == [MessageBlock(msg_position=0)]
    assert interaction.created_at == OBTAINED.replace(microsecond=0)


def test_contrary_memory_extends_memory_to_store() -> None:
    contrary = ContraryMemoryToStore(
        memory="user_abc now prefers coffee",
        source_msg_block_pos=[1, 2],
        existing_contrary_memory_id="m-1",
    )
    assert isinstance(contrary, MemoryToStore)
    holder = MemoriesAndInteraction(contrary_memories=[contrary])
    assert holder.contrary_memories[0].existing_contrary_memory_id == "m-1"


@pytest.mark.parametrize(
    ("model", "fields"),
    [
        (MemoryToStore, {"memory": 42, "source_msg_block_pos": [0]}),
        (MemoryToStore, {"memory": "m", "source_msg_block_pos": 0}),
        (MemoryToStore, {"memory": "m", "source_msg_block_pos": ["first"]}),
        (MemoryToStore, {"memory": "m", "source_msg_block_pos": [True]}),
        (MemoryToStore, {"memory": "m"}),
        (ContraryMemoryToStore, {"memory": "m", "source_msg_block_pos": [0]}),
        (MemoriesAndInteraction, {"interaction": [{"role": "user", "content": 3}]}),
        (MemoriesAndInteraction, {"interaction": "hello"}),
        (MemoriesAndInteraction, {"interaction_date": "yesterday"}),
        (MemoriesAndInteraction, {"memories": [{"memory": "m"}]}),
        (MessageBlock, {"msg_position": True}),
        (MessageBlock, {"msg_position": 1.5}),
        (MessageBlock, {"role": 1, "msg_position": 0}),
        (Organization, {"org_id": "o", "org_name": None, "created_at": OBTAINED}),
        (User, {"org_id": "o", "user_id": "u", "user_name": "n", "created_at": "not a date"}),
        (Agent, {"org_id": "o", "agent_id": 7, "agent_label": "l", "created_at": OBTAINED}),
    ],
)
def test_wrong_types_are_rejected(model: type[BaseModel], fields: dict[str, object]) -> None:
    with pytest.raises(ValidationError):
        model.model_validate(fields)


def test_memory_requires_its_ids_and_text() -> None:
    with pytest.raises(ValidationError):
        Memory.model_validate({"org_id": "o", "memory": "m", "obtained_at": OBTAINED})
    with pytest.raises(ValidationError):
        make_memory(memory_id=None)


def test_a_write_checks_a_copy_of_any_object_with_the_fields() -> None:
    """Memora's own objects are of other classes with the same field names."""
    messages = [{"role": "user", "content": "I moved to Rome"}, {"role": "ai", "content": "ok"}]
    memory = SimpleNamespace(memory="user_x lives in Rome", source_msg_block_pos=(1, 0))
    given = SimpleNamespace(
        interaction=messages,
        interaction_date=datetime(2024, 5, 1, 12),
        memories=[memory],
        contrary_memories=[],
    )
    checked = MemoriesAndInteraction.checked(given)
    messages[0]["content"] = "changed later"
    messages.append({"role": "user", "content": "and more"})
    memory.source_msg_block_pos = (5,)

    assert checked.interaction == [
        {"role": "user", "content": "I moved to Rome"},
        {"role": "ai", "content": "ok"},
    ]
    assert checked.interaction_date == datetime(2024, 5, 1, 12, tzinfo=timezone.utc)
    assert checked.memories == [
        MemoryToStore(memory="user_x lives in Rome", source_msg_block_pos=[1, 0])
    ]
    assert MemoriesAndInteraction.checked(checked) == checked  # a checked one checks again


def test_the_models_refuse_for_a_write_what_they_accept_from_dicts() -> None:
    """Built from dicts or JSON they convert as Memora did; a write wants exact values."""
    lenient = MemoriesAndInteraction.model_validate(
        {
            "interaction": [{"role": "user", "content": "hi"}],
            "interaction_date": "2024-05-01T12:00:00+00:00",
            "memories": [{"memory": " ", "source_msg_block_pos": ["0", 3]}],
        }
    )
    assert lenient.memories[0].source_msg_block_pos == [0, 3]
    for fields, refusal in (
        ({"interaction_date": "2024-05-01"}, "`interaction_date` must be a datetime."),
        ({"memories": [{"memory": "m", "source_msg_block_pos": [0]}]}, "`memories` must be a"),
        ({}, "`memory` must be a string and have a value."),
    ):
        given = MemoriesAndInteraction.model_construct(**{**dict(lenient), **fields})
        with pytest.raises(ValueError) as raised:
            MemoriesAndInteraction.checked(given)
        assert type(raised.value) is ValueError
        assert str(raised.value).startswith(refusal)
    positions = MemoryToStore(memory="m", source_msg_block_pos=[0, 3])
    with pytest.raises(ValueError, match=r"^message position 3 is outside the 1 messages\.$"):
        MemoriesAndInteraction.checked(lenient.model_copy(update={"memories": [positions]}))
