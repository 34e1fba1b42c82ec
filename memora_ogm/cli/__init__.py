"""The ``memora-ogm`` command (``--help`` and docs/ say what each subcommand takes).

Each subcommand is an ``add_<name>_parser(subparsers)`` that registers its parser and sets
``func``; ``build_parser`` lists them, some from their own modules. Those the Django and
Flask integrations also run are declared in :mod:`memora_ogm.cli.commands`.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import time
from collections.abc import Mapping, Sequence

from memora_ogm._version import __version__
from memora_ogm.cli.commands import add_parsers
from memora_ogm.cli.mcp import add_mcp_parsers
from memora_ogm.cli.shell import add_shell_parser
from memora_ogm.cli.transfer import add_move_parser, info
from memora_ogm.cli.vectors import add_vectors_parser
from memora_ogm.errors import NotFoundError
from memora_ogm.server.chain import NoNeo4jAvailableError
from memora_ogm.server.local import LocalNeo4jError, LocalNeo4jServer, stop_process
from memora_ogm.server.private import make_private_dir
from memora_ogm.server.state import (
    ServerState,
    clear_state,
    memora_home,
    read_state,
    required_connection,
    write_state,
)

EXIT_NOT_RUNNING = 3  # `server status` when nothing runs (as in LSB init scripts)


def _running(state: ServerState, message: str) -> int:
    """Say ``message`` on standard error and the ``export`` lines on standard output."""
    info(message)
    print("\n".join(state.connection().export_lines()))
    return 0


def cmd_server_start(args: argparse.Namespace) -> int:
    home = memora_home()
    state = read_state(home)
    if state is not None and state.alive:
        return _running(state, f"a local Neo4j is already running (pid {state.pid}, {state.uri}).")
    clear_state(home)
    make_private_dir(home)  # it holds the server's log and, by default, its data
    server = LocalNeo4jServer(
        args.port,
        args.data or home / "data",
        heap_mb=args.heap_mb,
        pagecache_mb=args.pagecache_mb,
        log_path=home / "server.log",
        detached=True,
    )
    conn = server.start()
    assert server.artifacts is not None and server.data_dir is not None
    state = ServerState(
        pid=server.release(),
        uri=conn.uri,
        username=conn.username,
        password=conn.password,
        database=conn.database,
        data_dir=str(server.data_dir),
        log_path=str(server.log_path),
        neo4j_version=server.artifacts.neo4j_version,
    )
    write_state(home, state)
    return _running(
        state,
        f"Neo4j {state.neo4j_version} Community is running at {state.uri} "
        f"(pid {state.pid}, data in {state.data_dir}, log {state.log_path}).\n"
        'Point memora-ogm at it with (or: eval "$(memora-ogm server status)"):',
    )


def cmd_server_stop(args: argparse.Namespace) -> int:
    home = memora_home()
    state = read_state(home)
    if state is None:
        info(f"no local Neo4j was started (no state in {home}).")
        return 0
    started = time.monotonic()
    stopped = stop_process(state.pid, timeout=args.timeout)
    clear_state(home)
    if stopped:
        info(f"stopped the local Neo4j (pid {state.pid}) in {time.monotonic() - started:.1f} s.")
    else:
        info(f"the local Neo4j (pid {state.pid}) was not running any more.")
    return 0


def cmd_server_status(args: argparse.Namespace) -> int:
    state = read_state(memora_home())
    if state is None or not state.alive:
        info("no local Neo4j is running.")
        return EXIT_NOT_RUNNING
    message = f"Neo4j {state.neo4j_version} is running at {state.uri} "
    return _running(state, message + f"(pid {state.pid}, data in {state.data_dir}).")


def add_server_parser(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    server = subparsers.add_parser(
        "server", help="a local Neo4j Community 5.26 with APOC, built from Maven Central"
    )
    actions = server.add_subparsers(dest="action", required=True, metavar="{start,stop,status}")
    start = actions.add_parser("start", help="start it in the background and print credentials")
    start.add_argument("--port", type=int, help="Bolt port (default: a free one)")
    start.add_argument("--data", help="data folder (default: $MEMORA_OGM_HOME/data)")
    start.add_argument("--heap-mb", type=int, help="JVM heap (default 1024)")
    start.add_argument("--pagecache-mb", type=int, help="page cache (default 512)")
    start.set_defaults(func=cmd_server_start)
    stop = actions.add_parser("stop", help="stop it and wait until the process is gone")
    stop.add_argument("--timeout", type=float, default=30.0, help="seconds before SIGKILL")
    stop.set_defaults(func=cmd_server_stop)
    status = actions.add_parser("status", help="exit 0 and print credentials when running")
    status.set_defaults(func=cmd_server_status)


def cmd_demo(args: argparse.Namespace) -> int:
    from memora_ogm.cli.demo import demo_connection, walkthrough

    with demo_connection() as conn:
        asyncio.run(walkthrough(conn, args.keep))
    return 0


def add_demo_parser(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    demo = subparsers.add_parser("demo", help="connect to Neo4j (starting one if needed) and demo")
    demo.add_argument(
        "--keep", action="store_true", help="keep the demo's organisation (to draw or inspect it)"
    )
    demo.set_defaults(func=cmd_demo)


def cmd_graph(args: argparse.Namespace) -> int:
    from memora_ogm.sync import Neo4jGraphInterface

    with Neo4jGraphInterface.from_connection(required_connection(args.environ, "draw")) as memora:
        try:
            picture = memora.graph_of(args.org, args.user, args.limit)
        except ValueError as exc:
            info(str(exc))
            return 1
    path = picture.write_html(args.output)
    print(f"{path}: {picture.title} ({len(picture.nodes)} nodes, {len(picture.edges)} edges)")
    return 0


def add_graph_parser(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    from memora_ogm.calls.picture import DEFAULT_LIMIT

    graph = subparsers.add_parser(
        "graph", help="draw a user's memory graph (or an organisation's) as an offline page"
    )
    graph.add_argument("--org", required=True, help="the organisation (org_id)")
    graph.add_argument("--user", help="this user's recent interactions (user_id)")
    graph.add_argument(
        "--limit",
        type=int,
        default=DEFAULT_LIMIT,
        help=f"at most this many interactions, or users and agents ({DEFAULT_LIMIT})",
    )
    graph.add_argument("-o", "--output", required=True, help="the HTML file to write")
    graph.set_defaults(func=cmd_graph)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="memora-ogm", description="Memora's graph layer on neomodel."
    )
    parser.add_argument("--version", action="version", version=f"memora-ogm {__version__}")
    subparsers = parser.add_subparsers(dest="command", required=True)
    for add in (
        add_server_parser,
        add_demo_parser,
        add_parsers,  # setup, migrate, inspect, export, import, check
        add_shell_parser,
        add_graph_parser,
        add_move_parser,
        add_vectors_parser,
        add_mcp_parsers,
    ):
        add(subparsers)
    return parser


def main(argv: Sequence[str] | None = None, environ: Mapping[str, str] | None = None) -> int:
    """Run one command; the framework integrations pass their settings as ``environ``."""
    args = build_parser().parse_args(argv)
    args.environ = os.environ if environ is None else environ
    try:
        return int(args.func(args))
    except (NoNeo4jAvailableError, LocalNeo4jError, NotFoundError) as exc:
        info(str(exc))
        return 1
