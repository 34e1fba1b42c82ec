"""``memora-ogm check``: do the graph and the vector store hold the same memories?

Each difference is printed, then a summary. Exit status: 0 agree, 1 differ, 2 error;
with ``--repair``, 1 only when memory ids clash (left to a person).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memora_ogm.cli.transfer import CommandError, progress_bar, source_connection

if TYPE_CHECKING:
    from memora_ogm.calls.consistency import ConsistencyReport
    from memora_ogm.sync import QdrantDB

EXIT_AGREE, EXIT_DIFFER, EXIT_ERROR = 0, 1, 2
ENV_QDRANT_API_KEY = "QDRANT_API_KEY"


def _store(args: argparse.Namespace) -> QdrantDB:
    from memora_ogm.sync import QdrantDB
    from memora_ogm.vector_db.detect import stored_layout
    from memora_ogm.vector_db.layouts import MEMORA_COLLECTION_NAME

    where: dict[str, Any]
    if args.qdrant_url:
        where = {"url": args.qdrant_url, "api_key": args.environ.get(ENV_QDRANT_API_KEY)}
    elif Path(args.qdrant_path).is_dir():
        where = {"path": args.qdrant_path}
    else:
        # Opening a missing folder would make an empty store, and every memory "missing".
        raise CommandError(f"no Qdrant folder {args.qdrant_path}")
    options = stored_layout(where, args.collection)
    if options is None:
        raise CommandError(
            f"no collection {args.collection or MEMORA_COLLECTION_NAME!r} in the vector store"
        )
    return QdrantDB(**where, **options)


def _check(args: argparse.Namespace) -> ConsistencyReport:
    from memora_ogm.sync import Neo4jGraphInterface

    conn = source_connection(args)
    store = _store(args)
    bar = progress_bar("repair" if args.repair else "check", unit=" memories")

    def progress(memories: int) -> None:
        bar.update(memories - bar.n)

    try:
        with Neo4jGraphInterface.from_connection(conn, store) as graph:
            run = graph.repair if args.repair else graph.check_consistency
            return run(args.org, progress)
    finally:
        bar.close()
        store.close()


def cmd_check(args: argparse.Namespace) -> int:
    try:
        report = _check(args)
    except Exception as error:  # exit status 2 for any failure, with its message
        print(f"memora-ogm: {error}", file=sys.stderr, flush=True)
        return EXIT_ERROR
    for difference in report.differences():
        print(difference)
    print(report.summary())
    left = report.clashes if args.repair else report.differences()
    return EXIT_DIFFER if left else EXIT_AGREE


def add_check_parser(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    check = subparsers.add_parser(
        "check",
        help="compare the graph's memories with the vector store's points (exit 0 agree, "
        "1 differ, 2 error)",
    )
    check.add_argument("--org", default=None, help="only this organisation (default: all)")
    check.add_argument(
        "--repair",
        action="store_true",
        help="add missing points, delete orphans, rewrite wrong payloads (clashes are left)",
    )
    where = check.add_mutually_exclusive_group(required=True)
    where.add_argument("--qdrant-path", help="folder of the embedded store, as QdrantDB(path=)")
    where.add_argument("--qdrant-url", help="a Qdrant server (key: $QDRANT_API_KEY)")
    check.add_argument(
        "--collection",
        default=None,
        help="collection, of either layout (default: Memora's, else memora-ogm's earlier one)",
    )
    check.set_defaults(func=cmd_check)
