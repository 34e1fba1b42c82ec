"""A write whose commit went unanswered is resolved, not re-run (issue 20, item 7).

Each write runs through :class:`~lost_replies.ReplyLosingProxy`, which lets the
server commit and then cuts the connection before the answer arrives: the driver
raises ``IncompleteCommit`` (explicit transaction) or ``ServiceUnavailable`` (an
auto-commit statement) for a write that landed. The call must return normally,
as if the answer had come, and both stores must hold exactly what the write made:
no second copy, no memory missing from the vector store, no deleted memory put back.
The same errors come when the commit itself was lost on its way: then the write did
not land, and must run again, to the same end.
"""

from __future__ import annotations

import inspect
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import pytest
from interaction_helpers import (
    LATER,
    World,
    chat,
    conversation,
    make_world,
    save,
    snapshot,
    update,
)
from invariants import all_violations, graph_memories, vector_memories
from lost_replies import ReplyLosingProxy
from neo4j import Driver
from neo4j.exceptions import DatabaseError, TransientError
from sync_adapter import AwaitableTwin
from transfer_helpers import build_organisation, records_of

from memora_ogm import sync
from memora_ogm._async.interface import Neo4jGraphInterface
from memora_ogm.errors import OutcomeUnknown
from memora_ogm.server import Neo4jConnection
from memora_ogm.testing import clear_database
from memora_ogm.vector_db.embedding import HashingEmbedding
from memora_ogm.vector_db.qdrant import QdrantDB


@dataclass
class Setting:
    memora: Any  # the async facade, or the sync one dressed as async
    vectors: Any  # its QdrantDB (async or sync twin), or None
    world: World
    interaction_id: str
    memory_ids: list[str]


def value(driver: Driver, query: str, **params: Any) -> Any:
    return driver.execute_query(query, params).records[0][0]


def owned(driver: Driver, s: Setting, label: str) -> int:
    """How many nodes of ``label`` the setting's user has."""
    query = f"MATCH (n:{label} {{user_id: $user}}) RETURN count(n)"
    return int(value(driver, query, user=s.world.user_id))


@pytest.fixture(params=["async", "sync"])
async def setting(
    request: pytest.FixtureRequest,
    neo4j_connection: Neo4jConnection,
    neo4j_driver: Driver,
    proxy: ReplyLosingProxy,
) -> AsyncIterator[Setting]:
    """A facade through the proxy, with an in-memory Qdrant, on one user's saved interaction
    (two memories) and another user's (so that deletes have neighbours to spare)."""
    clear_database(neo4j_driver, neo4j_connection.database)
    proxy.lose_next(0)
    conn = neo4j_connection
    args = (proxy.uri, conn.username, conn.password, conn.database)
    if request.param == "async":
        vectors: Any = QdrantDB(location=":memory:", embedding_function=HashingEmbedding())
        memora: Any = Neo4jGraphInterface(*args, vectors)
    else:
        vectors = sync.QdrantDB(location=":memory:", embedding_function=HashingEmbedding())
        memora = AwaitableTwin(sync.Neo4jGraphInterface(*args, vectors), Neo4jGraphInterface)
    await memora.setup()
    world = await make_world(memora)
    interaction_id = await save(
        memora,
        world,
        conversation(chat("I live in Oslo", "Nice"), memories=[("oslo", [0]), ("nice", [1])]),
    )
    other = await make_world(memora, "Bob", org_id=world.org_id)
    await save(memora, other, conversation(chat("jazz"), memories=[("jazz", [0])]))
    found = await memora.get_interaction(world.org_id, world.user_id, interaction_id)
    yield Setting(memora, vectors, world, interaction_id, [m.memory_id for m in found.memories])
    await memora.close()


Write = Callable[[Setting], Awaitable[Any]]
Check = Callable[[Setting, Driver, Any], None]

NEW = conversation(chat("I moved to Bergen", "Noted"), when=LATER, memories=[("bergen", [0])])


def _saved(s: Setting, driver: Driver, returned: Any) -> None:
    interaction_id, when = returned
    assert when == LATER
    keys = {"org": s.world.org_id, "user": s.world.user_id, "id": interaction_id}
    assert value(driver, "MATCH (i:Interaction {interaction_id: $id}) RETURN count(i)", **keys) == 1
    assert value(driver, "MATCH (m:Memory {interaction_id: $id}) RETURN count(m)", **keys) == 1
    assert value(driver, "MATCH (i:Interaction) RETURN count(i)") == 3


def _updated(s: Setting, driver: Driver, returned: Any) -> None:
    assert returned == (s.interaction_id, LATER)
    memories = "MATCH (m:Memory {interaction_id: $id}) RETURN m.memory ORDER BY m.memory"
    texts = [r[0] for r in driver.execute_query(memories, id=s.interaction_id).records]
    assert texts == ["bergen", "nice", "oslo"]


def _user_created(s: Setting, driver: Driver, returned: Any) -> None:
    query = "MATCH (u:User {user_name: 'Cy'}) RETURN u.user_id"
    assert [r[0] for r in driver.execute_query(query).records] == [returned.user_id]
    assert (
        value(
            driver, "MATCH (c:MemoryCollection {user_id: $u}) RETURN count(c)", u=returned.user_id
        )
        == 1
    )


def _interaction_gone(s: Setting, driver: Driver, returned: Any) -> None:
    assert (
        value(driver, "MATCH (i:Interaction {user_id: $u}) RETURN count(i)", u=s.world.user_id) == 0
    )
    assert value(driver, "MATCH (m:Memory {user_id: $u}) RETURN count(m)", u=s.world.user_id) == 0


def _memory_gone(s: Setting, driver: Driver, returned: Any) -> None:
    query = "MATCH (m:Memory {user_id: $u}) RETURN m.memory_id"
    left = [r[0] for r in driver.execute_query(query, u=s.world.user_id).records]
    assert left == s.memory_ids[1:]


def _memories_gone(s: Setting, driver: Driver, returned: Any) -> None:
    assert value(driver, "MATCH (m:Memory {user_id: $u}) RETURN count(m)", u=s.world.user_id) == 0
    assert (
        value(driver, "MATCH (i:Interaction {user_id: $u}) RETURN count(i)", u=s.world.user_id) == 1
    )


def _user_gone(s: Setting, driver: Driver, returned: Any) -> None:
    assert (
        value(
            driver, "MATCH (n {user_id: $u}) WHERE NOT n:Agent RETURN count(n)", u=s.world.user_id
        )
        == 0
    )
    assert value(driver, "MATCH (u:User) RETURN count(u)") == 1


def _agent_gone(s: Setting, driver: Driver, returned: Any) -> None:
    assert value(driver, "MATCH (a:Agent {agent_id: $a}) RETURN count(a)", a=s.world.agent_id) == 0
    assert value(driver, "MATCH (a:Agent) RETURN count(a)") == 1


def _organization_gone(s: Setting, driver: Driver, returned: Any) -> None:
    assert value(driver, "MATCH (n) RETURN count(n)") == 0


WRITES: dict[str, tuple[Write, Check]] = {
    "save_interaction_with_memories": (lambda s: save_returning(s), _saved),
    "update_interaction_and_memories": (
        lambda s: update(s.memora, s.world, s.interaction_id, NEW),
        _updated,
    ),
    "create_user": (lambda s: s.memora.create_user(s.world.org_id, "Cy"), _user_created),
    "delete_user_interaction_and_its_memories": (
        lambda s: s.memora.delete_user_interaction_and_its_memories(
            s.world.org_id, s.world.user_id, s.interaction_id
        ),
        _interaction_gone,
    ),
    "delete_user_memory": (
        lambda s: s.memora.delete_user_memory(s.world.org_id, s.world.user_id, s.memory_ids[0]),
        _memory_gone,
    ),
    "delete_all_user_memories": (
        lambda s: s.memora.delete_all_user_memories(s.world.org_id, s.world.user_id),
        _memories_gone,
    ),
    "delete_all_user_interactions_and_their_memories": (
        lambda s: s.memora.delete_all_user_interactions_and_their_memories(
            s.world.org_id, s.world.user_id
        ),
        _interaction_gone,
    ),
    "delete_user": (lambda s: s.memora.delete_user(s.world.org_id, s.world.user_id), _user_gone),
    "delete_agent": (
        lambda s: s.memora.delete_agent(s.world.org_id, s.world.agent_id),
        _agent_gone,
    ),
    "delete_organization": (
        lambda s: s.memora.delete_organization(s.world.org_id),
        _organization_gone,
    ),
}


async def save_returning(s: Setting) -> Any:
    return await s.memora.save_interaction_with_memories(
        s.world.org_id, s.world.agent_id, s.world.user_id, NEW
    )


@pytest.mark.parametrize("lost", ["answer", "commit"])
@pytest.mark.parametrize("write", list(WRITES))
async def test_a_write_whose_commit_went_unanswered_returns_as_if_answered(
    setting: Setting, proxy: ReplyLosingProxy, neo4j_driver: Driver, write: str, lost: str
) -> None:
    call, check = WRITES[write]
    proxy.lost.clear()
    proxy.lose_next(before=lost == "commit")
    returned = await call(setting)

    assert len(proxy.lost) == 1, "the commit's answer was never lost"
    check(setting, neo4j_driver, returned)
    assert await vector_memories(setting.vectors) == graph_memories(neo4j_driver)
    assert await all_violations(neo4j_driver, setting.vectors) == []


# --------------------------------------------------------------------------- import


async def _facade(kind: str, uri: str, conn: Neo4jConnection) -> tuple[Any, Any]:
    """A facade of ``kind`` ("async" or "sync") on ``uri`` with a fresh in-memory Qdrant."""
    args = (uri, conn.username, conn.password, conn.database)
    if kind == "async":
        vectors: Any = QdrantDB(location=":memory:", embedding_function=HashingEmbedding())
        return Neo4jGraphInterface(*args, vectors), vectors
    vectors = sync.QdrantDB(location=":memory:", embedding_function=HashingEmbedding())
    return AwaitableTwin(sync.Neo4jGraphInterface(*args, vectors), Neo4jGraphInterface), vectors


@dataclass
class Imported:
    """What an import returned, and both stores after it."""

    summary: Any
    graph: tuple[list[str], list[str]]
    vectors: list[Any]


async def _import(
    kind: str,
    proxy: ReplyLosingProxy,
    conn: Neo4jConnection,
    driver: Driver,
    records: list[Any],
    mode: str,
    arm: Callable[[], None] = lambda: None,
) -> Imported:
    """Import ``records`` into an empty graph through ``proxy``, armed by ``arm`` once the
    schema is set up."""
    clear_database(driver, conn.database)
    proxy.lose_next(0)
    memora, vectors = await _facade(kind, proxy.uri, conn)
    try:
        await memora.setup()
        arm()
        summary = await memora.import_records(records, on_conflict=mode)
        return Imported(summary, snapshot(driver), await vector_memories(vectors))
    finally:
        await memora.close()


@pytest.fixture(scope="module")
async def export(neo4j_connection: Neo4jConnection, neo4j_driver: Driver) -> list[Any]:
    """An organisation's export (one batch of each record type), and the graph left empty."""
    clear_database(neo4j_driver, neo4j_connection.database)
    conn = neo4j_connection
    memora = Neo4jGraphInterface(conn.uri, conn.username, conn.password, conn.database)
    try:
        await memora.setup()
        org = await build_organisation(memora)
        records = await records_of(memora.export_organization(org.org_id))
    finally:
        await memora.close()
    assert {r["type"] for r in records} >= {"organization", "user", "agent", "memory"}
    return records


#: Write transactions of an import of ``export``: a batch per record type.
IMPORT_BATCHES = ["organization", "user", "agent", "interaction", "memory", "contrary_update"]


@pytest.mark.parametrize("lost", ["answer", "commit"])
@pytest.mark.parametrize("mode", ["fail", "skip"])
@pytest.mark.parametrize("batch", IMPORT_BATCHES)
@pytest.mark.parametrize("kind", ["async", "sync"])
async def test_an_import_whose_batch_commit_went_unanswered_ends_as_a_clean_one(
    neo4j_connection: Neo4jConnection,
    neo4j_driver: Driver,
    proxy: ReplyLosingProxy,
    export: list[Any],
    kind: str,
    batch: str,
    mode: str,
    lost: str,
) -> None:
    """The batch's write landed (or, losing the commit, did not): the import goes on and
    ends with what an import that heard every answer makes, in both stores."""
    clean = await _import(kind, proxy, neo4j_connection, neo4j_driver, export, mode)
    proxy.lost.clear()

    def arm() -> None:
        proxy.lose_next(0, before=lost == "commit")
        commits = iter(range(len(IMPORT_BATCHES)))
        proxy.lose = lambda statements: next(commits, None) == IMPORT_BATCHES.index(batch)

    again = await _import(kind, proxy, neo4j_connection, neo4j_driver, export, mode, arm)

    assert len(proxy.lost) == 1, "the batch's commit answer was never lost"
    assert again.summary == clean.summary
    assert again.graph == clean.graph
    assert again.vectors == clean.vectors == graph_memories(neo4j_driver)
    assert await all_violations(neo4j_driver) == []


# --------------------------------------------------------------------------- erasure

ERASURES = [
    "delete_user_interaction_and_its_memories",
    "delete_all_user_memories",
    "delete_all_user_interactions_and_their_memories",
    "delete_user",
    "delete_organization",
]


@pytest.mark.parametrize("batch", [1, 2])
@pytest.mark.parametrize("write", ERASURES)
async def test_an_erasure_whose_batch_commit_went_unanswered_goes_on_to_the_end(
    setting: Setting, proxy: ReplyLosingProxy, neo4j_driver: Driver, write: str, batch: int
) -> None:
    """A batch of one node of each kind: the erasure takes several, and the answer of one
    of them is lost after it committed; it goes on from there and finishes."""
    getattr(setting.memora, "_twin", setting.memora).erase_batch_size = 1
    call, check = WRITES[write]
    proxy.lost.clear()
    commits = iter(range(1_000))
    proxy.lose = lambda statements: next(commits) == batch - 1
    returned = await call(setting)

    assert len(proxy.lost) == 1, "no batch's answer was lost"
    check(setting, neo4j_driver, returned)
    assert await vector_memories(setting.vectors) == graph_memories(neo4j_driver)
    assert await all_violations(neo4j_driver, setting.vectors) == []


# ------------------------------------------------------------- a landing check that fails


def fail_next_auto_commit(graph: Any) -> list[str]:
    """The next auto-commit statement of ``graph`` (after a lost commit: the check whether
    it landed) fails with a server error, once; returns the statements failed so."""
    auto_commit = graph._auto_commit
    failed: list[str] = []
    error = DatabaseError("injected: the landing check failed")
    if inspect.iscoroutinefunction(auto_commit):

        async def failing(query: str, *args: Any, **kwargs: Any) -> Any:
            if not failed:
                failed.append(query)
                raise error
            return await auto_commit(query, *args, **kwargs)

    else:

        def failing(query: str, *args: Any, **kwargs: Any) -> Any:  # type: ignore[misc]
            if not failed:
                failed.append(query)
                raise error
            return auto_commit(query, *args, **kwargs)

    graph._auto_commit = failing
    return failed


@pytest.mark.parametrize("how", ["alone", "bulk"])
async def test_a_landing_check_that_fails_leaves_the_outcome_unknown(
    setting: Setting, proxy: ReplyLosingProxy, neo4j_driver: Driver, how: str
) -> None:
    """Asking whether an unanswered commit landed fails: the callers get ``OutcomeUnknown``
    and nothing runs again (no retry, no split batch) while the vector changes are pending;
    settling then leaves both stores agreeing on what landed, once."""
    s = setting
    proxy.lost.clear()
    proxy.lose_next()  # the answer: the write landed
    failed = fail_next_auto_commit(s.memora.graph)
    statements = s.memora.graph.statements
    if how == "alone":
        with pytest.raises(OutcomeUnknown, match="landing check failed"):
            await save_returning(s)
        assert s.memora.graph.statements == statements + 1, "the save was sent again"
        saves = 1
    else:
        items = [(s.world.user_id, NEW)] * 4
        answers = await s.memora.save_interactions_with_memories(
            s.world.org_id, s.world.agent_id, items
        )
        # One answer for all: the batch was not split and sent again in halves.
        assert [type(answer) for answer in answers] == [OutcomeUnknown] * 4
        assert "landing check failed" in str(answers[0])
        saves = 4

    assert len(failed) == 1 and len(proxy.lost) == 1
    assert value(neo4j_driver, "MATCH (i:Interaction) RETURN count(i)") == 2 + saves
    new = "MATCH (m:Memory {memory: 'bergen'}) RETURN count(m)"
    assert value(neo4j_driver, new) == saves
    await s.memora.settle_pending()
    assert await vector_memories(s.vectors) == graph_memories(neo4j_driver)
    assert await all_violations(neo4j_driver, s.vectors) == []


def fail_once(owner: Any, name: str, error: Exception, before: Any = None) -> list[str]:
    """``owner.name`` fails once with ``error`` (after ``before(*args)``, if given)."""
    method = getattr(owner, name)
    failed: list[str] = []
    if inspect.iscoroutinefunction(method):

        async def failing(*args: Any) -> Any:
            if failed:
                return await method(*args)
            failed.append(name)
            if before is not None:
                await before(*args)
            raise error

    else:

        def failing(*args: Any) -> Any:  # type: ignore[misc]
            if failed:
                return method(*args)
            failed.append(name)
            if before is not None:
                before(*args)
            raise error

    setattr(owner, name, failing)
    return failed


async def test_a_failed_commit_whose_undo_fails_is_not_run_again(
    setting: Setting, neo4j_driver: Driver
) -> None:
    """A commit refused with a transient error would be retried, but the undo of its vector
    changes failed too, so they are pending: the caller gets ``OutcomeUnknown`` and the save
    is not run again while a settler could take its record; settling leaves both stores
    agreeing that it did not land."""
    s = setting
    refused = fail_once(
        s.memora.graph,
        "commit",
        TransientError("injected: the commit was refused"),
        before=lambda transaction: transaction.rollback(),
    )
    undo = fail_once(s.vectors, "delete_memories", RuntimeError("injected: the store is away"))
    with pytest.raises(OutcomeUnknown, match="could not be undone"):
        await save_returning(s)

    assert refused and undo
    assert value(neo4j_driver, "MATCH (i:Interaction) RETURN count(i)") == 2
    await s.memora.settle_pending()
    assert await vector_memories(s.vectors) == graph_memories(neo4j_driver)
    assert await all_violations(neo4j_driver, s.vectors) == []
