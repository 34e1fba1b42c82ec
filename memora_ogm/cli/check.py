"""``memora-ogm check``: do the graph and the vector store hold the same memories?

Each difference is printed, then a summary. Exit status: 0 agree, 1 differ, 2 error;
with ``--repair``, 1 only when memory ids clash (left to a person).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from memora_ogm.cli.transfer import CommandError, info, progress_bar

if TYPE_CHECKING:
    from memora_ogm.calls.consistency import ConsistencyReport
    from memora_ogm.config import MemoraConfig
    from memora_ogm.sync import QdrantDB

EXIT_AGREE, EXIT_DIFFER, EXIT_ERROR = 0, 1, 2


def _store(config: MemoraConfig) -> QdrantDB:
    from memora_ogm.cli.stores import stored_layout
    from memora_ogm.sync import QdrantDB
    from memora_ogm.vector_db.layouts import MEMORA_COLLECTION_NAME

    where: dict[str, Any]
    if config.qdrant_url:
        where = {"url": config.qdrant_url, "api_key": config.qdrant_api_key}
    elif config.qdrant_path and Path(config.qdrant_path).is_dir():
        where = {"path": config.qdrant_path}
    else:
        # Opening a missing folder would make an empty store, and every memory "missing".
        raise CommandError(f"no Qdrant folder {config.qdrant_path or '(none named)'}")
    options = stored_layout(where, config.collection)
    if options is None:
        raise CommandError(
            f"no collection {config.collection or MEMORA_COLLECTION_NAME!r} in the vector store"
        )
    return QdrantDB(**where, **options)


def _check(config: MemoraConfig, org: str | None, repair: bool) -> ConsistencyReport:
    from memora_ogm.sync import Neo4jGraphInterface

    store = _store(config)
    bar = progress_bar("repair" if repair else "check", unit=" memories")

    def progress(memories: int) -> None:
        bar.update(memories - bar.n)

    try:
        with Neo4jGraphInterface.from_connection(config.neo4j, store) as graph:
            run = graph.repair if repair else graph.check_consistency
            return run(org, progress)
    finally:
        bar.close()
        store.close()


def run_check(config: MemoraConfig, *, org: str | None = None, repair: bool = False) -> int:
    """Compare (or ``repair``) the graph of ``config`` with the vector store it names."""
    try:
        report = _check(config, org, repair)
    except Exception as error:  # exit status 2 for any failure, with its message
        info(str(error))
        return EXIT_ERROR
    for difference in report.differences():
        print(difference)
    print(report.summary())
    left = report.clashes if repair else report.differences()
    return EXIT_DIFFER if left else EXIT_AGREE
