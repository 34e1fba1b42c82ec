"""``memora-ogm mcp`` and its helpers: serve, mint a development token, add an API key,
create a tenant. The MCP SDK is imported when a command runs, so ``memora-ogm`` works
without the ``mcp`` extra."""

from __future__ import annotations

import argparse
import asyncio
import functools
import os
import sys
from pathlib import Path
from typing import Any

#: The stdio server's tenant, when not given as options.
TENANT_VARIABLES = {
    "org": "MEMORA_OGM_MCP_ORG",
    "user": "MEMORA_OGM_MCP_USER",
    "agent": "MEMORA_OGM_MCP_AGENT",
}
#: Seconds uvicorn waits for calls under way once told to stop.
GRACE = 3


def _config(args: argparse.Namespace) -> Any:
    """The graph and the store, from the environment and the store options."""
    from memora_ogm.config import MemoraConfig

    settings = {
        name: value
        for name, value in (
            ("QDRANT_PATH", args.qdrant_path),
            ("QDRANT_URL", args.qdrant_url),
            ("COLLECTION", args.collection),
            ("EMBEDDER", args.embedder),
        )
        if value
    }
    return MemoraConfig.from_settings(settings, args.environ)


def _tenant(args: argparse.Namespace, scopes: list[str] | None = None) -> Any:
    from memora_ogm.mcp.auth import SCOPES, Tenant

    values = {
        name: getattr(args, name) or args.environ.get(var) for name, var in TENANT_VARIABLES.items()
    }
    missing = [
        f"--{name} (or {TENANT_VARIABLES[name]})" for name, value in values.items() if not value
    ]
    if missing:
        raise ValueError(f"the tenant needs {', '.join(missing)}")
    return Tenant(values["org"], values["user"], values["agent"], frozenset(scopes or SCOPES))


def _host_port(value: str) -> tuple[str, int]:
    host, _, port = value.rpartition(":")
    if not host or not port.isdigit():
        raise argparse.ArgumentTypeError("expected HOST:PORT, e.g. 127.0.0.1:8765")
    return host.strip("[]"), int(port)


class CannotStart(Exception):
    """Why the server cannot start, in one line."""


def _positive(value: str) -> float:
    """A number above zero (a lifetime, a rate)."""
    try:
        number = float(value)
    except ValueError:
        number = 0.0
    if not number > 0:
        raise argparse.ArgumentTypeError(f"expected a number above 0, not {value!r}")
    return number


def _count(value: str) -> int:
    if not value.isdigit() or int(value) < 1:
        raise argparse.ArgumentTypeError(f"expected a whole number above 0, not {value!r}")
    return int(value)


def cmd_mcp(args: argparse.Namespace) -> int:
    from memora_ogm.config import ConfigurationError
    from memora_ogm.mcp.server import configure_log, serve_stdio

    configure_log(args.log_level)
    try:
        config = _config(args)
        if args.http is not None:
            return _serve_http(args, config)
        tenant = _tenant(args)
        memora = _opened(config)
        started = f"serving stdio; auth: none (one tenant); {_store(config)}; tenant: " + (
            "--org/--user/--agent" if args.org else "MEMORA_OGM_MCP_ORG/_USER/_AGENT"
        )
        limits = _limits(args)
        asyncio.run(serve_stdio(memora, tenant, _graph(config), _failed_start, started, limits))
    except (ConfigurationError, ValueError, OSError, CannotStart) as error:
        # Settings, tokens, keys, the graph or the store the server cannot start with:
        # said in one line before it serves.
        print(f"memora-ogm mcp: {error}", file=sys.stderr)
        return 2
    return 0


def _limits(args: argparse.Namespace) -> Any:
    from memora_ogm.mcp import Limits

    return Limits(args.max_messages, args.max_text, args.max_query, args.max_page)


def _store(config: Any) -> str:
    """The start-up line's store."""
    collection = f", collection {config.collection}" if config.collection else ""
    if config.qdrant_url:
        return f"store: Qdrant at {config.qdrant_url}{collection}"
    if config.qdrant_path:
        return f"store: embedded in {config.qdrant_path}{collection}"
    return "store: none (search_memories off)"


def _auth(settings: Any) -> str:
    """The start-up line's way of checking tokens."""
    ways = []
    if settings.jwks_url or settings.public_key_file:
        keys = settings.jwks_url or settings.public_key_file
        ways.append(f"JWTs of {settings.issuer} (keys: {keys})")
    if settings.api_keys_file:
        ways.append(f"API keys of {settings.api_keys_file}")
    return " and ".join(ways)


def _graph(config: Any) -> Any:
    from memora_ogm.mcp.reasons import GraphAddress

    return GraphAddress(config.neo4j.uri, config.neo4j.username)


def _failed_start(error: BaseException, graph: Any) -> CannotStart:
    """A start-up failure as one line: its reason, else what it was."""
    from memora_ogm.errors import FolderInUseError
    from memora_ogm.mcp.reasons import reason

    if isinstance(error, FolderInUseError):
        return CannotStart(
            "the vector store's folder is open in another process; an embedded store "
            "belongs to one process at a time (stop the other server, or share a Qdrant "
            "server with --qdrant-url)"
        )
    return CannotStart(reason(error, graph) or f"{type(error).__name__}: {error}")


def _opened(config: Any) -> Any:
    """The facade of ``config``, its store opened (an embedded store's folder locked)."""
    from memora_ogm.mcp.server import open_facade

    try:
        return open_facade(config)
    except Exception as error:
        raise _failed_start(error, _graph(config)) from None


async def _check(config: Any) -> None:
    """What each worker will need, tried once before any starts: the graph's
    credentials and schema, and the store."""
    from memora_ogm.mcp.server import serving

    async with serving(_opened(config), _graph(config), ready=_failed_start):
        pass


def _serve_http(args: argparse.Namespace, config: Any) -> int:
    import uvicorn

    from memora_ogm.mcp.server import HttpSettings, served_app
    from memora_ogm.mcp.workers import serve_forked

    host, port = args.http
    settings = HttpSettings(
        host=host,
        port=port,
        resource_url=args.resource_url or f"http://{host}:{port}/mcp",
        issuer=args.issuer,
        jwks_url=args.jwks_url,
        public_key_file=str(Path(args.public_key).absolute()) if args.public_key else None,
        api_keys_file=str(Path(args.api_keys).absolute()) if args.api_keys else None,
        rate=args.rate,
        allowed_hosts=args.allowed_host,
        log_level=args.log_level,
        limits=_limits(args),
    )
    settings.verifier()  # fail here, not in every worker, on a bad key or keys file
    if args.workers > 1 and config.qdrant_path:
        raise CannotStart(
            "an embedded store's folder (--qdrant-path) belongs to one process: with "
            "--workers above 1, share a Qdrant server (--qdrant-url)"
        )
    asyncio.run(_check(config))
    from memora_ogm.mcp.reasons import log

    rate = f"; rate: {args.rate:g} tool calls/s per token" if args.rate else ""
    log.info(
        f"serving {settings.resource_url} on {host}:{port} ({args.workers} worker(s)); "
        f"auth: {_auth(settings)}; {_store(config)}; tenant: each token's{rate}"
    )
    served = uvicorn.Config(
        functools.partial(served_app, config, settings),
        factory=True,
        host=host,
        port=port,
        timeout_graceful_shutdown=GRACE,
        log_level="debug" if args.log_level == "debug" else "warning",
    )
    if args.workers == 1:
        app_server = uvicorn.Server(served)
        app_server.run()
        if not app_server.started:
            raise CannotStart("the server did not start: uvicorn's reason is above")
    else:
        serve_forked(served, args.workers)
    return 0


def cmd_mcp_token(args: argparse.Namespace) -> int:
    from memora_ogm.mcp.auth import mint_token

    try:
        token = mint_token(
            Path(args.private_key).read_text(),
            _tenant(args, args.scope),
            issuer=args.issuer,
            audience=args.audience,
            lifetime=args.lifetime,
            algorithm=args.algorithm,
            key_id=args.key_id,
        )
    except (ValueError, OSError) as error:  # PyJWT's errors about keys are ValueErrors
        print(f"memora-ogm mcp-token: {error}", file=sys.stderr)
        return 2
    print(token)
    return 0


def cmd_mcp_key(args: argparse.Namespace) -> int:
    from memora_ogm.mcp.auth import new_api_key

    try:
        key, line = new_api_key(_tenant(args, args.scope))
    except ValueError as error:
        print(f"memora-ogm mcp-key: {error}", file=sys.stderr)
        return 2
    path = Path(args.file)
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    with os.fdopen(descriptor, "a", encoding="utf-8") as keys:
        keys.write(line + "\n")
    print(key)
    print(f"memora-ogm: its hash is in {path}; the key is shown only now", file=sys.stderr)
    return 0


def cmd_mcp_tenant(args: argparse.Namespace) -> int:
    """Create an organisation with a user and an agent; print the stdio server's variables."""
    from memora_ogm.sync import Neo4jGraphInterface

    config = _config(args)
    with Neo4jGraphInterface.from_connection(config.neo4j) as memora:
        memora.setup()
        org = memora.create_organization(args.org_name)
        user = memora.create_user(org.org_id, args.user_name)
        agent = memora.create_agent(org.org_id, args.agent_label)
    ids = {"org": org.org_id, "user": user.user_id, "agent": agent.agent_id}
    for name, variable in TENANT_VARIABLES.items():
        print(f"export {variable}={ids[name]}")
    return 0


def _store_options(parser: argparse.ArgumentParser) -> None:
    from memora_ogm.cli.commands import COLLECTION, EMBEDDER, add_store_options

    add_store_options(parser, COLLECTION, EMBEDDER)


def _tenant_options(parser: argparse.ArgumentParser) -> None:
    for name in TENANT_VARIABLES:
        parser.add_argument(
            f"--{name}", help=f"the tenant's {name} id (default: ${TENANT_VARIABLES[name]})"
        )


def _scope_option(parser: argparse.ArgumentParser) -> None:
    from memora_ogm.mcp import SCOPES

    parser.add_argument(
        "--scope",
        action="append",
        choices=SCOPES,
        help=f"a right to grant, repeated (default all: {', '.join(SCOPES)})",
    )


def add_mcp_parsers(
    subparsers: argparse._SubParsersAction[argparse.ArgumentParser],
) -> None:
    serve = subparsers.add_parser(
        "mcp",
        help="serve the memory to agents over MCP (stdio, or --http)",
        description="An MCP server over the graph (NEO4J_*) and the vector store. Over stdio "
        "its one tenant is --org/--user/--agent; over --http each caller's comes from its "
        "token (docs/mcp.md).",
    )
    _tenant_options(serve)
    _store_options(serve)
    serve.add_argument(
        "--http", type=_host_port, metavar="HOST:PORT", help="serve Streamable HTTP at /mcp"
    )
    serve.add_argument("--workers", type=_count, default=1, help="worker processes (HTTP)")
    serve.add_argument("--resource-url", help="the URL clients use (default http://HOST:PORT/mcp)")
    serve.add_argument("--issuer", help="the identity provider's issuer (JWTs' iss)")
    keys = serve.add_mutually_exclusive_group()
    keys.add_argument("--jwks-url", help="the identity provider's JWKS URL")
    keys.add_argument("--public-key", help="a PEM public key that verifies the JWTs")
    serve.add_argument("--api-keys", help="a file of API keys (memora-ogm mcp-key adds one)")
    serve.add_argument(
        "--rate", type=_positive, help="tool calls per second per token (default: no limit)"
    )
    serve.add_argument(
        "--allowed-host", action="append", default=[], help="a Host header to accept (a proxy's)"
    )
    from memora_ogm.mcp import DEFAULT_LIMITS as default

    limits = serve.add_argument_group("limits of one call (docs/mcp.md)")
    for option, most, what in (
        ("--max-messages", default.messages, "messages in one save"),
        ("--max-text", default.text, "characters of a message or a memory"),
        ("--max-query", default.query, "characters of a search query"),
        ("--max-page", default.page, "memories or interactions in one page"),
    ):
        limits.add_argument(option, type=_count, default=most, help=f"{what} ({most})")
    serve.add_argument(
        "--log-level",
        choices=["debug", "info", "warning", "error"],
        default="info",
        help="info (default): a start-up line and a line per HTTP request, on stderr",
    )
    serve.set_defaults(func=cmd_mcp)

    token = subparsers.add_parser("mcp-token", help="mint a development JWT for the MCP server")
    _tenant_options(token)
    _scope_option(token)
    token.add_argument("--private-key", required=True, help="the PEM private key that signs it")
    token.add_argument("--issuer", required=True, help="its iss (the server's --issuer)")
    token.add_argument("--audience", required=True, help="its aud (the server's resource URL)")
    token.add_argument("--lifetime", type=_positive, default=3600, help="seconds (default 3600)")
    token.add_argument("--algorithm", default="RS256", help="RS256 (default), ES256, EdDSA, ...")
    token.add_argument("--key-id", help="its kid (the key's id in a JWKS)")
    token.set_defaults(func=cmd_mcp_token)

    key = subparsers.add_parser("mcp-key", help="add an API key for the MCP server to a file")
    _tenant_options(key)
    _scope_option(key)
    key.add_argument("--file", required=True, help="the keys file (created if missing)")
    key.set_defaults(func=cmd_mcp_key)

    tenant = subparsers.add_parser(
        "mcp-tenant", help="create an organisation, a user and an agent for the MCP server"
    )
    _store_options(tenant)
    tenant.add_argument("org_name")
    tenant.add_argument("user_name")
    tenant.add_argument("agent_label")
    tenant.set_defaults(func=cmd_mcp_tenant)
