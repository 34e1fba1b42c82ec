"""Differential test: memora-ogm against Memora's own graph layer, on the same server.

Memora's layer is ``memora.graph_db.neo4j.Neo4jGraphInterface`` from memora-core 0.3.1
(the release on PyPI, installed by ``scripts/test.sh``). One story of writes, reads and
deletes runs twice: once written by Memora's layer, once by memora-ogm. After every step
both layers read the same graph, so each reads its own data and the other's. Results are
compared after normalising ids (to labels) and timestamps that are "now" (to ``<now>``).

Every difference must be one of SPEC section 10, named in ``READER_DIFFERENCES`` (the two
layers read one graph differently) or ``WRITER_DIFFERENCES`` (the two layers wrote
different graphs, seen by either reader); a difference not listed, or a listed one that
does not occur, fails the test.

Memora's ``setup()`` creates ``NODE KEY`` constraints, which need Neo4j Enterprise
(SPEC 10.2), so on Community its data is created through its own methods without it;
memora-ogm's ``setup()`` runs first. memora-core pins the neo4j driver 5.20; here it runs
on the driver 6 that neomodel 7 needs. Every method of Memora's layer this story calls
works on driver 6 (its reads convert ``neo4j.time`` values with ``to_native()``, which
driver 6 still has), so no workaround is needed.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from typing import Any

import neo4j.time
import pytest
from interaction_helpers import (
    DAY,
    LATER,
    NO_MEMORY,
    chat,
    conversation,
    make_world,
    rows,
    save,
    saved_memory,
    snapshot,
    sources,
    update,
)
from interaction_helpers import (
    memory_ids as interaction_memory_ids,
)
from memora.graph_db.neo4j import Neo4jGraphInterface as MemoraGraph
from memora.schema.storage_schema import (
    ContraryMemoryToStore,
    MemoriesAndInteraction,
    MemoryToStore,
)
from neo4j import Driver
from neo4j.exceptions import Neo4jError
from pydantic import BaseModel

from memora_ogm._async.interface import Neo4jGraphInterface
from memora_ogm.errors import (
    AgentNotFound,
    InteractionNotFound,
    MemoryNotFound,
    NotFoundError,
    OrganizationNotFound,
    UserNotFound,
)
from memora_ogm.server import Neo4jConnection
from memora_ogm.testing import clear_database

D1 = datetime(2025, 1, 10, 9, 0, tzinfo=timezone.utc)
D1_LATER = datetime(2025, 1, 10, 15, 30, tzinfo=timezone.utc)
D2 = datetime(2025, 1, 12, 9, 0, tzinfo=timezone.utc)
SCENARIO_DATES = {D1, D1_LATER, D2}

#: Steps whose results differ between the two readers of one graph (whichever layer
#: wrote it), and the SPEC section 10 item that makes them differ.
READER_DIFFERENCES = {
    # Its source messages were truncated away: Memora reports it missing.
    "get_user_memory(coffee)": "10.3",
    "get_user_memory(runs)": "10.3",
    # Memora repeats the sources once per request row naming the memory.
    "fetch_resolved(named twice)": "10.18",
    "fetch_resolved(old and new)": "10.18",
    "fetch_resolved_batch": "10.18",
    # Memora returns [] or does nothing where memora-ogm raises not-found.
    "get_all_org_users(missing org)": "10.17",
    "get_all_org_agents(missing org)": "10.17",
    "get_all_user_agents(missing user)": "10.17",
    "get_all_user_interactions(missing user)": "10.17",
    "get_all_user_memories(missing user)": "10.17",
    "get_user_memory_history(missing memory)": "10.17",
    "delete_user_memory(missing memory)": "10.17",
    # Memora drops the memories of the deleted agent, or fails validating them.
    "get_all_user_memories(after delete_agent)": "10.4",
    "get_all_user_interactions(after delete_interaction)": "10.4",
}
#: Only in the graph memora-ogm wrote, where the memory of 10.16 exists: it has no
#: source messages left, so Memora reports it missing.
READER_DIFFERENCES_OF_MEMORA_OGMS_GRAPH = {"get_user_memory(new day)": "10.3"}

BOTH_READERS = frozenset({"memora", "memora-ogm"})
#: Steps whose results differ with the layer that wrote the graph, for whom (the
#: writer's own return, or a reader), and the SPEC section 10 item behind it.
WRITER_DIFFERENCES: dict[str, tuple[str, frozenset[str]]] = {
    # Memora returns the date as an ISO string, and drops the memory.
    "save(no messages)": ("10.5", frozenset({"writer"})),
    "get_interaction(i3)": ("10.5", BOTH_READERS),
    # Memora's update on a day without a Date node drops its memory (same return).
    "get_interaction(i1)": ("10.16", BOTH_READERS),
    "get_interaction(i1, memories only)": ("10.16", BOTH_READERS),
    "get_user_memory(new day)": ("10.16", BOTH_READERS),
    "get_user_memory_history(new day)": ("10.16", BOTH_READERS),
    "get_all_user_memories(agent)": ("10.16", BOTH_READERS),
    "get_all_user_interactions": ("10.16 and 10.5", BOTH_READERS),
    "get_all_user_memories": ("10.16 and 10.5", BOTH_READERS),
    "get_all_user_memories(after delete_user_memory)": ("10.16 and 10.5", BOTH_READERS),
    "get_all_user_memories(after delete_agent)": ("10.16 and 10.5", BOTH_READERS),
    # Memora's delete reads the interaction first, and fails validating the memory of the
    # deleted agent (so the interaction stays, which only memora-ogm's reader can show).
    "delete_interaction": ("10.4", frozenset({"writer"})),
    "get_all_user_interactions(after delete_interaction)": ("10.4", frozenset({"memora-ogm"})),
}


@dataclass
class Run:
    """One story: the layer that writes, both readers, and every normalised result."""

    writer: Any
    readers: dict[str, Any]
    driver: Driver
    labels: dict[str, str] = field(default_factory=dict)
    #: step -> reader (or "writer") -> normalised result
    results: dict[str, dict[str, Any]] = field(default_factory=dict)

    def label(self, value: str, name: str) -> str:
        self.labels[value] = name
        return value

    def learn_memories(self) -> None:
        """Label every memory by its stored text (with its ids already labelled)."""
        records = self.driver.execute_query(
            "MATCH (m:Memory) RETURN m.memory_id AS id, m.memory AS text"
        ).records
        for record in records:
            if record["id"] not in self.labels:
                self.labels[record["id"]] = f"memory<{self.normal(record['text'])}>"

    def normal(self, value: Any) -> Any:
        if isinstance(value, BaseModel):
            return self.normal(value.model_dump())
        if isinstance(value, dict):
            found = {key: self.normal(item) for key, item in value.items()}
            if found.get("message_sources"):  # a set of messages, in no order in Memora
                found["message_sources"].sort(key=lambda message: message["msg_position"])
            if found.get("memories"):  # an interaction's, in no order in Memora (SPEC 4)
                found["memories"].sort(key=lambda m: (m["obtained_at"], m["memory_id"]))
            return found
        if isinstance(value, list | tuple):
            return _ties_in_one_order([self.normal(item) for item in value])
        if isinstance(value, datetime):
            utc = (value if value.tzinfo else value.replace(tzinfo=timezone.utc)).astimezone(
                timezone.utc
            )
            return f"datetime {utc.isoformat()}" if utc in SCENARIO_DATES else "datetime <now>"
        if isinstance(value, str):
            for raw, name in sorted(self.labels.items(), key=lambda item: -len(item[0])):
                value = value.replace(raw, name)
        return value

    async def outcome(self, call: Awaitable[Any]) -> Any:
        """The normalised result, or which error: not-found (Memora raises a bare Neo4jError)."""
        try:
            return self.normal(await call)
        except NotFoundError:
            return "raises not-found"
        except Exception as error:  # noqa: BLE001 - the kind of error is the result
            if "does not exist" in str(error):
                return "raises not-found"
            return f"raises {type(error).__name__}"

    async def write(self, step: str, call: Callable[[Any], Awaitable[Any]]) -> Any:
        """A write by the writer; its return (normalised once the ids it made are known)."""
        try:
            result = await call(self.writer)
        except Exception as error:  # noqa: BLE001 - recorded, and compared
            result = f"raises {type(error).__name__}"
        self.learn_memories()
        self.results[step] = {"writer": result}
        return result

    def relabel_writes(self) -> None:
        for outcomes in self.results.values():
            if "writer" in outcomes:
                outcomes["writer"] = self.normal(outcomes["writer"])

    async def read(self, step: str, call: Callable[[Any], Awaitable[Any]]) -> None:
        """The same read by both layers."""
        self.learn_memories()
        self.results[step] = {
            name: await self.outcome(call(reader)) for name, reader in self.readers.items()
        }

    async def delete(self, step: str, call: Callable[[Any], Awaitable[Any]]) -> None:
        """A delete of something missing by both layers (it changes nothing)."""
        await self.read(step, call)


def _ties_in_one_order(items: list[Any]) -> list[Any]:
    """Memories (interactions) with equal ``obtained_at`` (``updated_at``) in one order.

    Both layers order these lists by that timestamp and neither orders ties (nor the
    memories of one interaction, which share it more often than not), so only the order
    within runs of equal timestamps is made canonical: by id label.
    """
    for key, ident in (("obtained_at", "memory_id"), ("updated_at", "interaction_id")):
        if items and all(isinstance(item, dict) and key in item for item in items):
            ordered: list[Any] = []
            for item in items:
                if ordered and ordered[-1][-1][key] == item[key]:
                    ordered[-1].append(item)
                else:
                    ordered.append([item])
            return [item for run in ordered for item in sorted(run, key=lambda i: i[ident])]
    return items


def memories_and_interaction(
    messages: list[str],
    date: datetime,
    memories: list[tuple[str, list[int]]],
    contrary: list[tuple[str, list[int], str]] | None = None,
) -> MemoriesAndInteraction:
    """Memora's own storage object, as its agent builds it."""
    roles = ("user", "assistant")
    return MemoriesAndInteraction(
        interaction=[{"role": roles[i % 2], "content": text} for i, text in enumerate(messages)],
        interaction_date=date,
        memories=[MemoryToStore(memory=m, source_msg_block_pos=p) for m, p in memories],
        contrary_memories=[
            ContraryMemoryToStore(memory=m, source_msg_block_pos=p, existing_contrary_memory_id=e)
            for m, p, e in contrary or []
        ],
    )


def memory_ids(driver: Driver, suffix: str) -> list[str]:
    """The ids of the memories whose text ends with ``suffix``."""
    records = driver.execute_query(
        "MATCH (m:Memory) WHERE m.memory ENDS WITH $suffix RETURN m.memory_id AS id",
        suffix=suffix,
    ).records
    return [str(record["id"]) for record in records]


def memory_id(driver: Driver, suffix: str) -> str:
    (found,) = memory_ids(driver, suffix)
    return found


async def story(run: Run) -> None:
    """Writes by ``run.writer``; after each, reads by both layers."""
    org = (await run.write("create_organization", lambda g: g.create_organization("Acme"))).org_id
    run.label(org, "org")
    user = (await run.write("create_user", lambda g: g.create_user(org, "Ann"))).user_id
    run.label(user, "user")
    agent = (
        await run.write("create_agent(user's)", lambda g: g.create_agent(org, "Bot", user))
    ).agent_id
    run.label(agent, "agent")
    helper = (await run.write("create_agent", lambda g: g.create_agent(org, "Helper"))).agent_id
    run.label(helper, "helper")
    await run.write("update_user", lambda g: g.update_user(org, user, "Anna"))
    await run.write("update_agent", lambda g: g.update_agent(org, agent, "Bot One"))

    chat = ["I like tea and have a cat.", "Noted."]
    first = memories_and_interaction(
        chat, D1, [(f"user_{user} likes tea", [0, 1]), (f"user_{user} has a cat", [0])]
    )
    i1, _ = await run.write(
        "save", lambda g: g.save_interaction_with_memories(org, agent, user, first)
    )
    run.label(i1, "i1")
    tea = memory_id(run.driver, "likes tea")
    chat.append("Now I prefer coffee, and I run daily.")
    second = memories_and_interaction(
        chat,
        D1_LATER,
        [(f"user_{user} runs daily with agent_{agent}", [2])],
        [(f"user_{user} likes coffee", [2], tea)],
    )
    await run.write(
        "update(append, contrary)",
        lambda g: g.update_interaction_and_memories(org, agent, user, i1, second),
    )
    chat.append("Coffee it is.")
    third = memories_and_interaction(chat, D2, [(f"user_{user} talked on a new day", [3])])
    await run.write(
        "update(new day)", lambda g: g.update_interaction_and_memories(org, agent, user, i1, third)
    )
    cat = memory_id(run.driver, "has a cat")
    fourth = memories_and_interaction(
        ["Hello helper, I have two cats now."],
        D1_LATER,
        [(f"agent_{helper} helps", [0])],
        [(f"user_{user} has two cats", [0], cat)],
    )
    i2, _ = await run.write(
        "save(other agent)", lambda g: g.save_interaction_with_memories(org, helper, user, fourth)
    )
    run.label(i2, "i2")
    fifth = memories_and_interaction([], D2, [("no messages memory", [])])
    i3, _ = await run.write(
        "save(no messages)", lambda g: g.save_interaction_with_memories(org, helper, user, fifth)
    )
    run.label(i3, "i3")
    edited = memories_and_interaction([chat[0], chat[1], "Actually, water."], D1_LATER, [])
    await run.write(
        "update(edit: truncation)",
        lambda g: g.update_interaction_and_memories(org, agent, user, i1, edited),
    )
    run.learn_memories()
    coffee, runs = (
        memory_id(run.driver, "likes coffee"),
        memory_id(run.driver, "with agent_" + agent),
    )
    cats = memory_id(run.driver, "has two cats")
    ids = [{"org_id": org, "user_id": user, "memory_id": m} for m in (tea, cat, coffee, runs, cats)]

    await run.read("get_organization", lambda g: g.get_organization(org))
    await run.read("get_all_organizations", lambda g: g.get_all_organizations())
    await run.read("get_user", lambda g: g.get_user(org, user))
    await run.read("get_all_org_users", lambda g: g.get_all_org_users(org))
    await run.read("get_agent", lambda g: g.get_agent(org, agent))
    await run.read("get_all_org_agents", lambda g: g.get_all_org_agents(org))
    await run.read("get_all_user_agents", lambda g: g.get_all_user_agents(org, user))
    await run.read("get_interaction(i1)", lambda g: g.get_interaction(org, user, i1))
    await run.read(
        "get_interaction(i1, messages only)",
        lambda g: g.get_interaction(org, user, i1, with_messages=True, with_memories=False),
    )
    await run.read(
        "get_interaction(i1, memories only)",
        lambda g: g.get_interaction(org, user, i1, with_messages=False, with_memories=True),
    )
    await run.read("get_interaction(i2)", lambda g: g.get_interaction(org, user, i2))
    await run.read("get_interaction(i3)", lambda g: g.get_interaction(org, user, i3))
    await run.read("get_all_user_interactions", lambda g: g.get_all_user_interactions(org, user))
    await run.read("get_all_user_memories", lambda g: g.get_all_user_memories(org, user))
    await run.read(
        "get_all_user_memories(agent)", lambda g: g.get_all_user_memories(org, user, agent)
    )
    await run.read("fetch_resolved", lambda g: g.fetch_user_memories_resolved(ids[:2]))
    await run.read(
        "fetch_resolved(twice, old and new)",
        lambda g: g.fetch_user_memories_resolved([ids[0], ids[0], ids[2], ids[1]]),
    )
    await run.read(
        "fetch_resolved(named twice)", lambda g: g.fetch_user_memories_resolved([ids[4], ids[4]])
    )
    await run.read(
        "fetch_resolved(old and new)", lambda g: g.fetch_user_memories_resolved([ids[1], ids[4]])
    )
    await run.read(
        "fetch_resolved_batch",
        lambda g: g.fetch_user_memories_resolved_batch([[ids[0], ids[2]], [ids[1], ids[4]], []]),
    )

    def about(method: str, memory: str | None) -> Callable[[Any], Awaitable[Any]]:
        """``method(org, user, memory)`` of a layer (``memory`` None: it was never stored)."""
        return lambda g: getattr(g, method)(org, user, memory) if memory else _missing()

    # The memory of the update on a new day: only memora-ogm stored it (10.16).
    new_day = next(iter(memory_ids(run.driver, "on a new day")), None)
    named = (("tea", tea), ("coffee", coffee), ("runs", runs), ("cat", cat), ("cats", cats))
    for name, memory in (*named, ("new day", new_day)):
        await run.read(f"get_user_memory({name})", about("get_user_memory", memory))
        await run.read(f"get_user_memory_history({name})", about("get_user_memory_history", memory))

    # Things that are not there (SPEC 10.17).
    await run.read("get_organization(missing)", lambda g: g.get_organization("missing"))
    await run.read("get_user(missing)", lambda g: g.get_user(org, "missing"))
    await run.read("get_all_org_users(missing org)", lambda g: g.get_all_org_users("missing"))
    await run.read("get_all_org_agents(missing org)", lambda g: g.get_all_org_agents("missing"))
    await run.read(
        "get_all_user_agents(missing user)", lambda g: g.get_all_user_agents(org, "missing")
    )
    await run.read(
        "get_all_user_interactions(missing user)",
        lambda g: g.get_all_user_interactions(org, "missing"),
    )
    await run.read(
        "get_all_user_memories(missing user)", lambda g: g.get_all_user_memories(org, "missing")
    )
    await run.read(
        "get_user_memory_history(missing memory)",
        lambda g: g.get_user_memory_history(org, user, NO_MEMORY),
    )
    await run.delete(
        "delete_user_memory(missing memory)", lambda g: g.delete_user_memory(org, user, NO_MEMORY)
    )
    await run.delete(
        "delete_user_interaction(missing)",
        lambda g: g.delete_user_interaction_and_its_memories(org, user, "missing"),
    )

    # Deletes by the writer, each read by both.
    await run.write("delete_user_memory", lambda g: g.delete_user_memory(org, user, cat))
    await run.read(
        "get_all_user_memories(after delete_user_memory)",
        lambda g: g.get_all_user_memories(org, user),
    )
    await run.write("delete_agent", lambda g: g.delete_agent(org, helper))
    await run.read(
        "get_all_user_memories(after delete_agent)", lambda g: g.get_all_user_memories(org, user)
    )
    await run.write(
        "delete_interaction", lambda g: g.delete_user_interaction_and_its_memories(org, user, i2)
    )
    await run.read(
        "get_all_user_interactions(after delete_interaction)",
        lambda g: g.get_all_user_interactions(org, user),
    )
    await run.write(
        "delete_all_interactions",
        lambda g: g.delete_all_user_interactions_and_their_memories(org, user),
    )
    await run.read(
        "get_all_user_interactions(after all)", lambda g: g.get_all_user_interactions(org, user)
    )
    await run.write("delete_all_user_memories", lambda g: g.delete_all_user_memories(org, user))
    await run.read("get_all_user_memories(after all)", lambda g: g.get_all_user_memories(org, user))
    await run.write("delete_user", lambda g: g.delete_user(org, user))
    await run.read("get_all_org_users(after delete_user)", lambda g: g.get_all_org_users(org))
    await run.write("delete_organization", lambda g: g.delete_organization(org))
    await run.read("get_all_organizations(after delete)", lambda g: g.get_all_organizations())
    run.relabel_writes()
    nodes = run.driver.execute_query("MATCH (n) RETURN count(n) AS n").records[0]["n"]
    assert nodes == 0, "deleting the organisation left nodes behind"


async def _missing() -> str:
    return "not stored"


@pytest.fixture
async def layers(
    neo4j_connection: Neo4jConnection, neo4j_driver: Driver
) -> AsyncIterator[dict[str, Any]]:
    conn = neo4j_connection
    clear_database(neo4j_driver, conn.database)
    ogm = Neo4jGraphInterface(conn.uri, conn.username, conn.password, conn.database)
    await ogm.setup()
    memora = MemoraGraph(conn.uri, conn.username, conn.password, conn.database)
    yield {"memora": memora, "memora-ogm": ogm}
    await memora.close()
    await ogm.close()


async def test_memora_ogm_and_memoras_graph_layer_differ_only_as_spec_10_says(
    layers: dict[str, Any], neo4j_connection: Neo4jConnection, neo4j_driver: Driver
) -> None:
    runs: dict[str, Run] = {}
    for writer in ("memora", "memora-ogm"):
        clear_database(neo4j_driver, neo4j_connection.database)
        run = Run(layers[writer], layers, neo4j_driver)
        await story(run)
        runs[writer] = run

    # Within each graph, the two readers: only the listed differences.
    for writer, run in runs.items():
        differing = {
            step
            for step, outcomes in run.results.items()
            if "writer" not in outcomes and outcomes["memora"] != outcomes["memora-ogm"]
        }
        expected = set(READER_DIFFERENCES)
        if writer == "memora-ogm":
            expected |= set(READER_DIFFERENCES_OF_MEMORA_OGMS_GRAPH)
        assert differing == expected, (
            f"graph written by {writer}: unexpected {sorted(differing - expected)}, "
            f"missing {sorted(expected - differing)}"
        )
    # Between the two graphs, for the writer's returns and for each reader.
    steps = list(runs["memora"].results)
    assert steps == list(runs["memora-ogm"].results)
    for who in ("writer", *BOTH_READERS):
        differing = {
            step
            for step in steps
            if who in runs["memora"].results[step]
            and runs["memora"].results[step][who] != runs["memora-ogm"].results[step][who]
        }
        expected = {step for step, (_, whom) in WRITER_DIFFERENCES.items() if who in whom}
        assert differing == expected, (
            f"{who}: unexpected {sorted(differing - expected)}, "
            f"missing {sorted(expected - differing)}"
        )
    # The named items, as they show: 10.16's memory is missing from Memora's graph.
    memora_sees = runs["memora"].results["get_interaction(i1)"]["memora-ogm"]
    ogm_sees = runs["memora-ogm"].results["get_interaction(i1)"]["memora-ogm"]
    assert [m["memory"] for m in ogm_sees["memories"]] == [
        *(m["memory"] for m in memora_sees["memories"]),
        "Anna talked on a new day",
    ]
    assert runs["memora"].results["save(no messages)"]["writer"][1] == "2025-01-12T09:00:00+00:00"
    assert runs["memora-ogm"].results["save(no messages)"]["writer"][1] == (
        "datetime 2025-01-12T09:00:00+00:00"
    )
    twice = runs["memora-ogm"].results["fetch_resolved(named twice)"]
    assert [len(m["message_sources"]) for m in twice["memora"]] == [2]
    assert [len(m["message_sources"]) for m in twice["memora-ogm"]] == [1]


# -- SPEC section 10, items 16 to 18 (both twins, through the `memora` fixture) ----------


async def test_spec_10_16_update_on_a_day_without_a_date_node_stores_its_memories(
    memora: Any, driver: Driver
) -> None:
    """memora-core 0.3.1 MATCHes the update day's Date when it creates the memories, so
    on a day with no Date node yet it silently drops them."""
    world = await make_world(memora)
    saved_on = datetime(2025, 1, 10, 9, 0, tzinfo=timezone.utc)
    updated_on = datetime(2025, 1, 12, 9, 0, tzinfo=timezone.utc)
    messages = chat("I like tea.", "Noted.")
    interaction_id = await save(memora, world, conversation(messages, saved_on, [("m1", [0])]))
    assert rows(driver, "MATCH (d:Date) RETURN d.date AS date") == [
        {"date": neo4j.time.Date(2025, 1, 10)}
    ]

    messages += chat("And coffee.")
    await update(memora, world, interaction_id, conversation(messages, updated_on, [("m2", [2])]))

    found = await memora.get_interaction(world.org_id, world.user_id, interaction_id)
    assert sorted(m.memory for m in found.memories) == ["m1", "m2"]
    links = rows(
        driver,
        "MATCH (m:Memory)-[:DATE_OBTAINED]->(d:Date) RETURN m.memory AS memory, d.date AS date "
        "ORDER BY memory",
    )
    assert [(r["memory"], r["date"].to_native()) for r in links] == [
        ("m1", saved_on.date()),
        ("m2", updated_on.date()),
    ]
    assert sources(driver, interaction_id) == {"m1": [0], "m2": [2]}
    everything = await memora.get_all_user_memories(world.org_id, world.user_id)
    assert [m.memory for m in everything] == ["m2", "m1"]


async def test_spec_10_17_missing_things_raise_not_found_instead_of_looking_empty(
    memora: Any, driver: Driver
) -> None:
    """memora-core returns [] or silently does nothing, so a typo in an id looks like an
    empty tenant; memora-ogm raises the matching not-found error (a Neo4jError, as
    Memora's own not-found errors are) and writes nothing."""
    world = await make_world(memora)
    await saved_memory(memora, world, "kept")
    org, user = world.org_id, world.user_id
    before = snapshot(driver)
    calls: list[tuple[str, tuple[str, ...], type[NotFoundError]]] = [
        ("get_all_org_users", ("missing",), OrganizationNotFound),
        ("get_all_org_agents", ("missing",), OrganizationNotFound),
        ("get_all_user_agents", (org, "missing"), UserNotFound),
        ("get_all_user_interactions", (org, "missing"), UserNotFound),
        ("get_all_user_memories", (org, "missing"), UserNotFound),
        ("get_user_memory_history", (org, user, NO_MEMORY), MemoryNotFound),
        ("delete_organization", ("missing",), OrganizationNotFound),
        ("delete_agent", (org, "missing"), AgentNotFound),
        ("delete_user", (org, "missing"), UserNotFound),
        ("delete_user_memory", (org, user, NO_MEMORY), MemoryNotFound),
        ("delete_all_user_memories", (org, "missing"), UserNotFound),
        ("delete_user_interaction_and_its_memories", (org, user, "missing"), InteractionNotFound),
        ("delete_all_user_interactions_and_their_memories", (org, "missing"), UserNotFound),
    ]
    for method, arguments, error in calls:
        with pytest.raises(error) as raised:
            await getattr(memora, method)(*arguments)
        assert isinstance(raised.value, Neo4jError), method
        assert arguments[-1] in str(raised.value), method  # names what is missing
    assert snapshot(driver) == before


async def test_spec_10_18_resolved_fetches_return_each_memory_and_source_once(
    memora: Any,
) -> None:
    """memora-core repeats a memory's sources once per request row naming it (twice, or
    an old version and its successor); a superseded-twice memory resolves to the newest."""
    world = await make_world(memora)
    messages = chat("I have a cat.", "Nice.", "Now two cats.", "Lovely.", "Three, in fact.")
    interaction_id = await save(
        memora, world, conversation(messages[:2], DAY, [("one cat", [0, 1])])
    )
    one = (await interaction_memory_ids(memora, world, interaction_id))["one cat"]
    await update(
        memora,
        world,
        interaction_id,
        conversation(messages[:4], LATER, contrary=[("two cats", [2, 3], one)]),
    )
    two = (await interaction_memory_ids(memora, world, interaction_id))["two cats"]

    for request in ([two, two], [one, two], [one, one, two]):
        (found,) = await memora.fetch_user_memories_resolved([world.ids(m) for m in request])
        assert (found.memory_id, found.memory) == (two, "two cats")
        assert [m.msg_position for m in found.message_sources] == [2, 3]
    batch = await memora.fetch_user_memories_resolved_batch(
        [[world.ids(one), world.ids(two)], [world.ids(two), world.ids(two)]]
    )
    assert [[(m.memory, len(m.message_sources)) for m in result] for result in batch] == [
        [("two cats", 2)],
        [("two cats", 2)],
    ]

    # A fork: `one cat` superseded a second time, later; the newest version wins.
    await update(
        memora,
        world,
        interaction_id,
        conversation(messages, LATER + timedelta(days=1), contrary=[("three cats", [4], one)]),
    )
    (found,) = await memora.fetch_user_memories_resolved([world.ids(one), world.ids(one)])
    assert found.memory == "three cats"
    assert [m.msg_position for m in found.message_sources] == [4]
