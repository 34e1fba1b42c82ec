"""Benchmark of QdrantDB in local mode with the hashing embedding (the offline choice).

Run: ``python benchmarks/bench_vector_qdrant.py [memories] [users]`` (defaults 2000 and 20).

For each embedding dimension it reports the time to add the memories, the latency of
single and batched searches in user and organisation scope, and how often a query that
shares one word with exactly one memory (plus filler words) gets that memory first: the
figure behind ``DEFAULT_DIMENSION``. Deterministic (seeded) and bounded in size.
"""

from __future__ import annotations

import asyncio
import random
import string
import sys
import time
import uuid

from memora_ogm.vector_db.base import MemorySearchScope
from memora_ogm.vector_db.embedding import HashingEmbedding
from memora_ogm.vector_db.qdrant import QdrantDB

WORDS_PER_MEMORY = 8
QUERIES = 100
DIMENSIONS = (384, 768, 1024)


def corpus(count: int, seed: int = 7) -> list[str]:
    """Memories made of distinct pseudo-words, so each query word has one right answer."""
    rng = random.Random(seed)
    vocabulary: set[str] = set()
    while len(vocabulary) < count * WORDS_PER_MEMORY:
        length = rng.randint(5, 10)
        vocabulary.add("".join(rng.choice(string.ascii_lowercase) for _ in range(length)))
    words = sorted(vocabulary)
    rng.shuffle(words)
    return [
        "user_x " + " ".join(words[i * WORDS_PER_MEMORY : (i + 1) * WORDS_PER_MEMORY])
        for i in range(count)
    ]


async def run(dimension: int, memories: list[str], users: int) -> None:
    store = QdrantDB(embedding_function=HashingEmbedding(dimension))
    await store.setup()
    ids = [str(uuid.uuid4()) for _ in memories]
    owner = [f"user-{i % users}" for i in range(len(memories))]

    started = time.perf_counter()
    for user in sorted(set(owner)):
        mine = [i for i, name in enumerate(owner) if name == user]
        await store.add_memories(
            "org", user, "agent", [ids[i] for i in mine], [memories[i] for i in mine],
            "2024-01-01T00:00:00+00:00",
        )  # fmt: skip
    add_seconds = time.perf_counter() - started

    rng = random.Random(dimension)
    picks = rng.sample(range(len(memories)), QUERIES)
    queries = [f"what about the {rng.choice(memories[i].split()[1:])} thing" for i in picks]

    hits_org = hits_user = 0
    started = time.perf_counter()
    for query, index in zip(queries, picks, strict=True):
        found = await store.search_memory(query, MemorySearchScope.ORGANIZATION, "org")
        hits_org += bool(found) and found[0][0].memory_id == ids[index]
    org_ms = (time.perf_counter() - started) * 1000 / QUERIES
    started = time.perf_counter()
    for query, index in zip(queries, picks, strict=True):
        found = await store.search_memory(query, MemorySearchScope.USER, "org", owner[index])
        hits_user += bool(found) and found[0][0].memory_id == ids[index]
    user_ms = (time.perf_counter() - started) * 1000 / QUERIES
    started = time.perf_counter()
    await store.search_memories(queries, MemorySearchScope.ORGANIZATION, "org")
    batch_ms = (time.perf_counter() - started) * 1000 / QUERIES
    await store.close()

    print(
        f"dim {dimension:5d}: add {len(memories)} in {add_seconds:5.2f}s | per query: org "
        f"{org_ms:5.1f} ms, user {user_ms:5.1f} ms, batched {batch_ms:5.1f} ms | first hit: "
        f"org {hits_org / QUERIES:4.0%}, user {hits_user / QUERIES:4.0%}"
    )


async def main() -> None:
    count = int(sys.argv[1]) if len(sys.argv) > 1 else 2000
    users = int(sys.argv[2]) if len(sys.argv) > 2 else 20
    memories = corpus(count)
    print(f"{count} memories of {WORDS_PER_MEMORY} words, {users} users, {QUERIES} queries")
    for dimension in DIMENSIONS:
        await run(dimension, memories, users)


if __name__ == "__main__":
    asyncio.run(main())
