"""A commit whose outcome is unknown never splits the graph from the vector store (issue 40).

A write's commit (or its answer) is lost by :class:`~lost_replies.ReplyLosingProxy`,
which then keeps the server away for longer than the facade's ``outcome_timeout``: the
facade cannot learn whether the commit landed and raises ``OutcomeUnknown``. Its vector
changes are then pending: searches must not find a memory that may not exist, and once
the server answers again the graph settles them (on the next write, on connecting in
``setup()``, and in ``repair()``), so that the graph's memories and the store's points
are the same ids. The store is the embedded one (``QdrantDB(path=...)``), so the
journal of pending changes is on disk.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
from interaction_helpers import LATER, World, chat, conversation, make_world, save, update
from invariants import all_violations, graph_memories, vector_memories
from lost_replies import ReplyLosingProxy
from neo4j import Driver
from sync_adapter import AwaitableTwin
from test_unknown_commits import Setting

from memora_ogm import sync
from memora_ogm._async.interface import Neo4jGraphInterface
from memora_ogm.errors import OutcomeUnknown
from memora_ogm.server import Neo4jConnection
from memora_ogm.testing import clear_database
from memora_ogm.vector_db.embedding import HashingEmbedding
from memora_ogm.vector_db.pending import Journal
from memora_ogm.vector_db.qdrant import QdrantDB
from memora_ogm.vector_db.scope import MemorySearchScope

TESTS = Path(__file__).parent
#: The facade gives up asking whether a commit landed after this long (each ask retried
#: with a short backoff, so that one ask cannot outlast the outage)...
OUTCOME_TIMEOUT = 0.5
BACKOFF = 0.001
#: ...and the server stays away longer.
OUTAGE = 1.5


@pytest.fixture(params=["async", "sync"])
async def setting(
    request: pytest.FixtureRequest,
    neo4j_connection: Neo4jConnection,
    neo4j_driver: Driver,
    proxy: ReplyLosingProxy,
    tmp_path: Path,
) -> AsyncIterator[Setting]:
    """A facade through the proxy with an embedded store, on one user's saved interaction
    (two memories) and another user's."""
    clear_database(neo4j_driver, neo4j_connection.database)
    proxy.lose_next(0)
    proxy.outage = 0.0
    conn = neo4j_connection
    args = (proxy.uri, conn.username, conn.password, conn.database)
    store = tmp_path / "vectors"
    if request.param == "async":
        vectors: Any = QdrantDB(path=store, embedding_function=HashingEmbedding())
        memora: Any = Neo4jGraphInterface(*args, vectors)
    else:
        vectors = sync.QdrantDB(path=store, embedding_function=HashingEmbedding())
        memora = AwaitableTwin(sync.Neo4jGraphInterface(*args, vectors), Neo4jGraphInterface)
    memora.graph.outcome_timeout = OUTCOME_TIMEOUT
    memora.graph.base_backoff = BACKOFF
    await memora.setup()
    world = await make_world(memora)
    data = conversation(chat("I live in Oslo", "Nice"), memories=[("oslo", [0]), ("nice", [1])])
    interaction_id = await save(memora, world, data)
    other = await make_world(memora, "Bob", org_id=world.org_id)
    await save(memora, other, conversation(chat("jazz"), memories=[("jazz", [0])]))
    found = await memora.get_interaction(world.org_id, world.user_id, interaction_id)
    yield Setting(memora, vectors, world, interaction_id, [m.memory_id for m in found.memories])
    proxy.back()
    await memora.close()
    await _maybe(vectors.close())


async def _maybe(value: Any) -> Any:
    return await value if isinstance(value, Awaitable) else value


NEW = conversation(chat("I moved to Bergen", "Noted"), when=LATER, memories=[("bergen", [0])])

WRITES: dict[str, Callable[[Setting], Awaitable[Any]]] = {
    "save": lambda s: s.memora.save_interaction_with_memories(
        s.world.org_id, s.world.agent_id, s.world.user_id, NEW
    ),
    "update": lambda s: update(s.memora, s.world, s.interaction_id, NEW),
    "delete_memory": lambda s: s.memora.delete_user_memory(
        s.world.org_id, s.world.user_id, s.memory_ids[0]
    ),
    "delete_user": lambda s: s.memora.delete_user(s.world.org_id, s.world.user_id),
}

#: What settles the pending changes once the server is back.
SETTLERS: dict[str, Callable[[Setting], Awaitable[Any]]] = {
    "next write": lambda s: s.memora.create_agent(s.world.org_id, "Later"),
    "setup": lambda s: s.memora.setup(),
    "repair": lambda s: s.memora.repair(),
}


async def _searched_ids(s: Setting) -> set[str]:
    """The ids a search of every memory text finds, in each user of the organisation."""
    found: set[str] = set()
    for text in ("oslo", "nice", "jazz", "bergen"):
        hits = await _maybe(
            s.vectors.search_memory(text, MemorySearchScope.ORGANIZATION, s.world.org_id)
        )
        found |= {memory.memory_id for memory, _ in hits}
    return found


def _graph_ids(driver: Driver) -> set[str]:
    return {entry[0] for entry in graph_memories(driver)}


async def _store_ids(vectors: Any) -> set[str]:
    return {entry[0] for entry in await vector_memories(vectors)}


#: Every write, landed or not, settled by the next write; a save settled the other ways too.
CASES = [(write, landed, "next write") for write in WRITES for landed in (True, False)] + [
    ("save", landed, settler) for settler in ("setup", "repair") for landed in (True, False)
]


@pytest.mark.parametrize(
    ("write", "landed", "settler"),
    CASES,
    ids=[f"{w}-{'landed' if landed else 'not landed'}-by {by}" for w, landed, by in CASES],
)
async def test_a_write_whose_outcome_is_unknown_is_settled_by_the_graph(
    setting: Setting,
    proxy: ReplyLosingProxy,
    neo4j_driver: Driver,
    write: str,
    landed: bool,
    settler: str,
) -> None:
    s = setting
    before = _graph_ids(neo4j_driver)
    proxy.lost.clear()
    proxy.outage = OUTAGE
    proxy.lose_next(before=not landed)
    with pytest.raises(OutcomeUnknown):
        await WRITES[write](s)
    assert len(proxy.lost) == 1, "the commit's answer was never lost"
    assert proxy.down(), "the server came back before the facade gave up"

    # While the outcome is unknown: no search finds a memory the graph lacks.
    during = _graph_ids(neo4j_driver)
    assert (during != before) is landed
    assert await _searched_ids(s) <= during
    assert await _store_ids(s.vectors) <= during
    assert Journal.kept_by(s.vectors).pending(), "nothing is pending"

    proxy.back()
    proxy.outage = 0.0
    await SETTLERS[settler](s)

    assert Journal.kept_by(s.vectors).pending() == []
    graph = _graph_ids(neo4j_driver)
    assert graph == during
    assert await _store_ids(s.vectors) == graph
    assert await _searched_ids(s) <= graph
    assert await all_violations(neo4j_driver, s.vectors) == []


# --------------------------------------------------------------- a killed application


@pytest.mark.parametrize("action", ["save", "delete_memory"])
async def test_a_process_killed_before_its_commit_is_settled_at_the_next_start(
    neo4j_connection: Neo4jConnection, neo4j_driver: Driver, tmp_path: Path, action: str
) -> None:
    """The vector half applied, the process killed before its commit: the next process
    on the same store finds the dead one's journal and settles it in ``setup()`` (not on
    a write before: that settles only what this process holds)."""
    clear_database(neo4j_driver, neo4j_connection.database)
    store = tmp_path / "vectors"
    conn = neo4j_connection

    def facade() -> tuple[Any, Any]:
        vectors = sync.QdrantDB(path=store, embedding_function=HashingEmbedding())
        args = (conn.uri, conn.username, conn.password, conn.database)
        return sync.Neo4jGraphInterface(*args, vectors), vectors

    memora, vectors = facade()
    memora.setup()
    world = sync_world(memora)
    saved = memora.save_interaction_with_memories(
        world.org_id,
        world.agent_id,
        world.user_id,
        conversation(chat("I live in Oslo"), memories=[("oslo", [0])]),
    )
    memory_id = memora.get_interaction(world.org_id, world.user_id, saved[0]).memories[0].memory_id
    memora.close()
    vectors.close()
    graph = _graph_ids(neo4j_driver)

    env = {
        **os.environ,
        "NEO4J_URI": conn.uri,
        "NEO4J_USERNAME": conn.username,
        "NEO4J_PASSWORD": conn.password,
        "NEO4J_DATABASE": conn.database,
        "PYTHONPATH": os.pathsep.join([str(TESTS), os.environ.get("PYTHONPATH", "")]),
    }
    ids = [world.org_id, world.agent_id, world.user_id, memory_id]
    killed = subprocess.run(
        [sys.executable, str(TESTS / "killed_writer.py"), str(store), action, *ids],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert killed.returncode == -signal.SIGKILL, killed.stderr

    memora, vectors = facade()
    try:
        assert _graph_ids(neo4j_driver) == graph  # the commit never happened
        assert await _store_ids(vectors) != graph  # the vector half did
        memora.create_organization("Written before connecting")
        assert await _store_ids(vectors) != graph, "a write settled before the graph connected"
        memora.setup()
        assert Journal.kept_by(vectors).pending() == []
        assert await _store_ids(vectors) == graph
        assert await all_violations(neo4j_driver, vectors) == []
    finally:
        memora.close()
        vectors.close()


def sync_world(memora: Any) -> World:
    org = memora.create_organization("Acme").org_id
    agent = memora.create_agent(org, "Bot").agent_id
    user = memora.create_user(org, "Ann").user_id
    return World(org, user, agent)
