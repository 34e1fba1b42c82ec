"""Neo4j going away under the facade (issue 6): restarts between calls, crashes mid-call.

These tests run an embedded Neo4j of their own (memora-ogm's Maven-built server, the
``restartable_neo4j`` fixture) on a fixed port and data folder, so that it can be
stopped, killed and started again exactly where the facade expects it: the facade is
never recreated.

- Between calls: while the server is down a call fails with a clear error; the
  first call after the restart succeeds on the same facade and sees the data
  written before.
- In flight: the server is killed (SIGKILL) while a write's transaction is open
  (its graph work done, its vector entries being written, its commit not yet
  sent). After the restart neither store holds anything of that write.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest
from interaction_helpers import LATER, chat, conversation, make_world, save, update
from invariants import all_violations, full_snapshot
from neo4j.exceptions import ServiceUnavailable, SessionExpired
from restartable import RestartableServer
from sync_adapter import AwaitableTwin
from test_vector_consistency import FlakyVectorDB

from memora_ogm import sync
from memora_ogm._async.interface import Neo4jGraphInterface
from memora_ogm.errors import RetriesExhausted
from memora_ogm.server import Neo4jConnection
from memora_ogm.testing import clear_database
from memora_ogm.vector_db.embedding import HashingEmbedding
from memora_ogm.vector_db.qdrant import QdrantDB

pytestmark = pytest.mark.local_server

#: What a call may raise while the server is down: the driver's own errors, or the
#: facade's when its retries ran out on them.
SERVER_DOWN = (ServiceUnavailable, SessionExpired, RetriesExhausted)


#: Seconds a write whose commit went unanswered keeps asking the server whether it landed
#: (120 by default). Here the server stays down until the call has failed, so each such
#: write waited the whole window; a short one tests the same outcome.
OUTCOME_WINDOW = 2.0


def facades(conn: Neo4jConnection, vectors: tuple[Any, Any] = (None, None)) -> dict[str, Any]:
    """Both twins on ``conn``, the sync one dressed as async; ``vectors`` for each."""
    args = (conn.uri, conn.username, conn.password, conn.database)
    twins: dict[str, Any] = {
        "async": Neo4jGraphInterface(*args, vectors[0]),
        "sync": sync.Neo4jGraphInterface(*args, vectors[1]),
    }
    for twin in twins.values():
        twin.graph.outcome_timeout = OUTCOME_WINDOW
    return {"async": twins["async"], "sync": AwaitableTwin(twins["sync"], Neo4jGraphInterface)}


@pytest.fixture
async def both(restartable_neo4j: RestartableServer) -> AsyncIterator[dict[str, Any]]:
    assert restartable_neo4j.connection is not None
    found = facades(restartable_neo4j.connection)
    for memora in found.values():
        await memora.setup()
    yield found
    for memora in found.values():
        await memora.close()


async def test_the_first_call_after_a_restart_succeeds_on_the_same_facade(
    restartable_neo4j: RestartableServer, both: dict[str, Any]
) -> None:
    orgs = {
        twin: await memora.create_organization(f"{twin} before") for twin, memora in both.items()
    }

    restartable_neo4j.stop()
    for twin, memora in both.items():
        with pytest.raises(SERVER_DOWN):
            await memora.get_organization(orgs[twin].org_id)
        with pytest.raises(SERVER_DOWN):
            await memora.create_organization(f"{twin} while down")
    restartable_neo4j.start()

    for twin, memora in both.items():
        found = await memora.get_organization(orgs[twin].org_id)  # the first call: a read
        assert found.org_name == f"{twin} before"
        user = await memora.create_user(orgs[twin].org_id, "after")
        assert (await memora.get_user(orgs[twin].org_id, user.user_id)).user_name == "after"
    names = {org.org_name for org in await both["async"].get_all_organizations()}
    assert {"async before", "sync before"} <= names
    assert not any("while down" in name for name in names)


class CrashingVectorDB(FlakyVectorDB):
    """Kills the server when ``armed`` and a write reaches the vector store.

    That is the moment a write's graph work is done and its transaction still open:
    the vector changes are applied just before the commit.
    """

    def __init__(self, inner: Any, crash: Callable[[], None]) -> None:
        super().__init__(inner)
        self.crash = crash
        self.armed = False

    def __getattr__(self, name: str) -> Any:
        method = super().__getattr__(name)
        if self.armed and name in self.MUTATORS:
            self.armed = False
            self.crash()
        return method


Write = Callable[[Any, Any, str], Any]

WRITES: dict[str, Write] = {
    "save": lambda graph, world, _: save(
        graph, world, conversation(chat("lost", "words"), when=LATER, memories=[("lost", [1])])
    ),
    "update": lambda graph, world, interaction_id: update(
        graph,
        world,
        interaction_id,
        conversation(chat("kept", "rewritten"), when=LATER, memories=[("lost", [1])]),
    ),
}


@pytest.mark.parametrize(("twin", "write"), [("async", "save"), ("sync", "update")])
async def test_a_write_in_flight_when_the_server_dies_leaves_nothing_behind(
    restartable_neo4j: RestartableServer, tmp_path: Path, twin: str, write: str
) -> None:
    assert restartable_neo4j.connection is not None
    driver = restartable_neo4j.driver()
    clear_database(driver, restartable_neo4j.connection.database)
    store = QdrantDB if twin == "async" else sync.QdrantDB
    inner = store(path=str(tmp_path / "qdrant"), embedding_function=HashingEmbedding())
    vectors = CrashingVectorDB(inner, restartable_neo4j.crash)
    graph = facades(restartable_neo4j.connection, (vectors, vectors))[twin]
    try:
        await graph.setup()
        world = await make_world(graph)
        interaction_id = await save(
            graph, world, conversation(chat("kept", "words"), memories=[("kept", [0])])
        )
        before = await full_snapshot(driver, vectors)

        vectors.armed = True
        with pytest.raises(SERVER_DOWN):
            await WRITES[write](graph, world, interaction_id)
        assert not vectors.armed, "the write never reached the vector store"
        with pytest.raises(SERVER_DOWN):  # still down
            await graph.get_user(world.org_id, world.user_id)
        restartable_neo4j.start()

        # The same facade: its first call reads what was there before the write.
        found = await graph.get_interaction(world.org_id, world.user_id, interaction_id)
        assert [m.content for m in found.messages] == ["kept", "words"]
        assert await full_snapshot(driver, vectors) == before
        assert await all_violations(driver, vectors) == []
        await WRITES[write](graph, world, interaction_id)  # and it writes again
        assert await all_violations(driver, vectors) == []
    finally:
        driver.close()
        await graph.close()
