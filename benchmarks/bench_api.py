"""Every public method of both twins on realistic data, against hand-written Cypher.

    python benchmarks/bench_api.py [--quick] [--interactions 1000] [--repeat 25]
                                   [--fast-repeat 200] [--twins async,sync]
                                   [--seconds 3] [--rounds 3]

Connects like the tests (``NEO4J_*`` variables, else Docker, else the embedded
server). It loads, with bulk Cypher in Memora's schema, an organisation of
``--users`` users and ``--agents`` agents whose first user has ``--interactions``
interactions of 10 messages and 4 memories (one every six hours, so four a day;
memory 0 of each interaction supersedes memory 0 of the previous one in chains of
10), and a scratch organisation for the methods that create and delete. Everything
it made is deleted at the end.

For each method and twin (async facade; sync facade, ``memora_ogm.sync``) it prints
the median and p95 wall time, the client CPU per call (``time.thread_time``: the
driver, neomodel and the facade all run in the calling thread), the statements per
call and the ratio to the Bolt floor (a ``RETURN 1`` auto-commit round trip, timed
interleaved with the method's own runs; a method under 5 ms is run ``--fast-repeat``
times instead of ``--repeat``). Statements are counted by wrapping ``run`` of the
driver's sessions and transactions, sync and async: every query, whatever built it, is
a RUN on one of them (BEGIN and COMMIT are not counted). A method that ran a single
auto-commit read also has that very statement sent again by the bare driver, timed
interleaved: ``s.xfl`` is its ratio to the floor, what the server's work and the
round trip cost before the layer adds anything.

For ``save``, ``update``, ``get_user``, ``get_all_org_agents`` and page 1 of both
lists it also times a hand-written single-statement baseline doing the same work
(the ``*_STATEMENT`` queries below, written here for the benchmark only: checks,
``Date`` merge, interaction, message chain, memories and links in one statement;
reads that check existence and fetch in one), run interleaved with memora-ogm's
call on the same driver flavour, and checks once that the reads return equal models.
The baseline resolves placeholders with ``apoc.text.replace`` and inserts names as
Java replacement strings (the names here are plain text).

Throughput: saves per second of ``--workers`` concurrent workers (asyncio tasks for
the async twin, threads for the sync one), each worker on a user of its own and all
of them on one shared user, memora-ogm and the baseline in alternating rounds of
``--seconds``.

Telemetry's cost (``memora_ogm.telemetry``): each method also runs untraced (the
methods as they are without the observer hook's wrapper) and instrumented into the
OpenTelemetry SDK (a batch span processor whose exporter drops the spans, and the duration
histogram), timed interleaved with the rest. ``api`` is the method's median as it runs by
default (uninstrumented: the hook's one check) over the untraced median, ``sdk``
the SDK's over the untraced; ``+api`` and ``+sdk`` what each adds to the client CPU per
call, in microseconds (differences of the CPU medians, steadier than wall times on a
loaded machine: tracing's cost is client CPU).

``close`` is not measured (it ends the interface).
"""

from __future__ import annotations

import argparse
import asyncio
import copy
import inspect
import itertools
import math
import statistics
import threading
import time
import uuid
from collections.abc import Awaitable, Callable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from typing import Any

import neo4j
import shortuuid
from neo4j._codec.packstream import v1 as packstream
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SpanExporter, SpanExportResult

from memora_ogm import Neo4jGraphInterface as AsyncGraphInterface
from memora_ogm import observe
from memora_ogm.schema import models
from memora_ogm.schema.storage import ContraryMemoryToStore, MemoriesAndInteraction, MemoryToStore
from memora_ogm.server import Neo4jConnection, connect_or_start
from memora_ogm.sync import Neo4jGraphInterface as SyncGraphInterface
from memora_ogm.telemetry import MemoraInstrumentor

START = datetime(2024, 1, 1, 9, tzinfo=timezone.utc)
MESSAGES = 10
MEMORIES = 4
CHAIN = 10
#: Interactions sent per bulk statement while loading.
BATCH = 50

#: A timed call: returns the result (sync twin) or an awaitable of it (async twin).
Thunk = Callable[[], Any]
#: Makes the thunk of one run (untimed): ``prepare(twin, run)``.
Prepare = Callable[["Twin", int], Awaitable[Thunk]]


async def settle(value: Any) -> Any:
    """The result of a thunk, whichever twin made it."""
    return await value if inspect.isawaitable(value) else value


# -- telemetry's cost --------------------------------------------------------------------


class DroppedSpans(SpanExporter):
    """Takes what the batch processor exports and drops it: the SDK's cost without an
    export's."""

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        return SpanExportResult.SUCCESS


class Untraced:
    """An interface whose methods are those the observer hook wraps (bound once,
    so a call costs no more lookups than on the interface); the rest is the interface's."""

    def __init__(self, interface: Any) -> None:
        self.__dict__["_interface"] = interface
        for name in dir(type(interface)):
            wrapped = getattr(getattr(type(interface), name, None), "__wrapped__", None)
            if wrapped is not None:
                self.__dict__[name] = wrapped.__get__(interface)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._interface, name)

    def __setattr__(self, name: str, value: Any) -> None:
        setattr(self._interface, name, value)


class Tracing:
    """How a timed call is traced, by its label: ``untraced`` calls go to an
    :class:`Untraced` view of the twin's interface, ``sdk`` calls run instrumented into
    the SDK's providers, every other call as by default (uninstrumented). Each call sets
    its own mode, so calls of the three may interleave."""

    def __init__(self) -> None:
        tracer_provider = TracerProvider()
        tracer_provider.add_span_processor(BatchSpanProcessor(DroppedSpans()))
        # Aggregated in memory and never collected: what a periodic reader's export of
        # a few points a minute adds is not a call's.
        meter_provider = MeterProvider(metric_readers=[InMemoryMetricReader()])
        MemoraInstrumentor().instrument(
            tracer_provider=tracer_provider, meter_provider=meter_provider
        )
        self.sdk, observe.observer = observe.observer, None

    def twin(self, twin: Twin, label: str) -> Twin:
        """``twin``, or for ``untraced`` a copy of it on the untraced view."""
        if label != "untraced":
            return twin
        view = copy.copy(twin)
        view.graph = Untraced(twin.graph)
        return view

    def mode(self, label: str, thunk: Thunk) -> Thunk:
        observer = self.sdk if label == "sdk" else None

        def traced() -> Any:
            observe.observer = observer
            return thunk()

        return traced


# -- hand-written Cypher (benchmark only) -------------------------------------------------

#: The message chain of ``i``: keeps ``kept`` (positions ``0..cut-1``) and creates
#: ``row.messages[cut..]`` after it. Binds ``chain`` (every message, by position).
CHAIN_FRAGMENT = """
CALL (i, row, cut) {
    UNWIND range(cut, size(row.messages) - 1) AS p
    CREATE (m:MessageBlock {msg_position: p, role: row.messages[p].role,
                            content: row.messages[p].content})
    WITH m ORDER BY m.msg_position
    RETURN collect(m) AS added
}
WITH *, kept + added AS chain
FOREACH (first IN CASE WHEN cut = 0 THEN added[0..1] ELSE [] END |
    CREATE (i)-[:FIRST_MESSAGE]->(first))
FOREACH (k IN range(CASE WHEN cut = 0 THEN 1 ELSE cut END, size(chain) - 1) |
    FOREACH (a IN [chain[k - 1]] | FOREACH (b IN [chain[k]] | CREATE (a)-[:IS_NEXT]->(b))))
WITH *
"""

#: ``row.memories`` of ``i``, in ``mc``, obtained on ``day``, citing ``chain`` and
#: superseding their ``contrary`` memory.
MEMORIES_FRAGMENT = """
CALL (i, day, mc, chain, row) {
    UNWIND row.memories AS item
    CREATE (mc)-[:INCLUDES]->(mem:Memory {
        org_id: $org_id, user_id: $user_id, agent_id: row.agent_id,
        interaction_id: i.interaction_id, memory_id: item.id, memory: item.text,
        obtained_at: row.at})
    CREATE (mem)-[:INTERACTION_SOURCE]->(i), (mem)-[:DATE_OBTAINED]->(day)
    FOREACH (p IN item.sources |
        FOREACH (source IN [chain[p]] | CREATE (mem)-[:MESSAGE_SOURCE]->(source)))
    WITH mem, item
    OPTIONAL MATCH (old:Memory {org_id: $org_id, user_id: $user_id, memory_id: item.contrary})
    FOREACH (o IN CASE WHEN old IS NULL THEN [] ELSE [old] END |
        CREATE (o)-[:CONTRARY_UPDATE]->(mem))
    RETURN count(mem) AS made
}
"""

#: Rows of ``row.memories`` whose contrary memory is missing are written nowhere.
CONTRARY_EXIST = """
all(id IN [item IN row.memories WHERE item.contrary IS NOT NULL | item.contrary]
    WHERE EXISTS { MATCH (:Memory {org_id: $org_id, user_id: $user_id, memory_id: id}) })
"""

#: ``save_interaction_with_memories`` of every row of ``$rows`` (one in the
#: benchmark, a batch when loading): nothing when the user, agent or a contrary
#: memory is missing.
SAVE_STATEMENT = f"""
MATCH (u:User {{org_id: $org_id, user_id: $user_id}})-[:INTERACTIONS_IN]->(ic:InteractionCollection)
MATCH (u)-[:HAS_MEMORIES]->(mc:MemoryCollection)
UNWIND $rows AS row
MATCH (:Agent {{org_id: $org_id, agent_id: row.agent_id}})
WITH ic, mc, row WHERE {CONTRARY_EXIST}
MERGE (day:Date {{org_id: $org_id, user_id: $user_id, date: date(row.at)}})
CREATE (ic)-[:HAD_INTERACTION]->(i:Interaction {{
    org_id: $org_id, user_id: $user_id, agent_id: row.agent_id, interaction_id: row.id,
    created_at: row.at, updated_at: row.at}})-[:HAS_OCCURRENCE_ON]->(day)
WITH *, 0 AS cut, [] AS kept
{CHAIN_FRAGMENT}
{MEMORIES_FRAGMENT}
RETURN i.interaction_id AS interaction_id, i.created_at AS at
"""

#: ``update_interaction_and_memories``: compares the stored chain with
#: ``$row.messages`` by role and content, deletes from the first difference (or the
#: surplus), appends the new tail, adds the memories, sets ``updated_at`` and
#: ``agent_id`` and links the update's day.
UPDATE_STATEMENT = f"""
MATCH (:User {{org_id: $org_id, user_id: $user_id}})-[:HAS_MEMORIES]->(mc:MemoryCollection)
MATCH (:Agent {{org_id: $org_id, agent_id: $row.agent_id}})
MATCH (i:Interaction {{org_id: $org_id, user_id: $user_id, interaction_id: $interaction_id}})
WITH mc, i, $row AS row WHERE {CONTRARY_EXIST}
CALL (i) {{
    OPTIONAL MATCH (i)-[:FIRST_MESSAGE]->(:MessageBlock)-[:IS_NEXT*0..]->(m:MessageBlock)
    WITH m ORDER BY m.msg_position
    RETURN collect(m) AS old
}}
WITH mc, i, row, old, [k IN range(0, size(row.messages) - 1)
    WHERE k >= size(old) OR old[k].role <> row.messages[k].role
       OR old[k].content <> row.messages[k].content] AS differing
WITH mc, i, row, old, coalesce(differing[0], size(row.messages)) AS cut
WITH mc, i, row, cut, old[0..cut] AS kept, old[cut..] AS dropped
FOREACH (m IN dropped | DETACH DELETE m)
WITH mc, i, row, cut, kept
SET i.updated_at = row.at, i.agent_id = row.agent_id
MERGE (day:Date {{org_id: $org_id, user_id: $user_id, date: date(row.at)}})
MERGE (i)-[:HAS_OCCURRENCE_ON]->(day)
WITH *
{CHAIN_FRAGMENT}
{MEMORIES_FRAGMENT}
RETURN i.interaction_id AS interaction_id, i.updated_at AS at
"""

GET_USER_STATEMENT = """
MATCH (u:User {org_id: $org_id, user_id: $user_id})
RETURN u {.org_id, .user_id, .user_name, .created_at} AS found
"""

ORG_AGENTS_STATEMENT = """
MATCH (o:Org {org_id: $org_id})
RETURN [(o)-[:HAS_AGENT]->(a:Agent) | a {.org_id, .agent_id, .user_id, .agent_label, .created_at}]
    AS found
"""

#: A memory ``mem`` with placeholders resolved and its message sources by position.
MEMORY_MAP = """
OPTIONAL MATCH (owner:User {org_id: mem.org_id, user_id: mem.user_id})
OPTIONAL MATCH (agent:Agent {org_id: mem.org_id, agent_id: mem.agent_id})
RETURN mem {
    .org_id, .agent_id, .user_id, .interaction_id, .memory_id, .obtained_at,
    memory: apoc.text.replace(
        apoc.text.replace(mem.memory, '(?i)user_[a-z0-9-]+', coalesce(owner.user_name, '$0')),
        '(?i)agent_[a-z0-9-]+', coalesce(agent.agent_label, '$0')),
    message_sources: COLLECT {
        MATCH (mem)-[:MESSAGE_SOURCE]->(s:MessageBlock)
        RETURN s {.msg_position, .role, .content} ORDER BY s.msg_position
    }
}
"""

#: A page of a user's interactions, newest update first, walking the user's days
#: newest first (an interaction counts on the day of its last update).
INTERACTIONS_STATEMENT = f"""
MATCH (:User {{org_id: $org_id, user_id: $user_id}})
RETURN COLLECT {{
    MATCH (day:Date {{org_id: $org_id, user_id: $user_id}})<-[:HAS_OCCURRENCE_ON]-(i:Interaction)
    WHERE day.date IS NOT NULL AND date(i.updated_at) = day.date
    WITH day, i
    ORDER BY day.org_id DESC, day.user_id DESC, day.date DESC, i.updated_at DESC,
             i.interaction_id DESC
    SKIP $skip LIMIT $limit
    RETURN i {{
        .org_id, .user_id, .agent_id, .interaction_id, .created_at, .updated_at,
        messages: CASE WHEN $with_messages THEN COLLECT {{
            MATCH (i)-[:FIRST_MESSAGE]->(:MessageBlock)-[:IS_NEXT*0..]->(m:MessageBlock)
            RETURN m {{.msg_position, .role, .content}} ORDER BY m.msg_position
        }} ELSE [] END,
        memories: CASE WHEN $with_memories THEN COLLECT {{
            MATCH (i)<-[:INTERACTION_SOURCE]-(mem:Memory)
            WITH mem ORDER BY mem.obtained_at, mem.memory_id
            {MEMORY_MAP}
        }} ELSE [] END
    }}
}} AS found
"""

#: A page of a user's memories, newest first, walking the user's days newest first.
MEMORIES_STATEMENT = f"""
MATCH (:User {{org_id: $org_id, user_id: $user_id}})
RETURN COLLECT {{
    MATCH (day:Date {{org_id: $org_id, user_id: $user_id}})<-[:DATE_OBTAINED]-(mem:Memory)
    WHERE day.date IS NOT NULL
    WITH day, mem
    ORDER BY day.org_id DESC, day.user_id DESC, day.date DESC, mem.obtained_at DESC,
             mem.memory_id DESC
    SKIP $skip LIMIT $limit
    {MEMORY_MAP}
}} AS found
"""

# -- loading -------------------------------------------------------------------------------

#: Users (with their collections) of the organisation ``o``.
USERS_FRAGMENT = """
CALL (o) {
    UNWIND $users AS row
    CREATE (u:User {org_id: $org_id, user_id: row.id, user_name: row.name, created_at: $at})
    CREATE (u)-[:BELONGS_TO]->(o)
    CREATE (u)-[:INTERACTIONS_IN]->(:InteractionCollection {org_id: $org_id, user_id: row.id})
    CREATE (u)-[:HAS_MEMORIES]->(:MemoryCollection {org_id: $org_id, user_id: row.id})
}
"""

ORG_STATEMENT = f"""
CREATE (o:Org {{org_id: $org_id, org_name: $org_name, created_at: $at}})
WITH o
{USERS_FRAGMENT}
CALL (o) {{
    UNWIND $agents AS row
    CREATE (o)-[:HAS_AGENT]->(a:Agent {{org_id: $org_id, agent_id: row.id, agent_label: row.label,
                                       created_at: $at, user_id: row.user_id}})
    WITH a, row WHERE row.user_id IS NOT NULL
    MATCH (u:User {{org_id: $org_id, user_id: row.user_id}})
    CREATE (u)-[:HAS_AGENT]->(a)
}}
"""

USERS_STATEMENT = f"""
MATCH (o:Org {{org_id: $org_id}})
{USERS_FRAGMENT}
"""

CONTRARY_STATEMENT = """
UNWIND $pairs AS pair
MATCH (old:Memory {org_id: $org_id, user_id: $user_id, memory_id: pair[0]})
MATCH (new:Memory {org_id: $org_id, user_id: $user_id, memory_id: pair[1]})
CREATE (old)-[:CONTRARY_UPDATE]->(new)
"""

#: One batch of the benchmark's organisations ``$prefix*``: interactions with their
#: messages (which have no org_id), then memories, then every other node. Each batch is
#: a statement of its own, run until it deletes nothing, so no transaction holds more
#: than a batch however large the throughput rounds made the data (a day or a collection
#: of theirs links hundreds of thousands of nodes; one statement over all of them ran
#: out of the transaction memory pool).
CLEANUP_BATCHES = (
    """
    MATCH (o:Org) WHERE o.org_name STARTS WITH $prefix
    WITH collect(o.org_id) AS ids
    MATCH (i:Interaction) WHERE i.org_id IN ids
    WITH i LIMIT 200
    OPTIONAL MATCH (i)-[:FIRST_MESSAGE]->(:MessageBlock)-[:IS_NEXT*0..]->(m:MessageBlock)
    WITH i, collect(m) AS messages
    FOREACH (m IN messages | DETACH DELETE m)
    DETACH DELETE i
    RETURN count(*) AS deleted
    """,
    *(
        f"""
    MATCH (o:Org) WHERE o.org_name STARTS WITH $prefix
    WITH collect(o.org_id) AS ids
    MATCH (n{label}) WHERE n.org_id IN ids
    WITH n LIMIT 2000
    DETACH DELETE n
    RETURN count(*) AS deleted
    """
        for label in (":Memory", "")
    ),
)


#: One interaction as the baseline's statements take it (see ``Spec.row``).
Row = dict[str, Any]


@dataclass(frozen=True)
class Spec:
    """One interaction to save: what both layers are given."""

    agent_id: str
    at: datetime
    messages: list[dict[str, str]]
    #: (text, source positions, superseded memory id or None)
    memories: list[tuple[str, list[int], str | None]]

    def model(self) -> MemoriesAndInteraction:
        new = [
            MemoryToStore(memory=t, source_msg_block_pos=s) for t, s, c in self.memories if not c
        ]
        contrary = [
            ContraryMemoryToStore(memory=t, source_msg_block_pos=s, existing_contrary_memory_id=c)
            for t, s, c in self.memories
            if c
        ]
        return MemoriesAndInteraction(
            interaction=self.messages,
            interaction_date=self.at,
            memories=new,
            contrary_memories=contrary,
        )

    def row(self, interaction_id: str | None = None) -> Row:
        """The baseline's parameters, with fresh ids (the interaction's unless given)."""
        ids = [str(uuid.uuid4()) for _ in self.memories]
        return {
            "id": interaction_id or shortuuid.uuid(),
            "agent_id": self.agent_id,
            "at": self.at,
            "messages": self.messages,
            "memories": [
                {"id": i, "text": t, "sources": s, "contrary": c}
                for i, (t, s, c) in zip(ids, self.memories, strict=True)
            ],
        }


def conversation(tag: str, count: int = MESSAGES) -> list[dict[str, str]]:
    """Messages of a realistic length (about 150 characters)."""
    return [
        {
            "role": "user" if p % 2 == 0 else "assistant",
            "content": f"{tag} message {p}: " + "a sentence of an ordinary conversation. " * 4,
        }
        for p in range(count)
    ]


def spec(
    user_id: str,
    agent_id: str,
    at: datetime,
    tag: str,
    messages: int = MESSAGES,
    memories: int = MEMORIES,
    contrary: str | None = None,
) -> Spec:
    """``memories`` memories citing two messages each; the last supersedes ``contrary``."""
    made: list[tuple[str, list[int], str | None]] = [
        (
            f"user_{user_id} told agent_{agent_id} that {tag} fact {k} holds for user_{user_id}'s"
            " work",
            [(2 * k) % messages, (2 * k + 1) % messages] if messages else [],
            contrary if k == memories - 1 else None,
        )
        for k in range(memories)
    ]
    return Spec(agent_id, at, conversation(tag, messages), made)


@dataclass
class World:
    """The ids of what was loaded, and the per-run supplies the write cases use up."""

    prefix: str
    org_id: str = ""
    users: list[str] = field(default_factory=list)
    agents: list[str] = field(default_factory=list)
    user_agents: list[str] = field(default_factory=list)
    scratch_org: str = ""
    scratch_user: str = ""
    scratch_agent: str = ""
    #: interaction ids of the main user, oldest first, and their memory ids
    interactions: list[str] = field(default_factory=list)
    memories: list[list[str]] = field(default_factory=list)
    updatable: Iterator[int] = field(default_factory=lambda: iter(()))
    supersedable: Iterator[int] = field(default_factory=lambda: iter(()))
    second: Iterator[int] = field(default_factory=itertools.count)

    @property
    def user(self) -> str:
        return self.users[0]

    def now(self) -> datetime:
        """A moment of one day after the history (a second later each call): the day
        every write of the benchmark happens on."""
        return START + timedelta(days=2_000, seconds=next(self.second))


class Loader:
    """Bulk Cypher on a driver of its own, for the data and each run's untimed set-up."""

    def __init__(self, driver: neo4j.AsyncDriver, database: str | None) -> None:
        self.driver = driver
        self.database = database

    async def run(self, query: str, **params: Any) -> list[neo4j.Record]:
        records, _, _ = await self.driver.execute_query(query, params, database_=self.database)
        return records

    async def org(self, name: str, users: int, agents: int, user_agents: int = 0) -> World:
        world = World(prefix=name)
        world.org_id = shortuuid.uuid()
        world.users = [shortuuid.uuid() for _ in range(users)]
        world.agents = [shortuuid.uuid() for _ in range(agents)]
        world.user_agents = [shortuuid.uuid() for _ in range(user_agents)]
        await self.run(
            ORG_STATEMENT,
            org_id=world.org_id,
            org_name=name,
            at=START,
            users=[{"id": u, "name": f"User {k}"} for k, u in enumerate(world.users)],
            agents=[
                {"id": agent, "label": f"Agent {k}", "user_id": owner}
                for owners in ((world.agents, None), (world.user_agents, world.users[0]))
                for k, agent in enumerate(owners[0])
                for owner in (owners[1],)
            ],
        )
        return world

    async def save(self, org_id: str, user_id: str, rows: list[Row]) -> None:
        for start in range(0, len(rows), BATCH):
            await self.run(
                SAVE_STATEMENT, org_id=org_id, user_id=user_id, rows=rows[start : start + BATCH]
            )

    async def history(self, world: World, count: int) -> None:
        """``count`` interactions of the main user, with contrary chains of ``CHAIN``."""
        rows = []
        for n in range(count):
            agent = world.agents[n % 5]
            rows.append(spec(world.user, agent, START + timedelta(hours=6 * n), f"i{n}").row())
        await self.save(world.org_id, world.user, rows)
        world.interactions = [row["id"] for row in rows]
        world.memories = [[memory["id"] for memory in row["memories"]] for row in rows]
        pairs = [
            [world.memories[n - 1][0], world.memories[n][0]] for n in range(count) if n % CHAIN
        ]
        await self.run(CONTRARY_STATEMENT, org_id=world.org_id, user_id=world.user, pairs=pairs)
        # Updates take the oldest interactions, contrary memories the newest ones' memory 1.
        world.updatable = iter(range(count))
        world.supersedable = iter(range(count - 1, -1, -1))

    async def cleanup(self, prefix: str) -> None:
        for statement in CLEANUP_BATCHES:
            while (await self.run(statement, prefix=prefix))[0]["deleted"]:
                pass


# -- twins ---------------------------------------------------------------------------------


class StatementCounter:
    """Counts every RUN sent through the driver's sessions and transactions and, while
    ``capturing``, keeps the auto-commit ones run in read sessions (a read statement can
    be sent again); timed runs keep nothing, so the floor and the calls pay alike."""

    def __init__(self) -> None:
        self.count = 0
        self.capturing = False
        #: ``(query, parameters)`` of each auto-commit RUN of a read session since ``reset``.
        self.reads: list[tuple[str, dict[str, Any]]] = []
        classes: list[tuple[type[Any], Callable[[Any], Any]]] = [
            (neo4j.AsyncSession, self._async),
            (neo4j.AsyncTransaction, self._async),
            (neo4j.AsyncManagedTransaction, self._async),
            (neo4j.Session, self._sync),
            (neo4j.Transaction, self._sync),
            (neo4j.ManagedTransaction, self._sync),
        ]
        for cls, wrap in classes:
            cls.run = wrap(cls.run)

    def reset(self, capturing: bool = False) -> None:
        self.count = 0
        self.capturing = capturing
        self.reads = []

    def _record(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
        """Count a RUN of ``runner.run(query, parameters, **more)``."""
        self.count += 1
        if not self.capturing:
            return
        runner, *given = args
        config = getattr(runner, "_config", None)
        if config is not None and config.default_access_mode == neo4j.READ_ACCESS:
            query = given[0] if given else kwargs["query"]
            params = given[1] if len(given) > 1 else kwargs.get("parameters")
            self.reads.append((str(query), dict(params or {})))

    def _async(self, run: Callable[..., Awaitable[Any]]) -> Callable[..., Awaitable[Any]]:
        async def counted(*args: Any, **kwargs: Any) -> Any:
            self._record(args, kwargs)
            return await run(*args, **kwargs)

        return counted

    def _sync(self, run: Callable[..., Any]) -> Callable[..., Any]:
        def counted(*args: Any, **kwargs: Any) -> Any:
            self._record(args, kwargs)
            return run(*args, **kwargs)

        return counted


@dataclass(frozen=True)
class Statement:
    """One hand-written statement and how its records become the facade's return value."""

    query: str
    params: dict[str, Any]
    write: bool
    convert: Callable[[list[neo4j.Record]], Any]


class Twin:
    """One interface flavour: its facade, a driver of the same flavour for the baseline
    and the floor, and how it runs concurrent workers. The measuring is shared."""

    name: str

    def __init__(self, graph: Any, driver: Any, database: str | None) -> None:
        self.graph = graph
        self.driver = driver
        self.database = database

    def execute(self, statement: Statement) -> Any:
        raise NotImplementedError

    def floor(self) -> Any:
        raise NotImplementedError

    def replay(self, query: str, params: dict[str, Any]) -> Any:
        """``query`` sent as memora-ogm sends a read: auto-commit, in a read session."""
        raise NotImplementedError

    async def workers(self, count: int, seconds: float, work: Callable[[int], Thunk]) -> int:
        """Calls completed by ``count`` workers looping ``work(worker)()`` for ``seconds``."""
        raise NotImplementedError

    async def close(self) -> None:
        await settle(self.graph.close())
        await settle(self.driver.close())


class AsyncTwin(Twin):
    name = "async"

    async def execute(self, statement: Statement) -> Any:
        records, _, _ = await self.driver.execute_query(
            statement.query,
            statement.params,
            database_=self.database,
            routing_=neo4j.RoutingControl.WRITE if statement.write else neo4j.RoutingControl.READ,
        )
        return statement.convert(records)

    async def floor(self) -> None:
        async with self.driver.session(database=self.database) as session:
            await (await session.run("RETURN 1")).consume()

    async def replay(self, query: str, params: dict[str, Any]) -> Any:
        async with self.driver.session(
            database=self.database, default_access_mode=neo4j.READ_ACCESS
        ) as session:
            return [record.values() async for record in await session.run(query, params)]

    async def workers(self, count: int, seconds: float, work: Callable[[int], Thunk]) -> int:
        deadline = time.perf_counter() + seconds

        async def worker(index: int) -> int:
            done = 0
            while time.perf_counter() < deadline:
                await work(index)()
                done += 1
            return done

        return sum(await asyncio.gather(*(worker(index) for index in range(count))))


class SyncTwin(Twin):
    name = "sync"

    def execute(self, statement: Statement) -> Any:
        records, _, _ = self.driver.execute_query(
            statement.query,
            statement.params,
            database_=self.database,
            routing_=neo4j.RoutingControl.WRITE if statement.write else neo4j.RoutingControl.READ,
        )
        return statement.convert(records)

    def floor(self) -> None:
        with self.driver.session(database=self.database) as session:
            session.run("RETURN 1").consume()

    def replay(self, query: str, params: dict[str, Any]) -> Any:
        with self.driver.session(
            database=self.database, default_access_mode=neo4j.READ_ACCESS
        ) as session:
            return [record.values() for record in session.run(query, params)]

    async def workers(self, count: int, seconds: float, work: Callable[[int], Thunk]) -> int:
        deadline = time.perf_counter() + seconds
        done = [0] * count

        def worker(index: int) -> None:
            while time.perf_counter() < deadline:
                work(index)()
                done[index] += 1

        threads = [threading.Thread(target=worker, args=(index,)) for index in range(count)]
        for thread in threads:
            thread.start()

        def join() -> None:
            for thread in threads:
                thread.join()

        await asyncio.to_thread(join)
        return sum(done)


async def open_twins(conn: Neo4jConnection, names: str) -> list[Twin]:
    """A set-up interface of each twin in ``names`` (``async``, ``sync``, comma-separated),
    each with a bare driver of its own flavour for the baseline, the floor and replays."""
    auth = (conn.username, conn.password)
    database = conn.database or None
    twins: list[Twin] = []
    for name in names.split(","):
        if name == "async":
            graph: Any = AsyncGraphInterface(conn.uri, *auth, conn.database)
            await graph.setup()
            driver: Any = neo4j.AsyncGraphDatabase.driver(conn.uri, auth=auth)
            twins.append(AsyncTwin(graph, driver, database))
        else:
            graph = SyncGraphInterface(conn.uri, *auth, conn.database)
            graph.setup()
            driver = neo4j.GraphDatabase.driver(conn.uri, auth=auth)
            twins.append(SyncTwin(graph, driver, database))
    return twins


# -- baseline statements ---------------------------------------------------------------------


def found(records: list[neo4j.Record]) -> Any:
    if not records:
        raise LookupError("not found")
    return records[0]["found"]


def native(value: Any) -> Any:
    """A neo4j temporal as Python's, anything else as it is."""
    return value.to_native() if hasattr(value, "to_native") else value


def memory_model(data: dict[str, Any]) -> models.Memory:
    sources = [models.MessageBlock(**source) for source in data["message_sources"]]
    fields = {key: native(value) for key, value in data.items() if key != "message_sources"}
    return models.Memory(**fields, message_sources=sources)


def interaction_model(data: dict[str, Any]) -> models.Interaction:
    return models.Interaction(
        org_id=data["org_id"],
        user_id=data["user_id"],
        agent_id=data["agent_id"],
        interaction_id=data["interaction_id"],
        created_at=native(data["created_at"]),
        updated_at=native(data["updated_at"]),
        messages=[models.MessageBlock(**message) for message in data["messages"]],
        memories=[memory_model(memory) for memory in data["memories"]],
    )


def written(records: list[neo4j.Record]) -> tuple[str, datetime]:
    if not records:
        raise LookupError("nothing written")
    return records[0]["interaction_id"], native(records[0]["at"])


def save_statement(org_id: str, user_id: str, given: Spec) -> Statement:
    params = {"org_id": org_id, "user_id": user_id, "rows": [given.row()]}
    return Statement(SAVE_STATEMENT, params, True, written)


def update_statement(org_id: str, user_id: str, interaction_id: str, given: Spec) -> Statement:
    params = {
        "org_id": org_id,
        "user_id": user_id,
        "interaction_id": interaction_id,
        "row": given.row(interaction_id),
    }
    return Statement(UPDATE_STATEMENT, params, True, written)


def get_user_statement(org_id: str, user_id: str) -> Statement:
    def convert(records: list[neo4j.Record]) -> models.User:
        data = found(records)
        return models.User(**{key: native(value) for key, value in data.items()})

    return Statement(GET_USER_STATEMENT, {"org_id": org_id, "user_id": user_id}, False, convert)


def org_agents_statement(org_id: str) -> Statement:
    def convert(records: list[neo4j.Record]) -> list[models.Agent]:
        return [
            models.Agent(**{key: native(value) for key, value in agent.items()})
            for agent in found(records)
        ]

    return Statement(ORG_AGENTS_STATEMENT, {"org_id": org_id}, False, convert)


def interactions_statement(
    org_id: str, user_id: str, with_messages: bool, with_memories: bool, skip: int, limit: int
) -> Statement:
    params = {
        "org_id": org_id,
        "user_id": user_id,
        "with_messages": with_messages,
        "with_memories": with_memories,
        "skip": skip,
        "limit": limit,
    }
    return Statement(
        INTERACTIONS_STATEMENT,
        params,
        False,
        lambda records: [interaction_model(data) for data in found(records)],
    )


def memories_statement(org_id: str, user_id: str, skip: int, limit: int) -> Statement:
    params = {"org_id": org_id, "user_id": user_id, "skip": skip, "limit": limit}
    return Statement(
        MEMORIES_STATEMENT,
        params,
        False,
        lambda records: [memory_model(data) for data in found(records)],
    )


# -- measuring ---------------------------------------------------------------------------------


@dataclass
class Samples:
    wall: list[float] = field(default_factory=list)
    cpu: list[float] = field(default_factory=list)
    statements: set[int] = field(default_factory=set)

    def clear(self) -> None:
        self.wall.clear()
        self.cpu.clear()
        self.statements.clear()

    @property
    def median(self) -> float:
        return statistics.median(self.wall)

    @property
    def p95(self) -> float:
        ordered = sorted(self.wall)
        return ordered[max(0, math.ceil(0.95 * len(ordered)) - 1)]

    @property
    def cpu_median(self) -> float:
        return statistics.median(self.cpu)

    @property
    def counts(self) -> str:
        low, high = min(self.statements), max(self.statements)
        return str(low) if low == high else f"{low}-{high}"


@dataclass(frozen=True)
class Case:
    name: str
    ogm: Prepare
    baseline: Prepare | None = None
    #: With a baseline: what of a result must be the same for both (the first run checks).
    compared: Callable[[Twin, Any], Awaitable[Any]] | None = None


def fixed(call: Callable[[Twin], Thunk]) -> Prepare:
    """A prepare with nothing to set up."""

    async def prepare(twin: Twin, _: int) -> Thunk:
        return call(twin)

    return prepare


def replay(query: str, params: dict[str, Any]) -> Prepare:
    """A prepare sending ``query`` again through the twin's bare driver."""
    return fixed(lambda twin: lambda: twin.replay(query, params))


class Bench:
    def __init__(self, repeat: int, fast_repeat: int) -> None:
        self.repeat = repeat
        self.fast_repeat = fast_repeat
        self.counter = StatementCounter()
        self.tracing = Tracing()
        self.floors: dict[str, Samples] = {}
        self.mismatches: list[str] = []

    async def time(
        self, label: str, thunk: Thunk, samples: Samples, capturing: bool = False
    ) -> Any:
        thunk = self.tracing.mode(label, thunk)
        self.counter.reset(capturing)
        wall, cpu = time.perf_counter(), time.thread_time()
        result = await settle(thunk())
        samples.cpu.append(time.thread_time() - cpu)
        samples.wall.append(time.perf_counter() - wall)
        samples.statements.add(self.counter.count)
        return result

    async def measure(self, twin: Twin, case: Case) -> dict[str, Samples]:
        """Runs (after one warm-up) of the floor, the method and its baseline, in an order
        that rotates each run so drifting load hits them alike: ``repeat`` of them, or
        ``fast_repeat`` for a method whose warm-up took under ``FAST`` (a few samples of
        a sub-millisecond call say little on a noisy machine). A method that ran one
        auto-commit read also has that ``statement`` timed alone, sent by the bare
        driver the same way: what the statement costs, apart from the layer. The method
        runs ``untraced`` and traced into the ``sdk`` too (see :class:`Tracing`)."""
        prepares: dict[str, Prepare] = {
            "floor": fixed(lambda t: t.floor),
            "ogm": case.ogm,
            "untraced": case.ogm,
            "sdk": case.ogm,
        }
        if case.baseline is not None:
            prepares["baseline"] = case.baseline
        samples = {label: Samples() for label in prepares}
        results: dict[str, Any] = {}
        for label, prepare in list(prepares.items()):
            thunk = await prepare(self.tracing.twin(twin, label), 0)
            results[label] = await self.time(label, thunk, samples[label], capturing=label == "ogm")
            if label == "ogm" and self.counter.count == 1 and len(self.counter.reads) == 1:
                prepares["statement"] = replay(*self.counter.reads[0])
        if case.compared is not None:
            ogm = await case.compared(twin, results["ogm"])
            baseline = await case.compared(twin, results["baseline"])
            if ogm != baseline:
                self.mismatches.append(f"{twin.name} {case.name}")
        repeat = self.fast_repeat if samples["ogm"].wall[0] < FAST else self.repeat
        samples = {label: Samples() for label in prepares}
        labels = list(prepares)
        for run in range(1, repeat + 1):
            for label in labels[run % len(labels) :] + labels[: run % len(labels)]:
                thunk = await prepares[label](self.tracing.twin(twin, label), run)
                await self.time(label, thunk, samples[label])
        self.floors.setdefault(twin.name, Samples())
        self.floors[twin.name].wall.extend(samples["floor"].wall)
        observe.observer = None
        return samples

    async def throughput(
        self,
        twin: Twin,
        seconds: float,
        rounds: int,
        workers: int,
        layers: dict[str, Callable[[int], Thunk]],
    ) -> dict[str, float]:
        """Calls per second of each layer, in rounds that alternate their order."""
        done = dict.fromkeys(layers, 0)
        names = list(layers)
        for round_ in range(rounds):
            for name in names if round_ % 2 == 0 else names[::-1]:
                done[name] += await twin.workers(workers, seconds, layers[name])
        return {name: count / (seconds * rounds) for name, count in done.items()}


#: A method faster than this (its warm-up run) gets ``--fast-repeat`` runs.
FAST = 0.005


def ms(value: float) -> str:
    return f"{value * 1000:7.2f}"


HEADER = (
    f"{'method':<52} {'twin':<5} {'median':>7} {'p95':>7} {'cpu':>7} {'stmts':>5} "
    f"{'xfloor':>6} {'s.xfl':>5} {'api':>5} {'sdk':>5} {'+api':>5} {'+sdk':>5} |"
    f" {'base':>7} {'b.cpu':>7} {'b.st':>4} {'xbase':>5}"
)


def report(name: str, twin: Twin, samples: dict[str, Samples]) -> str:
    ogm, floor = samples["ogm"], samples["floor"]
    line = (
        f"{name:<52} {twin.name:<5} {ms(ogm.median)} {ms(ogm.p95)} {ms(ogm.cpu_median)} "
        f"{ogm.counts:>5} {ogm.median / floor.median:6.2f}"
    )
    statement = samples.get("statement")
    line += f" {statement.median / floor.median:5.2f}" if statement is not None else " " * 6
    untraced, sdk = samples["untraced"], samples["sdk"]
    line += f" {ogm.median / untraced.median:5.3f} {sdk.median / untraced.median:5.3f}"
    line += f" {(ogm.cpu_median - untraced.cpu_median) * 1e6:5.0f}"
    line += f" {(sdk.cpu_median - untraced.cpu_median) * 1e6:5.0f}"
    base = samples.get("baseline")
    if base is not None:
        line += (
            f" | {ms(base.median)} {ms(base.cpu_median)} {base.counts:>4} "
            f"{ogm.median / base.median:5.2f}"
        )
    return line


# -- the cases ---------------------------------------------------------------------------------


def cases(world: World, loader: Loader) -> list[Case]:
    org, user = world.org_id, world.user
    scratch = world.scratch_org
    first_agent = world.agents[0]
    memories = world.memories
    chain_ends = [memories[n][0] for n in range(CHAIN - 1, len(memories), CHAIN)]
    chain_starts = [
        {"org_id": org, "user_id": user, "memory_id": memories[n][0]}
        for n in range(0, len(memories), CHAIN)
    ][:20]
    shown = world.interactions[-1]

    def save_spec() -> Spec:
        contrary = memories[next(world.supersedable)][1]
        return spec(user, first_agent, world.now(), "saved", contrary=contrary)

    async def save(twin: Twin, _: int) -> Thunk:
        model = save_spec().model()
        return lambda: twin.graph.save_interaction_with_memories(org, first_agent, user, model)

    async def save_baseline(twin: Twin, _: int) -> Thunk:
        statement = save_statement(org, user, save_spec())
        return lambda: twin.execute(statement)

    def update_spec() -> tuple[str, Spec]:
        n = next(world.updatable)
        # the stored messages and one more, two new memories citing the new one
        messages = conversation(f"i{n}") + [{"role": "user", "content": f"one more message {n}"}]
        made: list[tuple[str, list[int], str | None]] = [
            (f"user_{user} added fact {k} for agent_{first_agent}", [MESSAGES], None)
            for k in range(2)
        ]
        return world.interactions[n], Spec(first_agent, world.now(), messages, made)

    async def update(twin: Twin, _: int) -> Thunk:
        interaction_id, given = update_spec()
        model = given.model()
        return lambda: twin.graph.update_interaction_and_memories(
            org, first_agent, user, interaction_id, model
        )

    async def update_baseline(twin: Twin, _: int) -> Thunk:
        statement = update_statement(org, user, *update_spec())
        return lambda: twin.execute(statement)

    async def doomed_org(twin: Twin, run: int) -> Thunk:
        made = await loader.org(f"{world.prefix} doomed {run}", 1, 1)
        return lambda: twin.graph.delete_organization(made.org_id)

    async def doomed_agent(twin: Twin, run: int) -> Thunk:
        made = await settle(twin.graph.create_agent(scratch, f"doomed {run}"))
        return lambda: twin.graph.delete_agent(scratch, made.agent_id)

    async def doomed_user(twin: Twin, run: int) -> Thunk:
        made = await settle(twin.graph.create_user(scratch, f"doomed {run}"))
        return lambda: twin.graph.delete_user(scratch, made.user_id)

    async def user_with_history(run: int) -> str:
        """A scratch user with five interactions (10 messages, 4 memories)."""
        made = shortuuid.uuid()
        users = [{"id": made, "name": f"Doomed {run}"}]
        await loader.run(USERS_STATEMENT, org_id=scratch, at=START, users=users)
        rows = [
            spec(made, world.scratch_agent, START + timedelta(days=k), f"d{k}").row()
            for k in range(5)
        ]
        await loader.save(scratch, made, rows)
        return made

    async def doomed_interactions(twin: Twin, run: int) -> Thunk:
        made = await user_with_history(run)
        return lambda: twin.graph.delete_all_user_interactions_and_their_memories(scratch, made)

    async def doomed_memories(twin: Twin, run: int) -> Thunk:
        made = await user_with_history(run)
        return lambda: twin.graph.delete_all_user_memories(scratch, made)

    async def doomed_interaction(twin: Twin, _: int) -> Thunk:
        row = spec(user, first_agent, world.now(), "doomed").row()
        await loader.save(org, user, [row])
        return lambda: twin.graph.delete_user_interaction_and_its_memories(org, user, row["id"])

    async def doomed_memory(twin: Twin, _: int) -> Thunk:
        row = spec(user, first_agent, world.now(), "doomed").row()
        await loader.save(org, user, [row])
        memory_id = row["memories"][0]["id"]
        return lambda: twin.graph.delete_user_memory(org, user, memory_id)

    async def as_is(_: Twin, result: Any) -> Any:
        return result

    async def by_agent(_: Twin, agents: list[models.Agent]) -> list[models.Agent]:
        return sorted(agents, key=lambda agent: agent.agent_id)

    async def shape(twin: Twin, written: tuple[str, datetime]) -> Any:
        """What a write left, read back through the facade, without ids, text and times:
        the agent, the chain's positions and roles, the memories' message sources."""
        found = await settle(twin.graph.get_interaction(org, user, written[0]))
        return (
            found.agent_id,
            [(message.msg_position, message.role) for message in found.messages or []],
            sorted(
                [source.msg_position for source in memory.message_sources or []]
                for memory in found.memories or []
            ),
        )

    def baseline(make: Callable[[], Statement]) -> Prepare:
        return fixed(lambda twin: lambda: twin.execute(make()))

    def call(method: str, *args: Any) -> Prepare:
        return fixed(lambda twin: lambda: getattr(twin.graph, method)(*args))

    return [
        Case("setup", call("setup")),
        Case("migrate_to_schema_for_memora_v0_3_x", call("migrate_to_schema_for_memora_v0_3_x")),
        Case("get_associated_vector_db", call("get_associated_vector_db")),
        Case("create_organization", call("create_organization", f"{world.prefix} created")),
        Case("get_organization", call("get_organization", org)),
        Case("get_all_organizations", call("get_all_organizations")),
        Case(
            "update_organization", call("update_organization", scratch, f"{world.prefix} scratch")
        ),
        Case("delete_organization (1 user, 1 agent)", doomed_org),
        Case("create_agent", call("create_agent", scratch, "Created agent")),
        Case("get_agent", call("get_agent", org, first_agent)),
        Case(
            f"get_all_org_agents ({len(world.agents) + len(world.user_agents)})",
            call("get_all_org_agents", org),
            baseline(lambda: org_agents_statement(org)),
            by_agent,
        ),
        Case("get_all_user_agents", call("get_all_user_agents", org, user)),
        Case("update_agent", call("update_agent", scratch, world.scratch_agent, "Renamed agent")),
        Case("delete_agent", doomed_agent),
        Case("create_user", call("create_user", scratch, "Created user")),
        Case(
            "get_user",
            call("get_user", org, user),
            baseline(lambda: get_user_statement(org, user)),
            as_is,
        ),
        Case(f"get_all_org_users ({len(world.users)})", call("get_all_org_users", org)),
        Case("update_user", call("update_user", scratch, world.scratch_user, "Renamed user")),
        Case("delete_user (no interactions)", doomed_user),
        Case(
            f"save_interaction_with_memories ({MESSAGES} msgs, {MEMORIES} mems)",
            save,
            save_baseline,
            shape,
        ),
        Case("update_interaction_and_memories (+1 msg, 2 mems)", update, update_baseline, shape),
        Case("get_interaction (messages, memories)", call("get_interaction", org, user, shown)),
        Case(
            "get_all_user_interactions p1 (20, msgs+mems)",
            call("get_all_user_interactions", org, user, True, True, 0, 20),
            baseline(lambda: interactions_statement(org, user, True, True, 0, 20)),
            as_is,
        ),
        Case(
            "get_all_user_interactions p1 (20, bare)",
            call("get_all_user_interactions", org, user, False, False, 0, 20),
            baseline(lambda: interactions_statement(org, user, False, False, 0, 20)),
            as_is,
        ),
        Case("delete_user_interaction_and_its_memories", doomed_interaction),
        Case("delete_all_user_interactions_and_their_memories (5)", doomed_interactions),
        Case(
            "get_all_user_memories p1 (50)",
            call("get_all_user_memories", org, user, None, 0, 50),
            baseline(lambda: memories_statement(org, user, 0, 50)),
            as_is,
        ),
        Case(
            "get_all_user_memories skip 500 (50)",
            call("get_all_user_memories", org, user, None, 500, 50),
        ),
        Case("get_user_memory", call("get_user_memory", org, user, chain_ends[0])),
        Case(
            f"get_user_memory_history (chain of {CHAIN})",
            call("get_user_memory_history", org, user, chain_ends[0]),
        ),
        Case(
            f"fetch_user_memories_resolved ({len(chain_starts)} ids)",
            call("fetch_user_memories_resolved", chain_starts),
        ),
        Case(
            "fetch_user_memories_resolved_batch (5 lists)",
            call("fetch_user_memories_resolved_batch", [chain_starts] * 5),
        ),
        Case("delete_user_memory", doomed_memory),
        Case("delete_all_user_memories (5 interactions)", doomed_memories),
    ]


def save_layers(
    world: World, twin: Twin, workers: int, shared: bool
) -> dict[str, Callable[[int], Thunk]]:
    """memora-ogm's save and the baseline's, for the worker ``index``: each call builds its
    arguments from the worker's ``Spec`` (a model for one, parameters with new ids for the
    other), as an application would."""
    org, agent, when = world.org_id, world.agents[0], world.now()
    users = [world.user if shared else world.users[1 + index] for index in range(workers)]
    specs = [spec(users[index], agent, when, f"w{index}") for index in range(workers)]

    def ogm(index: int) -> Thunk:
        return lambda: twin.graph.save_interaction_with_memories(
            org, agent, users[index], specs[index].model()
        )

    def baseline(index: int) -> Thunk:
        return lambda: twin.execute(save_statement(org, users[index], specs[index]))

    return {"memora-ogm": ogm, "baseline": baseline}


async def run(options: argparse.Namespace) -> None:
    bench = Bench(options.repeat, options.fast_repeat)
    prefix = f"bench-api-{shortuuid.uuid()[:8]}"
    with connect_or_start() as conn:
        auth = (conn.username, conn.password)
        database = conn.database or None
        loader = Loader(neo4j.AsyncGraphDatabase.driver(conn.uri, auth=auth), database)
        twins = await open_twins(conn, options.twins)
        try:
            rust = getattr(packstream, "_rust_pack", None) is not None
            codec = "Rust (neo4j-rust-ext)" if rust else "pure Python"
            print(f"neo4j driver {neo4j.__version__}, PackStream codec: {codec}")
            started = time.perf_counter()
            world = await loader.org(f"{prefix} main", options.users, options.agents, user_agents=2)
            world.prefix = prefix
            await loader.history(world, options.interactions)
            scratch = await loader.org(f"{prefix} scratch", 1, 1)
            world.scratch_org, world.scratch_user = scratch.org_id, scratch.users[0]
            world.scratch_agent = scratch.agents[0]
            print(
                f"loaded {options.users} users, {options.agents} agents, {options.interactions:,}"
                f" interactions x ({MESSAGES} msgs, {MEMORIES} mems) for one user"
                f" in {time.perf_counter() - started:.1f} s; {options.repeat} runs per method"
                f" ({options.fast_repeat} when under {FAST * 1000:g} ms)\n"
            )
            print(HEADER)
            for case in cases(world, loader):
                for twin in twins:
                    print(report(case.name, twin, await bench.measure(twin, case)), flush=True)
            print()
            for twin in twins:
                floor = bench.floors[twin.name]
                print(
                    f"Bolt floor ({twin.name}, RETURN 1 auto-commit):"
                    f" median {ms(floor.median)} ms, p95 {ms(floor.p95)} ms"
                )
            if bench.mismatches:
                print("baseline and memora-ogm returned different results:", bench.mismatches)
            else:
                print("baseline and memora-ogm return the same reads and write the same shapes")
            print(
                f"\nthroughput: saves/s ({MESSAGES} msgs, {MEMORIES} mems), {options.workers}"
                f" workers, {options.rounds} alternating rounds of {options.seconds:g} s"
            )
            for shared in (False, True):
                for twin in twins:
                    rates = await bench.throughput(
                        twin,
                        options.seconds,
                        options.rounds,
                        options.workers,
                        save_layers(world, twin, options.workers, shared),
                    )
                    workload = "one shared user" if shared else "a user per worker"
                    print(
                        f"  {workload:<18} {twin.name:<5} memora-ogm {rates['memora-ogm']:7.1f}"
                        f"  baseline {rates['baseline']:7.1f}"
                        f"  ratio {rates['memora-ogm'] / rates['baseline']:.2f}",
                        flush=True,
                    )
        finally:
            await loader.cleanup(prefix)
            for twin in twins:
                await twin.close()
            await loader.driver.close()


#: (default, with --quick) of the options --quick shortens.
SIZES = {
    # Each timed save and update takes an interaction of its own: a method under 5 ms runs
    # 26 times, untraced, traced twice and as its baseline, in both twins (208).
    "interactions": (1_000, 300),
    "repeat": (25, 5),
    "fast_repeat": (200, 25),
    "seconds": (3.0, 1.0),
    "rounds": (3, 2),
}


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--interactions", type=int, help="of the main user (1,000)")
    parser.add_argument("--users", type=int, default=100, help="users of the organisation")
    parser.add_argument("--agents", type=int, default=100, help="org agents")
    parser.add_argument("--repeat", type=int, help="timed runs per method and twin (25)")
    parser.add_argument("--fast-repeat", type=int, help="timed runs of a method under 5 ms (200)")
    parser.add_argument("--twins", default="async,sync", help="async, sync or both")
    parser.add_argument("--workers", type=int, default=8, help="concurrent savers")
    parser.add_argument("--seconds", type=float, help="per throughput round (3)")
    parser.add_argument("--rounds", type=int, help="throughput rounds per layer (3)")
    parser.add_argument(
        "--quick",
        action="store_true",
        help="defaults of 300 interactions, 5 runs (25 under 5 ms), 2 rounds of 1 s",
    )
    options = parser.parse_args()
    for name, sizes in SIZES.items():
        if getattr(options, name) is None:
            setattr(options, name, sizes[options.quick])
    asyncio.run(run(options))


if __name__ == "__main__":
    main()
