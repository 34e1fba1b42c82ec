"""``memora-ogm shell``, driven as a person would: under a pseudo-terminal, typing
expressions against a real server, in IPython and in the standard library REPL; and
``shell -c`` and a script on standard input, which run without a prompt.
"""

from __future__ import annotations

import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pexpect
import pytest
from explore_graph import Tenant, cli_env, seed_two_tenants
from IPython.lib.pretty import pretty
from neo4j import Driver

from memora_ogm.cli.pretty import format_value
from memora_ogm.server import Neo4jConnection
from memora_ogm.sync import Neo4jGraphInterface, QdrantDB
from memora_ogm.vector_db.embedding import HashingEmbedding

SHELL = [sys.executable, "-m", "memora_ogm.cli", "shell"]
ANSI = r"(?:\x1b\[[0-9;?]*[a-zA-Z])*"  # IPython colours its prompts


@pytest.fixture
def tenants(clean_neo4j: Driver, neo4j_connection: Neo4jConnection) -> tuple[Tenant, Tenant]:
    return seed_two_tenants(neo4j_connection)


def _shell(
    conn: Neo4jConnection, *args: str, stdin: str | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*SHELL, *args],
        env=cli_env(conn),
        input=stdin if stdin is not None else "",
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


@pytest.fixture
def terminal_env(neo4j_connection: Neo4jConnection, tmp_path: Path) -> dict[str, str]:
    """A terminal as a person's: xterm, 50x200; IPython's history in a temporary folder."""
    return cli_env(
        neo4j_connection,
        TERM="xterm",
        IPYTHONDIR=str(tmp_path / "ipython"),
        PROMPT_TOOLKIT_NO_CPR="1",  # pexpect does not answer cursor position requests
        HOME=str(tmp_path),
    )


@pytest.fixture
def spawned(terminal_env: dict[str, str]) -> Iterator[list[pexpect.spawn]]:
    """Shells started by a test; whatever is still running at the end is killed."""
    children: list[pexpect.spawn] = []
    yield children
    for child in children:
        if child.isalive():
            child.terminate(force=True)


def _start(spawned: list[pexpect.spawn], env: dict[str, str], *args: str) -> pexpect.spawn:
    child = pexpect.spawn(
        SHELL[0],
        [*SHELL[1:], *args],
        env=env,
        encoding="utf-8",
        timeout=120,
        dimensions=(50, 200),
    )
    spawned.append(child)
    return child


def test_shell_c_runs_code_without_a_prompt(
    tenants: tuple[Tenant, Tenant], neo4j_connection: Neo4jConnection
) -> None:
    alpha, _ = tenants
    code = (
        f"print(memora.get_user({alpha.org_id!r}, {alpha.user_id!r}).user_name); "
        f"print(Org.nodes.get(org_id={alpha.org_id!r}).org_name); "
        "print(db.cypher_query('MATCH (o:Org) RETURN count(o)')[0][0][0]); "
        "print(vectors, sorted(n for n in ('Date', 'MemoryCollection', 'MemoryToStore') "
        "if n in globals()))"
    )
    done = _shell(neo4j_connection, "-c", code)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        "AlphaAnn",
        "Alpha Travel",
        "2",
        "None ['Date', 'MemoryCollection', 'MemoryToStore']",
    ]
    assert "memora-ogm 0.1.0 shell: Neo4j at " + neo4j_connection.uri in done.stderr
    assert ">>>" not in done.stdout + done.stderr and "In [" not in done.stdout

    failed = _shell(neo4j_connection, "-c", "memora.get_user('nope', 'nope')")
    assert failed.returncode == 1
    assert "UserNotFound" in failed.stderr


def test_qdrant_path_opens_the_folder_in_the_layout_it_was_written_in(
    neo4j_connection: Neo4jConnection, tmp_path: Path
) -> None:
    """As ``memora-ogm check`` does: a folder of the earlier single-vector layout opens with
    feature hashing of its dimension, through Qdrant Edge, as QdrantDB(path=) would."""
    folder = tmp_path / "earlier"
    earlier = QdrantDB(path=folder, embedding_function=HashingEmbedding(64))
    earlier.setup()
    earlier.close()
    code = (
        "print(vectors.collection_name, type(vectors.client).__name__, "
        "vectors.embedding_function is not None)"
    )
    done = _shell(neo4j_connection, "--qdrant-path", str(folder), "-c", code)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["memora_ogm_memories EdgeClient True"]
    assert f"vector store: Qdrant Edge in {folder}" in done.stderr


def test_a_script_on_stdin_runs_and_writes_through_the_facade(
    tenants: tuple[Tenant, Tenant], neo4j_connection: Neo4jConnection, driver: Driver
) -> None:
    alpha, _ = tenants
    script = f"""
user = memora.create_user({alpha.org_id!r}, "Bob")
saved, _ = memora.save_interaction_with_memories(
    {alpha.org_id!r}, {alpha.agent_id!r}, user.user_id,
    MemoriesAndInteraction(
        interaction=[{{"role": "user", "content": "Bob likes tea"}}],
        memories=[
            MemoryToStore(memory=f"user_{{user.user_id}} likes tea", source_msg_block_pos=[0])
        ],
    ),
)
print("saved", user.user_id, saved)
show({alpha.org_id!r}, user.user_id)
"""
    done = _shell(neo4j_connection, stdin=script)
    assert done.returncode == 0, done.stderr
    first, *timeline = done.stdout.splitlines()
    _, user_id, interaction_id = first.split()
    assert timeline[0].startswith(f"Bob (user {user_id} of org {alpha.org_id}): 1 interaction")
    assert "    0. user: Bob likes tea" in timeline
    assert "    - Bob likes tea" in timeline
    records, _, _ = driver.execute_query(
        "MATCH (:User {org_id: $org, user_id: $user})-[:INTERACTIONS_IN]->()"
        "-[:HAD_INTERACTION]->(i:Interaction)<-[:INTERACTION_SOURCE]-(m:Memory) "
        "RETURN i.interaction_id AS i, m.memory AS m",
        org=alpha.org_id,
        user=user_id,
    )
    assert [(r["i"], r["m"]) for r in records] == [(interaction_id, f"user_{user_id} likes tea")]


def _expect_lines(child: pexpect.spawn, *lines: str) -> None:
    """Each line appears, in this order."""
    for line in lines:
        child.expect_exact(line)


def test_plain_repl_under_a_terminal(
    tenants: tuple[Tenant, Tenant],
    terminal_env: dict[str, str],
    spawned: list[pexpect.spawn],
    neo4j_connection: Neo4jConnection,
    tmp_path: Path,
) -> None:
    alpha, beta = tenants
    child = _start(spawned, terminal_env, "--plain", "--qdrant-path", str(tmp_path / "q"))
    _expect_lines(
        child,
        f"Neo4j at {neo4j_connection.uri}",
        f"vector store: Qdrant Edge in {tmp_path / 'q'}",
        "memora    memora_ogm.sync.Neo4jGraphInterface",
        "db        neomodel's db",
    )
    child.expect_exact(">>> ")
    child.sendline(
        f"memora.get_interaction({alpha.org_id!r}, {alpha.user_id!r}, {alpha.first_interaction!r})"
    )
    _expect_lines(
        child,
        f"Interaction {alpha.first_interaction} with agent {alpha.agent_id}",
        "messages (2):",
        "0. user: Alpha: I live in Oslo with my cat Miso.",
        "1. assistant: Alpha: Noted, Oslo and Miso.",
        "memories (2):",
        "- AlphaAnn lives in Oslo",
    )
    child.expect_exact(">>> ")
    child.sendline(f"Memory.nodes.get(memory_id={alpha.new_memory!r})")
    _expect_lines(
        child,
        f"Memory(org_id={alpha.org_id!r}",
        "- AlphaAnn lives in Bergen",
        "obtained ",
        f"from interaction {alpha.second_interaction}",
        "0. user: Alpha: I moved to Bergen.",
    )
    child.expect_exact(">>> ")
    child.sendline(f"show({beta.org_id!r}, {beta.user_id!r})")
    _expect_lines(
        child,
        "BetaAnn (user",
        "0. user: Beta: I moved to Bergen.",
        "supersedes: BetaAnn lives in Oslo",
        "0. user: Beta: I live in Oslo with my cat Miso.",
        "superseded by: BetaAnn lives in Bergen",
    )
    child.expect_exact(">>> ")
    child.sendline("len(db.cypher_query('MATCH (o:Org) RETURN o')[0]), _ is None")
    child.expect_exact("(2, False)")
    child.expect_exact(">>> ")
    child.sendline("exit()")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0


def test_ipython_under_a_terminal(
    tenants: tuple[Tenant, Tenant],
    terminal_env: dict[str, str],
    spawned: list[pexpect.spawn],
) -> None:
    alpha, _ = tenants
    child = _start(spawned, terminal_env)
    child.expect_exact("IPython")
    child.expect_exact("memora    memora_ogm.sync.Neo4jGraphInterface")

    def prompt(n: int) -> None:
        child.expect(rf"In {ANSI}\[{ANSI}{n}{ANSI}\]")

    prompt(1)
    child.sendline(f"memora.get_all_user_memories({alpha.org_id!r}, {alpha.user_id!r})")
    child.expect(rf"Out{ANSI}\[{ANSI}1{ANSI}\]")
    _expect_lines(child, "[3 items]", "- AlphaAnn lives in Bergen", "- AlphaAnn lives in Oslo")
    prompt(2)
    child.sendline(f"Interaction.nodes.get(interaction_id={alpha.first_interaction!r})")
    _expect_lines(
        child,
        "Interaction(org_id=",
        "0. user: Alpha: I live in Oslo with my cat Miso.",
        "1. assistant: Alpha: Noted, Oslo and Miso.",
    )
    prompt(3)
    child.sendline("answer = 42")
    prompt(4)
    child.sendline("%who_ls")  # an IPython magic: this is IPython, not the plain REPL
    child.expect_exact("['answer']")
    prompt(5)
    child.sendline("exit")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0


def test_results_print_readably_and_compare_as_before(
    tenants: tuple[Tenant, Tenant], neo4j_connection: Neo4jConnection
) -> None:
    alpha, _ = tenants
    conn = neo4j_connection
    memora = Neo4jGraphInterface(conn.uri, conn.username, conn.password, conn.database)
    try:
        interaction = memora.get_interaction(alpha.org_id, alpha.user_id, alpha.first_interaction)
        memory = memora.get_user_memory(alpha.org_id, alpha.user_id, alpha.pet_memory)
        again = memora.get_user_memory(alpha.org_id, alpha.user_id, alpha.pet_memory)
    finally:
        memora.close()
    text = pretty(interaction)  # what IPython shows, through _repr_pretty_
    assert text == format_value(interaction)
    lines = text.splitlines()
    assert lines[0] == f"Interaction {alpha.first_interaction} with agent {alpha.agent_id}"
    assert lines.index("    0. user: Alpha: I live in Oslo with my cat Miso.") < lines.index(
        "    1. assistant: Alpha: Noted, Oslo and Miso."
    )
    assert pretty(memory).splitlines() == [
        "Memory",
        "  - AlphaAnn's cat is called Miso",
        f"    obtained {memory.obtained_at:%Y-%m-%d %H:%M} UTC, memory_id {alpha.pet_memory}",
        f"    from interaction {alpha.first_interaction}",
        "      0. user: Alpha: I live in Oslo with my cat Miso.",
    ]
    # repr, str and equality are pydantic's own
    assert repr(memory).startswith("Memory(org_id=") and memory == again
    assert re.match(r"org_id='\w+'", str(memory))


def test_without_ipython_the_shell_is_the_standard_repl(
    tenants: tuple[Tenant, Tenant], terminal_env: dict[str, str], spawned: list[pexpect.spawn]
) -> None:
    alpha, _ = tenants
    hide_ipython = (
        "import sys; sys.modules['IPython'] = None; "  # `import IPython` now fails
        "from memora_ogm.cli import main; sys.exit(main(['shell']))"
    )
    child = pexpect.spawn(
        sys.executable, ["-c", hide_ipython], env=terminal_env, encoding="utf-8", timeout=120
    )
    spawned.append(child)
    child.expect_exact("memora    memora_ogm.sync.Neo4jGraphInterface")
    child.expect_exact(">>> ")
    child.sendline(f"memora.get_organization({alpha.org_id!r})")
    child.expect_exact(f"Organisation 'Alpha Travel': org_id {alpha.org_id}, created ")
    child.expect_exact(">>> ")
    child.sendeof()
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0
