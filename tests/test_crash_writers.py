"""Neo4j killed again and again under writer threads (issues 20, 40 and 48).

One sync interface with the embedded vector store (``QdrantDB(path=...)``) is shared by
four threads saving interactions with memories, as a Flask or Django app shares it (32
threads with ``coalesce_writes``, their saves sharing transactions).
The server is killed with SIGKILL several times and started again on the same port and
data folder, each time as soon as every writer's call in flight at the kill has ended
(after the writers' ``outcome_timeout``), so that a commit in flight at the kill ends in
``OutcomeUnknown`` and its vector changes pending.
A call may fail while the server is down; a call that returned is an acknowledged write
and must be in both stores afterwards. The writers' own next writes settle what is
pending, and then the two stores must agree on every memory, acknowledged or not.
"""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest
from interaction_helpers import chat, conversation
from invariants import all_violations
from neo4j import Driver
from restartable import RestartableServer

from memora_ogm import sync
from memora_ogm.errors import OutcomeUnknown
from memora_ogm.sync import QdrantDB
from memora_ogm.testing import clear_database
from memora_ogm.vector_db.embedding import HashingEmbedding
from memora_ogm.vector_db.pending import Journal

pytestmark = pytest.mark.local_server

WRITERS = 4
CRASHES = 5
#: The writers stop asking whether a commit landed after this long; the server is away
#: for longer.
OUTCOME_TIMEOUT = 1.0


@pytest.mark.parametrize(("writers", "coalesce"), [(WRITERS, False), (32, True)])
async def test_no_acknowledged_write_is_lost_when_neo4j_is_killed_under_writers(
    restartable_neo4j: RestartableServer, tmp_path: Path, writers: int, coalesce: bool
) -> None:
    """Between two crashes the writers get at least as many writes acknowledged as there
    are writers; with ``coalesce_writes``, 32 writers whose saves share transactions."""
    conn = restartable_neo4j.connection
    assert conn is not None
    with restartable_neo4j.driver() as cleaning:
        # The variants share the server, each with a store of its own: the other one's
        # memories would have no points here (the 37 "without points" once seen in CI).
        clear_database(cleaning, conn.database)
    vectors = QdrantDB(path=tmp_path / "vectors", embedding_function=HashingEmbedding())
    memora = sync.Neo4jGraphInterface(
        conn.uri, conn.username, conn.password, conn.database, associated_vector_db=vectors
    )
    memora.graph.outcome_timeout = OUTCOME_TIMEOUT
    memora.coalesce_writes = coalesce
    memora.setup()
    org = memora.create_organization("Acme")
    agent = memora.create_agent(org.org_id, "Bot")
    users = [memora.create_user(org.org_id, f"Writer {n}").user_id for n in range(writers)]
    acknowledged: list[tuple[str, str, str]] = []  # (user, interaction, memory text)
    failures: list[str] = []
    unknown: list[str] = []  # memory texts of saves whose outcome was unknown
    failed = dict.fromkeys(users, 0)  # calls that raised, per writer
    stop = threading.Event()
    changed = threading.Condition()  # guards the lists above; notified on every outcome

    def writer(user_id: str) -> None:
        number = 0
        while not stop.is_set():
            number += 1
            text = f"user_{user_id} wrote note {number}"
            try:
                interaction_id, _ = memora.save_interaction_with_memories(
                    org.org_id,
                    agent.agent_id,
                    user_id,
                    conversation(chat(f"note {number}"), memories=[(text, [0])]),
                )
            except Exception as error:  # noqa: BLE001 - the server is down: not acknowledged
                with changed:
                    failures.append(type(error).__name__)
                    failed[user_id] += 1
                    if isinstance(error, OutcomeUnknown):
                        unknown.append(text)
                    changed.notify_all()
                time.sleep(0.2)
                continue
            with changed:
                acknowledged.append((user_id, interaction_id, text))
                changed.notify_all()

    threads = [threading.Thread(target=writer, args=(user_id,)) for user_id in users]
    for thread in threads:
        thread.start()

    def writes_land(count: int) -> None:
        """Wait until ``count`` more writes were acknowledged (a slow machine restarts
        slowly and writes slowly: the crashes must fall between writes all the same)."""
        with changed:
            target = len(acknowledged) + count
            changed.wait_for(lambda: len(acknowledged) >= target, timeout=180)

    def calls_in_flight_end() -> None:
        """Wait until the call each writer had in flight at the kill has ended: every
        writer failed once more since (a commit in flight gives up asking whether it
        landed after ``OUTCOME_TIMEOUT``). Then the server may come back."""
        with changed:
            since = dict(failed)
            changed.wait_for(lambda: all(failed[u] > since[u] for u in users), timeout=180)

    try:
        for _ in range(CRASHES):
            writes_land(writers)
            restartable_neo4j.crash()
            calls_in_flight_end()
            restartable_neo4j.start()
        writes_land(writers)  # ... and the writes after the last restart settled them
    finally:
        stop.set()
        for thread in threads:
            thread.join(timeout=120)
    driver: Driver = restartable_neo4j.driver()
    try:
        stored = {
            (record["user"], record["interaction"], record["memory"])
            for record in driver.execute_query(
                "MATCH (i:Interaction)<-[:INTERACTION_SOURCE]-(m:Memory) "
                "RETURN i.user_id AS user, i.interaction_id AS interaction, m.memory AS memory"
            ).records
        }
        assert len(acknowledged) >= writers * (CRASHES + 1), failures
        assert set(acknowledged) - stored == set(), "an acknowledged write was lost"
        assert Journal.kept_by(vectors).pending() == [], "pending vector changes were not settled"
        assert await all_violations(driver, vectors) == []
        landed = sum(1 for text in unknown if text in {memory for _, _, memory in stored})
        print(
            f"{CRASHES} kills: {len(acknowledged)} acknowledged saves, {len(failures)} failed "
            f"calls, {len(unknown)} unknown outcomes ({landed} landed); batch sizes "
            f"{sorted(memora.graph.coalescer.sizes.items())}"
        )
    finally:
        driver.close()
        memora.close()
        vectors.close()
