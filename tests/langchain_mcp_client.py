"""LangGraph's MCP client (langchain-mcp-adapters) against ``memora-ogm mcp`` over stdio,
run in an environment of its own (it needs mcp<2; tests/test_mcp_clients.py).

Reads a request as JSON on standard input: the server's ``command`` and ``env``, and
``calls`` as ``[tool, arguments]`` pairs. Prints, as JSON, the tool names the client
lists and, per call, what a LangGraph agent is handed: the tool's text output, or the
text of the error it raises.
"""

from __future__ import annotations

import asyncio
import json
import sys
from typing import Any

from langchain_mcp_adapters.client import MultiServerMCPClient


def _text(output: Any) -> str:
    """A tool's output as the agent reads it: text, or its text blocks joined."""
    if isinstance(output, str):
        return output
    return "".join(
        block.get("text", "") if isinstance(block, dict) else str(block) for block in output
    )


async def main(request: dict[str, Any]) -> dict[str, Any]:
    command, *args = request["command"]
    client = MultiServerMCPClient(
        {"memora": {"transport": "stdio", "command": command, "args": args, "env": request["env"]}}
    )
    tools = {tool.name: tool for tool in await client.get_tools()}
    answers: list[dict[str, Any]] = []
    for name, arguments in request["calls"]:
        try:
            answers.append({"text": _text(await tools[name].ainvoke(arguments))})
        except Exception as error:  # noqa: BLE001 - the agent is handed its text
            answers.append({"error": type(error).__name__, "text": str(error)})
    return {"tools": sorted(tools), "answers": answers}


if __name__ == "__main__":
    print(json.dumps(asyncio.run(main(json.load(sys.stdin)))))
