"""The two candidates for memora-ogm's embedded vector engine, side by side (issue 23).

Run: ``python benchmarks/bench_embedded_engines.py [--points 100000] [--queries 200]``.

- ``local``: qdrant-client's local mode, ``QdrantClient(path=...)``, the engine behind
  ``QdrantDB(path=...)`` today (the sync client; the async one wraps the same code).
- ``edge``: Qdrant Edge (``qdrant_edge.EdgeShard``), the server's engine in-process.
- ``edge-bm25``: Edge again, its sparse half embedded by Edge's own BM25 from the text
  (IDF modifier on), which needs no model download.

The points are shaped like Memora's memories: a named dense vector (384-d, cosine) and a
named sparse vector under the names qdrant-client's fastembed integration gives Memora's
models, the payload ``document``, ``org_id``, ``org_user_id``, ``user_id``, ``agent_id``,
``obtained_at``, over tenants of skewed sizes (``--orgs`` x ``--users``). Vectors are
synthetic and seeded (topic centres plus noise; SPLADE-like sparse vectors over the
document's words plus expansion terms), so no model is needed and every process builds
the same data.

Each engine runs in processes of its own, so that peak RSS is its own:
``build`` (add in batches of 256, optimise for Edge, hybrid search, disk size) and
``reopen`` (start-up: open the folder and answer a first query; delete organisations by
filter; 1 thread, then 8 threads behind one lock, then 8 threads unguarded). A
``migrate`` process tries to open the local-mode folder in Edge and moves it over by
scroll and upsert. The parent prints one table. A hybrid query is Memora's: a dense and
a sparse prefetch, each filtered to one user (``org_id`` and ``org_user_id``), fused by
RRF (k=2 in both engines).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass
from importlib.metadata import version
from pathlib import Path
from typing import Any, Protocol

import numpy as np
import numpy.typing as npt
import qdrant_edge as edge
from qdrant_client import QdrantClient, models

DENSE = "fast-paraphrase-multilingual-minilm-l12-v2"
SPARSE = "fast-sparse-splade_pp_en_v1"
COLLECTION = "memory_collection_v0_2"
DIMENSION = 384
BATCH = 256
PREFETCH = 20
LIMIT = 10
RRF_K = 2
VOCABULARY = 20_000
TOPICS = 512
DELETED_ORGS = 3
MIN_QUERIES = 5
THREADS = 8
THREAD_BATCH = 8
ENGINES = ("local", "edge", "edge-bm25")
TENANT_FIELDS = ("org_id", "org_user_id")
OTHER_INDEXED_FIELDS = ("user_id", "agent_id")


# ---------------------------------------------------------------- the data (every process)


@dataclass(frozen=True)
class Sparse:
    indices: npt.NDArray[np.int64]
    values: npt.NDArray[np.float32]

    def lists(self) -> tuple[list[int], list[float]]:
        return self.indices.tolist(), self.values.tolist()


@dataclass(frozen=True)
class Memory:
    point_id: str
    dense: npt.NDArray[np.float32]  # arrays, not lists: 100k memories stay small in RAM
    sparse: Sparse
    payload: dict[str, str]


@dataclass(frozen=True)
class Question:
    org_id: str
    org_user_id: str
    dense: npt.NDArray[np.float32]
    sparse: Sparse
    text: str


@dataclass(frozen=True)
class Corpus:
    memories: list[Memory]
    questions: list[Question]
    orgs: list[str]


def pseudo_words(rng: np.random.Generator) -> list[str]:
    syllables = [c + v for c in "bdfgklmnprstvz" for v in "aeiou"] + ["th", "sh", "ch"]
    picks = rng.integers(0, len(syllables), size=(VOCABULARY * 2, 3))
    words = sorted({"".join(syllables[i] for i in row) for row in picks})
    rng.shuffle(words)
    return words[:VOCABULARY]


def corpus(points: int, orgs: int, users: int, queries: int, seed: int = 23) -> Corpus:
    """Deterministic memories and questions; each question aims at one memory of its user."""
    rng = np.random.default_rng(seed)
    words = pseudo_words(rng)
    tenants = orgs * users
    sizes = rng.lognormal(sigma=1.0, size=tenants)  # a few heavy users, many light ones
    owner = rng.choice(tenants, size=points, p=sizes / sizes.sum())
    centres = rng.standard_normal((TOPICS, DIMENSION)).astype(np.float32)
    topic = (owner * 7 + rng.integers(0, 8, size=points)) % TOPICS  # users keep to topics
    dense = centres[topic] + 0.6 * rng.standard_normal((points, DIMENSION)).astype(np.float32)
    dense /= np.linalg.norm(dense, axis=1, keepdims=True)
    rank_weight = 1.0 / (np.arange(VOCABULARY) + 20.0)  # Zipf-like word frequencies
    rank_weight /= rank_weight.sum()
    lengths = rng.integers(8, 21, size=points)
    word_ids = rng.choice(VOCABULARY, size=int(lengths.sum()), p=rank_weight)
    expansion = rng.choice(VOCABULARY, size=(points, 24), p=rank_weight)
    ids = rng.integers(0, 256, size=(points, 16), dtype=np.uint8)
    days = rng.integers(0, 730, size=points)
    memories = []
    start = 0
    for n in range(points):
        mine = word_ids[start : start + lengths[n]]
        start += lengths[n]
        found = np.unique(np.concatenate([mine, expansion[n]]))
        org, user = divmod(int(owner[n]), users)
        memories.append(
            Memory(
                point_id=str(uuid.UUID(bytes=ids[n].tobytes(), version=4)),
                dense=dense[n],
                sparse=Sparse(found, rng.uniform(0.1, 2.5, size=len(found)).astype(np.float32)),
                payload={
                    "document": " ".join(words[i] for i in mine),
                    "org_id": f"org-{org}",
                    "org_user_id": f"org-{org}:user-{user}",
                    "user_id": f"user-{user}",
                    "agent_id": f"agent-{org}-{n % 5}",
                    "obtained_at": f"2025-{days[n] % 12 + 1:02d}-{days[n] % 28 + 1:02d}"
                    f"T{n % 24:02d}:00:00+00:00",
                },
            )
        )
    position = {word: n for n, word in enumerate(words)}
    questions = []
    for target in rng.choice(points, size=queries, replace=False):
        aimed = memories[target]
        asked = [*rng.choice(aimed.payload["document"].split(), size=3), *rng.choice(words, 2)]
        near = aimed.dense + 0.05 * rng.standard_normal(DIMENSION)
        terms = sorted({position[w] for w in asked})
        questions.append(
            Question(
                org_id=aimed.payload["org_id"],
                org_user_id=aimed.payload["org_user_id"],
                dense=(near / np.linalg.norm(near)).astype(np.float32),
                sparse=Sparse(np.array(terms), np.ones(len(terms), dtype=np.float32)),
                text=" ".join(asked),
            )
        )
    return Corpus(memories, questions, [f"org-{n}" for n in range(orgs)])


def renamed(memory: Memory, worker: int, turn: int, index: int) -> Memory:
    """A copy of a memory as a new one of the thread's own user (fresh, reproducible id)."""
    payload = {
        **memory.payload,
        "org_id": "org-threads",
        "user_id": f"worker-{worker}",
        "org_user_id": f"org-threads:worker-{worker}",
    }
    point_id = str(uuid.uuid5(uuid.NAMESPACE_OID, f"{worker}/{turn}/{index}"))
    return Memory(point_id, memory.dense, memory.sparse, payload)


# ---------------------------------------------------------------- the engines


class Engine(Protocol):
    def add(self, batch: list[Memory]) -> None: ...
    def search(self, question: Question) -> list[str]: ...
    def delete_org(self, org_id: str) -> None: ...
    def delete_ids(self, point_ids: list[str]) -> None: ...
    def count(self, org_user_id: str | None = None) -> int: ...
    def optimize(self) -> None: ...
    def close(self) -> None: ...


class LocalMode:
    """qdrant-client's local mode on a folder: pickles in SQLite, brute force in numpy."""

    def __init__(self, folder: Path, create: bool) -> None:
        self.client = QdrantClient(path=str(folder))
        if create:  # payload indexes are no-ops in local mode: none are made
            self.client.create_collection(
                COLLECTION,
                vectors_config={
                    DENSE: models.VectorParams(size=DIMENSION, distance=models.Distance.COSINE)
                },
                sparse_vectors_config={SPARSE: models.SparseVectorParams()},
            )

    def add(self, batch: list[Memory]) -> None:
        points = [
            models.PointStruct(
                id=m.point_id,
                vector={
                    DENSE: m.dense.tolist(),
                    SPARSE: models.SparseVector(
                        indices=m.sparse.indices.tolist(), values=m.sparse.values.tolist()
                    ),
                },
                payload=m.payload,
            )
            for m in batch
        ]
        self.client.upsert(COLLECTION, points=points, wait=True)

    @staticmethod
    def tenant(field: str, value: str) -> models.Filter:
        return models.Filter(
            must=[models.FieldCondition(key=field, match=models.MatchValue(value=value))]
        )

    def search(self, question: Question) -> list[str]:
        scope = models.Filter(
            must=[
                models.FieldCondition(key="org_id", match=models.MatchValue(value=question.org_id)),
                models.FieldCondition(
                    key="org_user_id", match=models.MatchValue(value=question.org_user_id)
                ),
            ]
        )
        indices, values = question.sparse.lists()
        sparse = models.SparseVector(indices=indices, values=values)
        found = self.client.query_points(
            COLLECTION,
            prefetch=[
                models.Prefetch(
                    query=question.dense.tolist(), using=DENSE, limit=PREFETCH, filter=scope
                ),
                models.Prefetch(query=sparse, using=SPARSE, limit=PREFETCH, filter=scope),
            ],
            query=models.RrfQuery(rrf=models.Rrf(k=RRF_K)),
            query_filter=scope,
            limit=LIMIT,
            with_payload=True,
        )
        return [str(point.id) for point in found.points]

    def delete_org(self, org_id: str) -> None:
        selector = models.FilterSelector(filter=self.tenant("org_id", org_id))
        self.client.delete(COLLECTION, points_selector=selector, wait=True)

    def delete_ids(self, point_ids: list[str]) -> None:
        selector = models.PointIdsList(points=[*point_ids])
        self.client.delete(COLLECTION, points_selector=selector, wait=True)

    def count(self, org_user_id: str | None = None) -> int:
        scope = self.tenant("org_user_id", org_user_id) if org_user_id else None
        return self.client.count(COLLECTION, count_filter=scope, exact=True).count

    def scroll(self) -> Iterator[list[models.Record]]:
        """Every point with its vectors, a page at a time (what moving a folder needs)."""
        offset: models.ExtendedPointId | None = None
        while True:
            page, offset = self.client.scroll(
                COLLECTION, limit=BATCH, offset=offset, with_payload=True, with_vectors=True
            )
            yield page
            if offset is None:
                return

    def optimize(self) -> None:
        """Local mode has no index to build."""

    def close(self) -> None:
        self.client.close()


class Edge:
    """Qdrant Edge: segments, payload (tenant) indexes, HNSW after ``optimize``, a WAL."""

    def __init__(self, folder: Path, create: bool, bm25: bool) -> None:
        self.bm25 = edge.Bm25() if bm25 else None
        if not create:
            self.shard = edge.EdgeShard.load(str(folder))
            return
        modifier = edge.Modifier.Idf if bm25 else None
        config = edge.EdgeConfig(
            vectors={DENSE: edge.EdgeVectorParams(size=DIMENSION, distance=edge.Distance.Cosine)},
            sparse_vectors={SPARSE: edge.EdgeSparseVectorParams(modifier=modifier)},
        )
        self.shard = edge.EdgeShard.create(str(folder), config)
        for field in (*TENANT_FIELDS, *OTHER_INDEXED_FIELDS):
            index = edge.KeywordIndexParams(is_tenant=field in TENANT_FIELDS)
            self.shard.update(edge.UpdateOperation.create_field_index(field, index))

    def sparse(self, memory: Memory) -> edge.SparseVector:
        if self.bm25 is not None:
            return self.bm25.embed_document(memory.payload["document"])
        return edge.SparseVector(*memory.sparse.lists())

    def add(self, batch: list[Memory]) -> None:
        points = [
            edge.Point(m.point_id, {DENSE: m.dense.tolist(), SPARSE: self.sparse(m)}, m.payload)
            for m in batch
        ]
        self.shard.update(edge.UpdateOperation.upsert_points(points))

    @staticmethod
    def tenant(field: str, value: str) -> edge.FieldCondition:
        return edge.FieldCondition(field, match=edge.MatchValue(value))

    def search(self, question: Question) -> list[str]:
        scope = edge.Filter(
            must=[
                self.tenant("org_id", question.org_id),
                self.tenant("org_user_id", question.org_user_id),
            ]
        )
        if self.bm25 is not None:
            sparse = self.bm25.embed_query(question.text)
        else:
            sparse = edge.SparseVector(*question.sparse.lists())
        request = edge.QueryRequest(
            limit=LIMIT,
            prefetches=[
                edge.Prefetch(
                    PREFETCH, edge.Query.Nearest(question.dense.tolist(), DENSE), filter=scope
                ),
                edge.Prefetch(PREFETCH, edge.Query.Nearest(sparse, SPARSE), filter=scope),
            ],
            # The stub types ``query`` as Fusion, not its nested Rrf, which is what it takes.
            query=edge.Fusion.Rrf(k=RRF_K),  # type: ignore[arg-type]
            filter=scope,
            with_payload=True,
        )
        return [str(point.id) for point in self.shard.query(request)]

    def delete_org(self, org_id: str) -> None:
        scope = edge.Filter(must=[self.tenant("org_id", org_id)])
        self.shard.update(edge.UpdateOperation.delete_points_by_filter(scope))

    def delete_ids(self, point_ids: list[str]) -> None:
        self.shard.update(edge.UpdateOperation.delete_points([*point_ids]))

    def count(self, org_user_id: str | None = None) -> int:
        scope = edge.Filter(must=[self.tenant("org_user_id", org_user_id)]) if org_user_id else None
        return self.shard.count(edge.CountRequest(exact=True, filter=scope))

    def optimize(self) -> None:
        """Edge runs no background optimiser: segments are indexed (HNSW) only when asked."""
        self.shard.optimize()

    def close(self) -> None:
        self.shard.close()


def open_engine(name: str, folder: Path, create: bool) -> Engine:
    if name == "local":
        return LocalMode(folder, create)
    return Edge(folder, create, bm25=name == "edge-bm25")


# ---------------------------------------------------------------- measuring


def rss_mb() -> float:
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux


def disk_mb(folder: Path) -> tuple[float, float]:
    """Allocated (what ``du`` counts) and apparent size; Edge preallocates WAL segments."""
    allocated = apparent = 0
    for path in folder.rglob("*"):
        if path.is_file():
            stat = path.stat()
            allocated += stat.st_blocks * 512
            apparent += stat.st_size
    return allocated / 2**20, apparent / 2**20


def latencies(engine: Engine, questions: list[Question], budget: float) -> dict[str, Any]:
    """The questions in turn, stopping after ``budget`` seconds (local mode is that slow)."""
    took: list[float] = []
    answers = []
    started = time.perf_counter()
    for question in questions:
        if len(took) >= MIN_QUERIES and time.perf_counter() - started > budget:
            break
        began = time.perf_counter()
        answers.append(engine.search(question))
        took.append(time.perf_counter() - began)
    elapsed = time.perf_counter() - started
    cuts = statistics.quantiles(took, n=20)
    return {
        "queries": len(took),
        "qps": len(took) / elapsed,
        "p50_ms": statistics.median(took) * 1000,
        "p95_ms": cuts[18] * 1000,
        "answers": answers,
    }


def build(name: str, folder: Path, data: Corpus, budget: float) -> dict[str, Any]:
    result: dict[str, Any] = {"rss_data_mb": rss_mb()}
    engine = open_engine(name, folder, create=True)
    started = time.perf_counter()
    for start in range(0, len(data.memories), BATCH):
        engine.add(data.memories[start : start + BATCH])
    result["add_per_s"] = len(data.memories) / (time.perf_counter() - started)
    result["rss_added_mb"] = rss_mb()
    result["search"] = latencies(engine, data.questions, budget)
    if name != "local":
        started = time.perf_counter()
        engine.optimize()
        result["optimize_s"] = time.perf_counter() - started
        result["search_optimized"] = latencies(engine, data.questions, budget)
    result["count"] = engine.count()
    engine.close()
    result["disk_mb"], result["disk_apparent_mb"] = disk_mb(folder)
    result["peak_rss_mb"] = peak_rss_mb()
    return result


def rounds(
    engine: Engine,
    data: Corpus,
    threads: int,
    guard: AbstractContextManager[Any],
    turns: int,
    budget: float,
) -> dict[str, Any]:
    """``threads`` threads, each doing up to ``turns`` rounds (at least one; none begun after
    ``budget`` seconds) of what a save, a search and a delete ask of the store: add 8 memories
    of its own user, search that user, delete one of them."""
    deadline = time.perf_counter() + budget
    done = [0] * threads
    failures: list[str] = []
    added = [0] * threads  # points each thread's calls reported as written, and deleted
    deleted = [0] * threads

    def work(worker: int) -> None:
        for turn in range(turns):
            if turn and time.perf_counter() > deadline:
                return
            done[worker] += 1
            first = (worker * turns + turn) * THREAD_BATCH
            batch = [
                renamed(data.memories[(first + n) % len(data.memories)], worker, turn, n)
                for n in range(THREAD_BATCH)
            ]
            question = Question(
                "org-threads",
                f"org-threads:worker-{worker}",
                batch[0].dense,
                batch[0].sparse,
                batch[0].payload["document"],
            )
            try:
                with guard:
                    engine.add(batch)
                added[worker] += THREAD_BATCH
                with guard:
                    engine.search(question)
                with guard:
                    engine.delete_ids([batch[0].point_id])
                deleted[worker] += 1
            except Exception as error:  # counted: the point of the unguarded run
                failures.append(f"{type(error).__name__}: {error}"[:100])

    running = [threading.Thread(target=work, args=(n,), daemon=True) for n in range(threads)]
    started = time.perf_counter()
    for thread in running:
        thread.start()
    for thread in running:
        thread.join(timeout=600)
    elapsed = time.perf_counter() - started
    hung = sum(thread.is_alive() for thread in running)
    expected = sum(added) - sum(deleted)
    try:
        with guard:
            found = sum(engine.count(f"org-threads:worker-{n}") for n in range(threads))
            engine.delete_org("org-threads")
        wrong = found - expected  # points lost (<0) or left over (>0) by the threads
        after = ""
    except Exception as error:
        wrong = 0
        after = f"{type(error).__name__}: {error}"[:100]
    return {
        "rounds_per_s": sum(done) / elapsed,
        "failed": len(failures),
        "rounds": sum(done),
        "hung": hung,
        "wrong_count": wrong,
        "first_error": failures[0] if failures else after,
    }


def reopen(name: str, folder: Path, data: Corpus, turns: int, budget: float) -> dict[str, Any]:
    result: dict[str, Any] = {"rss_data_mb": rss_mb()}
    started = time.perf_counter()
    engine = open_engine(name, folder, create=False)
    result["open_s"] = time.perf_counter() - started
    engine.search(data.questions[0])
    result["startup_s"] = time.perf_counter() - started
    result["rss_open_mb"] = rss_mb()
    before = engine.count()
    started = time.perf_counter()
    for org in data.orgs[:DELETED_ORGS]:
        engine.delete_org(org)
    result["delete_org_ms"] = (time.perf_counter() - started) * 1000 / DELETED_ORGS
    result["deleted_points"] = before - engine.count()
    lock = threading.Lock()
    result["threads_1"] = rounds(engine, data, 1, nullcontext(), turns * THREADS, budget)
    result["threads_8_lock"] = rounds(engine, data, THREADS, lock, turns, budget)
    result["threads_8_bare"] = rounds(engine, data, THREADS, nullcontext(), turns, budget)
    engine.close()
    result["peak_rss_mb"] = peak_rss_mb()
    return result


def migrate(local_folder: Path, edge_folder: Path) -> dict[str, Any]:
    """A folder of local mode opened in Edge, then moved over by scroll and upsert."""
    try:
        edge.EdgeShard.load(str(local_folder)).close()
        opened = "opened"
    except Exception as error:
        opened = f"{type(error).__name__}: {error}"[:160]
    started = time.perf_counter()
    source = LocalMode(local_folder, create=False)
    loaded = time.perf_counter() - started
    target = Edge(edge_folder, create=True, bm25=False)
    moved = 0
    for page in source.scroll():
        batch = []
        for record in page:
            vectors = record.vector
            assert isinstance(vectors, dict) and record.payload is not None
            sparse = vectors[SPARSE]
            assert isinstance(sparse, models.SparseVector)
            dense = vectors[DENSE]
            assert isinstance(dense, list)
            batch.append(
                edge.Point(
                    str(record.id),
                    {DENSE: dense, SPARSE: edge.SparseVector(sparse.indices, sparse.values)},
                    record.payload,
                )
            )
        target.shard.update(edge.UpdateOperation.upsert_points(batch))
        moved += len(batch)
    copied = target.count()
    target.close()
    source.close()
    return {
        "edge_opens_local": opened,
        "load_s": loaded,
        "move_s": time.perf_counter() - started,
        "moved": moved,
        "count_in_edge": copied,
        "peak_rss_mb": peak_rss_mb(),
    }


# ---------------------------------------------------------------- the processes and the table


def child(arguments: argparse.Namespace) -> None:
    data = corpus(arguments.points, arguments.orgs, arguments.users, arguments.queries)
    folder = Path(arguments.folder)
    if arguments.phase == "build":
        result = build(arguments.engine, folder / arguments.engine, data, arguments.budget)
    elif arguments.phase == "reopen":
        result = reopen(
            arguments.engine, folder / arguments.engine, data, arguments.turns, arguments.budget
        )
    else:
        result = migrate(folder / "local", folder / "migrated")
    print(json.dumps(result))
    sys.stdout.flush()
    os._exit(0)  # threads left hanging by an unguarded run must not keep the process alive


def run_child(arguments: argparse.Namespace, phase: str, engine: str) -> dict[str, Any]:
    command = [
        sys.executable, __file__, "--phase", phase, "--engine", engine,
        "--folder", arguments.folder, "--points", str(arguments.points),
        "--orgs", str(arguments.orgs), "--users", str(arguments.users),
        "--queries", str(arguments.queries), "--turns", str(arguments.turns),
        "--budget", str(arguments.budget),
    ]  # fmt: skip
    done = subprocess.run(command, capture_output=True, text=True, timeout=3600)
    if done.returncode != 0:
        return {"crashed": done.stderr.strip().splitlines()[-1:]}
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def overlap(answers: list[list[str]], reference: list[list[str]]) -> float:
    """Share of the top-10 ids both engines return for the same questions."""
    asked = min(len(answers), len(reference))  # the local run may have stopped early
    shared = sum(
        len(set(a) & set(b)) for a, b in zip(answers[:asked], reference[:asked], strict=True)
    )
    return shared / max(1, sum(len(b) for b in reference[:asked]))


def row(label: str, values: dict[str, str]) -> str:
    return f"{label:34s}" + "".join(f"{values.get(name, '-'):>20s}" for name in ENGINES)


def threads_cell(figures: dict[str, Any]) -> str:
    if "rounds_per_s" not in figures:
        return "-"
    cell = f"{figures['rounds_per_s']:.1f}"
    if figures["failed"] or figures["hung"] or figures["wrong_count"]:
        cell += f" ({figures['failed']}/{figures['rounds']} err)"
    return cell


def table(built: dict[str, dict[str, Any]], reopened: dict[str, dict[str, Any]]) -> list[str]:
    def each(
        source: dict[str, dict[str, Any]], show: Callable[[dict[str, Any]], str]
    ) -> dict[str, str]:
        cells = {}
        for name, figures in source.items():
            try:
                cells[name] = show(figures)
            except (KeyError, TypeError):
                cells[name] = "-"
        return cells

    def searched(figures: dict[str, Any]) -> dict[str, Any]:
        return dict(figures.get("search_optimized", figures["search"]))

    reference = built["local"]["search"]["answers"] if "search" in built["local"] else None
    lines = [row("", {name: name for name in ENGINES})]
    lines += [
        row("add, points/s (batches of 256)", each(built, lambda f: f"{f['add_per_s']:,.0f}")),
        row("Edge optimize (HNSW), s", each(built, lambda f: f"{f['optimize_s']:.1f}")),
        row(
            "hybrid search, queries/s (n)",
            each(built, lambda f: "{qps:.1f} ({queries})".format(**searched(f))),
        ),
        row(
            "  p50 / p95, ms",
            each(built, lambda f: "{p50_ms:.2f} / {p95_ms:.2f}".format(**searched(f))),
        ),
        row(
            "  before optimize: queries/s",
            each(built, lambda f: f"{f['search']['qps']:.1f}" if "search_optimized" in f else "-"),
        ),
        row(
            "  top-10 shared with local",
            each(
                built,
                lambda f: f"{overlap(searched(f)['answers'], reference):.1%}" if reference else "-",
            ),
        ),
        row("RSS of the data alone, MB", each(built, lambda f: f"{f['rss_data_mb']:.0f}")),
        row("RSS after add, MB", each(built, lambda f: f"{f['rss_added_mb']:.0f}")),
        row("peak RSS building, MB", each(built, lambda f: f"{f['peak_rss_mb']:.0f}")),
        row("on disk (allocated), MB", each(built, lambda f: f"{f['disk_mb']:.0f}")),
        row("on disk (apparent), MB", each(built, lambda f: f"{f['disk_apparent_mb']:.0f}")),
        row("start-up: open, s", each(reopened, lambda f: f"{f['open_s']:.3f}")),
        row("start-up: open + 1st query, s", each(reopened, lambda f: f"{f['startup_s']:.3f}")),
        row(
            "RSS after start-up, MB",
            each(
                reopened,
                lambda f: f"{f['rss_open_mb'] - f['rss_data_mb']:+.0f} = {f['rss_open_mb']:.0f}",
            ),
        ),
        row("delete one org by filter, ms", each(reopened, lambda f: f"{f['delete_org_ms']:.1f}")),
        row(
            f"  points deleted ({DELETED_ORGS} orgs)",
            each(reopened, lambda f: f"{f['deleted_points']}"),
        ),
        row("1 thread, rounds/s", each(reopened, lambda f: threads_cell(f["threads_1"]))),
        row(
            "8 threads, one lock, rounds/s",
            each(reopened, lambda f: threads_cell(f["threads_8_lock"])),
        ),
        row(
            "8 threads, unguarded, rounds/s",
            each(reopened, lambda f: threads_cell(f["threads_8_bare"])),
        ),
        row(
            "  lost/extra points after",
            each(reopened, lambda f: f"{f['threads_8_bare']['wrong_count']:+d}"),
        ),
        row("peak RSS reopened + threads, MB", each(reopened, lambda f: f"{f['peak_rss_mb']:.0f}")),
    ]
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--points", type=int, default=100_000)
    parser.add_argument("--orgs", type=int, default=100)
    parser.add_argument("--users", type=int, default=10, help="users per organisation")
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--turns", type=int, default=10, help="rounds per thread of 8")
    parser.add_argument(
        "--budget", type=float, default=60, help="seconds for a search run or a thread run"
    )
    parser.add_argument("--phase", choices=("build", "reopen", "migrate"), help=argparse.SUPPRESS)
    parser.add_argument("--engine", choices=ENGINES, help=argparse.SUPPRESS)
    parser.add_argument("--folder", help=argparse.SUPPRESS)
    arguments = parser.parse_args()
    if arguments.phase:
        child(arguments)
        return
    print(
        f"{arguments.points:,} points, {arguments.orgs} orgs x {arguments.users} users, "
        f"{arguments.queries} queries; qdrant-client {version('qdrant-client')}, "
        f"qdrant-edge-py {version('qdrant-edge-py')}; load average {os.getloadavg()}"
    )
    with tempfile.TemporaryDirectory(prefix="bench_engines_") as folder:
        arguments.folder = folder
        built = {name: run_child(arguments, "build", name) for name in ENGINES}
        moved = run_child(arguments, "migrate", "local")
        reopened = {name: run_child(arguments, "reopen", name) for name in ENGINES}
        shutil.rmtree(folder, ignore_errors=True)
    for line in table(built, reopened):
        print(line)
    for name, figures in {**built, **{f"{k} (reopen)": v for k, v in reopened.items()}}.items():
        if "crashed" in figures:
            print(f"{name} crashed: {figures['crashed']}")
    for name, figures in reopened.items():
        for run in ("threads_8_lock", "threads_8_bare"):
            error = figures.get(run, {}).get("first_error")
            if error:
                print(f"{name}, {run}: first error: {error}")
    print(f"local-mode folder in Edge: {moved.get('edge_opens_local', moved)}")
    if "move_s" in moved:
        print(
            f"moved by scroll + upsert: {moved['moved']:,} points in {moved['move_s']:.1f} s "
            f"({moved['load_s']:.1f} s of it opening the local folder), "
            f"{moved['count_in_edge']:,} in Edge, peak RSS {moved['peak_rss_mb']:.0f} MB"
        )
    print(f"load average at the end: {os.getloadavg()}")


if __name__ == "__main__":
    main()
