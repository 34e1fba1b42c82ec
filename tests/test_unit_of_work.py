"""The unit of work's statement building, without a server: what travels as parameters.

Its statements run against a real Neo4j in every facade test; these check the two
things those tests cannot see: each distinct datetime is sent once, and datetimes that
are the same instant in different zones are not merged (``tests/test_temporal.py``
checks on a server that the form they are sent in makes the DATETIME the driver would).
"""

from __future__ import annotations

from datetime import datetime, timezone
from zoneinfo import ZoneInfo

import pytest

from memora_ogm._async.nodes import Interaction, Memory, MessageBlock
from memora_ogm.unit_of_work import UnitOfWork

NOON = datetime(2024, 5, 1, 12, 0, tzinfo=timezone.utc)
NOON_SECONDS = int(NOON.timestamp())


def test_each_distinct_datetime_travels_once() -> None:
    work = UnitOfWork()
    interaction, _ = work.create(
        Interaction, org_id="o", user_id="u", agent_id="a", created_at=NOON, updated_at=NOON
    )
    memory = {"org_id": "o", "user_id": "u", "agent_id": "a", "interaction_id": "i"}
    work.create_each(Memory, [{**memory, "memory": f"m{n}", "obtained_at": NOON} for n in range(4)])
    query, params = work.compile()

    assert params["times"] == [[NOON_SECONDS, 0, "+00:00"]]
    assert "$times[0]" in query
    assert all("obtained_at" not in row["p"] for row in params["p1"])


def test_the_same_instant_in_another_zone_is_another_datetime() -> None:
    same_instant = NOON.astimezone(ZoneInfo("UTC"))
    assert same_instant == NOON
    work = UnitOfWork()
    work.create(
        Interaction, org_id="o", user_id="u", agent_id="a", created_at=NOON, updated_at=same_instant
    )
    _, params = work.compile()

    # a fixed offset by its offset, a named zone (zoneinfo's, sent as pytz's) by its name
    assert params["times"] == [[NOON_SECONDS, 0, "+00:00"], [NOON_SECONDS, 0, "UTC"]]


def test_a_chain_cannot_be_compared_on_a_datetime() -> None:
    work = UnitOfWork()
    stored = work.nodes(Memory, org_id="o")
    with pytest.raises(ValueError, match="datetimes"):
        work.keep_common_prefix(stored, [], ["obtained_at"])
    work.keep_common_prefix(work.nodes(MessageBlock), [], ["role", "content"])
