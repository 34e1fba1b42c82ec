"""The sync twin is generated from the async source and must never drift from it."""

from __future__ import annotations

import inspect
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from neo4j import Driver

from memora_ogm import sync
from memora_ogm._async.interface import Neo4jGraphInterface
from memora_ogm.base import BaseGraphDB
from memora_ogm.schema.storage import MemoriesAndInteraction, MemoryToStore
from memora_ogm.server import Neo4jConnection
from memora_ogm.vector_db.base import BaseVectorDB, MemorySearchScope
from memora_ogm.vector_db.qdrant import QdrantDB

ROOT = Path(__file__).resolve().parents[1]


def test_generated_sync_code_is_up_to_date() -> None:
    """Changing async code without running scripts/generate_sync.py fails CI here."""
    result = subprocess.run(
        [sys.executable, "scripts/generate_sync.py", "--check"],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stdout + result.stderr


def _public_methods(cls: type) -> dict[str, inspect.Signature]:
    return {
        name: inspect.signature(member)
        for name, member in inspect.getmembers(cls, inspect.isfunction)
        if not name.startswith("_")
    }


@pytest.mark.parametrize(
    ("original", "twin"),
    [
        (Neo4jGraphInterface, sync.Neo4jGraphInterface),
        (BaseGraphDB, sync.BaseGraphDB),
        (BaseVectorDB, sync.BaseVectorDB),
        (QdrantDB, sync.QdrantDB),
    ],
    ids=lambda cls: cls.__name__,
)
def test_the_twins_have_the_same_methods_and_signatures(original: type, twin: type) -> None:
    assert _public_methods(twin) == _public_methods(original)
    for name, method in inspect.getmembers(twin, inspect.isfunction):
        assert not inspect.iscoroutinefunction(method), name


def test_the_twins_share_one_scope_enum_and_their_bases() -> None:
    assert sync.MemorySearchScope is MemorySearchScope
    assert issubclass(sync.QdrantDB, sync.BaseVectorDB)
    assert issubclass(QdrantDB, BaseVectorDB)
    assert issubclass(sync.Neo4jGraphInterface, sync.BaseGraphDB)


def test_one_sync_interface_serves_concurrent_threads(
    neo4j_connection: Neo4jConnection, clean_neo4j: Driver
) -> None:
    """As in a threaded Flask or Django server: each thread gets its own transaction."""
    conn = neo4j_connection
    memora = sync.Neo4jGraphInterface(conn.uri, conn.username, conn.password, conn.database)
    memora.setup()
    org = memora.create_organization("Acme")
    agent = memora.create_agent(org.org_id, "Helper")

    def sign_up_and_talk(index: int) -> str:
        user = memora.create_user(org.org_id, f"user {index}")
        conversation = MemoriesAndInteraction(
            interaction=[{"role": "user", "content": f"I am number {index}"}],
            memories=[
                MemoryToStore(memory=f"user_{user.user_id} is {index}", source_msg_block_pos=[0])
            ],
        )
        memora.save_interaction_with_memories(
            org.org_id, agent.agent_id, user.user_id, conversation
        )
        [memory] = memora.get_all_user_memories(org.org_id, user.user_id)
        assert memory.memory == f"user {index} is {index}"
        return user.user_id

    with ThreadPoolExecutor(max_workers=8) as pool:
        user_ids = list(pool.map(sign_up_and_talk, range(32)))

    assert sorted(u.user_id for u in memora.get_all_org_users(org.org_id)) == sorted(user_ids)
    memora.close()
