"""Neo4j killed again and again under writer threads (issues 20, 40 and 48).

Two sync interfaces share the embedded vector store (``QdrantDB(path=...)``) and the
kills: one shared by four threads saving interactions with memories, as a Flask or Django
app shares it, one by 32 threads with ``coalesce_writes``, their saves sharing
transactions.
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
from dataclasses import dataclass, field
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

#: The fleets of writer threads: how many, and whether their interface coalesces.
FLEETS = ((4, False), (32, True))
CRASHES = 5
#: The writers stop asking whether a commit landed after this long; the server is away
#: for longer.
OUTCOME_TIMEOUT = 1.0


@dataclass
class Fleet:
    """One interface and its writer threads, and what their calls came to."""

    memora: sync.Neo4jGraphInterface
    org_id: str
    agent_id: str
    users: list[str]
    acknowledged: list[tuple[str, str, str]] = field(default_factory=list)  # user, id, text
    failures: list[str] = field(default_factory=list)
    unknown: list[str] = field(default_factory=list)  # texts of saves of unknown outcome
    failed: dict[str, int] = field(default_factory=dict)  # calls that raised, per writer


async def test_no_acknowledged_write_is_lost_when_neo4j_is_killed_under_writers(
    restartable_neo4j: RestartableServer, tmp_path: Path
) -> None:
    """Two interfaces share the store and the kills: 4 writers saving alone, and 32 whose
    saves share transactions (``coalesce_writes``). Between two crashes each fleet gets at
    least as many writes acknowledged as it has writers."""
    conn = restartable_neo4j.connection
    assert conn is not None
    with restartable_neo4j.driver() as cleaning:
        clear_database(cleaning, conn.database)
    vectors = QdrantDB(path=tmp_path / "vectors", embedding_function=HashingEmbedding())
    fleets: list[Fleet] = []
    for writers, coalesce in FLEETS:
        memora = sync.Neo4jGraphInterface(
            conn.uri, conn.username, conn.password, conn.database, associated_vector_db=vectors
        )
        memora.graph.outcome_timeout = OUTCOME_TIMEOUT
        memora.coalesce_writes = coalesce
        memora.setup()
        org = memora.create_organization(f"{writers} writers")
        agent = memora.create_agent(org.org_id, "Bot")
        users = [memora.create_user(org.org_id, f"Writer {n}").user_id for n in range(writers)]
        fleets.append(
            Fleet(memora, org.org_id, agent.agent_id, users, failed=dict.fromkeys(users, 0))
        )
    stop = threading.Event()
    changed = threading.Condition()  # guards the fleets' lists; notified on every outcome

    def writer(fleet: Fleet, user_id: str) -> None:
        number = 0
        while not stop.is_set():
            number += 1
            text = f"user_{user_id} wrote note {number}"
            try:
                interaction_id, _ = fleet.memora.save_interaction_with_memories(
                    fleet.org_id,
                    fleet.agent_id,
                    user_id,
                    conversation(chat(f"note {number}"), memories=[(text, [0])]),
                )
            except Exception as error:  # noqa: BLE001 - the server is down: not acknowledged
                with changed:
                    fleet.failures.append(type(error).__name__)
                    fleet.failed[user_id] += 1
                    if isinstance(error, OutcomeUnknown):
                        fleet.unknown.append(text)
                    changed.notify_all()
                time.sleep(0.2)
                continue
            with changed:
                fleet.acknowledged.append((user_id, interaction_id, text))
                changed.notify_all()

    threads = [
        threading.Thread(target=writer, args=(fleet, user_id))
        for fleet in fleets
        for user_id in fleet.users
    ]
    for thread in threads:
        thread.start()

    def writes_land() -> None:
        """Wait until each fleet had as many more writes acknowledged as it has writers (a
        slow machine restarts slowly and writes slowly: the crashes must fall between
        writes all the same)."""
        with changed:
            targets = [len(fleet.acknowledged) + len(fleet.users) for fleet in fleets]
            changed.wait_for(
                lambda: all(
                    len(fleet.acknowledged) >= target
                    for fleet, target in zip(fleets, targets, strict=True)
                ),
                timeout=180,
            )

    def calls_in_flight_end() -> None:
        """Wait until the call each writer had in flight at the kill has ended: every
        writer failed once more since (a commit in flight gives up asking whether it
        landed after ``OUTCOME_TIMEOUT``). Then the server may come back."""
        with changed:
            since = [dict(fleet.failed) for fleet in fleets]
            changed.wait_for(
                lambda: all(
                    fleet.failed[user] > before[user]
                    for fleet, before in zip(fleets, since, strict=True)
                    for user in fleet.users
                ),
                timeout=180,
            )

    try:
        for _ in range(CRASHES):
            writes_land()
            restartable_neo4j.crash()
            calls_in_flight_end()
            restartable_neo4j.start()
        writes_land()  # ... and the writes after the last restart settled them
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
        texts = {memory for _, _, memory in stored}
        for fleet in fleets:
            writers = len(fleet.users)
            assert len(fleet.acknowledged) >= writers * (CRASHES + 1), fleet.failures
            lost = set(fleet.acknowledged) - stored
            assert lost == set(), f"{writers} writers: an acknowledged write was lost"
            landed = sum(1 for text in fleet.unknown if text in texts)
            print(
                f"{writers} writers, {CRASHES} kills: {len(fleet.acknowledged)} acknowledged "
                f"saves, {len(fleet.failures)} failed calls, {len(fleet.unknown)} unknown "
                f"outcomes ({landed} landed); batch sizes "
                f"{sorted(fleet.memora.graph.coalescer.sizes.items())}"
            )
        assert Journal.kept_by(vectors).pending() == [], "pending vector changes were not settled"
        assert await all_violations(driver, vectors) == []
    finally:
        driver.close()
        for fleet in fleets:
            fleet.memora.close()
        vectors.close()
