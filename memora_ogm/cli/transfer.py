"""``memora-ogm export``, ``import`` and ``move``: tenants out of and into a server.

They move the graph only (no vector store), with the synchronous interface. ``export``
and ``import`` are plain functions (:mod:`memora_ogm.cli.commands` declares them).
"""

from __future__ import annotations

import argparse
import functools
import sys
from collections.abc import Callable
from contextlib import closing, nullcontext
from pathlib import Path
from typing import TYPE_CHECKING, Any, ParamSpec

from tqdm import tqdm

from memora_ogm.errors import NotFoundError
from memora_ogm.server.connection import (
    DEFAULT_DATABASE,
    DEFAULT_USERNAME,
    Neo4jConnection,
)
from memora_ogm.server.state import NO_SERVER_HINT, existing_connection
from memora_ogm.transfer.format import (
    ImportConflict,
    ImportFormatError,
    JsonLinesFile,
    MoveVerificationFailed,
    dumps,
)

if TYPE_CHECKING:
    from memora_ogm.config import MemoraConfig
    from memora_ogm.sync import Neo4jGraphInterface
    from memora_ogm.transfer.importing import OnConflict

P = ParamSpec("P")

ENV_TO_PASSWORD = "MEMORA_OGM_TO_PASSWORD"


class CommandError(Exception):
    """A command failed with a message for the user."""


def info(message: str) -> None:
    """Tell the user ``message`` on standard error, as every ``memora-ogm`` command does."""
    print(f"memora-ogm: {message}", file=sys.stderr, flush=True)


def _interface(conn: Neo4jConnection) -> Neo4jGraphInterface:
    from memora_ogm.sync import Neo4jGraphInterface

    return Neo4jGraphInterface.from_connection(conn)


def progress_bar(description: str, total: int | None = None, unit: str = " records") -> tqdm[Any]:
    """A progress bar on standard error, shown only when that is a terminal."""
    return tqdm(
        desc=description,
        total=total,
        unit=unit,
        file=sys.stderr,
        disable=not sys.stderr.isatty(),
        dynamic_ncols=True,
    )


class _Stages:
    """One progress bar per stage that ``progress`` callbacks report."""

    def __init__(self) -> None:
        self.stage: str | None = None
        self.bar: tqdm[Any] | None = None

    def __call__(self, stage: str, done: int, total: int | None) -> None:
        if stage != self.stage:
            self.close()
            self.stage, self.bar = stage, progress_bar(stage, total)
        assert self.bar is not None
        if total is not None:
            self.bar.total = total
        self.bar.update(done - self.bar.n)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()
            self.bar = None


#: Exit statuses: failed on what was found, or on bad input (argparse's status).
EXIT_FAILED, EXIT_BAD_INPUT = 1, 2


def reporting(command: Callable[P, int]) -> Callable[P, int]:
    """Expected failures print their message, not a traceback."""

    @functools.wraps(command)
    def run(*args: P.args, **kwargs: P.kwargs) -> int:
        try:
            return command(*args, **kwargs)
        except (ImportFormatError, OSError) as error:
            info(f"{error}")
            return EXIT_BAD_INPUT
        except (CommandError, NotFoundError, ImportConflict, MoveVerificationFailed) as error:
            info(f"{error}")
            return EXIT_FAILED

    return run


@reporting
def run_export(
    config: MemoraConfig, *, org: str, user: str | None = None, output: str | None = None
) -> int:
    """Written to ``FILE.partial`` first: a failed export leaves no file that looks whole."""
    partial = Path(f"{output}.partial") if output else None
    try:
        with _interface(config.neo4j) as graph, progress_bar("export") as bar:
            records = graph.export_user(org, user) if user else graph.export_organization(org)
            with partial.open("w", encoding="utf-8") if partial else nullcontext(sys.stdout) as out:
                for record in records:
                    out.write(dumps(record) + "\n")
                    bar.update(1)
        if partial:
            partial.replace(partial.with_suffix(""))  # FILE.partial to FILE
    except BaseException:
        if partial:
            partial.unlink(missing_ok=True)
        raise
    return 0


@reporting
def run_import(
    config: MemoraConfig,
    *,
    file: str,
    on_conflict: OnConflict = "fail",
    new_memory_ids: bool = False,
) -> int:
    with closing(_Stages()) as stages, _interface(config.neo4j) as graph:
        summary = graph.import_records(
            JsonLinesFile(file),
            on_conflict=on_conflict,
            progress=functools.partial(stages, "import"),
            rekey=new_memory_ids,
        )
    created = ", ".join(f"{count} {kind}" for kind, count in summary.created.items() if count)
    skipped = sum(summary.skipped.values())
    info(f"imported {created or 'nothing'}" + (f"; {skipped} skipped" * (skipped > 0)))
    return 0


@reporting
def cmd_move(args: argparse.Namespace) -> int:
    from memora_ogm.sync import move_organization

    source = existing_connection(args.environ)
    if source is None:
        raise CommandError(f"no server: {NO_SERVER_HINT}")
    password = args.to_password or args.environ.get(ENV_TO_PASSWORD)
    if password is None:
        raise CommandError(f"give the target's password (--to-password or ${ENV_TO_PASSWORD})")
    target = Neo4jConnection(
        uri=args.to_uri,
        username=args.to_username,
        password=password,
        database=args.to_database,
    )
    if (target.uri, target.database) == (source.uri, source.database):
        raise CommandError("the target is the source server")
    with (
        closing(_Stages()) as stages,
        _interface(source) as at_source,
        _interface(target) as at_target,
    ):
        report = move_organization(at_source, at_target, args.org, args.on_conflict, stages)
    counts = ", ".join(f"{count} {kind}" for kind, count in report.counts.items())
    info(
        f"moved organization {args.org} to {target.uri} ({counts}; "
        f"digest {report.digest[:12]} on both sides) and deleted it at the source."
    )
    return 0


def add_move_parser(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    move = subparsers.add_parser(
        "move", help="move an organisation to another server (verified before deleting)"
    )
    move.add_argument("--org", required=True, help="the organisation's org_id")
    move.add_argument("--to-uri", required=True, help="the target server, e.g. bolt://host:7687")
    move.add_argument("--to-username", default=DEFAULT_USERNAME)
    move.add_argument(
        "--to-password", default=None, help=f"the target's password (default: ${ENV_TO_PASSWORD})"
    )
    move.add_argument("--to-database", default=DEFAULT_DATABASE)
    move.add_argument(
        "--on-conflict",
        choices=("fail", "skip"),
        default="fail",
        help="skip resumes a move that stopped half-way",
    )
    move.set_defaults(func=cmd_move)
