"""``neomodel_inspect_database`` on a Memora database names what the node classes declare.

The database is written by Memora's own graph layer (memora-core) or by memora-ogm's
facade; either way neomodel's inspector, run as its CLI, must find exactly the labels
of the node classes and, per start label, the relationship types and end labels their
relationship attributes declare.
"""

from __future__ import annotations

import re
import subprocess
import sys
from collections.abc import AsyncIterator

import pytest
from memora.graph_db.neo4j import Neo4jGraphInterface as MemoraGraph
from neo4j import Driver
from neomodel_story import declared_relationships, model_name, write_story

from memora_ogm import nodes
from memora_ogm._async.interface import Neo4jGraphInterface
from memora_ogm.server import Neo4jConnection
from memora_ogm.testing import clear_database

CLASS_LINE = re.compile(r"^class (\w+)\(StructuredNode\):$")
RELATIONSHIP_LINE = re.compile(r'^\s+\w+ = RelationshipTo\("(\w+)", "(\w+)"')


@pytest.fixture(params=["memora", "memora-ogm"])
async def memora_database(
    request: pytest.FixtureRequest, neo4j_connection: Neo4jConnection, neo4j_driver: Driver
) -> AsyncIterator[str]:
    """The story, written on an emptied database by one of the two graph layers."""
    conn = neo4j_connection
    clear_database(neo4j_driver, conn.database)
    layer_class = MemoraGraph if request.param == "memora" else Neo4jGraphInterface
    layer = layer_class(conn.uri, conn.username, conn.password, conn.database)
    await write_story(layer)
    await layer.close()
    yield conn.neomodel_url


def _inspect(url: str) -> tuple[set[str], set[tuple[str, str, str]]]:
    """The labels and ``(start label, type, end label)`` triples the inspector prints."""
    inspected = subprocess.run(
        [
            sys.executable,
            "-m",
            "neomodel.scripts.neomodel_inspect_database",
            "--db",
            url,
            "--no-rel-props",
            "--no-rel-cardinality",
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert inspected.returncode == 0, inspected.stderr
    labels: set[str] = set()
    relationships: set[tuple[str, str, str]] = set()
    label = ""
    for line in inspected.stdout.splitlines():
        if match := CLASS_LINE.match(line):
            label = match[1]
            labels.add(label)
        elif match := RELATIONSHIP_LINE.match(line):
            relationships.add((label, match[2], match[1]))
    return labels, relationships


def _labels_without_nodes(driver: Driver, database: str) -> set[str]:
    """Labels the server still knows with no node left (``db.labels()`` lists a label
    once it was used, such as ``MemoraMigration`` after an earlier test's migration)."""
    records, _, _ = driver.execute_query(
        "CALL db.labels() YIELD label "
        "WHERE NOT EXISTS { MATCH (n) WHERE label IN labels(n) } RETURN label",
        database_=database,
    )
    return {record["label"] for record in records}


def test_the_inspector_finds_the_labels_and_relationships_of_the_node_classes(
    memora_database: str, neo4j_connection: Neo4jConnection, neo4j_driver: Driver
) -> None:
    labels, relationships = _inspect(memora_database)
    labels -= _labels_without_nodes(neo4j_driver, neo4j_connection.database)
    assert labels == {cls.__label__ for cls in nodes.NODE_CLASSES}
    assert relationships == declared_relationships()
    # Each type the inspector found has its relationship model, named after it, which
    # every attribute of that type declares.
    models = {kind: getattr(nodes, model_name(kind)) for _, kind, _ in relationships}
    assert set(models.values()) == set(nodes.REL_CLASSES)
    for cls in nodes.NODE_CLASSES:
        for rel in cls.defined_properties(aliases=False, properties=False, rels=True).values():
            assert rel.definition["model"] is models[rel.definition["relation_type"]]
