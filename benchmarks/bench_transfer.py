"""Export, import and delete an organisation beside a bare-driver baseline doing the same work.

    python benchmarks/bench_transfer.py [--nodes 1000000] [--users 100] [--interactions N]
                                        [--rounds 2] [--library-first] [--heap-mb 1024]
                                        [--pagecache-mb 512]

Times ``import_records``, ``export_organization``, ``delete_user`` and
``delete_organization`` of memora-ogm against a baseline that uses the neo4j driver
alone, on the same embedded Neo4j in the same run, and prints nodes/s of both, their
ratio, the peak RSS of the Python process in each phase and the server's heap.

The data is a synthetic ``memora-ogm-export`` file: an organisation of ``--users``
users, each with its own agent and an org-wide one, and interactions of 10 messages
and 4 memories (one contrary update each) over several days and UTC offsets.
``--nodes`` sets the interactions per user so that the graph holds about that many
nodes. The baseline streams keyset pages of the same content, writes UNWIND batches of
about 5,000 rows built from the same records, and deletes with ``CALL { ... } IN
TRANSACTIONS``. It does not validate or check conflicts, which the library's import
does first: it is the server's speed for the same graph.

Both sides first run every statement once on a small organisation, untimed (a cold
server plans them), then import and delete the whole organisation once each, untimed
(``--no-prefill`` skips it): the server's JIT compiles a side's code paths on their first
run at scale (a first organisation delete took twice the server CPU of the next, at 100k
nodes), and an import into a fresh store was measured 20 to 30 s slower at 100k nodes
than into one that held a copy, whichever side ran it. Then they work on identical
copies, one copy at a time, in ``--rounds`` rounds (2 by default) of the six steps
below, taking turns to go first: "first" is the baseline in odd rounds and memora-ogm in
even ones (the other way round with ``--library-first``). A side's nodes/s of a work is
its nodes over its seconds, summed over the rounds, so that one slow moment of a shared
machine, or the order, does not decide a ratio:

1. the first side imports copy 1; the baseline's export of it must give the file's digest;
2. the second side deletes copy 1 (``delete_organization``);
3. the second side imports copy 2; its graph must equal copy 1's (counts of nodes by
   labels, of properties by labels and key, of relationships by type);
4. the second side, then the first, export copy 2: both must give the file's digest;
5. the first side deletes user 0, then the second user 1: both must remove the same
   counts of nodes, properties and relationships;
6. the first side deletes copy 2 (the organisation less those two users).

The peak RSS of a phase is sampled from ``/proc/self/statm`` every 10 ms (where there
is one); ``ru_maxrss`` covers the process's life and is printed at the end. The
server starts with ``$MEMORA_OGM_NEO4J_HEAP_MB`` (1024 unless set; ``--heap-mb``).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import resource
import signal
import sys
import tempfile
import threading
import time
import uuid
from collections import Counter
from collections.abc import Awaitable, Iterator
from datetime import datetime, timedelta, timezone
from pathlib import Path
from types import TracebackType
from typing import Any

from neo4j import Driver, GraphDatabase

from memora_ogm import Neo4jGraphInterface
from memora_ogm.server import LocalNeo4jServer
from memora_ogm.transfer import export
from memora_ogm.transfer import format as transfer

LIMIT_MB = 300
MESSAGES = 10
MEMORIES = 4
HOURS_APART = 7
OFFSETS = [timezone.utc, timezone(timedelta(hours=2)), timezone(timedelta(hours=-5, minutes=-30))]
#: Rows per baseline write (a message counts as a row of its interaction).
ROWS = 5_000
#: Nodes per baseline read page; an interaction counts one (its messages come along).
PAGE = 1_000
#: Rows per inner transaction of the baseline deletes.
DELETE_ROWS = 5_000


# --------------------------------------------------------------------------- data


def interactions_for(nodes: int, users: int) -> int:
    """Interactions per user for about ``nodes`` nodes: a user brings 4 (itself, two
    collections, its agent), an interaction 1 + messages + memories and its days."""
    per_interaction = 1 + MESSAGES + MEMORIES + HOURS_APART / 24
    return max(1, round((nodes / users - 4) / per_interaction))


def synthetic(org_id: str, users: int, interactions: int) -> Iterator[dict[str, Any]]:
    """An export, in export order (ids zero-padded so that text order is number order)."""
    start = datetime(2024, 1, 1, 8, 0, tzinfo=timezone.utc)
    counts: Counter[str] = Counter()

    def emit(record: dict[str, Any]) -> dict[str, Any]:
        counts[record["type"]] += 1
        return record

    created = start.isoformat()
    yield export.header("organization", org_id, None, "neo4j")
    yield emit(
        {"type": "organization", "org_id": org_id, "org_name": "Bench", "created_at": created}
    )
    user_ids = [f"u{u:05d}" for u in range(users)]
    for user_id in user_ids:
        yield emit(
            {
                "type": "user",
                "org_id": org_id,
                "user_id": user_id,
                "user_name": f"user {user_id}",
                "created_at": created,
            }
        )
    for agent_id, owner in [("a-shared", None)] + [(f"a-{u}", u) for u in user_ids]:
        yield emit(
            {
                "type": "agent",
                "org_id": org_id,
                "agent_id": agent_id,
                "agent_label": f"agent {agent_id}",
                "user_id": owner,
                "created_at": created,
            }
        )
    for user_id in user_ids:
        moments = [
            (start + timedelta(hours=HOURS_APART * i)).astimezone(OFFSETS[i % len(OFFSETS)])
            for i in range(interactions)
        ]
        for i, when in enumerate(moments):
            later = when + timedelta(hours=HOURS_APART // 2)
            yield emit(
                {
                    "type": "interaction",
                    "org_id": org_id,
                    "user_id": user_id,
                    "interaction_id": f"i{i:06d}",
                    "agent_id": "a-shared" if i % 2 else f"a-{user_id}",
                    "created_at": when.isoformat(),
                    "updated_at": later.isoformat(),
                    "dates": sorted({when.date().isoformat(), later.date().isoformat()}),
                    "messages": [
                        {"role": "user" if p % 2 == 0 else "assistant", "content": f"m{p} " * 20}
                        for p in range(MESSAGES)
                    ],
                }
            )
        for i, when in enumerate(moments):
            for k in range(MEMORIES):
                yield emit(
                    {
                        "type": "memory",
                        "org_id": org_id,
                        "user_id": user_id,
                        "memory_id": memory_id(user_id, i, k),
                        "interaction_id": f"i{i:06d}",
                        "agent_id": "a-shared",
                        "memory": f"user_{user_id} fact {k} of conversation {i}",
                        "obtained_at": when.isoformat(),
                        "date_obtained": when.date().isoformat(),
                        "source_positions": [] if k == 0 else sorted({k, (k * 7) % MESSAGES}),
                    }
                )
        for i in range(interactions):
            yield emit(
                {
                    "type": "contrary_update",
                    "org_id": org_id,
                    "user_id": user_id,
                    "memory_id": memory_id(user_id, i, 1),
                    "updated_by": memory_id(user_id, i, 2),
                }
            )
    yield export.end(counts)


def memory_id(user_id: str, interaction: int, k: int) -> str:
    """A canonical UUID, unique across users (``u00042`` is user 42), in the order the
    file writes a user's memories, as an export sorts them."""
    return str(uuid.UUID(int=(int(user_id[1:]) << 64) | (interaction << 16) | k))


# --------------------------------------------------------------------------- memory


def _rss_now() -> int:
    with open("/proc/self/statm", "rb") as statm:
        return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def lifetime_max_rss_mb() -> float:
    kilobytes = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return kilobytes / 1024 if sys.platform != "darwin" else kilobytes / 2**20


class PeakRss:
    """The highest RSS seen while the block runs, sampled by a thread every 10 ms (the
    process's lifetime ``ru_maxrss`` where there is no ``/proc/self/statm``)."""

    sampled = os.path.exists("/proc/self/statm")

    def __enter__(self) -> PeakRss:
        self.start = self.peak = _rss_now() if self.sampled else 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)
        if self.sampled:
            self._thread.start()
        return self

    def _sample(self) -> None:
        while not self._stop.wait(0.01):
            self.peak = max(self.peak, _rss_now())

    def __exit__(self, *_: object) -> None:
        self._stop.set()
        if self.sampled:
            self._thread.join()
            self.peak = max(self.peak, _rss_now())

    @property
    def mb(self) -> float:
        return self.peak / 2**20 if self.sampled else lifetime_max_rss_mb()

    def shown(self) -> str:
        """The peak and what the phase added to the RSS it began with (freed memory stays
        with the process, so a later phase's peak includes an earlier one's)."""
        grown = f" (+{(self.peak - self.start) / 2**20:.0f})" if self.sampled else ""
        return f"{self.mb:.0f}{grown} MB"


class Timed:
    """Wall time and peak RSS of one side's run of one work."""

    def __init__(self, side: str, work: str) -> None:
        self.side, self.work = side, work

    def __enter__(self) -> Timed:
        print(f"  {self.work}: {self.side} ...", flush=True)
        self.rss = PeakRss().__enter__()
        self.started = time.perf_counter()
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        self.seconds = time.perf_counter() - self.started
        self.rss.__exit__(kind, error, trace)
        print(f"  {self.work}: {self.side} {self.seconds:.1f} s", flush=True)


# --------------------------------------------------------------------------- the graph


def signature(driver: Driver) -> Counter[str]:
    """Counts of nodes by labels, of properties by labels and key, of relationships by
    type, over the whole database (it holds one copy at a time)."""
    counts: Counter[str] = Counter()
    queries = (
        "MATCH (n) RETURN 'nodes ' + apoc.text.join(labels(n), ':') AS k, count(*) AS n",
        "MATCH (n) UNWIND keys(n) AS key "
        "RETURN 'property ' + apoc.text.join(labels(n), ':') + '.' + key AS k, count(*) AS n",
        "MATCH ()-[r]->() RETURN 'relationships ' + type(r) AS k, count(*) AS n",
    )
    for query in queries:
        for row in driver.execute_query(query).records:
            counts[row["k"]] = row["n"]
    return counts


def node_count(counts: Counter[str]) -> int:
    return sum(n for key, n in counts.items() if key.startswith("nodes "))


def difference(before: Counter[str], after: Counter[str]) -> Counter[str]:
    return Counter({key: before[key] - after[key] for key in before if before[key] != after[key]})


HEAP = (
    "CALL dbms.queryJmx('java.lang:type=Memory') YIELD attributes "
    "RETURN attributes.HeapMemoryUsage.value.properties.max AS max"
)


# --------------------------------------------------------------------------- baseline


class Baseline:
    """The same work through the neo4j driver alone: no validation, no model, no
    library code; the schema (constraints) is the one ``setup()`` installed."""

    WRITES = {
        "organization": """
            UNWIND $rows AS r
            CREATE (:Org {org_id: r.org_id, org_name: r.org_name,
                          created_at: datetime(r.created_at)})""",
        "user": """
            UNWIND $rows AS r
            MATCH (o:Org {org_id: r.org_id})
            CREATE (u:User {org_id: r.org_id, user_id: r.user_id, user_name: r.user_name,
                            created_at: datetime(r.created_at)})-[:BELONGS_TO]->(o)
            CREATE (u)-[:INTERACTIONS_IN]->(:InteractionCollection {org_id: r.org_id,
                                                                    user_id: r.user_id})
            CREATE (u)-[:HAS_MEMORIES]->(:MemoryCollection {org_id: r.org_id,
                                                            user_id: r.user_id})""",
        "agent": """
            UNWIND $rows AS r
            MATCH (o:Org {org_id: r.org_id})
            CREATE (o)-[:HAS_AGENT]->(a:Agent {org_id: r.org_id, agent_id: r.agent_id,
                                               agent_label: r.agent_label, user_id: r.user_id,
                                               created_at: datetime(r.created_at)})
            WITH r, a
            MATCH (u:User {org_id: r.org_id, user_id: r.user_id})
            CREATE (u)-[:HAS_AGENT]->(a)""",
        "interaction": """
            UNWIND $rows AS r
            MATCH (:User {org_id: r.org_id, user_id: r.user_id})-[:INTERACTIONS_IN]->(c)
            CREATE (c)-[:HAD_INTERACTION]->(i:Interaction {
                org_id: r.org_id, user_id: r.user_id, interaction_id: r.interaction_id,
                agent_id: r.agent_id, created_at: datetime(r.created_at),
                updated_at: datetime(r.updated_at)})
            WITH r, i
            CALL (r, i) {
                UNWIND r.dates AS day
                MERGE (d:Date {org_id: r.org_id, user_id: r.user_id, date: date(day)})
                CREATE (i)-[:HAS_OCCURRENCE_ON]->(d)
            }
            CALL (r, i) {
                UNWIND range(0, size(r.messages) - 1) AS p
                CREATE (m:MessageBlock {msg_position: p, role: r.messages[p].role,
                                        content: r.messages[p].content})
                WITH m ORDER BY m.msg_position
                WITH collect(m) AS chain
                CALL (i, chain) {
                    WITH chain[0] AS first WHERE first IS NOT NULL
                    CREATE (i)-[:FIRST_MESSAGE]->(first)
                }
                UNWIND range(0, size(chain) - 2) AS k
                WITH chain[k] AS a, chain[k + 1] AS b
                CREATE (a)-[:IS_NEXT]->(b)
            }""",
        "memory": """
            UNWIND $rows AS r
            MATCH (:User {org_id: r.org_id, user_id: r.user_id})-[:HAS_MEMORIES]->(c)
            MATCH (i:Interaction {org_id: r.org_id, user_id: r.user_id,
                                  interaction_id: r.interaction_id})
            CREATE (c)-[:INCLUDES]->(m:Memory {
                org_id: r.org_id, user_id: r.user_id, agent_id: r.agent_id,
                interaction_id: r.interaction_id, memory_id: r.memory_id, memory: r.memory,
                obtained_at: datetime(r.obtained_at)})-[:INTERACTION_SOURCE]->(i)
            WITH r, i, m
            CALL (r, m) {
                WITH r, m WHERE r.date_obtained IS NOT NULL
                MERGE (d:Date {org_id: r.org_id, user_id: r.user_id,
                               date: date(r.date_obtained)})
                CREATE (m)-[:DATE_OBTAINED]->(d)
            }
            CALL (r, i, m) {
                UNWIND r.source_positions AS p
                MATCH (i)-[:FIRST_MESSAGE]->(:MessageBlock)-[:IS_NEXT*0..]->
                      (s:MessageBlock {msg_position: p})
                CREATE (m)-[:MESSAGE_SOURCE]->(s)
            }""",
        "contrary_update": """
            UNWIND $rows AS r
            MATCH (a:Memory {org_id: r.org_id, user_id: r.user_id, memory_id: r.memory_id})
            MATCH (b:Memory {org_id: r.org_id, user_id: r.user_id, memory_id: r.updated_by})
            CREATE (a)-[:CONTRARY_UPDATE]->(b)""",
    }

    def __init__(self, driver: Driver) -> None:
        self.driver = driver
        #: Seconds of the last import's writes, per record type (where its time goes).
        self.write_seconds: dict[str, float] = {}

    # -- import

    def import_file(self, path: Path) -> None:
        """The file's content records, in UNWIND batches of one type and about
        :data:`ROWS` rows."""
        kind: str | None = None
        rows: list[dict[str, Any]] = []
        size = 0
        self.write_seconds.clear()
        with path.open("rb") as lines:
            for line in lines:
                record = json.loads(line)
                if record["type"] not in self.WRITES:
                    continue
                weight = 1 + len(record.get("messages", ()))
                if rows and (record["type"] != kind or size + weight > ROWS):
                    self._write(kind, rows)
                    rows, size = [], 0
                kind = record["type"]
                rows.append(record)
                size += weight
        if rows:
            self._write(kind, rows)

    def _write(self, kind: str | None, rows: list[dict[str, Any]]) -> None:
        assert kind is not None
        started = time.perf_counter()
        self.driver.execute_query(self.WRITES[kind], rows=rows)
        self.write_seconds[kind] = self.write_seconds.get(kind, 0.0) + time.perf_counter() - started

    # -- export

    def _pages(self, query: str, key: str, **params: Any) -> Iterator[Any]:
        """Rows of ``query`` a keyset page at a time (``$after`` the last ``key``)."""
        after = ""
        while True:
            rows = self.driver.execute_query(
                query, after=after, page=PAGE, routing_="r", **params
            ).records
            yield from rows
            if len(rows) < PAGE:
                return
            after = rows[-1][key]

    def export(self, org_id: str) -> Iterator[dict[str, Any]]:
        """The organisation's content records in export order (header and end left out)."""
        org = self.driver.execute_query(
            "MATCH (o:Org {org_id: $org_id}) RETURN o.org_name AS name, o.created_at AS at",
            org_id=org_id,
            routing_="r",
        ).records[0]
        yield {
            "type": "organization",
            "org_id": org_id,
            "org_name": org["name"],
            "created_at": _iso(org["at"]),
        }
        users = """
            MATCH (u:User {org_id: $org_id}) WHERE u.user_id > $after
            RETURN u.user_id AS user_id, u.user_name AS name, u.created_at AS at
            ORDER BY u.org_id, u.user_id LIMIT $page"""
        for row in self._pages(users, "user_id", org_id=org_id):
            yield {
                "type": "user",
                "org_id": org_id,
                "user_id": row["user_id"],
                "user_name": row["name"],
                "created_at": _iso(row["at"]),
            }
        agents = """
            MATCH (a:Agent {org_id: $org_id}) WHERE a.agent_id > $after
            RETURN a.agent_id AS agent_id, a.agent_label AS label, a.user_id AS user_id,
                   a.created_at AS at
            ORDER BY a.org_id, a.agent_id LIMIT $page"""
        for row in self._pages(agents, "agent_id", org_id=org_id):
            yield {
                "type": "agent",
                "org_id": org_id,
                "agent_id": row["agent_id"],
                "agent_label": row["label"],
                "user_id": row["user_id"],
                "created_at": _iso(row["at"]),
            }
        for user in self._pages(users, "user_id", org_id=org_id):
            yield from self._user_content(org_id, user["user_id"])

    def _user_content(self, org_id: str, user_id: str) -> Iterator[dict[str, Any]]:
        owner = {"org_id": org_id, "user_id": user_id}
        interactions = """
            MATCH (i:Interaction {org_id: $org_id, user_id: $user_id})
            WHERE i.interaction_id > $after
            WITH i ORDER BY i.org_id, i.user_id, i.interaction_id LIMIT $page
            RETURN i.interaction_id AS interaction_id, i.agent_id AS agent_id,
                   i.created_at AS created_at, i.updated_at AS updated_at,
                   COLLECT { MATCH (i)-[:HAS_OCCURRENCE_ON]->(d:Date) RETURN d.date } AS dates,
                   COLLECT { MATCH (i)-[:FIRST_MESSAGE]->(:MessageBlock)-[:IS_NEXT*0..]->(m)
                             RETURN [m.msg_position, m.role, m.content] } AS messages"""
        for row in self._pages(interactions, "interaction_id", **owner):
            yield {
                "type": "interaction",
                **owner,
                "interaction_id": row["interaction_id"],
                "agent_id": row["agent_id"],
                "created_at": _iso(row["created_at"]),
                "updated_at": _iso(row["updated_at"]),
                "dates": sorted(str(day) for day in row["dates"]),
                "messages": [
                    {"role": role, "content": content}
                    for _, role, content in sorted(row["messages"], key=lambda m: m[0])
                ],
            }
        memories = """
            MATCH (m:Memory {org_id: $org_id, user_id: $user_id}) WHERE m.memory_id > $after
            WITH m ORDER BY m.org_id, m.user_id, m.memory_id LIMIT $page
            RETURN m.memory_id AS memory_id, m.interaction_id AS interaction_id,
                   m.agent_id AS agent_id, m.memory AS memory, m.obtained_at AS obtained_at,
                   COLLECT { MATCH (m)-[:DATE_OBTAINED]->(d:Date) RETURN d.date } AS days,
                   COLLECT { MATCH (m)-[:MESSAGE_SOURCE]->(s) RETURN s.msg_position }
                       AS positions,
                   COLLECT { MATCH (m)-[:CONTRARY_UPDATE]->
                                   (n:Memory {org_id: $org_id, user_id: $user_id})
                             RETURN n.memory_id } AS newer"""
        contrary: list[tuple[str, str]] = []
        for row in self._pages(memories, "memory_id", **owner):
            days = row["days"]
            yield {
                "type": "memory",
                **owner,
                "memory_id": row["memory_id"],
                "interaction_id": row["interaction_id"],
                "agent_id": row["agent_id"],
                "memory": row["memory"],
                "obtained_at": _iso(row["obtained_at"]),
                "date_obtained": str(days[0]) if days else None,
                "source_positions": sorted(row["positions"]),
            }
            contrary.extend((row["memory_id"], newer) for newer in row["newer"])
        for older, newer in sorted(contrary):
            yield {"type": "contrary_update", **owner, "memory_id": older, "updated_by": newer}

    # -- delete

    def _delete(self, labels: tuple[str, ...], owner: str, params: dict[str, Any]) -> None:
        """Each chain of messages, then the nodes of each label, in inner transactions of
        :data:`DELETE_ROWS` rows (an interaction brings its 10 messages)."""
        with self.driver.session() as session:
            session.run(
                f"""
                MATCH (i:Interaction {{{owner}}})
                CALL (i) {{
                    MATCH (i)-[:FIRST_MESSAGE]->(:MessageBlock)-[:IS_NEXT*0..]->(m)
                    WITH collect(m) AS chain
                    FOREACH (m IN chain | DETACH DELETE m)
                }} IN TRANSACTIONS OF {DELETE_ROWS // MESSAGES} ROWS""",
                params,
            ).consume()
            for label in labels:
                session.run(
                    f"""
                    MATCH (n:{label} {{{owner}}})
                    CALL (n) {{ DETACH DELETE n }} IN TRANSACTIONS OF {DELETE_ROWS} ROWS""",
                    params,
                ).consume()

    def delete_organization(self, org_id: str) -> None:
        labels = ("Memory", "Interaction", "Date", "InteractionCollection", "MemoryCollection")
        self._delete((*labels, "Agent", "User", "Org"), "org_id: $org_id", {"org_id": org_id})

    def delete_user(self, org_id: str, user_id: str) -> None:
        """The user with its collections, interactions, messages, memories and days; its
        agents stay, as ``delete_user`` leaves them."""
        labels = ("Memory", "Interaction", "Date", "InteractionCollection", "MemoryCollection")
        self._delete(
            (*labels, "User"),
            "org_id: $org_id, user_id: $user_id",
            {"org_id": org_id, "user_id": user_id},
        )


def _iso(value: Any) -> str:
    """A driver DATETIME as the format writes it (its own offset)."""
    return str(value.to_native().isoformat())


# --------------------------------------------------------------------------- run


#: The works in the order the table shows them.
WORKS = ("import", "export", "delete_user", "delete_organization")


class Results:
    """Each side's runs of each work, over the rounds: nodes/s of a side is its nodes over
    its seconds summed, so that every round (and each order of the sides) counts alike."""

    def __init__(self) -> None:
        self.runs: dict[str, dict[str, list[tuple[int, Timed]]]] = {}

    def add(self, work: str, side: str, nodes: int, timed: Timed) -> None:
        self.runs.setdefault(work, {}).setdefault(side, []).append((nodes, timed))

    def sides(self, work: str) -> tuple[tuple[int, float, Timed], tuple[int, float, Timed]]:
        """(nodes, seconds, the run of highest RSS) of memora-ogm's runs, then the bare's."""

        def total(side: str) -> tuple[int, float, Timed]:
            runs = self.runs[work][side]
            peak = max((timed for _, timed in runs), key=lambda timed: timed.rss.mb)
            return sum(n for n, _ in runs), sum(t.seconds for _, t in runs), peak

        return total(LibrarySide.name), total(BareSide.name)

    def print(self, heap_mb: float, pagecache_mb: int, rounds: int) -> None:
        print()
        print(f"server heap max {heap_mb:.0f} MiB, page cache {pagecache_mb} MiB, {rounds} rounds")
        print(
            f"{'work':<20} {'nodes':>9} {'memora-ogm':>11} {'bare':>11} {'ratio':>6} "
            f"{'ogm s':>7} {'bare s':>7} {'ogm RSS':>13} {'bare RSS':>13}"
        )
        for work in WORKS:
            (nodes, seconds, peak), (bare_nodes, bare_seconds, bare_peak) = self.sides(work)
            ours, theirs = nodes / seconds, bare_nodes / bare_seconds
            print(
                f"{work:<20} {nodes // rounds:>9,} {ours:>9,.0f}/s {theirs:>9,.0f}/s "
                f"{ours / theirs:>6.2f} {seconds:>7.1f} {bare_seconds:>7.1f} "
                f"{peak.rss.shown():>13} {bare_peak.rss.shown():>13}"
            )
        print(f"lifetime max RSS of the Python process: {lifetime_max_rss_mb():.0f} MB")


def check(ok: bool, what: str, failures: list[str]) -> None:
    print(f"  check: {what}: {'ok' if ok else 'FAILED'}", flush=True)
    if not ok:
        failures.append(what)


class LibrarySide:
    """memora-ogm's four works, as the benchmark times them."""

    name = "memora-ogm"

    def __init__(self, graph: Neo4jGraphInterface) -> None:
        self.graph = graph

    async def import_file(self, path: Path) -> None:
        """The import; prints how long it took before its first batch was written: the
        validating pass over the whole input and the check against the graph, which come
        first and which the baseline does not do."""
        started = time.perf_counter()
        written: list[float] = []

        def progress(done: int, total: int) -> None:
            if not written:
                written.append(time.perf_counter())

        await self.graph.import_records(transfer.JsonLinesFile(path), progress=progress)
        if written:
            print(
                f"  memora-ogm import: first batch written after {written[0] - started:.1f} s "
                "(validation and checks first)",
                flush=True,
            )

    async def digest(self, org_id: str) -> transfer.Digest:
        digest = transfer.Digest()
        async for record in self.graph.export_organization(org_id):
            digest.add(record)
        return digest

    async def delete_user(self, org_id: str, user_id: str) -> None:
        await self.graph.delete_user(org_id, user_id)

    async def delete_organization(self, org_id: str) -> None:
        await self.graph.delete_organization(org_id)


class BareSide:
    """The baseline's four works (synchronous driver calls, awaited for symmetry)."""

    name = "bare"

    def __init__(self, baseline: Baseline) -> None:
        self.baseline = baseline

    async def import_file(self, path: Path) -> None:
        self.baseline.import_file(path)
        spent = ", ".join(f"{k} {s:.1f} s" for k, s in self.baseline.write_seconds.items())
        print(f"  bare import's writes: {spent}", flush=True)

    async def digest(self, org_id: str) -> transfer.Digest:
        digest = transfer.Digest()
        for record in self.baseline.export(org_id):
            digest.add(record)
        return digest

    async def delete_user(self, org_id: str, user_id: str) -> None:
        self.baseline.delete_user(org_id, user_id)

    async def delete_organization(self, org_id: str) -> None:
        self.baseline.delete_organization(org_id)


Side = LibrarySide | BareSide


async def warm_up(sides: tuple[Side, Side], path: Path) -> None:
    """Every statement of both sides once on a small organisation, untimed, so that
    neither side pays for the cold server's planning and JIT in its figures."""
    org_id = "warm-up"
    with path.open("w", encoding="utf-8") as out:
        transfer.write_records(synthetic(org_id, 2, 5), out)
    for side in sides:
        await side.import_file(path)
        await side.digest(org_id)
        await side.delete_user(org_id, "u00000")
        await side.delete_organization(org_id)
    path.unlink()


async def one_round(
    first: Side,
    second: Side,
    bare: BareSide,
    driver: Driver,
    org_id: str,
    source: Path,
    expected: transfer.Digest,
    results: Results,
    failures: list[str],
) -> None:
    """Steps 1 to 6 of the module's docstring, each side's runs added to ``results``."""

    async def timing(side: Side, work: str, nodes: int, call: Awaitable[Any]) -> Any:
        with Timed(side.name, work) as timer:
            result = await call
        results.add(work, side.name, nodes, timer)
        return result

    print(f"copy 1: {first.name} import, checked by the bare export; {second.name} delete")
    with Timed(first.name, "import") as timer:
        await first.import_file(source)
    copy1 = signature(driver)
    nodes = node_count(copy1)
    results.add("import", first.name, nodes, timer)
    print(f"  graph: {nodes:,} nodes", flush=True)
    check(
        (await bare.digest(org_id)).hexdigest() == expected.hexdigest(),
        "copy 1 exports (bare export) as the file",
        failures,
    )
    await timing(second, "delete_organization", nodes, second.delete_organization(org_id))
    check(node_count(signature(driver)) == 0, "copy 1 deleted whole", failures)

    print(f"copy 2: {second.name} import; exports; user deletes; {first.name} delete")
    await timing(second, "import", nodes, second.import_file(source))
    copy2 = signature(driver)
    check(copy2 == copy1, "both imports made the same graph", failures)
    if copy2 != copy1:
        print(f"    copy 1 - copy 2: {dict(difference(copy1, copy2))}")
        print(f"    copy 2 - copy 1: {dict(difference(copy2, copy1))}")

    for side in (second, first):
        digest = await timing(side, "export", nodes, side.digest(org_id))
        check(digest.hexdigest() == expected.hexdigest(), f"{side.name} export", failures)

    after: list[Counter[str]] = [copy2]
    for side, user_id in ((first, "u00000"), (second, "u00001")):
        with Timed(side.name, "delete_user") as timer:
            await side.delete_user(org_id, user_id)
        after.append(signature(driver))
        removed = difference(after[-2], after[-1])
        results.add("delete_user", side.name, node_count(removed), timer)
    removed_first, removed_second = difference(after[0], after[1]), difference(after[1], after[2])
    check(removed_first == removed_second, "both user deletes removed the same", failures)
    if removed_first != removed_second:
        print(f"    {first.name} removed {dict(removed_first)}")
        print(f"    {second.name} removed {dict(removed_second)}")

    # Each side's rate on its own copy (copy 2 lacks the two deleted users).
    remaining = node_count(after[2])
    await timing(first, "delete_organization", remaining, first.delete_organization(org_id))
    check(node_count(signature(driver)) == 0, "copy 2 deleted whole", failures)


async def run(
    users: int,
    interactions: int,
    heap_mb: int,
    pagecache_mb: int,
    library_first: bool,
    prefill: bool,
    rounds: int,
) -> None:
    workdir = Path(tempfile.mkdtemp(prefix="bench-transfer-"))
    source = workdir / "source.jsonl"
    org_id = "bench-org"
    expected = transfer.Digest()
    with source.open("w", encoding="utf-8") as out:
        for record in synthetic(org_id, users, interactions):
            expected.add(record)
            out.write(transfer.dumps(record) + "\n")
    print(
        f"input: {users} users x {interactions} interactions ({MESSAGES} messages, "
        f"{MEMORIES} memories, 1 contrary update each); {dict(expected.counts)}; "
        f"{source.stat().st_size / 2**20:.0f} MB",
        flush=True,
    )
    failures: list[str] = []
    results = Results()
    try:
        with LocalNeo4jServer(heap_mb=heap_mb, pagecache_mb=pagecache_mb) as conn:
            graph = Neo4jGraphInterface(conn.uri, conn.username, conn.password, conn.database)
            await graph.setup()
            with GraphDatabase.driver(conn.uri, auth=conn.auth) as driver:
                baseline = Baseline(driver)
                heap = driver.execute_query(HEAP).records[0]["max"] / 2**20
                library, bare = LibrarySide(graph), BareSide(baseline)
                sides = (library, bare) if library_first else (bare, library)
                await warm_up(sides, workdir / "warm-up.jsonl")
                if prefill:
                    print("copy 0, untimed: each side imports once and deletes once, at scale")
                    for importing, deleting in ((bare, library), (library, bare)):
                        await importing.import_file(source)
                        await deleting.delete_organization(org_id)
                for number in range(rounds):
                    # Each round swaps the sides, so that each goes first as often.
                    ours_first = library_first == (number % 2 == 0)
                    first, second = (library, bare) if ours_first else (bare, library)
                    print(f"round {number + 1} of {rounds}: {first.name} first")
                    await one_round(
                        first, second, bare, driver, org_id, source, expected, results, failures
                    )
            await graph.close()
    finally:
        source.unlink()
        workdir.rmdir()
    results.print(heap, pagecache_mb, rounds)
    over = [
        f"{work} ({side})"
        for work, runs in results.runs.items()
        for side, timed in runs.items()
        if any(timer.rss.mb >= LIMIT_MB for _, timer in timed)
    ]
    if over:
        print(f"peak RSS at or over {LIMIT_MB} MB in: {', '.join(over)}")
    if failures:
        raise SystemExit(f"benchmark failed its checks: {', '.join(failures)}")


def main() -> None:
    # On SIGTERM, leave through the `with` blocks so the embedded Neo4j is stopped.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(1))
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, default=1_000_000, help="about this many nodes")
    parser.add_argument("--users", type=int, default=100)
    parser.add_argument(
        "--interactions", type=int, help="per user (instead of deriving it from --nodes)"
    )
    parser.add_argument(
        "--library-first",
        action="store_true",
        help="memora-ogm imports copy 1 (and exports second, deletes a user first, deletes copy 2)",
    )
    parser.add_argument(
        "--no-prefill",
        dest="prefill",
        action="store_false",
        help="skip the untimed import and delete at scale of each side (first import: fresh store)",
    )
    parser.add_argument(
        "--heap-mb", type=int, default=int(os.environ.get("MEMORA_OGM_NEO4J_HEAP_MB") or 1024)
    )
    parser.add_argument(
        "--pagecache-mb",
        type=int,
        default=int(os.environ.get("MEMORA_OGM_NEO4J_PAGECACHE_MB") or 512),
    )
    parser.add_argument(
        "--rounds",
        type=int,
        default=2,
        help="rounds of the six steps, the sides swapping who goes first each round",
    )
    args = parser.parse_args()
    if args.rounds < 1:
        parser.error("--rounds must be at least 1")
    if args.users < 2:
        parser.error("--users must be at least 2 (two users are deleted)")
    interactions = args.interactions or interactions_for(args.nodes, args.users)
    asyncio.run(
        run(
            args.users,
            interactions,
            args.heap_mb,
            args.pagecache_mb,
            args.library_first,
            args.prefill,
            args.rounds,
        )
    )


if __name__ == "__main__":
    main()
