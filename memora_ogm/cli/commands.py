"""The commands ``memora-ogm``, ``manage.py memora_<name>`` and ``flask memora-ogm <name>``
share: each a function of a :class:`MemoraConfig` and typed keyword options, described
once here so that each front end declares the options natively and calls the function.
"""

from __future__ import annotations

import argparse
import dataclasses
import functools
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from memora_ogm.cli.check import EXIT_ERROR, run_check
from memora_ogm.cli.inspector import DEFAULT_LIMIT, run_inspect
from memora_ogm.cli.transfer import EXIT_BAD_INPUT, EXIT_FAILED, info, run_export, run_import
from memora_ogm.config import MEMORA_MODELS, ConfigurationError, MemoraConfig
from memora_ogm.migrations import MIGRATIONS
from memora_ogm.server.state import NO_SERVER_HINT, existing_connection

#: Options that are :class:`MemoraConfig` fields: given, they replace the settings' (the
#: front end's settings are their defaults) and are not passed on.
STORE_OPTIONS = ("qdrant_url", "qdrant_path", "collection", "embedder")


def run_migrate(config: MemoraConfig, *, list: bool = False) -> int:
    """Apply the pending migrations, or (``list``) mark applied and pending ones."""
    from memora_ogm.sync import Neo4jGraphInterface

    with Neo4jGraphInterface.from_connection(config.neo4j) as graph:
        if list:
            applied = set(graph.applied_migrations())
            for migration in MIGRATIONS:
                mark = "X" if migration.version in applied else " "
                print(f" [{mark}] {migration.version}_{migration.name}")
            return 0
        done = graph.migrate()
    print(f"applied: {', '.join(done)}" if done else "already up to date")
    return 0


def run_setup(config: MemoraConfig) -> int:
    """Constraints and indexes, and the collection of the embedder's layout when ``config``
    names a vector store; 2 when its embedder cannot be imported."""
    from memora_ogm.sync import Neo4jGraphInterface, QdrantDB

    try:
        store = QdrantDB(**config.store_options()) if config.has_vector_store else None
    except ConfigurationError as error:
        info(str(error))
        return EXIT_BAD_INPUT
    with Neo4jGraphInterface.from_connection(config.neo4j, store) as graph:
        graph.setup()
    print("constraints and indexes installed" + (", collection ready" if store else ""))
    return 0


@dataclass(frozen=True)
class Option:
    """An option (``--name``), or with a bare name a positional argument."""

    flags: tuple[str, ...]
    help: str
    type: Callable[[str], Any] = str
    default: Any = None
    required: bool = False
    switch: bool = False
    choices: tuple[str, ...] | None = None

    @property
    def dest(self) -> str:
        """Its keyword (or :class:`MemoraConfig` field), as argparse and click name it."""
        return self.flags[-1].lstrip("-").replace("-", "_")

    @property
    def positional(self) -> bool:
        return not self.flags[0].startswith("-")


@dataclass(frozen=True)
class Command:
    """A command the front ends share: its function and its options."""

    name: str
    help: str
    run: Callable[..., int]
    options: tuple[Option, ...]
    #: It compares the graph with a vector store, so it cannot run without one.
    needs_store: bool = False
    #: Its exit status when it cannot run (no server): 2 for ``check``, whose 1 says "differ".
    cannot_run: int = EXIT_FAILED


QDRANT_PATH = Option(("--qdrant-path",), "folder of the embedded store, as QdrantDB(path=)")
QDRANT_URL = Option(("--qdrant-url",), "a Qdrant server (key: $QDRANT_API_KEY)")
COLLECTION = Option(("--collection",), "collection (default: Memora's)")
EMBEDDER = Option(
    ("--embedder",),
    "the application's embedder, whose layout the collection takes: memora (Memora's "
    "models, the default), hashing (offline), or a dotted path to a function",
)


def add_store_options(parser: argparse.ArgumentParser, *more: Option) -> None:
    """How a command of its own (``mcp``, ``shell``) names its vector store: one of
    ``--qdrant-path`` and ``--qdrant-url``, and ``more`` of the store's options."""
    where = parser.add_mutually_exclusive_group()
    for option in (QDRANT_PATH, QDRANT_URL):
        where.add_argument(*option.flags, help=option.help)
    for option in more:
        parser.add_argument(*option.flags, help=option.help)


COMMANDS = {
    command.name: command
    for command in (
        Command(
            "setup",
            "install constraints and indexes (and the vector collection); idempotent",
            run_setup,
            (
                QDRANT_PATH,
                QDRANT_URL,
                COLLECTION,
                EMBEDDER,
            ),
        ),
        Command(
            "migrate",
            "apply pending schema and data migrations (memora_ogm.migrations)",
            run_migrate,
            (Option(("--list",), "show applied [X] and pending [ ] migrations", switch=True),),
        ),
        Command(
            "inspect",
            "read-only: organisations, users, agents, counts, a user's timeline",
            run_inspect,
            (
                Option(("--org",), "show this organisation (org_id)"),
                Option(("--user",), "and this user's timeline (user_id)"),
                Option(
                    ("--limit",),
                    "at most this many organisations, users, agents, interactions "
                    f"({DEFAULT_LIMIT})",
                    type=int,
                    default=DEFAULT_LIMIT,
                ),
            ),
        ),
        Command(
            "export",
            "write an organisation (or one user) as memora-ogm-export JSON Lines",
            run_export,
            (
                Option(("--org",), "the organisation's org_id", required=True),
                Option(("--user",), "only this user (with the org's agents)"),
                Option(("-o", "--output"), "file to write (default: stdout)"),
            ),
        ),
        Command(
            "import",
            "validate a memora-ogm-export file whole, then write it",
            run_import,
            (
                Option(("file",), "the .jsonl file an export wrote"),
                Option(
                    ("--on-conflict",),
                    "fail (default) when any of it exists already, or skip what exists",
                    default="fail",
                    choices=("fail", "skip"),
                ),
                Option(
                    ("--new-memory-ids",),
                    "give every memory a new id: import a copy of a tenant (under another "
                    "org_id) on the server that holds the original; memory ids are unique "
                    "across the graph",
                    switch=True,
                ),
            ),
        ),
        Command(
            "check",
            "compare the graph's memories with the vector store's points (exit 0 agree, "
            "1 differ, 2 error)",
            run_check,
            (
                Option(("--org",), "only this organisation (default: all)"),
                Option(
                    ("--repair",),
                    "add missing points, delete orphans, rewrite wrong payloads (clashes are left)",
                    switch=True,
                ),
                QDRANT_PATH,
                QDRANT_URL,
                Option(
                    ("--collection",),
                    "collection, of either layout (default: Memora's, else memora-ogm's "
                    "earlier one)",
                ),
            ),
            needs_store=True,
            cannot_run=EXIT_ERROR,
        ),
    )
}


def add_arguments(parser: argparse.ArgumentParser, command: Command) -> None:
    """Declare ``command``'s options on ``parser`` (``memora-ogm``'s or Django's)."""
    for option in command.options:
        if option.switch:
            parser.add_argument(*option.flags, action="store_true", help=option.help)
        elif option.positional:
            parser.add_argument(*option.flags, type=option.type, help=option.help)
        else:
            parser.add_argument(
                *option.flags,
                type=option.type,
                default=option.default,
                required=option.required,
                choices=option.choices,
                help=option.help,
            )


def run(
    command: Command,
    config: MemoraConfig,
    values: Mapping[str, Any],
    setting: Callable[[str], str],
) -> int:
    """``command`` on ``config`` and the options' ``values`` (by dest); ``setting`` spells a
    setting's name (``QDRANT_URL``) as the user of this front end writes it."""
    given = {name: values[name] for name in STORE_OPTIONS if values.get(name)}
    if given.keys() >= {"qdrant_url", "qdrant_path"}:
        info("--qdrant-url and --qdrant-path name two vector stores: give one")
        return EXIT_BAD_INPUT
    if given.keys() & {"qdrant_url", "qdrant_path"}:
        given = {"qdrant_url": None, "qdrant_path": None, **given}
    config = dataclasses.replace(config, **given)
    if command.needs_store and not config.has_vector_store:
        info(
            "no vector store to compare the graph with: name one with "
            f"{setting('QDRANT_URL')} or {setting('QDRANT_PATH')}"
        )
        return EXIT_BAD_INPUT
    options = {o.dest: values[o.dest] for o in command.options if o.dest not in STORE_OPTIONS}
    return command.run(config, **options)


def _run_in_cli(command: Command, args: argparse.Namespace) -> int:
    """``memora-ogm <command>``: on ``NEO4J_URI`` & co. (or the server ``memora-ogm server
    start`` runs), ``$QDRANT_API_KEY`` and ``$EMBEDDER``; the store only by option."""
    env = args.environ
    conn = existing_connection(env)
    if conn is None:
        info(f"no server to run {command.name} on: {NO_SERVER_HINT}")
        return command.cannot_run
    config = MemoraConfig(
        conn,
        qdrant_api_key=env.get("QDRANT_API_KEY"),
        embedder=env.get("EMBEDDER") or MEMORA_MODELS,
    )
    return run(command, config, vars(args), lambda name: "--" + name.lower().replace("_", "-"))


def add_parsers(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """The shared commands as ``memora-ogm`` subcommands."""
    for command in COMMANDS.values():
        parser = subparsers.add_parser(command.name, help=command.help)
        add_arguments(parser, command)
        parser.set_defaults(func=functools.partial(_run_in_cli, command))
