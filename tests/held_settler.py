"""A process that settles pending records, each held between its graph read and its
vector write until told to go (tests/test_settling_races.py).

    python held_settler.py QDRANT_URL

Connects with ``NEO4J_*`` and reads commands, a line each, from standard input:
``hold KIND ORG_ID USER_ID [MEMORY_ID ...]`` holds a record of ``KIND``
(:func:`settling_gate.held_record`) and settles it in a thread, printing ``held`` once the
settler has read the graph and waits at its vector write; ``go`` lets it go and prints
``settled N``. Ends at the end of its input.
"""

from __future__ import annotations

import asyncio
import os
import sys
import threading

from settling_gate import SyncGatedQdrant, gated, held_record

from memora_ogm import sync
from memora_ogm.vector_db.embedding import HashingEmbedding


def main(url: str) -> None:
    store = gated(SyncGatedQdrant(url=url, embedding_function=HashingEmbedding()))
    memora = sync.Neo4jGraphInterface(
        os.environ["NEO4J_URI"],
        os.environ["NEO4J_USERNAME"],
        os.environ["NEO4J_PASSWORD"],
        os.environ.get("NEO4J_DATABASE", "neo4j"),
        store,
    )
    settled: list[int] = []
    settler: threading.Thread | None = None
    for line in sys.stdin:
        command, *args = line.split()
        if command == "hold":
            kind, org_id, user_id, *memory_ids = args
            asyncio.run(held_record(store, kind, org_id, user_id, memory_ids))
            gated(store)  # a new gate for each record
            store.gate.arm(user_id)
            settler = threading.Thread(target=lambda: settled.append(memora.settle_pending()))
            settler.start()
            store.gate.wait_reached()
            print("held", flush=True)
        elif command == "go" and settler is not None:
            store.gate.open()
            settler.join()
            print(f"settled {settled.pop()}", flush=True)
    memora.close()
    store.close()


if __name__ == "__main__":
    main(*sys.argv[1:])
