"""``memora-ogm vectors migrate --qdrant-path DIR``: exit status 0 when the folder is an
Edge store afterwards, 2 on an error (the move itself is :func:`memora_ogm.cli.stores.migrate`).
"""

from __future__ import annotations

import argparse

from memora_ogm.cli.transfer import info

EXIT_DONE, EXIT_ERROR = 0, 2


def cmd_vectors_migrate(args: argparse.Namespace) -> int:
    from memora_ogm.cli.stores import migrate  # imports qdrant-client

    try:
        done = migrate(args.qdrant_path)
    except Exception as error:  # exit status 2 for any failure, with its message
        info(str(error))
        return EXIT_ERROR
    if not done.moved:
        print(f"nothing to migrate: {done.folder} is a Qdrant Edge store already")
        return EXIT_DONE
    for collection in done.moved:
        print(f"{collection.name}: {collection.points} points")
    print(f"{done.folder} is now a Qdrant Edge store; the old folder is kept in {done.backup}")
    return EXIT_DONE


def add_vectors_parser(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    vectors = subparsers.add_parser("vectors", help="maintenance of the embedded vector store")
    actions = vectors.add_subparsers(dest="vectors_command", required=True)
    migrate = actions.add_parser(
        "migrate",
        help="move a folder of qdrant-client's local mode into Qdrant Edge (QdrantDB(path=))",
    )
    migrate.add_argument("--qdrant-path", required=True, help="the folder, as QdrantDB(path=)")
    migrate.set_defaults(func=cmd_vectors_migrate)
