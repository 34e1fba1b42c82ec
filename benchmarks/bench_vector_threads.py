"""Benchmark of one QdrantDB shared by threads (issue 20, item 2) and event loops (item 3).

Run: ``python benchmarks/bench_vector_threads.py [rounds] [location]`` (defaults 40 and
``folder``; ``memory`` for ``:memory:``; ``server`` for the async store on a Qdrant
server, here the tests' REST stand-in, ``tests/qdrant_standin.py``).

``server``: each round runs in its own ``asyncio.run``, as a Celery task or a script
bridging to async does, on one shared async ``QdrantDB(url=...)``, from 1, 2 and 4
threads at once; the store opens a client per loop and closes it with the loop. The
baseline is the same round on a bare ``AsyncQdrantClient`` opened and closed inside
each ``asyncio.run`` (what correct code without the store does), one thread.

Each thread repeats a round of what a save, a search and a memory delete ask of the store:
add 6 memories, search them, delete one. The baseline is the same round on the bare
qdrant-client client, one thread, vectors embedded beforehand. The figures are rounds per
second for 1, 2, 4 and 8 threads on one store, their ratio to the baseline, and how many
rounds failed (the embedded engine is not thread-safe: without turns they fail or corrupt
the collection).
"""

from __future__ import annotations

import asyncio
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Callable
from pathlib import Path

from qdrant_client import AsyncQdrantClient, QdrantClient, models

from memora_ogm.sync import MemorySearchScope, QdrantDB
from memora_ogm.vector_db.embedding import DEFAULT_DIMENSION, HashingEmbedding
from memora_ogm.vector_db.layouts import vector_params
from memora_ogm.vector_db.qdrant import QdrantDB as AsyncQdrantDB

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
from qdrant_standin import qdrant_standin  # noqa: E402 (a test helper, found above)

MEMORIES = 6
OBTAINED_AT = "2024-06-01T08:30:00+00:00"
THREADS = (1, 2, 4, 8)


def texts(worker: int, turn: int) -> list[str]:
    return [f"user_w{worker} fact {turn} {n} about tea and bikes" for n in range(MEMORIES)]


def store_round(store: QdrantDB, worker: int, turn: int) -> None:
    ids = [str(uuid.uuid4()) for _ in range(MEMORIES)]
    store.add_memories("org", f"w{worker}", "bot", ids, texts(worker, turn), OBTAINED_AT)
    store.search_memory(texts(worker, turn)[0], MemorySearchScope.USER, "org", f"w{worker}")
    store.delete_memories(ids[:1])


def bare_rounds(folder: str | None, rounds: int) -> float:
    """Rounds per second of the same calls on the bare client, one thread."""
    client = QdrantClient(path=folder) if folder else QdrantClient(location=":memory:")
    client.create_collection("bare", vectors_config=vector_params(DEFAULT_DIMENSION))
    embed = HashingEmbedding(DEFAULT_DIMENSION).embed
    prepared = [(texts(0, turn), embed(texts(0, turn))) for turn in range(rounds)]
    started = time.perf_counter()
    for batch, vectors in prepared:
        ids: list[models.ExtendedPointId] = [str(uuid.uuid4()) for _ in batch]
        points = [
            models.PointStruct(id=point, vector=vector, payload={"memory": text})
            for point, vector, text in zip(ids, vectors, batch, strict=True)
        ]
        client.upsert("bare", points=points, wait=True)
        client.query_points("bare", query=vectors[0], limit=10)
        client.delete("bare", points_selector=models.PointIdsList(points=ids[:1]), wait=True)
    elapsed = time.perf_counter() - started
    client.close()
    return rounds / elapsed


def shared_rounds(folder: str | None, threads: int, rounds: int) -> tuple[float, int, str]:
    """Rounds per second of ``threads`` threads on one store, failed rounds, first error."""
    store = (
        QdrantDB(path=folder, embedding_function=HashingEmbedding())
        if folder
        else QdrantDB(location=":memory:", embedding_function=HashingEmbedding())
    )
    store.setup()
    failures: list[Exception] = []

    def work(worker: int) -> None:
        for turn in range(rounds):
            try:
                store_round(store, worker, turn)
            except Exception as error:
                failures.append(error)

    elapsed = timed_threads(threads, work)
    store.close()
    first = f"{type(failures[0]).__name__}: {failures[0]}"[:90] if failures else ""
    return threads * rounds / elapsed, len(failures), first


async def bare_loop_round(url: str, batch: list[str], vectors: list[list[float]]) -> None:
    client = AsyncQdrantClient(url=url, check_compatibility=False)
    ids: list[models.ExtendedPointId] = [str(uuid.uuid4()) for _ in batch]
    points = [
        models.PointStruct(id=point, vector=vector, payload={"memory": text})
        for point, vector, text in zip(ids, vectors, batch, strict=True)
    ]
    await client.upsert("bare", points=points, wait=True)
    search = models.QueryRequest(query=vectors[0], limit=10, with_payload=True)
    await client.query_batch_points("bare", requests=[search])  # the store's call
    await client.delete("bare", points_selector=models.PointIdsList(points=ids[:1]), wait=True)
    await client.close()


async def store_loop_round(store: AsyncQdrantDB, worker: int, turn: int) -> None:
    ids = [str(uuid.uuid4()) for _ in range(MEMORIES)]
    await store.add_memories("org", f"w{worker}", "bot", ids, texts(worker, turn), OBTAINED_AT)
    await store.search_memory(texts(worker, turn)[0], MemorySearchScope.USER, "org", f"w{worker}")
    await store.delete_memories(ids[:1])


def timed_threads(threads: int, work: Callable[[int], None]) -> float:
    running = [threading.Thread(target=work, args=(n,)) for n in range(threads)]
    started = time.perf_counter()
    for thread in running:
        thread.start()
    for thread in running:
        thread.join()
    return time.perf_counter() - started


def loop_rounds(store: AsyncQdrantDB, threads: int, rounds: int) -> tuple[float, int, str]:
    """Rounds per second of ``threads`` threads, each round in its own ``asyncio.run``."""
    failures: list[Exception] = []

    def work(worker: int) -> None:
        for turn in range(rounds):
            try:
                asyncio.run(store_loop_round(store, worker, turn))
            except Exception as error:
                failures.append(error)

    rate = threads * rounds / timed_threads(threads, work)
    first = f"{type(failures[0]).__name__}: {failures[0]}"[:90] if failures else ""
    return rate, len(failures), first


def server_main(rounds: int) -> None:
    """``asyncio.run`` per round on one async server store, from 1, 2 and 4 threads."""
    with qdrant_standin() as (url, _):
        setup = QdrantClient(url=url, check_compatibility=False)
        setup.create_collection("bare", vectors_config=vector_params(DEFAULT_DIMENSION))
        setup.close()
        embed = HashingEmbedding(DEFAULT_DIMENSION).embed
        prepared = [(texts(0, turn), embed(texts(0, turn))) for turn in range(rounds)]
        started = time.perf_counter()
        for batch, vectors in prepared:
            asyncio.run(bare_loop_round(url, batch, vectors))
        baseline = rounds / (time.perf_counter() - started)
        print(f"server, asyncio.run per round, {rounds} rounds a thread, {MEMORIES} memories")
        print(f"bare client per loop, 1 thread: {baseline:8.1f} rounds/s")
        store = AsyncQdrantDB(url=url, embedding_function=HashingEmbedding())
        asyncio.run(store.setup())
        for threads in (1, 2, 4):
            rate, failed, first = loop_rounds(store, threads, rounds)
            print(
                f"QdrantDB(url=), {threads} thread(s): {rate:8.1f} rounds/s "
                f"({rate / baseline:4.2f}x bare), {failed} failed {first}"
            )
        asyncio.run(store.close())


def main() -> None:
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 40
    location = sys.argv[2] if len(sys.argv) > 2 else "folder"
    if location == "server":
        server_main(rounds)
        return
    with tempfile.TemporaryDirectory() as work:
        folders = (str(Path(work) / str(n)) for n in range(len(THREADS) + 1))

        def where() -> str | None:
            return next(folders) if location == "folder" else None

        baseline = bare_rounds(where(), rounds)
        print(f"{location}, {rounds} rounds a thread, {MEMORIES} memories a round")
        print(f"bare client, 1 thread: {baseline:8.1f} rounds/s")
        for threads in THREADS:
            rate, failed, first = shared_rounds(where(), threads, rounds)
            print(
                f"QdrantDB, {threads} thread(s): {rate:8.1f} rounds/s "
                f"({rate / baseline:4.2f}x bare), {failed} failed {first}"
            )


if __name__ == "__main__":
    main()
