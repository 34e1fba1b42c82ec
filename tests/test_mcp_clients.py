"""The MCP server as clients we did not write meet it (issue 47).

fastmcp's client drives ``memora-ogm mcp`` over stdio and Streamable HTTP, and each
answer is checked as that client shows it: the reason of every error (Neo4j stopped
under a running server, then back; the default embedder on a machine that cannot
download it), and a LangGraph-style reader that takes each result from the text block
alone.
"""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx2
import pytest
from fastmcp import Client
from fastmcp.client.transports import StdioTransport, StreamableHttpTransport
from mcp_helpers import memora_ogm_command, raw_call, server_command
from restartable import RestartableServer
from side_venvs import cached_venv, inspector
from web_servers import serve

from memora_ogm.mcp import SCOPES
from memora_ogm.server import Neo4jConnection
from memora_ogm.server.local import generate_password

pytestmark = pytest.mark.local_server

TURN = [
    {"role": "user", "content": "I moved to Oslo last spring."},
    {"role": "assistant", "content": "Oslo is lovely in spring."},
]
#: LangGraph's MCP client, pinned (it needs mcp<2: an environment of its own).
LANGCHAIN_MCP = "langchain-mcp-adapters==0.3.2"
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


async def test_neo4j_stopped_under_a_running_server_is_named_and_the_next_call_after_works(
    restartable_neo4j: RestartableServer, tmp_path: Path
) -> None:
    """Over stdio, and over HTTP with two forked workers: while Neo4j is away each call
    names it, the next call once it is back works, and credentials refused after a
    restart with a new password are named too."""
    assert restartable_neo4j.connection is not None
    env = tenant_env(restartable_neo4j.connection)
    tenant = [f"--{name}={env[f'MEMORA_OGM_MCP_{name.upper()}']}" for name in ("org", "user")]
    keys = tmp_path / "keys"
    agent = f"--agent={env['MEMORA_OGM_MCP_AGENT']}"
    key = memora_ogm_command(env, "mcp-key", "--file", str(keys), *tenant, agent).strip()
    command = server_command("--api-keys", str(keys), "--workers", "2", "--embedder", "hashing")
    with serve(command, env, "/mcp", log=tmp_path / "stderr") as served:
        http = Client(StreamableHttpTransport(served.url + "/mcp", auth=key), timeout=60)
        async with stdio(env, "--embedder", "hashing") as client, http:
            saved = await client.call_tool(
                "save_interaction",
                {
                    "messages": TURN,
                    "memories": [{"memory": "lives in Oslo", "source_msg_block_pos": [0]}],
                },
            )
            assert not saved.is_error, text_of(saved)
            restartable_neo4j.stop()
            try:
                for each in (client, http, http):  # both workers, whichever answers
                    away = await each.call_tool("get_memories", {}, raise_on_error=False)
                    said = refusal(away)
                    assert f"Neo4j unreachable at {restartable_neo4j.connection.uri}" in said, said
            finally:
                restartable_neo4j.start()
            for each in (client, http, http):
                back = await each.call_tool("get_memories", {})
                memories = json.loads(text_of(back))["memories"]
                assert [m["memory"] for m in memories] == ["lives in Oslo"]

            # Started again with a new password (as `memora-ogm server start` does): the
            # running servers' credentials are refused, and their errors say so.
            restartable_neo4j.stop()
            restartable_neo4j.password = generate_password()
            restartable_neo4j.start()
            for each in (client, http):
                said = refusal(await each.call_tool("get_memories", {}, raise_on_error=False))
                assert "authentication failed for user neo4j" in said, said


async def test_the_default_embedder_offline_gives_its_reason_to_the_client(
    restartable_neo4j: RestartableServer, tmp_path: Path
) -> None:
    """The desktop config of docs/mcp.md (the default embedder, an embedded store) on a
    machine whose model hub does not resolve: the embedder's advice reaches the client."""
    assert restartable_neo4j.connection is not None
    env = tenant_env(restartable_neo4j.connection) | {
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


def test_the_inspectors_cli_lists_the_tools_saves_and_gets_the_reason_as_the_docs_run_it(
    restartable_neo4j: RestartableServer,
) -> None:
    """docs/mcp.md's MCP Inspector command (the pinned Inspector for ``npx``, this graph and
    tenant for its ``...``): tools/list shows clean descriptions, then the same command
    makes a save, a bad save gets its field's reason, and get_memories reads it back."""
    assert restartable_neo4j.connection is not None
    env = tenant_env(restartable_neo4j.connection)
    block = _fenced_after("docs/mcp.md", "To try the server from a terminal")
    written = shlex.split(block.replace("\\\n", " "))
    assert written[:3] == ["npx", "@modelcontextprotocol/inspector", "--cli"], written
    filled = [
        f"{pair.split('=', 1)[0]}={env[pair.split('=', 1)[0]]}" if "=" in pair else pair
        for pair in written[3:]
    ]
    command = [str(inspector()), "--cli", *filled]
    path = f"{Path(sys.executable).parent}:{env['PATH']}"  # memora-ogm on PATH, as installed

    def run(*method: str) -> dict[str, Any]:
        done = subprocess.run(
            [*command[: command.index("--method")], *method],
            env=env | {"PATH": path},
            capture_output=True,
            text=True,
            timeout=180,
        )
        assert done.returncode == 0, done.stdout + done.stderr
        answer: dict[str, Any] = json.loads(done.stdout)
        return answer

    listed = run(*command[command.index("--method") :])
    assert {tool["name"] for tool in listed["tools"]} >= {"save_interaction", "get_memories"}
    assert all("\n    " not in tool["description"] for tool in listed["tools"])
    call = ("--method", "tools/call", "--tool-name")
    turn = json.dumps(TURN)
    memory = json.dumps([{"memory": "lives in Oslo", "source_msg_block_pos": [0]}])
    saved = run(*call, "save_interaction", "--tool-arg", f"messages={turn}", f"memories={memory}")
    assert not saved.get("isError"), saved
    bad = run(*call, "save_interaction", "--tool-arg", 'messages=[{"role": "user"}]')
    assert bad["isError"] and [block["text"] for block in bad["content"]] == [
        "messages[0].content: required"
    ]
    read = run(*call, "get_memories")
    memories = json.loads(read["content"][0]["text"])["memories"]
    assert "lives in Oslo" in [m["memory"] for m in memories]


def _fenced_after(page: str, words: str) -> str:
    """The first fenced block after the paragraph of ``page`` that has ``words``."""
    text = (Path(__file__).resolve().parent.parent / page).read_text(encoding="utf-8")
    after = text[text.index(words) :]
    start = after.index("```")
    body = after[after.index("\n", start) + 1 :]
    return body[: body.index("```")]


# ------------------------------------------------------------------ over HTTP, API keys


@dataclass(frozen=True)
class Keyed:
    """A served server with API keys alone: its URL, endpoint, one key and its stderr."""

    url: str
    endpoint: str
    key: str
    log: Path


@pytest.fixture(scope="module")
def keyed(
    neo4j_connection: Neo4jConnection, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Keyed]:
    """``memora-ogm mcp --http`` with API keys alone (one worker, an embedded store,
    offline embeddings), its stderr kept, and a key of a new tenant."""
    folder = tmp_path_factory.mktemp("mcp-keyed")
    env = tenant_env(neo4j_connection)
    tenant = [
        f"--{name}={env[f'MEMORA_OGM_MCP_{name.upper()}']}" for name in ("org", "user", "agent")
    ]
    keys = folder / "keys"
    key = memora_ogm_command(env, "mcp-key", "--file", str(keys), *tenant).strip()
    store = ("--qdrant-path", str(folder / "vectors"), "--embedder", "hashing")
    command = server_command("--api-keys", str(keys), *store)
    log = folder / "stderr"
    with serve(command, env, "/mcp", log=log) as server:
        yield Keyed(server.url, server.url + "/mcp", key, log)


def test_api_keys_alone_advertise_no_authorization_server(keyed: Keyed) -> None:
    """RFC 9728: no authorization server issues API keys, so the metadata names none
    (a client asks its user for the key instead of registering somewhere)."""
    answer = httpx2.get(keyed.url + "/.well-known/oauth-protected-resource/mcp", timeout=10)
    assert answer.status_code == 200
    assert answer.json() == {
        "resource": keyed.endpoint,
        "resource_name": "memora-ogm memory",
        "bearer_methods_supported": ["header"],
        "scopes_supported": list(SCOPES),
    }
    assert answer.headers["access-control-allow-origin"] == "*"
    missing = raw_call(keyed.endpoint, None, "get_memories", {})
    assert missing.status_code == 401
    assert "error=" not in missing.headers["www-authenticate"]
    wrong = raw_call(keyed.endpoint, "mok_wrong", "get_memories", {})
    assert wrong.status_code == 401
    assert (
        'error="invalid_token", error_description="unknown API key"'
        in (wrong.headers["www-authenticate"])
    )


def test_fastmcps_cli_lists_the_tools_with_a_key_as_the_docs_send_it(keyed: Keyed) -> None:
    """docs/mcp.md's fastmcp command (its URL this server's, ``$TOKEN`` an API key) lists
    every tool; without the key the same command is refused, and never tries to register
    a client anywhere."""
    block = _fenced_after("docs/mcp.md", "A client sends its token or key")
    (line,) = [line for line in block.splitlines() if line.startswith("fastmcp ")]
    written = shlex.split(line)
    assert written[:3] == ["fastmcp", "list", "http://127.0.0.1:8765/mcp"], written
    fastmcp = str(Path(sys.executable).with_name("fastmcp"))
    command = [fastmcp, "list", keyed.endpoint, *written[3:], "--json"]
    with_key = [keyed.key if part == "$TOKEN" else part for part in command]
    listed = subprocess.run(with_key, capture_output=True, text=True, timeout=120)
    assert listed.returncode == 0, listed.stdout + listed.stderr
    names = {tool["name"] for tool in json.loads(listed.stdout)["tools"]}
    assert {"save_interaction", "search_memories", "forget_user"} <= names
    without = [part if part != "$TOKEN" else "none" for part in command]
    refused = subprocess.run(without, capture_output=True, text=True, timeout=120)
    assert refused.returncode != 0
    assert "regist" not in (refused.stdout + refused.stderr).lower()


async def test_a_text_only_client_lists_saves_and_searches_from_the_text_block(
    keyed: Keyed,
) -> None:
    """As a LangGraph agent reads a tool's answer (langchain-mcp-adapters hands it the text
    blocks only): each answer's text is its complete structured content, compact."""
    transport = StreamableHttpTransport(keyed.endpoint, auth=keyed.key)
    async with Client(transport, timeout=60) as client:
        tools = {tool.name: tool for tool in await client.list_tools()}
        assert "save_interaction" in tools and "search_memories" in tools
        assert all("\n    " not in (tool.description or "") for tool in tools.values())
        saved = await client.call_tool(
            "save_interaction",
            {
                "messages": TURN,
                "memories": [{"memory": "lives in Oslo", "source_msg_block_pos": [0]}],
            },
        )
        found = await client.call_tool("search_memories", {"query": "Oslo"})
        for result in (saved, found):
            text = text_of(result)
            assert json.loads(text) == result.structured_content
            assert text == json.dumps(result.structured_content, separators=(",", ":"))
        hits = json.loads(text_of(found))["hits"]
        assert [hit["memory"]["memory"] for hit in hits] == ["lives in Oslo"]
        assert hits[0]["memory"]["interaction_id"] == json.loads(text_of(saved))["interaction_id"]
        refused = await client.call_tool(
            "save_interaction", {"messages": [{"role": "user"}]}, raise_on_error=False
        )
        assert refusal(refused) == "messages[0].content: required"


def test_langgraphs_own_client_lists_saves_and_searches_through_the_text_block(
    neo4j_connection: Neo4jConnection, tmp_path: Path
) -> None:
    """langchain-mcp-adapters, LangGraph's MCP client (in an environment of its own: it
    needs mcp<2), launches the server over stdio as a desktop config would, lists the
    tools, saves and searches; the agent is handed each answer's text, and a bad argument
    gives it the field's reason."""
    python = cached_venv("langchain-mcp", [LANGCHAIN_MCP])
    env = tenant_env(neo4j_connection)
    request = {
        "command": [sys.executable, "-m", "memora_ogm.cli", "mcp", "--embedder", "hashing"]
        + ["--qdrant-path", str(tmp_path / "vectors")],
        "env": env,
        "calls": [
            [
                "save_interaction",
                {
                    "messages": TURN,
                    "memories": [{"memory": "lives in Oslo", "source_msg_block_pos": [0]}],
                },
            ],
            ["search_memories", {"query": "Oslo"}],
            ["save_interaction", {"messages": [{"role": "user"}]}],
        ],
    }
    done = subprocess.run(
        [str(python), str(Path(__file__).with_name("langchain_mcp_client.py"))],
        input=json.dumps(request),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    seen = json.loads(done.stdout)
    assert {"save_interaction", "search_memories", "get_memories"} <= set(seen["tools"])
    saved, found, refused = seen["answers"]
    assert "error" not in saved and "error" not in found, seen["answers"]
    interaction_id = json.loads(saved["text"])["interaction_id"]
    hits = json.loads(found["text"])["hits"]
    assert [hit["memory"]["memory"] for hit in hits] == ["lives in Oslo"]
    assert hits[0]["memory"]["interaction_id"] == interaction_id
    assert "messages[0].content: required" in refused["text"]
    assert not [leak for leak in LEAKS if leak in refused["text"]], refused


def test_the_log_has_the_start_a_line_per_request_and_no_token_or_content(keyed: Keyed) -> None:
    """The start-up line, each request's line (its method, tool, status, milliseconds,
    and a refusal's reason), and neither a key nor what was said."""
    said = {"messages": [{"role": "user", "content": "my secret is Tromso"}]}
    saves = keyed.log.read_text().count("tools/call save_interaction 200")
    assert raw_call(keyed.endpoint, None, "get_memories", {}).status_code == 401
    assert raw_call(keyed.endpoint, "mok_wrong", "get_memories", {}).status_code == 401
    assert raw_call(keyed.endpoint, keyed.key, "save_interaction", said).status_code == 200
    lines = wait_for_lines(keyed.log, "tools/call save_interaction 200", saves + 1)
    started = [line for line in lines if "serving " in line]
    assert len(started) == 1, lines
    for part in ("http://127.0.0.1:", "API keys of", "store: embedded in", "tenant: each token's"):
        assert part in started[0], started[0]
    requests = [line.split("] INFO ", 1)[1] for line in lines if " /mcp " in line]
    assert requests[-3].startswith("POST /mcp tools/call get_memories 401 "), requests
    assert requests[-3].endswith(" ms refused: no token"), requests
    assert requests[-2].endswith(" ms refused: unknown API key"), requests
    assert requests[-1].startswith("POST /mcp tools/call save_interaction 200 "), requests
    assert requests[-1].endswith(" ms"), requests
    text = keyed.log.read_text()
    assert keyed.key not in text and "mok_wrong" not in text and "Tromso" not in text


def wait_for_lines(log: Path, wanted: str, count: int) -> list[str]:
    """The log's lines, once ``count`` of them hold ``wanted`` (a line is written after
    its answer is sent)."""
    deadline = time.monotonic() + 10
    while True:
        lines = log.read_text().splitlines()
        if sum(wanted in line for line in lines) >= count or time.monotonic() > deadline:
            return lines
        time.sleep(0.05)
