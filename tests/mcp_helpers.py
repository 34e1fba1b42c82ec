"""What the MCP tests share: keys and tokens, tenants, and clients of a served server."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx2
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from memora_ogm.mcp.auth import SCOPES, Tenant, mint_token

ISSUER = "https://id.memora.test"
TOOLS = {
    "save_interaction",
    "search_memories",
    "get_memories",
    "get_interactions",
    "get_interaction",
    "get_memory_history",
    "delete_memory",
    "delete_interaction",
    "forget_user",
}


@dataclass(frozen=True)
class Keys:
    private: str
    public_file: Path


def new_keys(folder: Path) -> Keys:
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    private = key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    ).decode()
    public = key.public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    path = folder / "public.pem"
    path.write_bytes(public)
    return Keys(private, path)


def token(keys: Keys, tenant: Tenant, audience: str, **claims: Any) -> str:
    lifetime = claims.pop("lifetime", 600)
    return mint_token(
        keys.private, tenant, issuer=ISSUER, audience=audience, lifetime=lifetime, **claims
    )


def tenant_of(world: Any, scopes: tuple[str, ...] = SCOPES) -> Tenant:
    return Tenant(world.org_id, world.user_id, world.agent_id, frozenset(scopes))


@asynccontextmanager
async def http_client(url: str, bearer: str) -> AsyncIterator[Client]:
    """An SDK client of the served endpoint, its calls carrying ``bearer``."""
    headers = {"Authorization": f"Bearer {bearer}"}
    async with httpx2.AsyncClient(headers=headers, timeout=httpx2.Timeout(60)) as http:
        async with Client(streamable_http_client(url, http_client=http)) as client:
            yield client


def structured(result: Any) -> Any:
    """A tool result's structured content, after asserting it is not an error."""
    assert not result.is_error, result.content
    return result.structured_content


def error_text(result: Any) -> str:
    assert result.is_error, result.structured_content
    return " ".join(getattr(block, "text", "") for block in result.content)


def raw_call(url: str, bearer: str | None, name: str, arguments: dict[str, Any]) -> httpx2.Response:
    """A tools/call as a plain HTTP request (the SDK's client hides the status)."""
    headers = {
        "Accept": "application/json, text/event-stream",
        "Content-Type": "application/json",
        "MCP-Protocol-Version": "2025-11-25",
    }
    if bearer is not None:
        headers["Authorization"] = f"Bearer {bearer}"
    body = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": name, "arguments": arguments},
    }
    return httpx2.post(url, headers=headers, content=json.dumps(body), timeout=30)


def server_command(*options: str) -> list[str]:
    """``memora-ogm mcp --http`` on a port to fill in, with ``options``."""
    return [sys.executable, "-m", "memora_ogm.cli", "mcp", "--http", "127.0.0.1:{port}", *options]


def memora_ogm_command(env: dict[str, str], *arguments: str) -> str:
    """What ``memora-ogm ARGUMENTS`` prints (it must succeed)."""
    done = subprocess.run(
        [sys.executable, "-m", "memora_ogm.cli", *arguments],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def server_env(conn: Any) -> dict[str, str]:
    return {**os.environ, **conn.env()}


def wait_until(condition: Any, timeout: float) -> float:
    """Seconds until ``condition()`` held (AssertionError after ``timeout``)."""
    started = time.monotonic()
    while not condition():
        if time.monotonic() - started > timeout:
            raise AssertionError(f"not within {timeout} s")
        time.sleep(0.02)
    return time.monotonic() - started
