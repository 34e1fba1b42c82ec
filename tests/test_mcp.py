"""Agents reach their memory over MCP, each caller held to its own tenant (issue 41).

In process (the SDK's client on the server object, with the offline vector store) every
tool and its errors; served as users run it (``memora-ogm mcp --http`` under uvicorn with
two workers, the SDK's client with real JWTs and API keys) isolation, tokens, the rate
limit and the shutdown; and over stdio, the server a desktop client launches.
"""

from __future__ import annotations

import asyncio
import inspect
import json
import os
import random
import signal
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import httpx2
import pytest
from fastmcp import Client as FastMCPClient
from fastmcp.client.transports import StreamableHttpTransport
from interaction_helpers import World, make_world
from invariants import full_snapshot
from mcp import Client, StdioServerParameters
from mcp.types import TextContent
from mcp_helpers import (
    ISSUER,
    TOOLS,
    Keys,
    error_text,
    http_client,
    memora_ogm_command,
    new_keys,
    raw_call,
    server_command,
    server_env,
    structured,
    tenant_of,
    token,
    wait_until,
)
from neo4j import Driver
from qdrant_standin import qdrant_standin
from web_servers import children, serve

from memora_ogm._async.interface import Neo4jGraphInterface
from memora_ogm.mcp.auth import READ, SCOPES
from memora_ogm.mcp.server import build_server
from memora_ogm.server import Neo4jConnection
from memora_ogm.testing import clear_database
from memora_ogm.vector_db.embedding import HashingEmbedding
from memora_ogm.vector_db.qdrant import QdrantDB

TURN = [
    {"role": "user", "content": "I moved to Oslo last spring."},
    {"role": "assistant", "content": "Oslo is lovely in spring."},
]


def placeholder(world: World, text: str) -> str:
    return f"user_{world.user_id} {text}"


# ------------------------------------------------------------------ in process


@pytest.fixture
async def memora(
    neo4j_connection: Neo4jConnection, neo4j_driver: Driver
) -> AsyncIterator[Neo4jGraphInterface]:
    clear_database(neo4j_driver, neo4j_connection.database)
    store = QdrantDB(location=":memory:", embedding_function=HashingEmbedding(), search_limit=50)
    facade = Neo4jGraphInterface.from_connection(neo4j_connection, store)
    await facade.setup()
    yield facade
    await facade.close()
    await store.close()


async def _save(client: Client, world: World, text: str = "lives in Oslo") -> dict[str, Any]:
    saved: dict[str, Any] = structured(
        await client.call_tool(
            "save_interaction",
            {
                "messages": TURN,
                "memories": [{"memory": placeholder(world, text), "source_msg_block_pos": [0]}],
            },
        )
    )
    return saved


async def test_the_tools_are_the_contract_and_name_no_tenant(memora: Neo4jGraphInterface) -> None:
    world = await make_world(memora)
    async with Client(build_server(memora, tenant_of(world))) as client:
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
    assert set(tools) == TOOLS
    for name, tool in tools.items():
        assert tool.description and len(tool.description) > 40, name
        assert tool.output_schema is not None, name
        arguments = set(tool.input_schema.get("properties", {}))
        assert not arguments & {"org_id", "user_id", "agent_id", "org", "user", "agent"}, name
        hints = tool.annotations
        assert hints is not None and hints.open_world_hint is False
        reads = name.startswith(("get_", "search_"))
        assert hints.read_only_hint is reads, name
        assert hints.destructive_hint is (name.startswith("delete_") or name == "forget_user")
        # A second delete of the same id answers "not found": only reads are idempotent.
        assert hints.idempotent_hint is reads, name
        assert tool.description == inspect.cleandoc(tool.description), name
    assert set(tools["save_interaction"].input_schema["required"]) == {"messages"}


async def test_every_tool_does_its_work_on_both_stores(
    memora: Neo4jGraphInterface, neo4j_driver: Driver
) -> None:
    world = await make_world(memora)
    async with Client(build_server(memora, tenant_of(world))) as client:
        saved = await _save(client, world)
        interaction = structured(
            await client.call_tool("get_interaction", {"interaction_id": saved["interaction_id"]})
        )
        assert [m["content"] for m in interaction["messages"]] == [m["content"] for m in TURN]
        oslo = interaction["memories"][0]
        assert oslo["memory"] == "Ann lives in Oslo"  # placeholders resolved

        # A contrary memory supersedes Oslo: history shows it.
        second = structured(
            await client.call_tool(
                "save_interaction",
                {
                    "messages": [{"role": "user", "content": "Now I live in Bergen."}],
                    "contrary_memories": [
                        {
                            "memory": placeholder(world, "lives in Bergen"),
                            "source_msg_block_pos": [0],
                            "existing_contrary_memory_id": oslo["memory_id"],
                        }
                    ],
                },
            )
        )
        memories = structured(await client.call_tool("get_memories", {}))["memories"]
        assert [m["memory"] for m in memories] == ["Ann lives in Bergen", "Ann lives in Oslo"]
        bergen = memories[0]["memory_id"]
        history = structured(await client.call_tool("get_memory_history", {"memory_id": bergen}))
        assert [m["memory_id"] for m in history["memories"]] == [bergen, oslo["memory_id"]]
        assert structured(await client.call_tool("get_memories", {"skip": 1, "limit": 1}))[
            "memories"
        ] == [memories[1]]

        hits = structured(await client.call_tool("search_memories", {"query": "Bergen"}))["hits"]
        assert hits[0]["memory"]["memory_id"] == bergen
        assert hits[0]["memory"]["memory"] == "Ann lives in Bergen"
        assert hits[0]["score"] > 0
        assert (
            len(
                structured(
                    await client.call_tool("search_memories", {"query": "lives", "limit": 1})
                )["hits"]
            )
            == 1
        )

        listed = structured(await client.call_tool("get_interactions", {"limit": 5}))
        assert {i["interaction_id"] for i in listed["interactions"]} == {
            saved["interaction_id"],
            second["interaction_id"],
        }

        deleted = await client.call_tool("delete_memory", {"memory_id": bergen})
        assert structured(deleted) == {"deleted": bergen}
        gone = await client.call_tool(
            "delete_interaction", {"interaction_id": saved["interaction_id"]}
        )
        assert structured(gone) == {"deleted": saved["interaction_id"]}
        left = "MATCH (m:Memory) RETURN m.memory_id"
        assert neo4j_driver.execute_query(left).records == []
        store = memora.associated_vector_db
        assert isinstance(store, QdrantDB) and await store.tenants() == {}

        forgotten = await client.call_tool("forget_user", {})
        assert structured(forgotten) == {"deleted": world.user_id}
    users = neo4j_driver.execute_query(
        "MATCH (u:User {user_id: $u}) RETURN count(u)", u=world.user_id
    ).records[0][0]
    assert users == 0


UNKNOWN = "00000000-0000-4000-8000-000000000000"
BAD_CALLS: dict[str, tuple[str, dict[str, Any], str]] = {
    "messages of the wrong type": (
        "save_interaction",
        {"messages": "hello"},
        "messages: Input should be a valid list",
    ),
    "a message without content": (
        "save_interaction",
        {"messages": [{"role": "user"}]},
        "messages[0].content: required",
    ),
    "a memory without text": (
        "save_interaction",
        {"messages": TURN, "memories": [{"source_msg_block_pos": [0]}]},
        "memories[0].memory: required",
    ),
    "a limit that is no number": ("get_memories", {"limit": "many"}, "limit: "),
    "no messages": ("save_interaction", {"messages": []}, "messages"),
    "a position out of range": (
        "save_interaction",
        {"messages": TURN, "memories": [{"memory": "x", "source_msg_block_pos": [7]}]},
        "7",
    ),
    "an unknown memory superseded": (
        "save_interaction",
        {
            "messages": TURN,
            "contrary_memories": [
                {
                    "memory": "x",
                    "source_msg_block_pos": [0],
                    "existing_contrary_memory_id": UNKNOWN,
                }
            ],
        },
        "not found",
    ),
    "an unknown interaction": ("get_interaction", {"interaction_id": "nope"}, "not found"),
    "an unknown memory's history": ("get_memory_history", {"memory_id": UNKNOWN}, "not found"),
    "deleting an unknown memory": ("delete_memory", {"memory_id": UNKNOWN}, "not found"),
    "a memory id that is no UUID": ("delete_memory", {"memory_id": "nope"}, "not a UUID"),
    "deleting an unknown interaction": ("delete_interaction", {"interaction_id": "x"}, "not found"),
    "a limit too large": ("get_memories", {"limit": 101}, "limit: 101, at most 100"),
    "too many messages": (
        "save_interaction",
        {"messages": [TURN[0]] * 1001},
        "messages: 1001, at most 1000 (the server's --max-messages)",
    ),
    "a message too long": (
        "save_interaction",
        {"messages": [TURN[0], {"role": "user", "content": "x" * 20_001}]},
        "messages[1].content: 20001, at most 20000 (the server's --max-text)",
    ),
    "a memory too long": (
        "save_interaction",
        {"messages": TURN, "memories": [{"memory": "x" * 20_001, "source_msg_block_pos": [0]}]},
        "memories[0].memory: 20001, at most 20000",
    ),
    "a query too long": ("search_memories", {"query": "x" * 2001}, "query: 2001, at most 2000"),
    "a negative skip": ("get_interactions", {"skip": -1}, "skip: "),
    "a blank query": ("search_memories", {"query": ""}, "query: "),
}
#: What never reaches a client: the SDK's wrapping, pydantic's report, a traceback.
LEAKS = ("Error executing tool", "validation error for", "Arguments", "pydantic", "Traceback")


def assert_no_leak(text: str) -> None:
    assert not [leak for leak in LEAKS if leak in text], text


@pytest.mark.parametrize("bad", list(BAD_CALLS))
async def test_bad_input_is_a_clear_tool_error_and_changes_nothing(
    memora: Neo4jGraphInterface, neo4j_driver: Driver, bad: str
) -> None:
    world = await make_world(memora)
    name, arguments, said = BAD_CALLS[bad]
    async with Client(build_server(memora, tenant_of(world))) as client:
        await _save(client, world)
        before = await full_snapshot(neo4j_driver, memora.associated_vector_db)
        text = error_text(await client.call_tool(name, arguments))
    assert said in text, text
    assert_no_leak(text)
    assert await full_snapshot(neo4j_driver, memora.associated_vector_db) == before


async def test_answers_show_a_few_source_messages_unless_asked_for_more(
    memora: Neo4jGraphInterface,
) -> None:
    """A memory citing many messages shows 3 of them by default, ``sources=`` more; and
    each answer's text block is its structured content, compact."""
    world = await make_world(memora)
    messages = [{"role": "user", "content": f"message {n}"} for n in range(10)]
    memory = {
        "memory": placeholder(world, "said ten things"),
        "source_msg_block_pos": list(range(10)),
    }
    async with Client(build_server(memora, tenant_of(world))) as client:
        saved = await client.call_tool(
            "save_interaction", {"messages": messages, "memories": [memory]}
        )
        interaction_id = structured(saved)["interaction_id"]
        for name, arguments, memories_of in (
            ("get_memories", {}, lambda answer: answer["memories"]),
            ("get_interactions", {}, lambda answer: answer["interactions"][0]["memories"]),
            (
                "get_interaction",
                {"interaction_id": interaction_id},
                lambda answer: answer["memories"],
            ),
            (
                "search_memories",
                {"query": "ten things"},
                lambda answer: [h["memory"] for h in answer["hits"]],
            ),
        ):
            result = await client.call_tool(name, arguments)
            shown = memories_of(structured(result))[0]["message_sources"]
            assert [m["content"] for m in shown] == ["message 0", "message 1", "message 2"], name
            more = memories_of(
                structured(await client.call_tool(name, {**arguments, "sources": 10}))
            )
            assert len(more[0]["message_sources"]) == 10, name
            [block] = result.content
            assert isinstance(block, TextContent)
            assert block.text == json.dumps(result.structured_content, separators=(",", ":"))
        whole = structured(
            await client.call_tool("get_interaction", {"interaction_id": interaction_id})
        )
        assert len(whole["messages"]) == 10


async def test_search_without_a_vector_store_says_how_to_attach_one(
    memora: Neo4jGraphInterface,
) -> None:
    world = await make_world(memora)
    memora.associated_vector_db = None
    async with Client(build_server(memora, tenant_of(world))) as client:
        text = error_text(await client.call_tool("search_memories", {"query": "Oslo"}))
    assert "--qdrant-path" in text and "--qdrant-url" in text


async def test_a_tenant_without_a_scope_is_refused_and_nothing_is_written(
    memora: Neo4jGraphInterface, neo4j_driver: Driver
) -> None:
    world = await make_world(memora)
    async with Client(build_server(memora, tenant_of(world))) as writer:
        saved = await _save(writer, world)
    before = await full_snapshot(neo4j_driver, memora.associated_vector_db)
    async with Client(build_server(memora, tenant_of(world, (READ,)))) as reader:
        assert structured(await reader.call_tool("get_memories", {}))["memories"]
        refusals = [
            await reader.call_tool("save_interaction", {"messages": TURN}),
            await reader.call_tool(
                "delete_interaction", {"interaction_id": saved["interaction_id"]}
            ),
            await reader.call_tool("forget_user", {}),
        ]
    assert "memory:write" in error_text(refusals[0])
    assert "memory:delete" in error_text(refusals[1])
    assert "memory:delete" in error_text(refusals[2])
    assert await full_snapshot(neo4j_driver, memora.associated_vector_db) == before


async def test_another_tenants_ids_read_as_not_found_and_delete_nothing(
    memora: Neo4jGraphInterface, neo4j_driver: Driver
) -> None:
    ann = await make_world(memora)
    bob = await make_world(memora, "Bob", org_id=ann.org_id)
    async with Client(build_server(memora, tenant_of(ann))) as client:
        anns = await _save(client, ann)
    async with Client(build_server(memora, tenant_of(bob))) as client:
        await _save(client, bob, "likes jazz")
        before = await full_snapshot(neo4j_driver, memora.associated_vector_db)
        anns_memory = neo4j_driver.execute_query(
            "MATCH (m:Memory {user_id: $u}) RETURN m.memory_id", u=ann.user_id
        ).records[0][0]
        for name, arguments in (
            ("get_interaction", {"interaction_id": anns["interaction_id"]}),
            ("get_memory_history", {"memory_id": anns_memory}),
            ("delete_memory", {"memory_id": anns_memory}),
            ("delete_interaction", {"interaction_id": anns["interaction_id"]}),
        ):
            assert "not found" in error_text(await client.call_tool(name, arguments)), name
        hits = structured(await client.call_tool("search_memories", {"query": "Oslo"}))["hits"]
        assert all(hit["memory"]["user_id"] == bob.user_id for hit in hits)
        mine = structured(await client.call_tool("get_memories", {}))["memories"]
        assert [m["memory"] for m in mine] == ["Bob likes jazz"]
    assert await full_snapshot(neo4j_driver, memora.associated_vector_db) == before


# ------------------------------------------------------------------ over stdio


async def test_a_desktop_client_launches_the_server_saves_and_reads_back(
    memora: Neo4jGraphInterface, neo4j_connection: Neo4jConnection
) -> None:
    """As docs/mcp.md's quick start: ``memora-ogm mcp-tenant`` prints the variables, and
    the client launches ``memora-ogm mcp`` with them."""
    env = server_env(neo4j_connection)
    printed = memora_ogm_command(env, "mcp-tenant", "Acme", "Ann", "Claude")
    tenant = dict(line.removeprefix("export ").split("=", 1) for line in printed.splitlines())
    assert set(tenant) == {"MEMORA_OGM_MCP_ORG", "MEMORA_OGM_MCP_USER", "MEMORA_OGM_MCP_AGENT"}
    world = World(
        tenant["MEMORA_OGM_MCP_ORG"], tenant["MEMORA_OGM_MCP_USER"], tenant["MEMORA_OGM_MCP_AGENT"]
    )
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "memora_ogm.cli", "mcp"], env={**env, **tenant}
    )
    async with Client(params) as client:
        saved = await _save(client, world, "plays the cello")
        memories = structured(await client.call_tool("get_memories", {}))["memories"]
        assert [m["memory"] for m in memories] == ["Ann plays the cello"]
        assert memories[0]["interaction_id"] == saved["interaction_id"]
        assert memories[0]["agent_id"] == world.agent_id
        assert "--qdrant-path" in error_text(
            await client.call_tool("search_memories", {"query": "x"})
        )


# ------------------------------------------------------------------ over HTTP


@pytest.fixture(scope="module")
def keys(tmp_path_factory: pytest.TempPathFactory) -> Keys:
    return new_keys(tmp_path_factory.mktemp("mcp-keys"))


@pytest.fixture(scope="module")
def api_keys(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("mcp-api-keys") / "keys"
    path.write_text("# memora-ogm MCP API keys\n")
    return path


#: The collection of the served server's store.
COLLECTION = "mcp_tests"


@pytest.fixture(scope="module")
def served(
    neo4j_connection: Neo4jConnection,
    keys: Keys,
    api_keys: Path,
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[Any]:
    """``memora-ogm mcp --http`` with two uvicorn workers, JWTs and API keys, and a Qdrant
    server (the tests' stand-in) that both workers share, with offline embeddings."""
    options = ("--workers", "2", "--issuer", ISSUER, "--public-key", str(keys.public_file))
    log = tmp_path_factory.mktemp("mcp-log") / "stderr"
    with qdrant_standin() as (qdrant_url, qdrant):
        store = ("--qdrant-url", qdrant_url, "--collection", COLLECTION, "--embedder", "hashing")
        command = server_command(*options, "--api-keys", str(api_keys), *store)
        with serve(command, server_env(neo4j_connection), "/mcp", log=log) as served:
            server: Any = served  # with the two attributes the tests read
            server.endpoint = server.url + "/mcp"
            server.qdrant = qdrant
            yield server


@pytest.fixture
async def worlds(
    memora: Neo4jGraphInterface,
) -> list[World]:
    """Three tenants: two users of one organisation and one of another."""
    ann = await make_world(memora)
    bob = await make_world(memora, "Bob", org_id=ann.org_id)
    cy = await make_world(memora, "Cy")
    return [ann, bob, cy]


def _interactions(driver: Driver) -> int:
    return int(driver.execute_query("MATCH (i:Interaction) RETURN count(i)").records[0][0])


async def test_the_protected_resource_metadata_names_the_issuer_exactly_as_given(
    served: Any,
) -> None:
    """RFC 9728 with JWTs: the metadata at the well-known path before the endpoint's,
    naming the resource and the identity provider as given (no slash added)."""
    answer = httpx2.get(served.url + "/.well-known/oauth-protected-resource/mcp", timeout=10)
    assert answer.status_code == 200
    assert answer.json() == {
        "resource": served.endpoint,
        "resource_name": "memora-ogm memory",
        "authorization_servers": [ISSUER],
        "bearer_methods_supported": ["header"],
        "scopes_supported": list(SCOPES),
    }


#: Each bad token, and the reason its 401 gives (None: no token, so no error code).
BAD_TOKENS: dict[str, tuple[Any, str | None]] = {
    "missing": (lambda keys, tenant, aud: None, None),
    "forged": (
        lambda keys, tenant, aud: token(new_keys(Path("/tmp")), tenant, aud),
        "the token's signature does not verify",
    ),
    "expired": (lambda keys, tenant, aud: token(keys, tenant, aud, lifetime=-60), "expired"),
    "not yet valid": (
        lambda keys, tenant, aud: token(keys, tenant, aud, nbf=int(time.time()) + 600),
        "not valid yet",
    ),
    "wrong issuer": (
        lambda keys, tenant, aud: token(keys, tenant, aud, iss="https://evil.test"),
        "another issuer",
    ),
    "wrong audience": (
        lambda keys, tenant, aud: token(keys, tenant, "https://other.test/mcp"),
        "another audience",
    ),
    "no tenant": (
        lambda keys, tenant, aud: token(keys, tenant, aud, memora_user=""),
        "names no tenant",
    ),
    "unknown api key": (lambda keys, tenant, aud: "mok_not-a-key", "unknown API key"),
}


@pytest.mark.parametrize("bad", list(BAD_TOKENS))
async def test_a_bad_token_gets_401_as_rfc_6750_has_it_and_writes_nothing(
    served: Any, keys: Keys, worlds: list[World], neo4j_driver: Driver, bad: str
) -> None:
    make, reason = BAD_TOKENS[bad]
    bearer = make(keys, tenant_of(worlds[0]), served.endpoint)
    before = _interactions(neo4j_driver)
    answer = raw_call(served.endpoint, bearer, "save_interaction", {"messages": TURN})
    assert answer.status_code == 401, answer.text
    challenge = answer.headers["www-authenticate"]
    assert challenge.startswith('Bearer realm="memora-ogm"'), challenge
    metadata = served.url + "/.well-known/oauth-protected-resource/mcp"
    assert f'resource_metadata="{metadata}"' in challenge, challenge
    if reason is None:  # RFC 6750 3.1: a request without credentials gets no error code
        assert "error=" not in challenge, challenge
    else:
        assert 'error="invalid_token"' in challenge and reason in challenge, challenge
    assert _interactions(neo4j_driver) == before


async def test_a_read_only_token_reads_but_its_saves_and_deletes_are_refused(
    served: Any, keys: Keys, worlds: list[World], neo4j_driver: Driver
) -> None:
    ann = worlds[0]
    async with http_client(served.endpoint, token(keys, tenant_of(ann), served.endpoint)) as writer:
        saved = await _save(writer, ann)
    before = await full_snapshot(neo4j_driver)
    reading = token(keys, tenant_of(ann, (READ,)), served.endpoint)
    async with http_client(served.endpoint, reading) as reader:
        assert structured(await reader.call_tool("get_memories", {}))["memories"]
        save = await reader.call_tool("save_interaction", {"messages": TURN})
        delete = await reader.call_tool(
            "delete_interaction", {"interaction_id": saved["interaction_id"]}
        )
    assert "memory:write" in error_text(save)
    assert "memory:delete" in error_text(delete)
    assert await full_snapshot(neo4j_driver) == before


async def test_a_revoked_api_key_fails_within_a_second(
    served: Any, api_keys: Path, worlds: list[World], neo4j_connection: Neo4jConnection
) -> None:
    """The key is added with ``memora-ogm mcp-key`` (its hash only in the file), and
    revoked by deleting its line."""
    kept = api_keys.read_text()
    bob = worlds[1]
    tenant = ("--org", bob.org_id, "--user", bob.user_id, "--agent", bob.agent_id)
    env = server_env(neo4j_connection)
    key = memora_ogm_command(
        env, "mcp-key", "--file", str(api_keys), *tenant, "--scope", "memory:read"
    ).strip()
    assert key not in api_keys.read_text() and len(api_keys.read_text()) > len(kept)
    answer = raw_call(served.endpoint, key, "get_memories", {})
    assert answer.status_code == 200, answer.text
    refused = raw_call(served.endpoint, key, "save_interaction", {"messages": TURN})
    assert "memory:write" in refused.text
    api_keys.write_text(kept)  # revoked
    revoked = time.monotonic()
    seconds = wait_until(
        lambda: raw_call(served.endpoint, key, "get_memories", {}).status_code == 401, 1.0
    )
    assert time.monotonic() - revoked <= 1.0, seconds
    print(f"revoked key refused {seconds * 1000:.0f} ms after the file changed")


async def test_a_development_token_minted_by_the_command_is_accepted(
    served: Any, keys: Keys, worlds: list[World], neo4j_connection: Neo4jConnection, tmp_path: Path
) -> None:
    """``memora-ogm mcp-token``, as docs/mcp.md mints one, against the served server."""
    private = tmp_path / "dev-key.pem"
    private.write_text(keys.private)
    ann = worlds[0]
    bearer = memora_ogm_command(
        server_env(neo4j_connection),
        "mcp-token",
        "--private-key",
        str(private),
        "--issuer",
        ISSUER,
        "--audience",
        served.endpoint,
        "--org",
        ann.org_id,
        "--user",
        ann.user_id,
        "--agent",
        ann.agent_id,
        "--scope",
        "memory:read",
        "--scope",
        "memory:write",
    ).strip()
    async with http_client(served.endpoint, bearer) as client:
        saved = await _save(client, ann, "minted a token")
        got = await client.call_tool("get_interaction", {"interaction_id": saved["interaction_id"]})
        assert structured(got)["memories"][0]["memory"] == "Ann minted a token"
        forget = await client.call_tool("forget_user", {})
    assert "memory:delete" in error_text(forget)


#: Callers and calls of the isolation test.
CALLERS, CALLS = 16, 3000


async def test_three_tenants_calling_every_tool_concurrently_never_see_each_other(
    served: Any, keys: Keys, worlds: list[World], neo4j_driver: Driver
) -> None:
    """16 callers, 3,000 calls of every tool: no answer holds another tenant's id, each
    tenant's attempts on the others' ids read as not found and delete nothing, and one
    tenant forgetting its user while the others read leaves theirs whole, in both
    stores."""
    tokens = [token(keys, tenant_of(world), served.endpoint) for world in worlds]
    kept: dict[str, set[str]] = {world.user_id: set() for world in worlds}  # memory ids
    left = [CALLS]
    leaks: list[str] = []
    refused: list[str] = []

    def others(world: World) -> list[str]:
        return [w.user_id for w in worlds if w is not world] + [
            w.org_id for w in worlds if w.org_id != world.org_id
        ]

    def check(world: World, answer: Any) -> None:
        text = str(answer)
        leaks.extend(f"{world.user_id} saw {other}" for other in others(world) if other in text)

    async def caller(number: int) -> None:
        world = worlds[number % len(worlds)]
        rng = random.Random(number)
        mine: list[tuple[str, str]] = []  # (interaction, memory) saved by this caller
        async with http_client(served.endpoint, tokens[number % len(worlds)]) as client:
            while left[0] > 0:
                left[0] -= 1
                choice = rng.random()
                if choice < 0.25 or not mine:
                    saved = await _save(client, world, f"note {number}-{left[0]}")
                    got = await client.call_tool(
                        "get_interaction", {"interaction_id": saved["interaction_id"]}
                    )
                    memory_id = structured(got)["memories"][0]["memory_id"]
                    mine.append((saved["interaction_id"], memory_id))
                    kept[world.user_id].add(memory_id)
                    answer: Any = structured(got)
                elif choice < 0.4:
                    answer = structured(await client.call_tool("get_memories", {"limit": 20}))
                elif choice < 0.5:
                    query = {"query": f"note {rng.randrange(CALLERS)}", "limit": 20}
                    answer = structured(await client.call_tool("search_memories", query))
                    found = {hit["memory"]["user_id"] for hit in answer["hits"]}
                    leaks.extend(f"{world.user_id} found {u}" for u in found - {world.user_id})
                elif choice < 0.6:
                    answer = structured(await client.call_tool("get_interactions", {"limit": 5}))
                elif choice < 0.7:
                    memory = rng.choice(mine)[1]
                    answer = await client.call_tool("get_memory_history", {"memory_id": memory})
                elif choice < 0.8 and len(mine) > 2:
                    interaction, memory_id = mine.pop(0)
                    deleted = await client.call_tool(
                        "delete_interaction", {"interaction_id": interaction}
                    )
                    answer = structured(deleted)
                    kept[world.user_id].discard(memory_id)
                else:  # another tenant's memory or interaction: not found, nothing deleted
                    theirs = [i for w in worlds if w is not world for i in list(kept[w.user_id])]
                    if not theirs:
                        continue
                    target = rng.choice(theirs)
                    answer = await client.call_tool("delete_memory", {"memory_id": target})
                    if "not found" not in error_text(answer):
                        refused.append(target)
                    answer = answer.content
                check(world, answer)

    started = time.monotonic()
    await asyncio.gather(*(caller(number) for number in range(CALLERS)))
    seconds = time.monotonic() - started

    # The last tenant forgets its user while the other two read.
    async def read(world: World, bearer: str) -> None:
        async with http_client(served.endpoint, bearer) as client:
            for name, arguments in (("get_memories", {}), ("search_memories", {"query": "note"})):
                check(world, structured(await client.call_tool(name, arguments)))

    async def forget(world: World, bearer: str) -> None:
        async with http_client(served.endpoint, bearer) as client:
            assert structured(await client.call_tool("forget_user", {})) == {
                "deleted": world.user_id
            }

    *readers, forgetting = worlds
    await asyncio.gather(
        forget(forgetting, tokens[-1]),
        *(read(world, bearer) for world, bearer in zip(readers, tokens, strict=False)),
    )
    kept[forgetting.user_id] = set()
    print(
        f"{CALLERS} callers, {CALLS} calls of 3 tenants in {seconds:.1f} s: "
        f"{len(leaks)} answers with another tenant's ids, {len(refused)} foreign deletes done"
    )
    assert leaks == []
    assert refused == []
    # Each tenant holds exactly what it saved and did not delete, in both stores.
    orgs = {world.org_id for world in worlds}
    points = {
        point_id
        for point_id, payload in served.qdrant.points(COLLECTION).items()
        if payload.get("org_id") in orgs
    }
    for world in worlds:
        stored = {
            r[0]
            for r in neo4j_driver.execute_query(
                "MATCH (m:Memory {org_id: $o, user_id: $u}) RETURN m.memory_id",
                o=world.org_id,
                u=world.user_id,
            ).records
        }
        assert stored == kept[world.user_id], world.user_id
    assert points == set().union(*kept.values())


def raw_message(
    url: str, bearer: str, method: str, encodings: str = "gzip, deflate"
) -> httpx2.Response:
    """A JSON-RPC request that is no tool call, as a plain POST accepting ``encodings``."""
    headers = {
        "Accept": "application/json, text/event-stream",
        "Accept-Encoding": encodings,
        "Content-Type": "application/json",
        "MCP-Protocol-Version": "2025-11-25",
        "Authorization": f"Bearer {bearer}",
    }
    body = {"jsonrpc": "2.0", "id": 1, "method": method}
    return httpx2.post(url, headers=headers, content=json.dumps(body), timeout=30)


async def test_answers_are_compressed_for_clients_that_accept_gzip(
    served: Any, keys: Keys, memora: Neo4jGraphInterface
) -> None:
    """A large answer (tools/list's) goes gzip-compressed to a client that accepts it
    (httpx, under the SDK's and fastmcp's clients, does by default), and as it is to one
    that does not; both decode to the same JSON."""
    world = await make_world(memora)
    bearer = token(keys, tenant_of(world), served.endpoint)
    packed = raw_message(served.endpoint, bearer, "tools/list")
    plain = raw_message(served.endpoint, bearer, "tools/list", encodings="identity")
    assert packed.status_code == plain.status_code == 200
    assert packed.headers["content-encoding"] == "gzip"
    assert "content-encoding" not in plain.headers
    assert packed.json() == plain.json()
    assert packed.num_bytes_downloaded < len(plain.content) / 3


async def test_the_rate_limit_counts_tool_calls_only_and_the_server_stops_on_sigterm(
    neo4j_connection: Neo4jConnection, keys: Keys, memora: Neo4jGraphInterface
) -> None:
    """``--rate 2``: fastmcp's client opens its session (initialize, the initialized
    notification, tools/list: free) and makes its first two tool calls, all answered;
    a burst of tool calls meets 429, a burst of tools/list never does."""
    world = await make_world(memora)
    options = ("--workers", "2", "--issuer", ISSUER, "--public-key", str(keys.public_file))
    command = server_command(*options, "--rate", "2")
    with serve(command, server_env(neo4j_connection), "/mcp") as server:
        endpoint = server.url + "/mcp"
        bearer = token(keys, tenant_of(world), endpoint)
        transport = StreamableHttpTransport(endpoint, auth=bearer)
        async with FastMCPClient(transport, timeout=60) as client:
            assert {tool.name for tool in await client.list_tools()} == TOOLS
            for _ in range(2):
                first = await client.call_tool("get_memories", {})
                [block] = first.content
                assert isinstance(block, TextContent)
                assert json.loads(block.text) == {"memories": []}
        await asyncio.sleep(1.1)  # the buckets full again
        listings = await asyncio.gather(
            *(asyncio.to_thread(raw_message, endpoint, bearer, "tools/list") for _ in range(20))
        )
        assert {answer.status_code for answer in listings} == {200}
        # A burst of 30 at once: at most a bucket (2) and what refills pass, per worker.
        answers = await asyncio.gather(
            *(asyncio.to_thread(raw_call, endpoint, bearer, "get_memories", {}) for _ in range(30))
        )
        statuses = [answer.status_code for answer in answers]
        assert 429 in statuses and set(statuses) <= {200, 429}, statuses
        limited = next(answer for answer in answers if answer.status_code == 429)
        assert limited.headers["retry-after"] == "1"
        other = token(keys, tenant_of(world, SCOPES), endpoint, jti="another token")
        assert raw_call(endpoint, other, "get_memories", {}).status_code == 200
        seconds = server.stop()  # SIGTERM: the master and both workers gone within 5 s
    assert seconds < 5
    assert len(server.workers) >= 2
    print(
        f"stopped {seconds:.2f} s after SIGTERM, {len(server.workers)} children gone"
    )  # the workers (and multiprocessing's helper)


async def test_workers_are_forked_and_one_that_dies_is_replaced(
    neo4j_connection: Neo4jConnection, keys: Keys, memora: Neo4jGraphInterface
) -> None:
    """``--workers 2``: two workers forked from the server (no interpreter started
    afresh: each worker's command line is the server's); while one killed is down the
    other answers, it is replaced, and SIGTERM the moment the new one is forked (still
    starting) ends the server and every worker."""
    world = await make_world(memora)
    options = ("--workers", "2", "--issuer", ISSUER, "--public-key", str(keys.public_file))
    with serve(server_command(*options), server_env(neo4j_connection), "/mcp") as server:
        endpoint = server.url + "/mcp"
        bearer = token(keys, tenant_of(world), endpoint)
        first = children(server.process.pid)
        assert len(first) == 2
        master = Path(f"/proc/{server.process.pid}/cmdline").read_bytes()
        assert {Path(f"/proc/{pid}/cmdline").read_bytes() for pid in first} == {master}
        killed = min(first)
        os.kill(killed, signal.SIGKILL)
        for _ in range(3):
            answer = raw_call(endpoint, bearer, "get_memories", {})
            assert answer.status_code == 200, answer.text
        deadline = time.monotonic() + 30
        while (now := children(server.process.pid)) == first or len(now) < 2:
            assert time.monotonic() < deadline, f"no worker replaced {killed}: {now}"
            await asyncio.sleep(0.01)
        assert killed not in now and len(now) == 2
        server.workers |= now
        server.stop()  # asserts that the server and all its workers are gone
    assert server.process.returncode == 0


async def test_tokens_are_verified_by_keys_from_a_jwks_url(tmp_path: Path) -> None:
    """The identity provider's keys fetched from its JWKS URL, by each token's ``kid``."""
    import json
    import threading
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    import jwt
    from cryptography.hazmat.primitives.asymmetric.rsa import RSAPrivateKey
    from cryptography.hazmat.primitives.serialization import load_pem_private_key

    from memora_ogm.mcp.auth import JwtVerifier, Tenant

    keys = new_keys(tmp_path)
    private_key = load_pem_private_key(keys.private.encode(), password=None)
    assert isinstance(private_key, RSAPrivateKey)
    jwk = json.loads(jwt.algorithms.RSAAlgorithm.to_jwk(private_key.public_key()))
    document = json.dumps({"keys": [{**jwk, "kid": "k1", "use": "sig", "alg": "RS256"}]})

    class Jwks(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 - the handler's name
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.end_headers()
            self.wfile.write(document.encode())

        def log_message(self, *args: Any) -> None:
            pass

    http = ThreadingHTTPServer(("127.0.0.1", 0), Jwks)
    threading.Thread(target=http.serve_forever, daemon=True).start()
    try:
        url = f"http://127.0.0.1:{http.server_address[1]}/jwks.json"
        audience = "https://memory.test/mcp"
        verifier = JwtVerifier(ISSUER, audience, jwks_url=url)
        ann = Tenant("org", "ann", "bot", frozenset({READ}))
        verified = await verifier.check(token(keys, ann, audience, key_id="k1"))
        assert not isinstance(verified, str) and verified.tenant() == ann
        unknown_kid = token(keys, ann, audience, key_id="k2")
        assert await verifier.check(unknown_kid) == "the token's signing key is not in the JWKS"
    finally:
        http.shutdown()


STDIO_TENANT = ("mcp", "--org", "o", "--user", "u", "--agent", "a")
HTTP_WITH_KEYS = ("mcp", "--http", "127.0.0.1:8765", "--api-keys", "api-keys")


@pytest.mark.parametrize(
    ("arguments", "environ", "said"),
    [
        (("mcp", "--http", "127.0.0.1:8765"), {}, "--api-keys"),
        (("mcp", "--http", "127.0.0.1:8765", "--public-key", "missing.pem"), {}, "--issuer"),
        (
            ("mcp", "--http", "127.0.0.1:8765", "--issuer", ISSUER, "--public-key", "nope.pem"),
            {},
            "nope.pem",
        ),
        (("mcp",), {}, "MEMORA_OGM_MCP_ORG"),
        (("mcp-key", "--file", "keys", "--org", "o"), {}, "--user"),
        (STDIO_TENANT, {"NEO4J_PASSWORD": "wrong"}, "authentication failed for user neo4j"),
        (HTTP_WITH_KEYS, {"NEO4J_PASSWORD": "wrong"}, "authentication failed for user neo4j"),
        (STDIO_TENANT, {"NEO4J_URI": "bolt://127.0.0.1:9"}, "Neo4j unreachable at bolt://127."),
        (HTTP_WITH_KEYS, {"NEO4J_URI": "bolt://127.0.0.1:9"}, "Neo4j unreachable at bolt://127."),
        (
            (*HTTP_WITH_KEYS, "--workers", "2", "--qdrant-path", "vectors"),
            {},
            "--qdrant-url",
        ),
    ],
    ids=[
        "no tokens",
        "no issuer",
        "no key file",
        "no stdio tenant",
        "a key without a tenant",
        "a wrong password over stdio",
        "a wrong password over HTTP",
        "no Neo4j over stdio",
        "no Neo4j over HTTP",
        "one store folder for two workers",
    ],
)
def test_a_server_that_cannot_start_says_why_in_one_line_and_exits_2(
    neo4j_connection: Neo4jConnection,
    tmp_path: Path,
    arguments: tuple[str, ...],
    environ: dict[str, str],
    said: str,
) -> None:
    env = {
        name: value
        for name, value in server_env(neo4j_connection).items()
        if not name.startswith("MEMORA_OGM_MCP_")
    }
    (tmp_path / "api-keys").write_text("")
    done = subprocess.run(
        [sys.executable, "-m", "memora_ogm.cli", *arguments],
        env={**env, **environ},
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 2, done.stderr
    assert said in done.stderr and len(done.stderr.strip().splitlines()) == 1, done.stderr
    assert not (tmp_path / "keys").exists()


def test_a_second_server_on_the_same_store_folder_says_so_and_exits_2(
    neo4j_connection: Neo4jConnection, tmp_path: Path
) -> None:
    """The folder is held by a first server (a stdio one, waiting for its client)."""
    env = {**server_env(neo4j_connection), "QDRANT_PATH": str(tmp_path / "vectors")}
    command = [sys.executable, "-m", "memora_ogm.cli", *STDIO_TENANT, "--embedder", "hashing"]
    first = subprocess.Popen(
        command, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    try:
        # Its answer to initialize: the first server serves, so it holds the folder.
        hello = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
        assert first.stdin is not None and first.stdout is not None
        first.stdin.write(json.dumps(hello).encode() + b"\n")
        first.stdin.flush()
        assert b'"id":1' in first.stdout.readline().replace(b" ", b"")
        second = subprocess.run(
            command, env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True
        )
        assert second.returncode == 2, second.stderr
        assert "open in another process" in second.stderr, second.stderr
        assert len(second.stderr.strip().splitlines()) == 1, second.stderr
    finally:
        first.kill()
        first.communicate()


@pytest.mark.parametrize(
    ("option", "said"),
    [
        (("--lifetime", "-10"), "--lifetime: expected a number above 0, not '-10'"),
        (("--scope", "memory:admin"), "--scope: invalid choice: 'memory:admin'"),
    ],
    ids=["a negative lifetime", "an unknown scope"],
)
def test_mcp_token_refuses_what_no_server_would_accept(
    tmp_path: Path, option: tuple[str, str], said: str
) -> None:
    keys = new_keys(tmp_path)
    private = tmp_path / "dev-key.pem"
    private.write_text(keys.private)
    arguments = ("--private-key", str(private), "--issuer", ISSUER, "--audience", "http://x/mcp")
    tenant = ("--org", "o", "--user", "u", "--agent", "a")
    done = subprocess.run(
        [sys.executable, "-m", "memora_ogm.cli", "mcp-token", *arguments, *tenant, *option],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2 and done.stdout == "", done.stdout
    assert said in done.stderr, done.stderr
