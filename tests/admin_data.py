"""A user with many interactions and memories, made in seconds by importing records of
the package's export format (``memora_ogm.transfer``) instead of saving them one by one.
Used by the admin's browser test and ``benchmarks/bench_admin.py``."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from typing import Any

from memora_ogm.transfer.format import FORMAT_NAME

#: Every this many memories, one supersedes the memory before it (a CONTRARY_UPDATE).
SUPERSEDES_EVERY = 10


@dataclass(frozen=True)
class Made:
    org_id: str
    user_id: str
    agent_id: str


def _id() -> str:
    return uuid.uuid4().hex[:22]


def records(
    made: Made, org_name: str, user_name: str, interactions: int, memories: int
) -> Iterator[dict[str, Any]]:
    """The records of an organisation with one user, one agent, ``interactions`` of two
    messages each, a day apart, and ``memories`` spread over them (some superseding)."""
    start = datetime(2025, 1, 1, 9, tzinfo=timezone.utc)
    stamp = start.isoformat()
    owned = {"org_id": made.org_id, "user_id": made.user_id}
    yield {
        "type": "header",
        "format": FORMAT_NAME,
        "version": 1,
        "exported_at": stamp,
        "source": {"software": "tests/admin_data.py", "database": "neo4j"},
        "scope": {"kind": "user", **owned},
    }
    yield {"type": "organization", "org_id": made.org_id, "org_name": org_name, "created_at": stamp}
    yield {"type": "user", **owned, "user_name": user_name, "created_at": stamp}
    yield {
        "type": "agent",
        "org_id": made.org_id,
        "agent_id": made.agent_id,
        "agent_label": "assistant",
        "user_id": None,
        "created_at": stamp,
    }
    ids = [_id() for _ in range(interactions)]
    for number, interaction_id in enumerate(ids):
        when = start + timedelta(days=number)
        yield {
            "type": "interaction",
            **owned,
            "interaction_id": interaction_id,
            "agent_id": made.agent_id,
            "created_at": when.isoformat(),
            "updated_at": when.isoformat(),
            "dates": [when.date().isoformat()],
            "messages": [
                {"role": "user", "content": f"Message {number} from {user_name}"},
                {"role": "assistant", "content": "Noted."},
            ],
        }
    memory_ids = [str(uuid.uuid4()) for _ in range(memories)]
    for number, memory_id in enumerate(memory_ids):
        at = number * interactions // memories
        when = start + timedelta(days=at, seconds=number)
        yield {
            "type": "memory",
            **owned,
            "memory_id": memory_id,
            "interaction_id": ids[at],
            "agent_id": made.agent_id,
            "memory": f"{user_name} remembers fact {number}",
            "obtained_at": when.isoformat(),
            "date_obtained": when.date().isoformat(),
            "source_positions": [0],
        }
    superseded = range(SUPERSEDES_EVERY - 1, memories, SUPERSEDES_EVERY)
    for number in superseded:
        yield {
            "type": "contrary_update",
            **owned,
            "memory_id": memory_ids[number - 1],
            "updated_by": memory_ids[number],
        }
    counts = {
        "organization": 1,
        "user": 1,
        "agent": 1,
        "interaction": interactions,
        "memory": memories,
        "contrary_update": len(superseded),
    }
    yield {"type": "end", "counts": counts}


def a_user_with(
    memora: Any, interactions: int, memories: int, org_name: str = "Acme", user_name: str = "Ann"
) -> Made:
    """An organisation with a user of ``interactions`` and ``memories``, imported through
    the sync facade (the vector store too, when it has one)."""
    made = Made(_id(), _id(), _id())
    memora.import_records(records(made, org_name, user_name, interactions, memories))
    return made
