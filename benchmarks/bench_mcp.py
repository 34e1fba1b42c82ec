"""What the MCP layer adds to a call (issue 41), how large its answers are, and how fast
a server with workers starts and stops (issue 47).

    python benchmarks/bench_mcp.py [--calls 200] [--memories 50] [--starts 3]

Connects like the tests (``NEO4J_*`` variables, else Docker, else the embedded server)
and starts ``memora-ogm mcp --http`` (one worker, an API key) on a free port. It times
``get_memories`` and ``save_interaction`` three ways, interleaved: the facade call made
directly in this process; the same tool over HTTP through the SDK's client on one
kept-alive connection; and the same ``tools/call`` as a bare JSON-RPC POST on a
kept-alive connection (the server's share, without the client SDK's own work: it
validates each result against the tool's output schema). It prints each median, and the
ratio and difference of each MCP way to the direct call. Then the size of
``get_memories(limit=MEMORIES)``'s answer against its structured content's (compact
JSON), and, ``--starts`` times, ``--workers 2``: seconds from launch to the first answer,
and from SIGTERM until the master and its workers are gone.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from memora_ogm import Neo4jGraphInterface
from memora_ogm.mcp.auth import Tenant, new_api_key
from memora_ogm.schema.storage import MemoriesAndInteraction, MemoryToStore
from memora_ogm.server import connect_or_start
from memora_ogm.server.local import free_port


def turn(user_id: str, number: int) -> dict[str, Any]:
    return {
        "messages": [{"role": "user", "content": f"note {number}"}],
        "memories": [{"memory": f"user_{user_id} noted {number}", "source_msg_block_pos": [0]}],
    }


def saved(user_id: str, number: int) -> MemoriesAndInteraction:
    """:func:`turn` as the facade takes it."""
    data = turn(user_id, number)
    memories = [MemoryToStore(**memory) for memory in data["memories"]]
    return MemoriesAndInteraction(interaction=data["messages"], memories=memories)


def started(command: list[str], env: dict[str, str], url: str) -> subprocess.Popen[bytes]:
    process = subprocess.Popen(command, env=env)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            urllib.request.urlopen(url, timeout=2)
            return process
        except urllib.error.HTTPError:
            return process  # 401: it serves
        except OSError:
            time.sleep(0.1)
    process.kill()
    raise SystemExit("the MCP server did not start")


def children(pid: int) -> set[int]:
    found: set[int] = set()
    for task in Path(f"/proc/{pid}/task").glob("*"):
        try:
            found |= {int(child) for child in (task / "children").read_text().split()}
        except OSError:
            continue
    return found


def alive(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return False


def lifecycle(command: list[str], env: dict[str, str], url: str) -> tuple[float, float]:
    """Seconds from launch to the first answer, and from SIGTERM to every process gone."""
    launched = time.monotonic()
    server = started(command, env, url)
    up = time.monotonic() - launched
    workers = children(server.pid)
    stopping = time.monotonic()
    server.send_signal(signal.SIGTERM)
    server.wait(timeout=30)
    while any(map(alive, workers)):
        time.sleep(0.01)
    return up, time.monotonic() - stopping


async def main(calls: int, memories: int, starts: int) -> None:
    with connect_or_start() as conn, tempfile.TemporaryDirectory(prefix="bench-mcp-") as work:
        memora = Neo4jGraphInterface.from_connection(conn)
        await memora.setup()
        org = (await memora.create_organization("Bench")).org_id
        user = (await memora.create_user(org, "Ann")).user_id
        agent = (await memora.create_agent(org, "Bot")).agent_id
        for number in range(memories):
            await memora.save_interaction_with_memories(org, agent, user, saved(user, number))
        key, line = new_api_key(Tenant(org, user, agent))
        keys = Path(work) / "keys"
        keys.write_text(line + "\n")
        port = free_port()
        url = f"http://127.0.0.1:{port}/mcp"
        command = [sys.executable, "-m", "memora_ogm.cli", "mcp", "--http", f"127.0.0.1:{port}"]
        served = [*command, "--api-keys", str(keys), "--log-level", "warning"]
        server = started(served, {**os.environ, **conn.env()}, url)
        times: dict[str, dict[str, list[float]]] = {
            "get_memories": {"direct": [], "mcp": [], "post": []},
            "save_interaction": {"direct": [], "mcp": [], "post": []},
        }
        rpc_headers = {
            "Accept": "application/json, text/event-stream",
            "Content-Type": "application/json",
            "MCP-Protocol-Version": "2025-11-25",
        }
        try:
            headers = {"Authorization": f"Bearer {key}"}
            async with httpx2.AsyncClient(headers=headers, timeout=60) as http:
                async with Client(streamable_http_client(url, http_client=http)) as client:
                    name_read, read_args = "get_memories", {"limit": memories}
                    for number in range(calls + 20):  # 20 to warm up
                        warm = number < 20

                        async def direct_read() -> Any:
                            return await memora.get_all_user_memories(org, user, limit=memories)

                        async def mcp_read() -> Any:
                            return await client.call_tool("get_memories", {"limit": memories})

                        async def direct_save(number: int = number) -> Any:
                            data = saved(user, number)
                            return await memora.save_interaction_with_memories(
                                org, agent, user, data
                            )

                        async def mcp_save(number: int = number) -> Any:
                            return await client.call_tool("save_interaction", turn(user, number))

                        def post(name: str, arguments: dict[str, Any]) -> Any:
                            call = {"name": name, "arguments": arguments}
                            body = {
                                "jsonrpc": "2.0",
                                "id": 1,
                                "method": "tools/call",
                                "params": call,
                            }

                            async def posted() -> Any:
                                answer = await http.post(
                                    url, content=json.dumps(body), headers=rpc_headers
                                )
                                assert answer.status_code == 200, answer.text
                                return answer

                            return posted

                        for name, direct, over_mcp, bare in (
                            ("get_memories", direct_read, mcp_read, post(name_read, read_args)),
                            (
                                "save_interaction",
                                direct_save,
                                mcp_save,
                                post("save_interaction", turn(user, number)),
                            ),
                        ):
                            ways = (("direct", direct), ("mcp", over_mcp), ("post", bare))
                            for side, run in ways:
                                start = time.perf_counter()
                                result = await run()
                                elapsed = time.perf_counter() - start
                                assert side != "mcp" or not result.is_error, result
                                if not warm:
                                    times[name][side].append(elapsed)
                    answer = await post(name_read, read_args)()
                    content = answer.json()["result"]["structuredContent"]
                    structured = len(json.dumps(content, separators=(",", ":")).encode())
                    copy = answer.json()["result"]["content"][0]["text"]
                    text = len(copy.encode())
                    escapes = len(json.dumps(copy, ensure_ascii=False).encode()) - 2 - text
                    size = len(answer.content)
                    wire = answer.num_bytes_downloaded
        finally:
            server.terminate()
            server.wait(timeout=10)
        env = {**os.environ, **conn.env()}
        cycles = [
            lifecycle(
                [*command, "--api-keys", str(keys), "--workers", "2", "--log-level", "warning"],
                env,
                url,
            )
            for _ in range(starts)
        ]
        await memora.delete_organization(org)
        await memora.close()
    print(f"{calls} calls each, interleaved; the user holds {memories}+ memories")
    print(
        f"  get_memories(limit={memories}) answers {size} bytes for {structured} bytes of "
        f"structured content: {size / structured:.2f}x (its text block, decoded, "
        f"{text / structured:.2f}x; escaping the copy inside the answer's JSON adds "
        f"{escapes} bytes, {escapes / structured:.2f}x, the envelope "
        f"{size - structured - text - escapes}); "
        f"on the wire, gzip: {wire} bytes, {wire / structured:.2f}x"
    )
    ups, downs = zip(*cycles, strict=True)
    print(
        f"  --workers 2, {starts} starts: first answer after {statistics.median(ups):.2f} s "
        f"(max {max(ups):.2f}), gone {statistics.median(downs):.2f} s after SIGTERM "
        f"(max {max(downs):.2f})"
    )
    for name, sides in times.items():
        alone = statistics.median(sides["direct"]) * 1000
        print(f"  {name:17s} direct        {alone:7.3f} ms")
        for side, label in (("mcp", "SDK client"), ("post", "bare POST")):
            over = statistics.median(sides[side]) * 1000
            print(
                f"  {'':17s} {label:13s} {over:7.3f} ms   ratio {over / alone:5.2f}   "
                f"adds {over - alone:6.3f} ms"
            )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=200)
    parser.add_argument("--memories", type=int, default=50, help="get_memories' page size")
    parser.add_argument("--starts", type=int, default=3, help="starts and stops timed")
    args = parser.parse_args()
    asyncio.run(main(args.calls, args.memories, args.starts))
