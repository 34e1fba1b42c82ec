"""setup() and neomodel_install_labels install the same uniqueness guarantees, in either order."""

from __future__ import annotations

import os
import subprocess
import sys
from typing import Any

import pytest
from neo4j import Driver
from neomodel import db
from neomodel.exceptions import UniqueProperty

from memora_ogm.engine.constraints import node_key_statement
from memora_ogm.nodes import NODE_CLASSES, Org, User
from memora_ogm.server import Neo4jConnection

EXPECTED = {
    "unique_org_id": ("Org", ["org_id"]),
    "unique_org_user": ("User", ["org_id", "user_id"]),
    "unique_org_agent": ("Agent", ["org_id", "agent_id"]),
    "unique_user_memory": ("Memory", ["org_id", "user_id", "memory_id"]),
    "unique_user_interaction": ("Interaction", ["org_id", "user_id", "interaction_id"]),
    "unique_user_date": ("Date", ["org_id", "user_id", "date"]),
}


def _constraints(driver: Driver) -> dict[str, tuple[str, list[str], str]]:
    records = driver.execute_query(
        "SHOW CONSTRAINTS YIELD name, labelsOrTypes, properties, type RETURN *"
    ).records
    return {r["name"]: (r["labelsOrTypes"][0], r["properties"], r["type"]) for r in records}


def _drop_all_constraints(driver: Driver) -> None:
    for name in _constraints(driver):
        driver.execute_query(f"DROP CONSTRAINT `{name}`")


def _edition(driver: Driver) -> str:
    return str(
        driver.execute_query("CALL dbms.components() YIELD edition RETURN edition").records[0][0]
    )


def _expected_type(driver: Driver) -> str:
    return "NODE_KEY" if _edition(driver) == "enterprise" else "UNIQUENESS"


def _install_labels_cli(url: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "neomodel.scripts.neomodel_install_labels",
            "memora_ogm.nodes",
            "--db",
            url,
        ],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "PYTHONPATH": os.getcwd()},
        check=False,
    )


async def test_setup_installs_every_key_on_this_edition_and_is_idempotent(
    memora: Any, driver: Driver
) -> None:
    _drop_all_constraints(driver)
    await memora.setup()
    await memora.setup()
    kind = _expected_type(driver)
    assert _constraints(driver) == {name: (*key, kind) for name, key in EXPECTED.items()}


def test_every_keyed_class_generates_its_constraint() -> None:
    keyed = {cls.__node_key__[0] for cls in NODE_CLASSES if cls.__node_key__}
    assert keyed == set(EXPECTED)
    statement = node_key_statement(User, enterprise=True)
    assert statement is not None and statement.endswith("IS NODE KEY")
    assert "IS UNIQUE" in (node_key_statement(User, enterprise=False) or "")


async def test_cli_installs_the_same_constraints_and_coexists_with_setup(
    memora: Any, driver: Driver, neo4j_connection: Neo4jConnection
) -> None:
    _drop_all_constraints(driver)
    first = _install_labels_cli(neo4j_connection.neomodel_url)
    assert first.returncode == 0, first.stderr
    kind = _expected_type(driver)
    assert _constraints(driver) == {name: (*key, kind) for name, key in EXPECTED.items()}

    await memora.setup()  # after the CLI
    again = _install_labels_cli(neo4j_connection.neomodel_url)  # and the CLI after setup()
    assert again.returncode == 0, again.stderr
    assert _constraints(driver) == {name: (*key, kind) for name, key in EXPECTED.items()}


def test_duplicate_user_key_through_the_node_classes_is_refused(
    memora: Any, driver: Driver, neo4j_connection: Neo4jConnection
) -> None:
    db.set_connection(url=neo4j_connection.neomodel_url)
    Org(org_id="org-1", org_name="Acme").save()
    User(org_id="org-1", user_id="user-1", user_name="Ann").save()
    with pytest.raises(UniqueProperty):
        User(org_id="org-1", user_id="user-1", user_name="Impostor").save()
    # The same user id in another organisation is a different key.
    User(org_id="org-2", user_id="user-1", user_name="Namesake").save()
    names = driver.execute_query(
        "MATCH (u:User {user_id: 'user-1'}) "
        "RETURN u.org_id AS org, u.user_name AS name ORDER BY org"
    ).records
    assert [(r["org"], r["name"]) for r in names] == [("org-1", "Ann"), ("org-2", "Namesake")]
