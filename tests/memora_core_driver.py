"""Runs memora-core 0.3.1's own ``QdrantDB`` in its own virtual environment (see
``memora_core_venv.py``): steps as JSON on stdin, their results as JSON on stdout.

Run by that environment's Python, never imported by the tests: it imports Memora's
release with its own pins (qdrant-client 1.12.1, fastembed 0.5).
"""

from __future__ import annotations

import asyncio
import json
import sys
from typing import Any


def sources() -> dict[str, list[str]]:
    """Where this fastembed looks for Memora's two models: repository and model file."""
    from fastembed import SparseTextEmbedding, TextEmbedding

    wanted = (
        "sentence-transformers/paraphrase-multilingual-MiniLM-L12-v2",
        "prithivida/Splade_PP_en_v1",
    )
    found = {}
    for listing in (
        TextEmbedding.list_supported_models(),
        SparseTextEmbedding.list_supported_models(),
    ):
        for description in listing:
            if description["model"] in wanted:
                source = description["sources"]["hf"]
                found[description["model"]] = [source, description["model_file"]]
    return found


async def run(url: str, cache_dir: str, steps: list[list[Any]]) -> list[Any]:
    """Each step on Memora's store over the Qdrant at ``url``; a search's hits as rows."""
    from memora.vector_db.base import MemorySearchScope
    from memora.vector_db.qdrant import QdrantDB
    from qdrant_client import AsyncQdrantClient

    store = QdrantDB(AsyncQdrantClient(url=url), embed_models_cache_dir=cache_dir)

    async def search(queries: list[str], scope: str, org: str, user: Any, agent: Any) -> Any:
        found = await store.search_memories(queries, MemorySearchScope(scope), org, user, agent)
        return [
            [
                [m.memory_id, m.memory, m.org_id, m.user_id, m.agent_id,
                 m.obtained_at.isoformat(), score]
                for m, score in hits
            ]
            for hits in found
        ]  # fmt: skip

    async def ids() -> list[str]:
        records, _ = await store.async_client.scroll(store.collection_name, limit=1000)
        return sorted(str(record.id) for record in records)

    operations: dict[str, Any] = {
        "setup": store.setup,
        "add": store.add_memories,
        "search": search,
        "delete_memory": store.delete_memory,
        "delete_user": store.delete_all_user_memories,
        "delete_organization": store.delete_all_organization_memories,
        "ids": ids,
    }
    try:
        return [await operations[op](*args) for op, *args in steps]
    finally:
        await store.close()


def main() -> None:
    request = json.load(sys.stdin)
    if request["op"] == "sources":
        answer: Any = sources()
    else:
        answer = asyncio.run(run(request["url"], request["cache_dir"], request["steps"]))
    json.dump(answer, sys.stdout)


if __name__ == "__main__":
    main()
