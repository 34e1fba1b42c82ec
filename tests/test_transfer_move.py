"""Moving an organisation between two real Neo4j servers (issue 14), API and CLI.

The second server is the ``second_neo4j_connection`` session fixture of
``memora_ogm.testing``; both servers are checked after every move.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from interaction_helpers import snapshot
from invariants import full_snapshot, graph_violations, vector_memories
from neo4j import Driver
from transfer_helpers import build_organisation, public_reads, records_of

from memora_ogm._async.interface import Neo4jGraphInterface
from memora_ogm._async.transfer import MoveVerificationFailed, move_organization
from memora_ogm._sync.nodes import NODES
from memora_ogm.cli import main
from memora_ogm.errors import OrganizationNotFound
from memora_ogm.server import Neo4jConnection
from memora_ogm.testing import clear_database, second_server
from memora_ogm.transfer import format as transfer
from memora_ogm.transfer import validation
from memora_ogm.transfer.format import ImportConflict, JsonLinesFile
from memora_ogm.vector_db.embedding import HashingEmbedding
from memora_ogm.vector_db.qdrant import QdrantDB


@dataclass
class Side:
    """One server: its facade (with its own vector store), its driver and its connection."""

    graph: Neo4jGraphInterface
    vectors: QdrantDB
    driver: Driver
    conn: Neo4jConnection


async def _side(conn: Neo4jConnection, driver: Driver) -> Side:
    clear_database(driver, conn.database)
    vectors = QdrantDB(location=":memory:", embedding_function=HashingEmbedding())
    graph = Neo4jGraphInterface(conn.uri, conn.username, conn.password, conn.database, vectors)
    await graph.setup()
    return Side(graph, vectors, driver, conn)


@pytest.fixture
async def servers(
    neo4j_connection: Neo4jConnection,
    neo4j_driver: Driver,
    second_neo4j_connection: Neo4jConnection,
    second_neo4j_driver: Driver,
) -> AsyncIterator[tuple[Side, Side]]:
    """Both servers emptied, each with a facade: (source, target)."""
    source = await _side(neo4j_connection, neo4j_driver)
    target = await _side(second_neo4j_connection, second_neo4j_driver)
    yield source, target
    await source.graph.close()
    await target.graph.close()


def org_vectors(entries: list[tuple[str, str, str]], org_id: str) -> list[tuple[str, str, str]]:
    return [entry for entry in entries if entry[1] == org_id]


async def test_move_between_two_servers(servers: tuple[Side, Side]) -> None:
    source, target = servers
    org = await build_organisation(source.graph)
    graph_of_org = snapshot(source.driver)
    other = await build_organisation(source.graph, "Other")
    before = await public_reads(source.graph, org.org_id)
    other_before = await public_reads(source.graph, other.org_id)
    vectors_before = org_vectors(await vector_memories(source.vectors), org.org_id)
    stages: list[str] = []

    report = await move_organization(
        source.graph, target.graph, org.org_id, progress=lambda stage, *_: stages.append(stage)
    )

    assert report.counts["memory"] == 7 and report.counts["interaction"] == 3
    assert list(dict.fromkeys(stages)) == ["export", "import", "verify", "delete"]
    # The target holds the organisation exactly, in both stores.
    assert await public_reads(target.graph, org.org_id) == before
    assert snapshot(target.driver) == graph_of_org
    assert await vector_memories(target.vectors) == vectors_before
    assert graph_violations(target.driver) == []
    # The source no longer holds it, in either store; the other organisation is untouched.
    with pytest.raises(OrganizationNotFound):
        await source.graph.get_organization(org.org_id)
    assert org_vectors(await vector_memories(source.vectors), org.org_id) == []
    assert await public_reads(source.graph, other.org_id) == other_before
    assert graph_violations(source.driver) == []
    rows, _, _ = source.driver.execute_query(
        "MATCH (n {org_id: $org}) RETURN count(n) AS n", org=org.org_id
    )
    assert rows[0]["n"] == 0


async def test_a_move_that_fails_verification_deletes_nothing(
    servers: tuple[Side, Side],
) -> None:
    """The target already holds the organisation and a user more: ``skip`` keeps it, so
    the two sides differ, and the source must stay whole. A target whose organisation has
    other values is refused before anything is written."""
    source, target = servers
    org = await build_organisation(source.graph)
    records = await records_of(source.graph.export_organization(org.org_id))
    await target.graph.import_records(records)
    intruder = (await target.graph.create_user(org.org_id, "Intruder")).user_id
    at_source = await full_snapshot(source.driver, source.vectors)
    at_target = await full_snapshot(target.driver, target.vectors)

    with pytest.raises(ImportConflict, match="already exists"):
        await move_organization(source.graph, target.graph, org.org_id)
    assert await full_snapshot(source.driver, source.vectors) == at_source
    assert await full_snapshot(target.driver, target.vectors) == at_target

    with pytest.raises(MoveVerificationFailed, match="was not deleted at the source"):
        await move_organization(source.graph, target.graph, org.org_id, on_conflict="skip")
    assert await full_snapshot(source.driver, source.vectors) == at_source
    assert await full_snapshot(target.driver, target.vectors) == at_target
    assert (await target.graph.get_user(org.org_id, intruder)).user_name == "Intruder"

    await target.graph.update_organization(org.org_id, "Impostor")
    at_target = await full_snapshot(target.driver, target.vectors)
    with pytest.raises(ImportConflict, match="other values of org_name"):
        await move_organization(source.graph, target.graph, org.org_id, on_conflict="skip")
    assert await full_snapshot(source.driver, source.vectors) == at_source
    assert await full_snapshot(target.driver, target.vectors) == at_target


async def test_a_move_with_one_shared_vector_store_keeps_every_vector(
    servers: tuple[Side, Side],
) -> None:
    """Both sides use one vector store (one collection for every server): the points the
    import writes are the source's own, and deleting the source must not delete them."""
    source, target = servers
    shared = Neo4jGraphInterface(
        target.conn.uri,
        target.conn.username,
        target.conn.password,
        target.conn.database,
        source.vectors,
    )
    org = await build_organisation(source.graph)
    other = await build_organisation(source.graph, "Other")
    before = await public_reads(source.graph, org.org_id)
    vectors_before = await vector_memories(source.vectors)
    assert len(org_vectors(vectors_before, org.org_id)) == 7

    try:
        await move_organization(source.graph, shared, org.org_id)
        assert await public_reads(shared, org.org_id) == before
    finally:
        await shared.close()

    assert await vector_memories(source.vectors) == vectors_before
    with pytest.raises(OrganizationNotFound):
        await source.graph.get_organization(org.org_id)
    rows, _, _ = source.driver.execute_query(
        "MATCH (n {org_id: $org}) RETURN count(n) AS n", org=org.org_id
    )
    assert rows[0]["n"] == 0
    assert (await source.graph.get_organization(other.org_id)).org_name == "Other"
    assert org_vectors(await vector_memories(target.vectors), org.org_id) == []
    for side in (source, target):
        assert graph_violations(side.driver) == []


async def test_cli_export_import_and_move(
    servers: tuple[Side, Side],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    source, target = servers
    kept = await build_organisation(source.graph, "Kept")
    moved = await build_organisation(source.graph, "Moved")
    kept_before = await public_reads(source.graph, kept.org_id)
    moved_before = await public_reads(source.graph, moved.org_id)
    for name, value in source.conn.env().items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("MEMORA_OGM_TO_PASSWORD", target.conn.password)
    path = tmp_path / "kept.jsonl"

    assert main(["export", "--org", kept.org_id, "-o", str(path)]) == 0
    assert validation.validate(NODES, JsonLinesFile(path))["memory"] == 7
    assert main(["export", "--org", kept.org_id, "--user", kept.ann]) == 0
    out = capsys.readouterr().out.splitlines()
    assert [record["type"] for record in map(json.loads, out[:2])] == [
        "header",
        "organization",
    ]
    assert main(["export", "--org", "nope", "-o", str(tmp_path / "nope.jsonl")]) == 1
    assert "Organization (org_id='nope') does not exist" in capsys.readouterr().err
    assert not list(tmp_path.glob("nope.jsonl*"))

    # Import the export into the second server (a copy: the source keeps it).
    for name, value in target.conn.env().items():
        monkeypatch.setenv(name, value)
    bad = tmp_path / "bad.jsonl"
    bad.write_text(path.read_text(encoding="utf-8").replace('"version":1', '"version":9'))
    assert main(["import", str(bad)]) == 2  # bad input
    assert "line 1: format version 9 is not supported" in capsys.readouterr().err
    assert snapshot(target.driver) == ([], [])
    assert main(["import", str(path)]) == 0
    assert "imported 1 organization" in capsys.readouterr().err
    assert main(["import", str(path)]) == 1
    assert "already exists" in capsys.readouterr().err
    assert main(["import", str(path), "--on-conflict", "skip"]) == 0
    assert await public_reads(target.graph, kept.org_id) == kept_before
    # A copy under another org_id beside it: its memory ids are taken until re-keyed.
    copy = tmp_path / "copy.jsonl"
    with copy.open("w", encoding="utf-8") as spool:
        transfer.write_records(
            (
                record | {"org_id": "kept-copy"} if "org_id" in record else record
                for record in JsonLinesFile(path)
            ),
            spool,
        )
    before_copy = snapshot(target.driver)
    assert main(["import", str(copy)]) == 1
    assert "belong to another tenant" in capsys.readouterr().err
    assert snapshot(target.driver) == before_copy
    assert main(["import", str(copy), "--new-memory-ids"]) == 0
    assert "imported 1 organization" in capsys.readouterr().err
    copied = await target.graph.get_all_user_memories("kept-copy", kept.ann)
    originals = await target.graph.get_all_user_memories(kept.org_id, kept.ann)
    assert sorted(m.memory for m in copied) == sorted(m.memory for m in originals)
    assert not {m.memory_id for m in copied} & {m.memory_id for m in originals}
    await target.graph.delete_organization("kept-copy")

    # Move the other organisation from the source to the second server.
    for name, value in source.conn.env().items():
        monkeypatch.setenv(name, value)
    command = ["move", "--org", moved.org_id, "--to-uri", target.conn.uri]
    assert main(command) == 0
    assert "deleted it at the source" in capsys.readouterr().err
    assert await public_reads(target.graph, moved.org_id) == moved_before
    with pytest.raises(OrganizationNotFound):
        await source.graph.get_organization(moved.org_id)
    assert await public_reads(source.graph, kept.org_id) == kept_before
    assert main(command) == 1  # nothing left to move
    assert "does not exist" in capsys.readouterr().err
    for side in (source, target):
        assert graph_violations(side.driver) == []


def test_second_server_comes_from_the_environment(neo4j_connection: Neo4jConnection) -> None:
    """``NEO4J_SECOND_*`` name the second server; the first server itself is refused."""
    env = {
        "NEO4J_SECOND_URI": neo4j_connection.uri,
        "NEO4J_SECOND_USERNAME": neo4j_connection.username,
        "NEO4J_SECOND_PASSWORD": neo4j_connection.password,
        "NEO4J_SECOND_DATABASE": neo4j_connection.database,
    }
    with pytest.raises(RuntimeError, match="is the first one"):
        with second_server(neo4j_connection, env):
            pass
    with second_server(neo4j_connection, env | {"NEO4J_SECOND_DATABASE": "other"}) as conn:
        assert (conn.uri, conn.database, conn.backend) == (neo4j_connection.uri, "other", "env")
