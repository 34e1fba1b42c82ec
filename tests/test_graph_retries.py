"""The unit of work retries what a concurrent writer causes, and gives up clearly."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest
from graph_fixtures import neomodel_on
from neo4j.exceptions import TransientError

from memora_ogm import ConflictError, RetriesExhausted
from memora_ogm._async.graph import Work, nothing
from memora_ogm._async.interface import Neo4jGraphInterface
from memora_ogm._async.nodes import Memory, MessageBlock, Org
from memora_ogm.engine.call import Call, Query
from memora_ogm.engine.convert import resolved_memory
from memora_ogm.engine.projection import projection
from memora_ogm.engine.unit_of_work import UnitOfWork
from memora_ogm.errors import NodeVanished
from memora_ogm.server import Neo4jConnection


@pytest.fixture
async def graph(neo4j_connection: Neo4jConnection) -> AsyncIterator[Any]:
    conn = neo4j_connection
    interface = Neo4jGraphInterface(conn.uri, conn.username, conn.password, conn.database)
    await interface.setup()
    yield interface.graph
    await interface.close()


def test_a_timestamp_read_from_a_vanished_node_says_so() -> None:
    with pytest.raises(NodeVanished):
        projection(Org).values({"org_id": "o", "org_name": "Acme", "created_at": None})


def test_a_memory_half_read_before_a_delete_says_so() -> None:
    """A projection reads properties one by one: a delete between them leaves text but no ids."""
    row = {"memory": "likes tea", "org_id": None, "user_id": None, "agent_id": None}
    with pytest.raises(NodeVanished):
        resolved_memory(
            {**row, "interaction_id": None, "memory_id": None, "message_sources": []},
            False,
            Memory,
            MessageBlock,
        )


@pytest.mark.parametrize("error", [NodeVanished("gone"), TransientError("deadlock")])
async def test_a_read_that_met_a_concurrent_writer_runs_again(graph: Any, error: Exception) -> None:
    calls = []

    async def work(_: Work) -> str:
        calls.append(1)
        if len(calls) == 1:
            raise error
        return "read"

    assert await graph.transaction(work, write=False) == "read"
    assert len(calls) == 2


async def test_retries_run_out_with_a_clear_error(graph: Any) -> None:
    calls = []

    async def work(_: Work) -> None:
        calls.append(1)
        raise TransientError("deadlock, again")

    graph.base_backoff = 0.001
    with pytest.raises(RetriesExhausted, match="gave up after 8 attempts"):
        await graph.transaction(work, write=False)
    assert len(calls) == graph.max_attempts == 8


async def test_other_errors_are_not_retried(graph: Any) -> None:
    calls = []

    async def work(_: Work) -> None:
        calls.append(1)
        raise ValueError("a bug, not a conflict")

    with pytest.raises(ValueError, match="a bug"):
        await graph.transaction(work, write=False)
    assert len(calls) == 1


async def _org_names(graph: Any, org_id: str) -> list[str]:
    named = Query("MATCH (o:Org {org_id: $org_id}) RETURN o.org_name AS name", {"org_id": org_id})
    names: list[str] = await graph.run(Call(named, lambda rows: [row["name"] for row in rows]))
    return names


async def test_a_key_that_exists_is_a_conflict_at_once(graph: Any) -> None:
    """A create whose key exists cannot succeed by running again: one attempt, then the
    facade's conflict error (whether a unit of work or neomodel made it, in a transaction
    or on its own)."""
    work = UnitOfWork()
    _, org = work.create(Org, org_name="Acme")
    await graph.run(Call(work, nothing, write=True))
    attempts: list[str] = []

    def duplicate() -> UnitOfWork:
        attempts.append("unit")
        work = UnitOfWork()
        work.create(Org, org_id=org["org_id"], org_name="copy")
        return work

    async def statement(transaction: Work) -> None:
        await transaction.send(duplicate())

    async def neomodel_save(work: Work) -> None:
        attempts.append("neomodel")
        with neomodel_on(work, await graph.driver()):
            await Org(org_id=org["org_id"], org_name="copy").save()

    graph.base_backoff = 0.001
    for name, write in (
        ("transaction", lambda: graph.transaction(statement)),
        ("auto-commit", lambda: graph.run(Call(duplicate(), nothing, write=True))),
        ("neomodel", lambda: graph.transaction(neomodel_save)),
    ):
        attempts.clear()
        before = graph.statements
        with pytest.raises(ConflictError, match="already exists with label `Org`"):
            await write()
        assert len(attempts) == 1, name
        if name != "neomodel":  # neomodel's statements do not go through Graph._send
            assert graph.statements - before == 1, name
    assert await _org_names(graph, org["org_id"]) == ["Acme"]


async def test_a_node_deleted_while_something_links_to_it_runs_again(graph: Any) -> None:
    """The server reports a node deleted while a concurrent transaction linked to it ("still
    has relationships") with the code of a key violation; it is a race to run again, not
    a conflict (the soak met it: an erasure batch deleting an emptied interaction as an
    update linked a new memory to it)."""
    work = UnitOfWork()
    _, org = work.create(Org, org_name="Acme")
    await graph.run(Call(work, nothing, write=True))
    linked = {"org_id": org["org_id"]}
    probe = "MATCH (o:Org {org_id: $org_id}) CREATE (o)<-[:BELONGS_TO]-(:Probe)"
    await graph.run(Call(Query(probe, linked), list, write=True))
    graph.max_attempts, graph.base_backoff = 3, 0.001
    before = graph.statements
    with pytest.raises(RetriesExhausted, match="still has relationships"):
        delete = Query("MATCH (o:Org {org_id: $org_id}) DELETE o", linked)
        await graph.run(Call(delete, list, write=True))
    assert graph.statements - before == 3
    await graph.run(Call(Query("MATCH (p:Probe) DETACH DELETE p", {}), list, write=True))
    assert await _org_names(graph, org["org_id"]) == ["Acme"]
