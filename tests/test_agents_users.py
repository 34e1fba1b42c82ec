"""Agents and users: values returned, errors, cascades, and the graph afterwards."""

from __future__ import annotations

from typing import Any

import pytest
from interaction_helpers import (
    LATER,
    World,
    chat,
    conversation,
    make_world,
    saved_memory,
    snapshot,
    update,
)
from neo4j import Driver
from neo4j.exceptions import Neo4jError

from memora_ogm.errors import AgentNotFound, OrganizationNotFound, UserNotFound


def _count(driver: Driver, query: str, **params: Any) -> int:
    return int(driver.execute_query(query, **params).records[0][0])


async def test_create_org_agent_links_it_to_the_org(memora: Any, driver: Driver) -> None:
    org = await memora.create_organization("Acme")
    agent = await memora.create_agent(org.org_id, "Helper")

    assert (agent.org_id, agent.agent_label, agent.user_id) == (org.org_id, "Helper", None)
    record = driver.execute_query(
        "MATCH (o:Org)-[:HAS_AGENT]->(a:Agent) RETURN a.agent_id AS id, keys(a) AS keys, "
        "valueType(a.created_at) AS t, COUNT { (:User)-[:HAS_AGENT]->(a) } AS users"
    ).records[0]
    assert record["id"] == agent.agent_id
    assert sorted(record["keys"]) == ["agent_id", "agent_label", "created_at", "org_id"]
    assert record["t"] == "ZONED DATETIME NOT NULL"
    assert record["users"] == 0


async def test_user_specific_agent_belongs_to_both(memora: Any, driver: Driver) -> None:
    org = await memora.create_organization("Acme")
    user = await memora.create_user(org.org_id, "Ann")
    agent = await memora.create_agent(org.org_id, "Coach", user_id=user.user_id)

    assert agent.user_id == user.user_id
    assert (
        _count(
            driver,
            "MATCH (:Org {org_id: $o})-[:HAS_AGENT]->(a:Agent {agent_id: $a, user_id: $u})"
            "<-[:HAS_AGENT]-(:User {user_id: $u}) RETURN count(a)",
            o=org.org_id,
            a=agent.agent_id,
            u=user.user_id,
        )
        == 1
    )
    assert [a.agent_id for a in await memora.get_all_user_agents(org.org_id, user.user_id)] == [
        agent.agent_id
    ]
    assert {a.agent_id for a in await memora.get_all_org_agents(org.org_id)} == {agent.agent_id}


async def test_create_agent_for_missing_org_or_user_writes_nothing(
    memora: Any, driver: Driver
) -> None:
    org = await memora.create_organization("Acme")
    with pytest.raises(OrganizationNotFound):
        await memora.create_agent("missing", "Helper")
    with pytest.raises(UserNotFound):
        await memora.create_agent(org.org_id, "Helper", user_id="missing")
    assert _count(driver, "MATCH (a:Agent) RETURN count(a)") == 0


@pytest.mark.parametrize(
    ("args", "kwargs"),
    [
        ((None, "x"), {}),
        (("", "x"), {}),
        (("o", ""), {}),
        (("o", 5), {}),
        (("o", "x"), {"user_id": ""}),
        (("o", "x"), {"user_id": 9}),
    ],
)
async def test_create_agent_validates(
    memora: Any, args: tuple[Any, ...], kwargs: dict[str, Any]
) -> None:
    with pytest.raises(ValueError):
        await memora.create_agent(*args, **kwargs)


async def test_get_update_delete_agent(memora: Any, driver: Driver) -> None:
    org = await memora.create_organization("Acme")
    agent = await memora.create_agent(org.org_id, "Helper")

    assert await memora.get_agent(org.org_id, agent.agent_id) == agent
    renamed = await memora.update_agent(org.org_id, agent.agent_id, "Helper 2")
    assert renamed.agent_label == "Helper 2"
    assert renamed.created_at == agent.created_at

    await memora.delete_agent(org.org_id, agent.agent_id)
    assert _count(driver, "MATCH (a:Agent) RETURN count(a)") == 0
    assert _count(driver, "MATCH (o:Org) RETURN count(o)") == 1
    with pytest.raises(AgentNotFound) as caught:
        await memora.get_agent(org.org_id, agent.agent_id)
    assert agent.agent_id in str(caught.value)
    assert isinstance(caught.value, Neo4jError)


async def test_get_agent_validates_like_its_siblings(memora: Any) -> None:
    """SPEC 10.14: the seed's get_agent did not validate its arguments."""
    for bad in (None, "", " ", 1):
        with pytest.raises(ValueError):
            await memora.get_agent(bad, "a")
        with pytest.raises(ValueError):
            await memora.get_agent("o", bad)


async def test_agent_of_another_org_is_not_found(memora: Any) -> None:
    acme = await memora.create_organization("Acme")
    globex = await memora.create_organization("Globex")
    agent = await memora.create_agent(acme.org_id, "Helper")
    with pytest.raises(AgentNotFound):
        await memora.get_agent(globex.org_id, agent.agent_id)
    with pytest.raises(AgentNotFound):
        await memora.update_agent(globex.org_id, agent.agent_id, "stolen")
    with pytest.raises(AgentNotFound):
        await memora.delete_agent(globex.org_id, agent.agent_id)
    assert (await memora.get_agent(acme.org_id, agent.agent_id)).agent_label == "Helper"


async def test_create_user_makes_its_collections(memora: Any, driver: Driver) -> None:
    org = await memora.create_organization("Acme")
    user = await memora.create_user(org.org_id, "Ann O'Neil")

    assert (user.org_id, user.user_name) == (org.org_id, "Ann O'Neil")
    record = driver.execute_query(
        "MATCH (o:Org)<-[:BELONGS_TO]-(u:User)-[:INTERACTIONS_IN]->(ic:InteractionCollection), "
        "(u)-[:HAS_MEMORIES]->(mc:MemoryCollection) "
        "RETURN u.user_id AS id, keys(u) AS keys, valueType(u.created_at) AS t, "
        "[ic.org_id, ic.user_id, mc.org_id, mc.user_id] AS owners"
    ).records
    assert len(record) == 1
    assert record[0]["id"] == user.user_id
    assert sorted(record[0]["keys"]) == ["created_at", "org_id", "user_id", "user_name"]
    assert record[0]["t"] == "ZONED DATETIME NOT NULL"
    assert record[0]["owners"] == [org.org_id, user.user_id] * 2


async def test_create_user_in_missing_org_writes_nothing(memora: Any, driver: Driver) -> None:
    with pytest.raises(OrganizationNotFound):
        await memora.create_user("missing", "Ann")
    assert _count(driver, "MATCH (n) RETURN count(n)") == 0


async def test_get_update_list_users(memora: Any) -> None:
    org = await memora.create_organization("Acme")
    other = await memora.create_organization("Other")
    ann = await memora.create_user(org.org_id, "Ann")
    bob = await memora.create_user(org.org_id, "Bob")
    await memora.create_user(other.org_id, "Eve")

    assert await memora.get_user(org.org_id, ann.user_id) == ann
    assert {u.user_id for u in await memora.get_all_org_users(org.org_id)} == {
        ann.user_id,
        bob.user_id,
    }
    renamed = await memora.update_user(org.org_id, bob.user_id, "Robert")
    assert (renamed.user_name, renamed.created_at) == ("Robert", bob.created_at)
    with pytest.raises(UserNotFound):
        await memora.get_user(other.org_id, ann.user_id)
    with pytest.raises(OrganizationNotFound):
        await memora.get_all_org_users("missing")
    with pytest.raises(ValueError):
        await memora.update_user(org.org_id, bob.user_id, "  ")


async def test_delete_user_cascades_and_spares_neighbours(memora: Any, driver: Driver) -> None:
    bob = await make_world(memora, "Bob")
    _, bob_memory = await saved_memory(memora, bob, "Bob likes jazz")
    before = snapshot(driver)  # the graph before Ann
    user = await memora.create_user(bob.org_id, "Ann")
    ann = World(bob.org_id, user.user_id, bob.agent_id)
    coach = await memora.create_agent(ann.org_id, "Coach", user_id=ann.user_id)
    for text in ("Ann lives in Oslo", "Ann has a cat"):
        interaction_id, memory_id = await saved_memory(memora, ann, text)
    await update(
        memora,
        ann,
        interaction_id,
        conversation(
            chat("I live in Oslo", "Nice!", "Bergen now"),
            when=LATER,
            contrary=[("user_x lives in Bergen", [2], memory_id)],
        ),
    )

    await memora.delete_user(ann.org_id, ann.user_id)

    # The graph from before Ann, plus her user-specific agent, which stays with the
    # organisation; her messages carry no ids, so the whole graph is compared.
    nodes, relationships = snapshot(driver)
    assert [n for n in nodes if coach.agent_id not in n] == before[0]
    assert [r for r in relationships if coach.agent_id not in r] == before[1]
    assert len([r for r in relationships if coach.agent_id in r]) == 1  # (Org)-[:HAS_AGENT]->
    assert (await memora.get_agent(ann.org_id, coach.agent_id)).user_id == ann.user_id
    assert (await memora.get_user_memory(bob.org_id, bob.user_id, bob_memory)).memory == (
        "Bob likes jazz"
    )
    with pytest.raises(UserNotFound):
        await memora.delete_user(ann.org_id, ann.user_id)


async def test_each_read_of_a_missing_node_names_the_ids_it_was_given(memora: Any) -> None:
    """The reads of one node or one list by its ids are compiled once for all calls
    (``Prepared``); the not-found error of each call still names that call's own ids,
    and a found node after a missing one is that call's node."""
    org = await memora.create_organization("Acme")
    user = await memora.create_user(org.org_id, "Ann")
    agent = await memora.create_agent(org.org_id, "Helper")
    for n in range(2):
        gone = f"gone-{n}"
        cases: list[tuple[Any, type[Exception], dict[str, str]]] = [
            (memora.get_organization(gone), OrganizationNotFound, {"org_id": gone}),
            (memora.get_all_org_users(gone), OrganizationNotFound, {"org_id": gone}),
            (memora.get_all_org_agents(gone), OrganizationNotFound, {"org_id": gone}),
            (
                memora.get_user(org.org_id, gone),
                UserNotFound,
                {"org_id": org.org_id, "user_id": gone},
            ),
            (
                memora.get_all_user_agents(org.org_id, gone),
                UserNotFound,
                {"org_id": org.org_id, "user_id": gone},
            ),
            (
                memora.get_agent(org.org_id, gone),
                AgentNotFound,
                {"org_id": org.org_id, "agent_id": gone},
            ),
        ]
        for call, error, ids in cases:
            with pytest.raises(error) as raised:
                await call
            assert raised.value.ids == ids  # type: ignore[attr-defined]
            assert gone in str(raised.value)
        assert (await memora.get_user(org.org_id, user.user_id)).user_name == "Ann"
        assert (await memora.get_agent(org.org_id, agent.agent_id)).agent_label == "Helper"
        assert (await memora.get_organization(org.org_id)).org_name == "Acme"
