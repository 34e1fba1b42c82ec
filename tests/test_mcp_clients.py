"""The MCP server as clients we did not write meet it (issue 47).

fastmcp's client drives ``memora-ogm mcp`` over stdio and Streamable HTTP, and each
answer is checked as that client shows it: the reason of every error (Neo4j stopped
under a running server, then back; the default embedder on a machine that cannot
download it), and a LangGraph-style reader that takes each result from the text block
alone.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastmcp import Client
from fastmcp.client.transports import StdioTransport
from mcp_helpers import memora_ogm_command
from test_server_faults import RestartableServer

from memora_ogm.server import Neo4jConnection

pytestmark = pytest.mark.local_server

TURN = [
    {"role": "user", "content": "I moved to Oslo last spring."},
    {"role": "assistant", "content": "Oslo is lovely in spring."},
]
#: What never reaches a client.
LEAKS = ("Traceback", "Error executing tool", "pydantic", "MATCH ", "site-packages")


def text_of(result: Any) -> str:
    """What a text-only client (a LangGraph agent's) reads: the text blocks."""
    return "".join(getattr(block, "text", "") for block in result.content)


def refusal(result: Any) -> str:
    text = text_of(result)
    assert result.is_error, text
    assert not [leak for leak in LEAKS if leak in text], text
    return text


def stdio(env: dict[str, str], *options: str) -> Client[StdioTransport]:
    """fastmcp's client of ``memora-ogm mcp`` launched over stdio with ``env``."""
    command = [sys.executable, "-m", "memora_ogm.cli", "mcp", *options]
    return Client(StdioTransport(command[0], command[1:], env=env), timeout=120)


def tenant_env(conn: Neo4jConnection) -> dict[str, str]:
    """The graph's variables and a new tenant's, as docs/mcp.md's quick start has them."""
    import os

    env = {**os.environ, **conn.env()}
    printed = memora_ogm_command(env, "mcp-tenant", "Acme", "Ann", "Claude")
    return env | dict(line.removeprefix("export ").split("=", 1) for line in printed.splitlines())


@pytest.fixture(scope="module")
def neo4j(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RestartableServer]:
    """The test's own Neo4j, to stop and start under a running MCP server."""
    restartable = RestartableServer(tmp_path_factory.mktemp("mcp-neo4j"))
    restartable.start()
    try:
        yield restartable
    finally:
        restartable.stop()


async def test_neo4j_stopped_under_a_running_server_is_named_and_the_next_call_after_works(
    neo4j: RestartableServer,
) -> None:
    assert neo4j.connection is not None
    env = tenant_env(neo4j.connection)
    async with stdio(env, "--embedder", "hashing") as client:
        saved = await client.call_tool(
            "save_interaction",
            {
                "messages": TURN,
                "memories": [{"memory": "lives in Oslo", "source_msg_block_pos": [0]}],
            },
        )
        assert not saved.is_error, text_of(saved)
        neo4j.stop()
        try:
            away = await client.call_tool("get_memories", {}, raise_on_error=False)
            said = refusal(away)
            assert f"Neo4j unreachable at {neo4j.connection.uri}" in said, said
        finally:
            neo4j.start()
        back = await client.call_tool("get_memories", {})
        assert [m["memory"] for m in json.loads(text_of(back))["memories"]] == ["lives in Oslo"]


async def test_the_default_embedder_offline_gives_its_reason_to_the_client(
    neo4j: RestartableServer, tmp_path: Path
) -> None:
    """The desktop config of docs/mcp.md (the default embedder, an embedded store) on a
    machine whose model hub does not resolve: the embedder's advice reaches the client."""
    assert neo4j.connection is not None
    env = tenant_env(neo4j.connection) | {
        "HF_ENDPOINT": "https://hub.invalid",
        "FASTEMBED_CACHE_PATH": str(tmp_path / "models"),
    }
    async with stdio(env, "--qdrant-path", str(tmp_path / "vectors")) as client:
        for name, arguments in (
            (
                "save_interaction",
                {
                    "messages": TURN,
                    "memories": [{"memory": "lives in Oslo", "source_msg_block_pos": [0]}],
                },
            ),
            ("search_memories", {"query": "Oslo"}),
        ):
            said = refusal(await client.call_tool(name, arguments, raise_on_error=False))
            assert "HashingEmbedding()" in said and "hub.invalid" in said, said
