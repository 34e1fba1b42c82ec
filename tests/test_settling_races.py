"""Settling pending vector changes never brings a deleted memory's point back (issue 46).

A settler reads the graph (the memories a pending record names, or a tenant's pages),
then writes the points of what it found. Each test holds it between the two
(:mod:`settling_gate`), runs a delete of the same memories meanwhile, then lets it go;
after both, the graph's memory ids and the store's point ids must be the same. Two
orders: the delete commits while the settler is held ("commits first"), or the delete is
itself held after its vector half and commits only once the settler has written and
checked ("commits last"). In both twins (the sync settler in a thread), and across two
processes sharing one Neo4j and one Qdrant server.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import threading
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from interaction_helpers import World, chat, conversation, make_world, memory_ids, save
from invariants import all_violations, graph_memories, vector_memories
from neo4j import Driver
from neo4j.exceptions import IncompleteCommit
from qdrant_client import models
from qdrant_standin import StandIn, qdrant_standin
from settling_gate import (
    PATIENCE,
    Gate,
    GatedQdrant,
    SyncGatedQdrant,
    gated,
    held_record,
    hold_commits,
)
from sync_adapter import AwaitableTwin

from memora_ogm import sync
from memora_ogm._async.interface import Neo4jGraphInterface
from memora_ogm.errors import OutcomeUnknown
from memora_ogm.server import Neo4jConnection
from memora_ogm.testing import clear_database
from memora_ogm.vector_db.embedding import HashingEmbedding
from memora_ogm.vector_db.pending import Journal
from memora_ogm.vector_db.qdrant import QdrantDB

TESTS = Path(__file__).parent
#: What the pending record names: Ann's memories, a purge of Ann's points, or of her
#: organisation's.
KINDS = ("memories", "user", "organization")


@dataclass
class Tenants:
    """Ann (two interactions, four memories) and Bob in one organisation, Cid in another."""

    ann: World
    bob: World
    cid: World
    interactions: list[str]
    memories: list[str]


Delete = Callable[[Any, Tenants], Awaitable[Any]]

DELETES: dict[str, Delete] = {
    "memory": lambda m, t: m.delete_user_memory(t.ann.org_id, t.ann.user_id, t.memories[0]),
    "interaction": lambda m, t: m.delete_user_interaction_and_its_memories(
        t.ann.org_id, t.ann.user_id, t.interactions[0]
    ),
    "all interactions": lambda m, t: m.delete_all_user_interactions_and_their_memories(
        t.ann.org_id, t.ann.user_id
    ),
    "user": lambda m, t: m.delete_user(t.ann.org_id, t.ann.user_id),
    "organization": lambda m, t: m.delete_organization(t.ann.org_id),
}


async def tenants(memora: Any) -> Tenants:
    ann = await make_world(memora)
    bob = await make_world(memora, "Bob", org_id=ann.org_id)
    cid = await make_world(memora, "Cid")
    interactions: list[str] = []
    memories: list[str] = []
    for place in ("Oslo", "Bergen"):
        data = conversation(
            chat(f"I live in {place}", "Nice"), memories=[(place, [0]), (f"not {place}", [1])]
        )
        interactions.append(await save(memora, ann, data))
        memories += (await memory_ids(memora, ann, interactions[-1])).values()
    await save(memora, bob, conversation(chat("jazz"), memories=[("jazz", [0])]))
    await save(memora, cid, conversation(chat("tea"), memories=[("tea", [0])]))
    return Tenants(ann, bob, cid, interactions, memories)


@dataclass
class Setting:
    twin: str
    memora: Any  # the facade itself (the sync one undressed, to run in threads)
    dressed: Any  # the facade as async code sees it
    store: Any
    tenants: Tenants


@pytest.fixture(params=["async", "sync"])
async def setting(
    request: pytest.FixtureRequest,
    neo4j_connection: Neo4jConnection,
    neo4j_driver: Driver,
    tmp_path: Path,
) -> AsyncIterator[Setting]:
    clear_database(neo4j_driver, neo4j_connection.database)
    conn = neo4j_connection
    args = (conn.uri, conn.username, conn.password, conn.database)
    path = tmp_path / "vectors"
    if request.param == "async":
        store: Any = gated(GatedQdrant(path=path, embedding_function=HashingEmbedding()))
        memora: Any = Neo4jGraphInterface(*args, store)
        dressed: Any = memora
    else:
        store = gated(SyncGatedQdrant(path=path, embedding_function=HashingEmbedding()))
        memora = sync.Neo4jGraphInterface(*args, store)
        dressed = AwaitableTwin(memora, Neo4jGraphInterface)
    await dressed.setup()
    yield Setting(request.param, memora, dressed, store, await tenants(dressed))
    await dressed.close()
    closed = store.close()
    if asyncio.iscoroutine(closed):
        await closed


class Background:
    """A facade call running beside the test: a task, or a thread for the sync twin."""

    def __init__(self, twin: str, call: Callable[[], Any]) -> None:
        self.result: list[Any] = []
        self.error: list[BaseException] = []
        self.task: asyncio.Task[Any] | None = None
        self.thread: threading.Thread | None = None
        if twin == "async":
            self.task = asyncio.ensure_future(call())
        else:
            self.thread = threading.Thread(target=self._run, args=(call,))
            self.thread.start()

    def _run(self, call: Callable[[], Any]) -> None:
        try:
            self.result.append(call())
        except BaseException as error:  # noqa: BLE001 - raised again by done()
            self.error.append(error)

    async def done(self) -> Any:
        if self.task is not None:
            return await asyncio.wait_for(self.task, PATIENCE)
        assert self.thread is not None
        await asyncio.to_thread(self.thread.join, PATIENCE)
        if self.error:
            raise self.error[0]
        assert self.result, "the call in the thread never ended"
        return self.result[0]


async def waited(wait: Callable[[], None]) -> None:
    await asyncio.to_thread(wait)


async def _ids_agree(driver: Driver, store: Any) -> None:
    graph = {entry[0] for entry in graph_memories(driver)}
    points = {entry[0] for entry in await vector_memories(store)}
    assert points == graph, f"points of deleted memories: {sorted(points - graph)}"
    assert await all_violations(driver, store) == []


@pytest.mark.parametrize("order", ["commits first", "commits last"])
@pytest.mark.parametrize("delete", list(DELETES))
@pytest.mark.parametrize("kind", KINDS)
async def test_a_settler_held_across_a_delete_leaves_no_point_of_it(
    setting: Setting, neo4j_driver: Driver, kind: str, delete: str, order: str
) -> None:
    s, t = setting, setting.tenants
    await held_record(s.store, kind, t.ann.org_id, t.ann.user_id, t.memories)
    s.store.gate.arm(t.ann.user_id)
    settler = Background(s.twin, s.memora.settle_pending)
    await waited(s.store.gate.wait_reached)  # the graph read: Ann's memories are there

    if order == "commits first":
        await DELETES[delete](s.dressed, t)
        s.store.gate.open()
        assert await settler.done() == 1
    else:
        commits = hold_commits(s.memora.graph)
        commits.arm()
        deleting = Background(s.twin, lambda: DELETES[delete](s.memora, t))
        await waited(commits.wait_reached)  # its points removed, its commit not sent
        s.store.gate.open()
        assert await settler.done() == 1  # wrote Ann's points again: the graph has them
        commits.open()
        await deleting.done()

    assert Journal.kept_by(s.store).pending() == []
    await _ids_agree(neo4j_driver, s.store)
    survivors = {entry[2] for entry in graph_memories(neo4j_driver)}
    assert t.ann.user_id not in survivors or delete in ("memory", "interaction")
    assert t.cid.user_id in survivors


class RefusedCommit(Exception):
    """A commit the test refused (the transaction rolled back)."""


def refuse_commits(graph: Any) -> Gate:
    """The first commit after the gate is armed waits for it, then rolls back instead."""
    gate, commit = Gate(), graph.commit
    if asyncio.iscoroutinefunction(commit):

        async def refused(transaction: Any) -> None:
            if not gate.stops():
                await commit(transaction)
                return
            await asyncio.to_thread(gate.wait_opened)
            await transaction.rollback()
            raise RefusedCommit

    else:

        def refused(transaction: Any) -> None:  # type: ignore[misc]
            if not gate.stops():
                commit(transaction)
                return
            gate.wait_opened()
            transaction.rollback()
            raise RefusedCommit

    graph.commit = refused
    return gate


async def test_a_failed_delete_undone_after_another_delete_leaves_no_point(
    setting: Setting, neo4j_driver: Driver
) -> None:
    """A delete whose commit fails puts its points back (its undo). Another delete of the
    same memory, waiting for the first one's lock, commits before that undo writes: the
    undo checks the graph once written, and removes the point again."""
    s, t = setting, setting.tenants
    memory_id = t.memories[0]
    commits = refuse_commits(s.memora.graph)
    commits.arm()
    s.store.gate.arm(t.ann.user_id)  # the undo's write

    def delete() -> Any:
        return s.memora.delete_user_memory(t.ann.org_id, t.ann.user_id, memory_id)

    failing = Background(s.twin, delete)
    await waited(commits.wait_reached)  # its point removed, its lock held
    second = Background(s.twin, delete)  # waits for that lock
    commits.open()
    await waited(s.store.gate.wait_reached)  # the first one's undo, held before its write
    await second.done()
    s.store.gate.open()
    with pytest.raises(RefusedCommit):
        await failing.done()

    assert memory_id not in {entry[0] for entry in graph_memories(neo4j_driver)}
    await _ids_agree(neo4j_driver, s.store)


def lose_the_answer_unasked(graph: Any) -> None:
    """The next commits land and their answers are lost (``IncompleteCommit``), and the
    server cannot be asked whether they landed (``OutcomeUnknown``): a kill's outcome."""
    commit = graph.commit

    def unasked(landed: Any) -> bool:
        raise OutcomeUnknown("the server could not be asked (the test)")

    if asyncio.iscoroutinefunction(commit):

        async def lost(transaction: Any) -> None:
            await commit(transaction)
            raise IncompleteCommit("the answer to the commit was lost (the test)")

        async def asked(landed: Any) -> bool:
            return unasked(landed)

        graph.commit, graph._has_landed = lost, asked
    else:

        def lost_sync(transaction: Any) -> None:
            commit(transaction)
            raise IncompleteCommit("the answer to the commit was lost (the test)")

        graph.commit, graph._has_landed = lost_sync, unasked


async def test_a_settler_while_an_unknown_commit_hides_its_points_leaves_them_settled(
    setting: Setting, neo4j_driver: Driver
) -> None:
    """A save whose commit landed unanswered, the server away, hides its points and holds
    its record for a settler. A settler that took the record before the points were
    hidden wrote them back, closed the record, and the hiding then removed them for good
    (issue 48: 37 memories without points after Neo4j was killed under coalesced saves).
    The record is held only once the points are hidden: a settler meanwhile finds
    nothing to settle, the next one writes the points back."""
    s, t = setting, setting.tenants
    before = {entry[0] for entry in graph_memories(neo4j_driver)}
    lose_the_answer_unasked(s.memora.graph)
    s.store.deletes.arm()  # the hiding of the save's points
    data = conversation(chat("I moved to Tromso"), memories=[("Tromso", [0])])
    saving = Background(
        s.twin,
        lambda: s.memora.save_interaction_with_memories(
            t.bob.org_id, t.bob.agent_id, t.bob.user_id, data
        ),
    )
    await waited(s.store.deletes.wait_reached)
    await Background(s.twin, s.memora.settle_pending).done()
    s.store.deletes.open()
    with pytest.raises(OutcomeUnknown):
        await saving.done()
    (landed,) = {entry[0] for entry in graph_memories(neo4j_driver)} - before
    assert landed not in {entry[0] for entry in await vector_memories(s.store)}, "not hidden"

    await s.dressed.settle_pending()
    assert Journal.kept_by(s.store).pending() == []
    points = {entry[0] for entry in await vector_memories(s.store)}
    assert landed in points, "the landed save's memory has no point after settling"
    await _ids_agree(neo4j_driver, s.store)


# ---------------------------------------------------------------- across two processes


@dataclass
class SettlerProcess:
    """``held_settler.py`` running (the sync twin), on the same Neo4j and Qdrant server."""

    process: subprocess.Popen[str]
    url: str
    standin: StandIn

    def ask(self, line: str) -> str:
        assert self.process.stdin is not None and self.process.stdout is not None
        self.process.stdin.write(line + "\n")
        self.process.stdin.flush()
        return self.process.stdout.readline().strip()


@pytest.fixture(scope="module")
def settler_process(
    neo4j_connection: Neo4jConnection, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[SettlerProcess]:
    """One settling process for the module's tests, as an application's would live."""
    env = {
        **os.environ,
        **neo4j_connection.env(),
        "MEMORA_OGM_HOME": str(tmp_path_factory.mktemp("settler-home")),
        "PYTHONPATH": os.pathsep.join([str(TESTS), os.environ.get("PYTHONPATH", "")]),
    }
    with qdrant_standin() as (url, standin):
        process = subprocess.Popen(
            [sys.executable, str(TESTS / "held_settler.py"), url],
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        try:
            yield SettlerProcess(process, url, standin)
            assert process.stdin is not None
            process.stdin.close()
            assert process.wait(PATIENCE) == 0
        finally:
            if process.poll() is None:
                process.kill()


@pytest.mark.parametrize("delete", list(DELETES))
@pytest.mark.parametrize("kind", ["memories", "user"])
async def test_a_settler_in_another_process_leaves_no_point_of_a_delete(
    neo4j_connection: Neo4jConnection,
    neo4j_driver: Driver,
    settler_process: SettlerProcess,
    kind: str,
    delete: str,
) -> None:
    """The settler runs in a process of its own, held at its vector write while this
    process deletes through the same Neo4j and the same Qdrant server."""
    clear_database(neo4j_driver, neo4j_connection.database)
    conn = neo4j_connection
    store = QdrantDB(url=settler_process.url, embedding_function=HashingEmbedding())
    memora = Neo4jGraphInterface(conn.uri, conn.username, conn.password, conn.database, store)
    try:
        await memora.setup()
        await store.async_client.delete(
            store.collection_name, models.FilterSelector(filter=models.Filter())
        )  # the points of earlier tests
        t = await tenants(memora)
        ids = " ".join([t.ann.org_id, t.ann.user_id, *t.memories])
        assert settler_process.ask(f"hold {kind} {ids}") == "held"
        await DELETES[delete](memora, t)
        assert settler_process.ask("go") == "settled 1"
        await _ids_agree(neo4j_driver, store)
    finally:
        await memora.close()
        await store.close()
