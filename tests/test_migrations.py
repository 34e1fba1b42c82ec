"""The v0.3.x migration on a graph written by Memora before v0.3."""

from __future__ import annotations

from datetime import date, datetime, timezone
from typing import Any

from neo4j import Driver

OLD_MEMORIES = """
MATCH (u:User {org_id: $org_id, user_id: $user_id})-[:HAS_MEMORIES]->(mc:MemoryCollection),
      (u)-[:INTERACTIONS_IN]->(ic:InteractionCollection)
CREATE (ic)-[:HAD_INTERACTION]->(i:Interaction {org_id: $org_id, user_id: $user_id,
        agent_id: $agent_id, interaction_id: 'old-interaction',
        created_at: datetime('2024-03-01T10:00:00Z'), updated_at: datetime('2024-03-01T10:00:00Z')})
WITH mc, i
UNWIND $memories AS m
CREATE (mc)-[:INCLUDES]->(:Memory {org_id: $org_id, user_id: $user_id, agent_id: $agent_id,
        interaction_id: 'old-interaction', memory_id: m.id, memory: m.text,
        obtained_at: datetime(m.at)})-[:INTERACTION_SOURCE]->(i)
"""

MEMORIES = [
    {
        "id": "00000000-0000-4000-8000-000000000001",
        "text": "likes tea",
        "at": "2024-03-01T10:00:00Z",
    },
    {
        "id": "00000000-0000-4000-8000-000000000002",
        "text": "has a cat",
        "at": "2024-03-02T23:30:00+05:00",
    },
    {
        "id": "00000000-0000-4000-8000-000000000003",
        "text": "lives in Oslo",
        "at": "2024-03-02T01:00:00-08:00",
    },
]


def _snapshot(driver: Driver) -> tuple[list[Any], list[Any], list[Any]]:
    nodes = driver.execute_query(
        "MATCH (n) WHERE NOT n:MemoraMigration RETURN elementId(n) AS id, labels(n) AS l, "
        "properties(n) AS p ORDER BY id"
    ).records
    rels = driver.execute_query(
        "MATCH (a)-[r]->(b) "
        "RETURN elementId(a) AS a, type(r) AS t, elementId(b) AS b ORDER BY a, t, b"
    ).records
    indexes = driver.execute_query("SHOW INDEXES YIELD name RETURN name ORDER BY name").records
    return (
        [tuple(r.values()) for r in nodes],
        [tuple(r.values()) for r in rels],
        [r[0] for r in indexes],
    )


async def _pre_0_3_graph(memora: Any, driver: Driver) -> tuple[str, str]:
    """A user whose memories were written before v0.3: no DATE_OBTAINED. Returns org, user."""
    org = await memora.create_organization("Acme")
    user = await memora.create_user(org.org_id, "Ann")
    agent = await memora.create_agent(org.org_id, "Bot")
    driver.execute_query(
        OLD_MEMORIES,
        org_id=org.org_id,
        user_id=user.user_id,
        agent_id=agent.agent_id,
        memories=MEMORIES,
    )
    return org.org_id, user.user_id


async def test_v0_3_migration_links_memories_to_their_day_once(memora: Any, driver: Driver) -> None:
    org_id, user_id = await _pre_0_3_graph(memora, driver)
    driver.execute_query(
        "CREATE INDEX interaction_updated_timestamp_index IF NOT EXISTS "
        "FOR (i:Interaction) ON (i.updated_at)"
    )

    await memora.migrate_to_schema_for_memora_v0_3_x()

    links = driver.execute_query(
        "MATCH (m:Memory) OPTIONAL MATCH (m)-[:DATE_OBTAINED]->(d:Date) "
        "RETURN m.memory_id AS id, collect(d.date) AS days, "
        "collect(d.org_id + '/' + d.user_id) AS owners "
        "ORDER BY id"
    ).records
    # The calendar day of each obtained_at in its own offset.
    assert [(r["id"][-1], [d.to_native() for d in r["days"]]) for r in links] == [
        ("1", [date(2024, 3, 1)]),
        ("2", [date(2024, 3, 2)]),
        ("3", [date(2024, 3, 2)]),
    ]
    assert {o for r in links for o in r["owners"]} == {f"{org_id}/{user_id}"}
    assert driver.execute_query("MATCH (d:Date) RETURN count(d)").records[0][0] == 2
    indexes = [r[0] for r in driver.execute_query("SHOW INDEXES YIELD name RETURN name").records]
    assert "interaction_updated_timestamp_index" not in indexes
    applied = driver.execute_query("MATCH (m:MemoraMigration) RETURN m.version, m.name").records
    assert [tuple(r.values()) for r in applied] == [("0001", "memora_v0_3_x")]

    before = _snapshot(driver)
    assert await memora.migrate() == []
    await memora.migrate_to_schema_for_memora_v0_3_x()
    assert _snapshot(driver) == before


async def test_migration_finds_memories_through_the_date_walk(memora: Any, driver: Driver) -> None:
    org_id, user_id = await _pre_0_3_graph(memora, driver)
    assert await memora.get_all_user_memories(org_id, user_id) == []

    await memora.migrate_to_schema_for_memora_v0_3_x()

    found = await memora.get_all_user_memories(org_id, user_id)
    assert sorted(m.memory_id for m in found) == sorted(m["id"] for m in MEMORIES)
    # Newest obtained_at first: 23:30+05:00 is 18:30 UTC, after 01:00-08:00 (09:00 UTC), same day.
    assert [m.memory_id[-1] for m in found] == ["2", "3", "1"]


async def test_migrate_records_each_version_once(memora: Any, driver: Driver) -> None:
    assert await memora.migrate() == ["0001"]
    assert await memora.migrate() == []
    assert driver.execute_query("MATCH (m:MemoraMigration) RETURN count(m)").records[0][0] == 1


#: Memora's memories whose day Python alone gets wrong: a zone's name the server's
#: time-zone data reads (pytz knows no New York DST after 2037: 23:30 EST of July 1), and
#: an offset with seconds, which the driver reads rounded to -04:57 (23:59:32 of March 1).
ODD_MEMORIES = """
MATCH (u:User {org_id: $org_id, user_id: $user_id})-[:HAS_MEMORIES]->(mc:MemoryCollection),
      (i:Interaction {org_id: $org_id, user_id: $user_id})
UNWIND $memories AS m
CREATE (mc)-[:INCLUDES]->(:Memory {org_id: $org_id, user_id: $user_id, agent_id: i.agent_id,
        interaction_id: i.interaction_id, memory_id: m.id, memory: m.text,
        obtained_at: datetime({epochSeconds: m.seconds, timezone: m.zone})})
        -[:INTERACTION_SOURCE]->(i)
"""


async def test_migration_takes_the_day_the_server_stores(memora: Any, driver: Driver) -> None:
    org_id, user_id = await _pre_0_3_graph(memora, driver)
    at = [datetime(2040, 7, 2, 4, 30), datetime(1850, 3, 2, 4, 56, 32)]  # UTC
    odd: list[dict[str, Any]] = [
        {"id": "00000000-0000-4000-8000-00000000000a", "text": "a", "zone": "America/New_York"},
        {"id": "00000000-0000-4000-8000-00000000000b", "text": "b", "zone": "-04:56:02"},
    ]
    for memory, utc in zip(odd, at, strict=True):
        memory["seconds"] = int(utc.replace(tzinfo=timezone.utc).timestamp())
    driver.execute_query(ODD_MEMORIES, org_id=org_id, user_id=user_id, memories=odd)

    await memora.migrate_to_schema_for_memora_v0_3_x()

    links = driver.execute_query(
        "MATCH (m:Memory) WHERE m.memory IN ['a', 'b'] "
        "MATCH (m)-[:DATE_OBTAINED]->(d:Date) "
        "RETURN m.memory AS text, toString(m.obtained_at) AS at, d.date AS day ORDER BY text"
    ).records
    assert [(r["text"], r["at"], r["day"].to_native()) for r in links] == [
        ("a", "2040-07-02T00:30:00-04:00[America/New_York]", date(2040, 7, 2)),
        ("b", "1850-03-02T00:00:30-04:56:02", date(1850, 3, 2)),
    ]


async def test_migration_runs_through_the_graphs_statements(memora: Any, driver: Driver) -> None:
    """Every statement of a migration goes through ``Graph``, which counts it: the edition
    check and the record's key (the schema install), the read of the applied versions,
    one batch linking the three memories, the record."""
    org_id, user_id = await _pre_0_3_graph(memora, driver)
    before = memora.graph.statements

    await memora.migrate_to_schema_for_memora_v0_3_x()

    assert memora.graph.statements - before == 5
    days = driver.execute_query(
        "MATCH (m:Memory)-[:DATE_OBTAINED]->(d:Date) RETURN count(DISTINCT m), count(DISTINCT d)"
    ).records[0]
    assert tuple(days.values()) == (3, 2)
