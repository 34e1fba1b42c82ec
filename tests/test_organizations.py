"""Organisations: values returned, errors, and what the graph holds afterwards."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from typing import Any

import pytest
from interaction_helpers import (
    LATER,
    chat,
    conversation,
    make_world,
    saved_memory,
    snapshot,
    update,
    value,
)
from neo4j import Driver
from neo4j.exceptions import Neo4jError

from memora_ogm.errors import NotFoundError, OrganizationNotFound
from memora_ogm.schema.validation import MAX_NAME_LENGTH


async def test_create_organization_returns_and_stores_it(memora: Any, driver: Driver) -> None:
    before = datetime.now(timezone.utc)
    org = await memora.create_organization("Acme ‘Labs’ 🚀")

    assert org.org_name == "Acme ‘Labs’ 🚀"
    assert len(org.org_id) == 22
    assert org.created_at.tzinfo is not None
    assert before - timedelta(seconds=5) <= org.created_at <= datetime.now(timezone.utc)

    records = driver.execute_query(
        "MATCH (o:Org) RETURN o.org_id AS id, o.org_name AS name, "
        "valueType(o.created_at) AS created_type, keys(o) AS keys"
    ).records
    assert [(r["id"], r["name"]) for r in records] == [(org.org_id, "Acme ‘Labs’ 🚀")]
    assert records[0]["created_type"] == "ZONED DATETIME NOT NULL"
    assert sorted(records[0]["keys"]) == ["created_at", "org_id", "org_name"]


@pytest.mark.parametrize(
    "bad", [None, "", "   ", 7, True, ["x"], b"acme", "x" * (MAX_NAME_LENGTH + 1)]
)
async def test_create_organization_rejects_bad_names_with_type_error(
    memora: Any, driver: Driver, bad: Any
) -> None:
    with pytest.raises(TypeError, match="org_name"):
        await memora.create_organization(bad)
    assert driver.execute_query("MATCH (n) RETURN count(n) AS c").records[0]["c"] == 0


async def test_get_and_get_all_organizations(memora: Any) -> None:
    acme = await memora.create_organization("Acme")
    globex = await memora.create_organization("Globex")

    assert await memora.get_organization(acme.org_id) == acme
    listed = await memora.get_all_organizations()
    assert sorted(o.org_id for o in listed) == sorted([acme.org_id, globex.org_id])


async def test_get_missing_organization_is_a_neo4j_error_naming_it(memora: Any) -> None:
    with pytest.raises(Neo4jError) as caught:
        await memora.get_organization("no-such-org")
    assert isinstance(caught.value, OrganizationNotFound)
    assert isinstance(caught.value, NotFoundError)
    assert "no-such-org" in str(caught.value)
    assert "no-such-org" in caught.value.message


@pytest.mark.parametrize("bad", [None, "", " ", 3, ["a"]])
async def test_get_and_delete_organization_validate_with_type_error(memora: Any, bad: Any) -> None:
    with pytest.raises(TypeError):
        await memora.get_organization(bad)
    with pytest.raises(TypeError):
        await memora.delete_organization(bad)


async def test_update_organization(memora: Any, driver: Driver) -> None:
    org = await memora.create_organization("Acme")
    updated = await memora.update_organization(org.org_id, "Acme $1 \\ Corp")
    assert updated.org_name == "Acme $1 \\ Corp"
    assert updated.created_at == org.created_at
    names = driver.execute_query("MATCH (o:Org) RETURN o.org_name AS n").records
    assert [r["n"] for r in names] == ["Acme $1 \\ Corp"]

    with pytest.raises(ValueError):
        await memora.update_organization(org.org_id, "")
    with pytest.raises(OrganizationNotFound):
        await memora.update_organization("missing", "X")
    assert [
        r["n"] for r in driver.execute_query("MATCH (o:Org) RETURN o.org_name AS n").records
    ] == ["Acme $1 \\ Corp"]


async def _populate(memora: Any, org_id: str) -> None:
    """Two users with personal and shared agents, conversations, memories, a contrary update."""
    for name in ("Ann", "Bob"):
        world = await make_world(memora, name, org_id=org_id)
        await memora.create_agent(org_id, "Personal", user_id=world.user_id)
        interaction_id, memory_id = await saved_memory(memora, world, f"{name} rows")
        await update(
            memora,
            world,
            interaction_id,
            conversation(
                chat("I live in Oslo", "Nice!", "I moved to Bergen"),
                when=LATER,
                contrary=[(f"user_{world.user_id} lives in Bergen", [2], memory_id)],
            ),
        )


async def test_delete_organization_removes_everything_under_it_only(
    memora: Any, driver: Driver
) -> None:
    kept = await memora.create_organization("Kept")
    await _populate(memora, kept.org_id)
    before = snapshot(driver)
    doomed = await memora.create_organization("Doomed")
    await _populate(memora, doomed.org_id)
    assert value(driver, "MATCH (m:MessageBlock) RETURN count(m)") == 12

    await memora.delete_organization(doomed.org_id)

    # Exactly the graph from before the doomed organisation existed: nothing of it is
    # left (messages carry no org_id, so the whole graph is compared) and nothing else moved.
    assert snapshot(driver) == before
    assert _org_counts(driver, doomed.org_id) == {}
    assert (
        driver.execute_query("MATCH (o:Org) RETURN o.org_id AS id").records[0]["id"] == kept.org_id
    )
    with pytest.raises(OrganizationNotFound):
        await memora.delete_organization(doomed.org_id)


def _org_counts(driver: Driver, org_id: str) -> dict[str, int]:
    records = driver.execute_query(
        "MATCH (n {org_id: $org_id}) RETURN labels(n)[0] AS label, count(*) AS c", org_id=org_id
    ).records
    return {r["label"]: r["c"] for r in records}
