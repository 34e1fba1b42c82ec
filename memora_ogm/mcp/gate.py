"""The door of the HTTP server: who calls, how often it calls tools, and one log line
per request.

A request to the MCP endpoint is read once here: its bearer token is checked (a 401
per RFC 6750 otherwise: without an error code when no token came, with
``invalid_token`` and the reason when one was refused), its JSON-RPC messages are
counted against the token's rate when they are tool calls (``initialize``, the
notifications, ``tools/list`` and the like are free), and its line is logged: the
method, the tool, the status, the milliseconds and a refusal's reason, never the token
nor what the caller sent.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Awaitable, Callable
from typing import Any

from mcp.server.auth.middleware.auth_context import auth_context_var
from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser
from starlette.authentication import AuthCredentials
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from memora_ogm.mcp.auth import SCOPES, RateLimit, TokenVerifier

log = logging.getLogger("memora_ogm.mcp")

#: A body larger than this is passed on unread (the SDK refuses it).
LARGEST_READ = 4 * 1024 * 1024
#: The realm every challenge names.
REALM = "memora-ogm"


def metadata_url(resource_url: str) -> str:
    """Where RFC 9728 puts a resource's metadata: the well-known path before its own."""
    scheme, _, rest = resource_url.partition("://")
    host, slash, path = rest.partition("/")
    path = (slash + path).rstrip("/")
    return f"{scheme}://{host}/.well-known/oauth-protected-resource{path}"


def resource_metadata(
    resource_url: str, issuer: str | None
) -> Callable[[Request], Awaitable[Response]]:
    """The endpoint of the protected-resource metadata: the issuer exactly as given, and
    none with API keys alone (no authorization server issues them, so a client must not
    try to register with one)."""
    document: dict[str, Any] = {
        "resource": resource_url,
        "resource_name": "memora-ogm memory",
        "bearer_methods_supported": ["header"],
        "scopes_supported": list(SCOPES),
    }
    if issuer is not None:
        document["authorization_servers"] = [issuer]
    cors = {"Access-Control-Allow-Origin": "*", "Access-Control-Allow-Methods": "GET, OPTIONS"}

    async def serve(request: Request) -> Response:
        if request.method == "OPTIONS":
            return Response(status_code=204, headers=cors)
        return JSONResponse(document, headers=cors)

    return serve


def _bearer(scope: Scope) -> str | None:
    for name, value in scope.get("headers", ()):
        if name == b"authorization":
            kind, _, token = value.decode("latin-1").partition(" ")
            return token.strip() if kind.lower() == "bearer" and token.strip() else None
    return None


def _calls(body: bytes) -> list[tuple[str, str | None]]:
    """Each JSON-RPC message's method and tool (a batch is a list), or none if unread."""
    try:
        sent = json.loads(body) if body else []
    except ValueError:
        return []
    calls = []
    for message in sent if isinstance(sent, list) else [sent]:
        if isinstance(message, dict) and isinstance(message.get("method"), str):
            params = message.get("params")
            tool = params.get("name") if isinstance(params, dict) else None
            calls.append((message["method"], tool if isinstance(tool, str) else None))
    return calls


async def _read(receive: Receive) -> tuple[bytes, Receive]:
    """The request's body, and a ``receive`` that hands it on as if unread."""
    chunks, more, size = [], True, 0
    while more and size <= LARGEST_READ:
        message = await receive()
        if message["type"] != "http.request":
            break
        chunks.append(message.get("body", b""))
        size += len(chunks[-1])
        more = message.get("more_body", False)
    body, replayed = b"".join(chunks), False

    async def replay() -> Message:
        nonlocal replayed
        if replayed:
            return await receive()
        replayed = True
        return {"type": "http.request", "body": body, "more_body": more}

    return (body if not more else b""), replay


class Gate:
    """ASGI middleware before the MCP endpoint (at ``path``): tokens, rate, log lines."""

    def __init__(
        self,
        app: ASGIApp,
        *,
        path: str,
        verifier: TokenVerifier,
        resource_url: str,
        rate: float | None = None,
    ) -> None:
        self.app, self.path, self.verifier = app, path, verifier
        self.metadata = metadata_url(resource_url)
        self.rate = RateLimit(rate) if rate else None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started, status = time.perf_counter(), [0]

        async def sending(message: Message) -> None:
            if message["type"] == "http.response.start":
                status[0] = message["status"]
            await send(message)

        calls: list[tuple[str, str | None]] = []
        refused = None
        if scope["path"].rstrip("/") != self.path:
            await self.app(scope, receive, sending)
        else:
            if scope["method"] == "POST":
                body, receive = await _read(receive)
                calls = _calls(body)
            refused = await self._through(scope, receive, sending, calls)
        methods = ",".join(method for method, _ in calls) or "-"
        tools = ",".join(tool for _, tool in calls if tool) or "-"
        milliseconds = (time.perf_counter() - started) * 1000
        line = f"{scope['method']} {scope['path']} {methods} {tools} {status[0]}"
        line += f" {milliseconds:.0f} ms" + (f" refused: {refused}" if refused else "")
        log.info(line)

    async def _through(
        self, scope: Scope, receive: Receive, send: Send, calls: list[tuple[str, str | None]]
    ) -> str | None:
        """Serve an endpoint request, or refuse it; the refusal's reason, if any."""
        token = _bearer(scope)
        if token is None:
            await self._challenge(send, None, "a bearer token is needed")
            return "no token"
        checked = await self.verifier.check(token)
        if isinstance(checked, str):
            await self._challenge(send, "invalid_token", checked)
            return checked
        tool_calls = sum(method == "tools/call" for method, _ in calls)
        if self.rate is not None and tool_calls and not self.rate.take(token, tool_calls):
            body = {"error": "rate_limited", "error_description": "too many tool calls"}
            await _answer(send, 429, body, [(b"retry-after", b"1")])
            return "rate limit"
        user = AuthenticatedUser(checked)
        scope["user"], scope["auth"] = user, AuthCredentials(checked.scopes)
        held = auth_context_var.set(user)
        try:
            await self.app(scope, receive, send)
        finally:
            auth_context_var.reset(held)
        return None

    async def _challenge(self, send: Send, error: str | None, description: str) -> None:
        """A 401 as RFC 6750 has it (no error code when no credentials came) and MCP's
        authorization spec (the metadata's URL)."""
        said = f'realm="{REALM}"'
        if error is not None:
            said += f', error="{error}", error_description="{description}"'
        said += f', resource_metadata="{self.metadata}"'
        body = {"error_description": description} | ({"error": error} if error else {})
        await _answer(send, 401, body, [(b"www-authenticate", f"Bearer {said}".encode())])


async def _answer(
    send: Send, status: int, body: dict[str, str], headers: list[tuple[bytes, bytes]] | None = None
) -> None:
    content = json.dumps(body).encode()
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(content)).encode()),
                *(headers or []),
            ],
        }
    )
    await send({"type": "http.response.body", "body": content})
