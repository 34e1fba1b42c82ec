"""``memora-ogm inspect``: read-only, bounded, and only the tenant asked for."""

from __future__ import annotations

import inspect
import subprocess
import sys
from typing import Any

import neo4j
import pytest
from explore_graph import Tenant, cli_env, seed_two_tenants
from neo4j import Driver

from memora_ogm.cli.inspector import inspect_lines
from memora_ogm.server import Neo4jConnection


@pytest.fixture
def tenants(clean_neo4j: Driver, neo4j_connection: Neo4jConnection) -> tuple[Tenant, Tenant]:
    return seed_two_tenants(neo4j_connection)


def _inspect(conn: Neo4jConnection, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "memora_ogm.cli", "inspect", *args],
        env=cli_env(conn),
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def _graph(driver: Driver) -> list[Any]:
    """Every node and relationship with its properties, to compare before and after."""
    records, _, _ = driver.execute_query(
        "MATCH (n) OPTIONAL MATCH (n)-[r]->(m) "
        "RETURN labels(n) AS l, properties(n) AS p, type(r) AS t, properties(r) AS rp, "
        "elementId(m) AS m, elementId(n) AS n ORDER BY n, t, m"
    )
    return [record.data() for record in records]


def _ids(tenant: Tenant) -> list[str]:
    return [
        tenant.org_id,
        tenant.user_id,
        tenant.agent_id,
        tenant.first_interaction,
        tenant.second_interaction,
        tenant.old_memory,
        tenant.new_memory,
        tenant.pet_memory,
    ]


def test_overview_lists_organisations_with_counts_bounded_by_limit(
    tenants: tuple[Tenant, Tenant], neo4j_connection: Neo4jConnection
) -> None:
    alpha, beta = tenants
    done = _inspect(neo4j_connection)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == f"connected to {neo4j_connection.uri} (database neo4j)"
    assert lines[2:] == [
        "organisations (2):",
        *(
            line
            for tenant in (alpha, beta)
            for line in (
                f"  {tenant.label} Travel  org_id {tenant.org_id}, created "
                + next(x for x in lines if tenant.org_id in x).split("created ")[1],
                "    users 1, agents 1, interactions 2, memories 3 (1 superseded)",
            )
        ),
    ]
    first = _inspect(neo4j_connection, "--limit", "1")
    assert first.returncode == 0, first.stderr
    assert "organisations (1 of 2):" in first.stdout
    assert alpha.org_id in first.stdout and beta.org_id not in first.stdout

    refused = _inspect(neo4j_connection, "--limit", "0")
    assert refused.returncode == 2 and "at least 1" in refused.stderr


def test_one_users_timeline_shows_only_that_tenant(
    tenants: tuple[Tenant, Tenant], neo4j_connection: Neo4jConnection, driver: Driver
) -> None:
    alpha, beta = tenants
    before = _graph(driver)
    done = _inspect(neo4j_connection, "--org", alpha.org_id, "--user", alpha.user_id)
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert "Beta" not in out and not [i for i in _ids(beta) if i in out]
    lines = out.splitlines()
    assert lines[2].startswith(f"organisation Alpha Travel  org_id {alpha.org_id}, created ")
    assert f"    Alpha Planner  agent_id {alpha.agent_id}" in lines
    assert (
        f"    AlphaAnn  user_id {alpha.user_id}: interactions 2, memories 3 (1 superseded)" in lines
    )
    header = lines.index(
        f"AlphaAnn (user {alpha.user_id} of org {alpha.org_id}): 2 interaction(s), newest first"
    )
    newest = lines.index(
        next(x for x in lines if x.startswith(f"Interaction {alpha.second_interaction}"))
    )
    oldest = lines.index(
        next(x for x in lines if x.startswith(f"Interaction {alpha.first_interaction}"))
    )
    assert header < newest < oldest
    assert lines[newest].startswith(
        f"Interaction {alpha.second_interaction} with Alpha Planner ({alpha.agent_id}), updated "
    )
    assert lines[newest + 1 : newest + 3] == [
        "  messages (1):",
        "    0. user: Alpha: I moved to Bergen.",
    ]
    assert lines[oldest + 1 : oldest + 4] == [
        "  messages (2):",
        "    0. user: Alpha: I live in Oslo with my cat Miso.",
        "    1. assistant: Alpha: Noted, Oslo and Miso.",
    ]
    assert "      supersedes: AlphaAnn lives in Oslo  (obtained " in out
    assert "      superseded by: AlphaAnn lives in Bergen  (obtained " in out
    assert f"interaction {alpha.second_interaction})" in out
    assert "    - AlphaAnn's cat is called Miso" in lines
    assert _graph(driver) == before  # read-only

    newest_only = _inspect(
        neo4j_connection, "--org", alpha.org_id, "--user", alpha.user_id, "--limit", "1"
    )
    assert newest_only.returncode == 0, newest_only.stderr
    assert alpha.second_interaction in newest_only.stdout
    assert f"Interaction {alpha.first_interaction}" not in newest_only.stdout
    assert "1 interaction(s), newest first (at most 1)" in newest_only.stdout


def test_an_organisation_shows_its_agents_and_users_only(
    tenants: tuple[Tenant, Tenant], neo4j_connection: Neo4jConnection
) -> None:
    alpha, beta = tenants
    done = _inspect(neo4j_connection, "--org", beta.org_id)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[2].startswith(f"organisation Beta Travel  org_id {beta.org_id}, created ")
    assert lines[3:] == [
        "  interactions 2, memories 3 (1 superseded)",
        "  agents (1):",
        f"    Beta Planner  agent_id {beta.agent_id}",
        "  users (1):",
        f"    BetaAnn  user_id {beta.user_id}: interactions 2, memories 3 (1 superseded)",
    ]
    assert not [i for i in _ids(alpha) if i in done.stdout]


def test_counts_are_of_the_nodes_the_graph_holds(
    tenants: tuple[Tenant, Tenant], neo4j_connection: Neo4jConnection, driver: Driver
) -> None:
    """A node counts by its key properties, linked or not, and a memory superseded
    twice counts once."""
    alpha, _ = tenants
    driver.execute_query(
        "CREATE (:Memory {org_id: $org_id, user_id: $user_id, memory_id: 'loose', memory: 'x'}) "
        "WITH 1 AS one MATCH (old:Memory {memory_id: $old}), (pet:Memory {memory_id: $pet}) "
        "CREATE (old)-[:CONTRARY_UPDATE]->(pet)",
        org_id=alpha.org_id,
        user_id=alpha.user_id,
        old=alpha.old_memory,
        pet=alpha.pet_memory,
    )
    lines = inspect_lines(neo4j_connection, alpha.org_id, alpha.user_id, 20)
    counts = "interactions 2, memories 4 (1 superseded)"
    assert f"  {counts}" in lines
    assert f"    AlphaAnn  user_id {alpha.user_id}: {counts}" in lines
    overview = inspect_lines(neo4j_connection, None, None, 20)
    assert f"    users 1, agents 1, {counts}" in overview


def test_missing_tenants_and_bad_arguments_are_clear_errors(
    tenants: tuple[Tenant, Tenant], neo4j_connection: Neo4jConnection
) -> None:
    alpha, beta = tenants
    missing = _inspect(neo4j_connection, "--org", "no-such-org")
    assert missing.returncode == 1 and "no-such-org" in missing.stderr and not missing.stdout
    # a user of another organisation is not found in this one
    other = _inspect(neo4j_connection, "--org", alpha.org_id, "--user", beta.user_id)
    assert other.returncode == 1 and beta.user_id in other.stderr
    assert "Beta" not in other.stdout + other.stderr
    alone = _inspect(neo4j_connection, "--user", alpha.user_id)
    assert alone.returncode == 2 and "--user needs --org" in alone.stderr


def test_every_read_runs_in_a_read_transaction(
    tenants: tuple[Tenant, Tenant],
    neo4j_connection: Neo4jConnection,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Every statement and transaction inspect runs is in a read session; the one
    exception is neomodel's own version probe (``CALL dbms.components()``) when the facade
    points it at the server. (Sessions are reused, so their statements are what counts.)"""
    alpha, _ = tenants
    modes: list[tuple[str, bool]] = []
    for name in ("run", "begin_transaction"):
        original = getattr(neo4j.Session, name)

        def spy(self: neo4j.Session, *args: Any, original: Any = original, **kwargs: Any) -> Any:
            probe = any(f.function == "_update_database_version" for f in inspect.stack())
            modes.append((self._config.default_access_mode, probe))
            return original(self, *args, **kwargs)

        monkeypatch.setattr(neo4j.Session, name, spy)
    lines = inspect_lines(neo4j_connection, alpha.org_id, alpha.user_id, 20)
    assert "    - AlphaAnn lives in Bergen" in lines
    ours = [mode for mode, probe in modes if not probe]
    assert len(ours) > 5 and set(ours) == {neo4j.READ_ACCESS}
    assert len(modes) - len(ours) <= 1


def test_the_counts_go_through_the_facades_graph(
    tenants: tuple[Tenant, Tenant],
    neo4j_connection: Neo4jConnection,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The counting reads are compiled units of work run by the facade's graph (its one
    statement path): inspect opens no driver of its own beside the facade's."""
    alpha, _ = tenants
    opened: list[str] = []
    original = neo4j.GraphDatabase.driver

    def driver(uri: str, **config: Any) -> neo4j.Driver:
        opened.append(uri)
        return original(uri, **config)

    monkeypatch.setattr(neo4j.GraphDatabase, "driver", driver)
    lines = inspect_lines(neo4j_connection, alpha.org_id, alpha.user_id, 20)
    assert "    - AlphaAnn lives in Bergen" in lines
    assert "  interactions 2, memories 3 (1 superseded)" in lines
    assert opened == [neo4j_connection.uri]
