"""The docs: the site builds with ``mkdocs build --strict``, every page's quick-start steps
run as written against a real Neo4j and leave what they say, and the README stays a
short front page whose links resolve.

A page marks its steps with ``<!-- quickstart: ... -->`` comments (``tests/docs_blocks.py``).
Every page with marks is followed here with its assertions in ``CHECKS``, except the
framework pages, which their own tests (``tests/test_contrib_*.py``) follow and serve.
"""

from __future__ import annotations

import asyncio
import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from docs_blocks import DOCS, follow, steps
from fastmcp import Client as FastMCPClient
from fastmcp.client.transports import StdioTransport
from neo4j import Driver

from memora_ogm.server import Neo4jConnection

ROOT = DOCS.parent
README = ROOT / "README.md"
README_MAX_LINES = 250
#: Followed by their own tests (``tests/test_contrib_<framework>.py``), which serve them.
FRAMEWORK_PAGES = {"django.md", "flask.md", "fastapi.md"}
PAGES_WITH_STEPS = sorted(page.name for page in DOCS.glob("*.md") if steps(page))
FOLLOWED_HERE = [page for page in PAGES_WITH_STEPS if page not in FRAMEWORK_PAGES]

Ran = list[subprocess.CompletedProcess[str]]


def _environment(conn: Neo4jConnection, folder: Path) -> dict[str, str]:
    """The reader's shell: this server's ``NEO4J_*``, no server state or Qdrant of ours."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("NEO4J_", "QDRANT_"))}
    return {**env, **conn.env(), "MEMORA_OGM_HOME": str(folder / ".memora-ogm")}


def _rows(driver: Driver, conn: Neo4jConnection, query: str) -> list[dict[str, Any]]:
    records, _, _ = driver.execute_query(query, database_=conn.database)
    return [record.data() for record in records]


def _output(ran: Ran) -> str:
    return "".join(done.stdout + done.stderr for done in ran)


_ANNS_MEMORIES = """
    MATCH (o:Org)<-[:BELONGS_TO]-(u:User)-[:HAS_MEMORIES]->(:MemoryCollection)
          -[:INCLUDES]->(m:Memory)-[:INTERACTION_SOURCE]->(:Interaction)
    RETURN o.org_id AS org_id, o.org_name AS org, u.user_id AS user_id, u.user_name AS user,
           m.memory_id AS memory_id, m.memory AS memory
    ORDER BY m.memory
"""


def _one_memory_of_ann_in_oslo(driver: Driver, conn: Neo4jConnection, ran: Ran) -> None:
    (row,) = _rows(driver, conn, _ANNS_MEMORIES)
    assert (row["org"], row["user"]) == ("Acme", "Ann")
    assert row["memory"] == f"user_{row['user_id']} lives in Oslo"
    assert "Ann lives in Oslo" in ran[-1].stdout
    assert "Acme" in ran[-1].stdout  # memora-ogm inspect
    assert "users 1, agents 1, interactions 1, memories 1" in ran[-1].stdout


def check_quick_start(driver: Driver, conn: Neo4jConnection, ran: Ran, folder: Path) -> None:
    _one_memory_of_ann_in_oslo(driver, conn, ran)


def check_vector_store(driver: Driver, conn: Neo4jConnection, ran: Ran, folder: Path) -> None:
    (row,) = _rows(driver, conn, _ANNS_MEMORIES)
    assert f"user_{row['user_id']} lives in Oslo" in ran[-1].stdout  # the search's hit
    assert "1 memories, 1 points: found 0 missing" in ran[-1].stdout  # memora-ogm check
    assert (folder / "memora-qdrant").is_dir()


def check_export_import(driver: Driver, conn: Neo4jConnection, ran: Ran, folder: Path) -> None:
    records = [json.loads(line) for line in (folder / "acme.jsonl").read_text().splitlines()]
    (organization,) = [r for r in records if r["type"] == "organization"]
    (memory,) = [r for r in records if r["type"] == "memory"]
    # Deleted, then imported again: the same organisation and memory, every id as exported.
    (row,) = _rows(driver, conn, _ANNS_MEMORIES)
    assert (row["org_id"], row["memory_id"]) == (organization["org_id"], memory["memory_id"])
    output = _output(ran)
    assert "exit status 1" in output and "exists" in output
    assert "imported 1 organization, 1 user, 1 agent, 1 interaction, 1 memory" in output
    assert "exit status 2" in output and "line 1: not a memora-ogm-export file" in output


def check_checking(driver: Driver, conn: Neo4jConnection, ran: Ran, folder: Path) -> None:
    rows = _rows(driver, conn, _ANNS_MEMORIES)
    assert [row["memory"].split(" ", 1)[1] for row in rows] == ["has a cat", "lives in Oslo"]
    output = ran[-1].stdout
    assert "2 memories, 1 points: found 1 missing" in output and "exit status 1" in output
    # --repair exits 0 (the follow asserts it) only when the stores agree afterwards.
    assert output.rstrip().endswith("2 memories, 1 points: repaired 1 missing, 0 orphan, "
                                    "0 wrong payload, 0 clashing")  # fmt: skip


def check_migrations(driver: Driver, conn: Neo4jConnection, ran: Ran, folder: Path) -> None:
    migrations = _rows(driver, conn, "MATCH (m:MemoraMigration) RETURN m.version AS version")
    assert migrations == [{"version": "0001"}]
    lines = ran[-1].stdout.splitlines()
    assert lines == [
        "constraints and indexes installed",
        " [ ] 0001_memora_v0_3_x",
        "applied: 0001",
        " [X] 0001_memora_v0_3_x",
    ]


def check_graph(driver: Driver, conn: Neo4jConnection, ran: Ran, folder: Path) -> None:
    lines = ran[-1].stdout.splitlines()
    assert lines == [
        "<MemoryGraph 'Ann: the 1 most recent interaction(s)': 4 nodes, 5 edges>",
        "<MemoryGraph 'Acme: 1 user(s), 1 agent(s)': 3 nodes, 2 edges>",
    ]
    assert "cytoscape" in (folder / "ann.html").read_text(encoding="utf-8")


def check_observability(driver: Driver, conn: Neo4jConnection, ran: Ran, folder: Path) -> None:
    spans = [json.loads(text) for text in re.findall(r"^\{$.*?^\}$", ran[-1].stdout, re.S | re.M)]
    by_name = {span["name"]: span for span in spans}
    assert {"setup", "create_organization", "get_user"} <= set(by_name)
    created, failed = by_name["create_organization"], by_name["get_user"]
    assert created["kind"] == "SpanKind.CLIENT"
    assert created["attributes"]["db.system.name"] == "neo4j"
    assert created["attributes"]["db.namespace"] == conn.database
    assert failed["status"]["status_code"] == "ERROR"
    assert failed["attributes"]["error.type"] == "memora_ogm.errors.UserNotFound"
    assert "Acme" not in ran[-1].stdout and "nobody" not in ran[-1].stdout  # values never


Check = Callable[[Driver, Neo4jConnection, Ran, Path], None]


def check_mcp(driver: Driver, conn: Neo4jConnection, ran: Ran, folder: Path) -> None:
    """The desktop client's config as written, its ``...`` filled in with the printed
    tenant and this graph, its folder put in ``folder``, and ``--embedder hashing`` (this
    machine cannot download Memora's models): fastmcp's client launches the server from
    it, saves a conversation and finds its memory."""
    tenant = dict(line.removeprefix("export ").split("=", 1) for line in ran[0].stdout.splitlines())
    server = json.loads((folder / "claude_desktop_config.json").read_text())["mcpServers"]
    written = server["memory"]
    env = {**os.environ, **written["env"], **conn.env(), **tenant}
    assert set(written["env"]) <= {*conn.env(), *tenant}  # each value the docs leave to fill
    args = [str(folder / "vectors") if arg.startswith("/home/") else arg for arg in written["args"]]
    command = shutil.which(written["command"], path=str(Path(sys.executable).parent))
    assert command is not None, written["command"]
    transport = StdioTransport(command, [*args, "--embedder", "hashing"], env=env)

    async def converse() -> list[str]:
        async with FastMCPClient(transport, timeout=120) as client:
            turn = [{"role": "user", "content": "I moved to Oslo."}]
            memory = {"memory": "lives in Oslo", "source_msg_block_pos": [0]}
            await client.call_tool("save_interaction", {"messages": turn, "memories": [memory]})
            found = await client.call_tool("search_memories", {"query": "Oslo"})
            return [hit["memory"]["memory"] for hit in json.loads(found.content[0].text)["hits"]]

    assert asyncio.run(converse()) == ["lives in Oslo"]
    (row,) = _rows(driver, conn, _ANNS_MEMORIES)
    assert (row["org"], row["user"], row["memory"]) == ("Acme", "Ann", "lives in Oslo")
    assert (folder / "vectors").is_dir()


CHECKS: dict[str, Check] = {
    "index.md": check_quick_start,
    "vector-store.md": check_vector_store,
    "export-import.md": check_export_import,
    "checking.md": check_checking,
    "migrations.md": check_migrations,
    "graph.md": check_graph,
    "observability.md": check_observability,
    "mcp.md": check_mcp,
}


def test_the_site_builds_strict(tmp_path: Path) -> None:
    """A broken link, a missing anchor, a page outside the nav or a missing snippet fails."""
    if importlib.util.find_spec("material") is None:
        pytest.fail("mkdocs-material is not installed: pip install -e '.[test]' (or '.[docs]')")
    site = tmp_path / "site"
    built = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(site)],
        cwd=ROOT,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert built.returncode == 0, built.stdout + built.stderr
    for page in DOCS.glob("*.md"):
        folder = site if page.stem == "index" else site / page.stem
        assert (folder / "index.html").is_file(), page.name


def test_every_page_with_steps_is_checked() -> None:
    assert {"index.md", "migrations.md"} <= set(PAGES_WITH_STEPS)
    unchecked = set(FOLLOWED_HERE) - set(CHECKS)
    assert not unchecked, f"pages with quick-start steps and no assertions in CHECKS: {unchecked}"
    followers = "".join(
        path.read_text(encoding="utf-8")
        for path in (ROOT / "tests").glob("*.py")
        if path.name != Path(__file__).name
    )
    for page in FRAMEWORK_PAGES & set(PAGES_WITH_STEPS):
        assert f'"{page}"' in followers, f"no test follows {page}"


@pytest.mark.parametrize("page", FOLLOWED_HERE)
def test_a_pages_quick_start_runs_as_written(
    page: str, neo4j_connection: Neo4jConnection, clean_neo4j: Driver, tmp_path: Path
) -> None:
    ran = follow(page, tmp_path, _environment(neo4j_connection, tmp_path))
    CHECKS[page](clean_neo4j, neo4j_connection, ran, tmp_path)


def test_the_readmes_example_runs_as_written(
    neo4j_connection: Neo4jConnection, clean_neo4j: Driver, tmp_path: Path
) -> None:
    ran = follow(README, tmp_path, _environment(neo4j_connection, tmp_path))
    _one_memory_of_ann_in_oslo(clean_neo4j, neo4j_connection, ran)


def test_the_readme_is_a_short_front_page() -> None:
    text = README.read_text(encoding="utf-8")
    assert len(text.splitlines()) <= README_MAX_LINES
    # The two commands that work on a fresh machine, exactly.
    assert "python3 -m pip install -e . && memora-ogm demo" in text
    assert "bash scripts/test.sh" in text


_LINK = re.compile(r"\]\((?P<target>[^)\s]+)\)")
_HEADING = re.compile(r"^#{1,6}\s+(?P<title>.+?)\s*#*$")


def _anchor(title: str) -> str:
    """The anchor GitHub (and mkdocs' toc) gives a heading."""
    return re.sub(r"\s", "-", re.sub(r"[^\w\s-]", "", title.strip().lower()))


def _anchors(page: Path) -> set[str]:
    found, fenced = set(), False
    for line in page.read_text(encoding="utf-8").splitlines():
        if line.startswith("```"):
            fenced = not fenced
        elif not fenced and (heading := _HEADING.match(line)):
            found.add(_anchor(heading["title"]))
    return found


def test_every_relative_link_of_the_readme_resolves() -> None:
    links = _LINK.findall(README.read_text(encoding="utf-8"))
    relative = [link for link in links if not re.match(r"[a-z]+:", link)]
    assert any(link.startswith("docs/") for link in relative)
    for link in relative:
        path, _, anchor = link.partition("#")
        target = ROOT / path if path else README
        assert target.is_file(), f"README links to {link}: no such file"
        if anchor and target.suffix == ".md":
            assert anchor in _anchors(target), f"README links to {link}: no such heading"
