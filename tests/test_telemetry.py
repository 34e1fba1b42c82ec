"""OpenTelemetry spans and the duration metric of facade calls (issue 34), on a real Neo4j.

The providers are the SDK's, handed to ``MemoraInstrumentor().instrument`` (OpenTelemetry's
global providers can be set once per process, and stay the API's here): spans go to an
in-memory exporter, the metric to an in-memory reader. The statements a span reports
are checked against those the driver was sent, recorded at the driver's ``run``.
"""

from __future__ import annotations

import inspect
import subprocess
import sys
from collections.abc import AsyncIterator, Callable, Iterator
from typing import Any
from urllib.parse import urlsplit

import pytest
from flask import Flask
from interaction_helpers import World, chat, conversation, make_world, save
from lost_replies import ReplyLosingProxy
from neo4j import AsyncSession, Driver, Session
from neo4j._async.work.transaction import AsyncTransactionBase
from neo4j._sync.work.transaction import TransactionBase
from neo4j.exceptions import TransientError
from opentelemetry.sdk.metrics import Histogram, MeterProvider
from opentelemetry.sdk.metrics.export import (
    AggregationTemporality,
    HistogramDataPoint,
    InMemoryMetricReader,
)
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind, StatusCode
from sync_adapter import AwaitableTwin
from transfer_helpers import build_organisation, records_of

from memora_ogm import UserNotFound, observe, sync
from memora_ogm._async.interface import Neo4jGraphInterface
from memora_ogm._async.vector_base import BaseVectorDB
from memora_ogm.contrib.flask import MemoraOGM, state
from memora_ogm.server import Neo4jConnection
from memora_ogm.telemetry import MemoraInstrumentor
from memora_ogm.testing import clear_database
from memora_ogm.vector_db.embedding import HashingEmbedding
from memora_ogm.vector_db.qdrant import QdrantDB
from memora_ogm.vector_db.scope import MemorySearchScope

#: Values a caller passes, which no span may ever carry.
SECRET_MESSAGE = "my locker code is 4711"
SECRET_MEMORY = "keeps the spare key under the blue pot"
SECRET_USER = "Zebedee Quillfeather"
SECRET_ORG = "Hushhush Holdings"


class Telemetry:
    """The SDK's providers with in-memory outputs, given to memora-ogm."""

    def __init__(self) -> None:
        self.exporter = InMemorySpanExporter()
        self.tracer_provider = TracerProvider()
        self.tracer_provider.add_span_processor(SimpleSpanProcessor(self.exporter))
        # Delta: each read has the calls since the one before.
        self.reader = InMemoryMetricReader({Histogram: AggregationTemporality.DELTA})
        self.meter_provider = MeterProvider(metric_readers=[self.reader])

    def spans(self) -> list[ReadableSpan]:
        """The spans ended since the last call, in the order they ended."""
        spans = list(self.exporter.get_finished_spans())
        self.exporter.clear()
        return spans

    def points(self) -> list[tuple[dict[str, Any], HistogramDataPoint]]:
        """The duration histogram's points (one per attribute set) since the last read,
        each with its attributes."""
        data = self.reader.get_metrics_data()
        points: list[tuple[dict[str, Any], HistogramDataPoint]] = []
        for resource in data.resource_metrics if data else []:
            for scope in resource.scope_metrics:
                for metric in scope.metrics:
                    assert (metric.name, metric.unit) == ("db.client.operation.duration", "s")
                    for point in metric.data.data_points:
                        assert isinstance(point, HistogramDataPoint)
                        points.append((dict(point.attributes or {}), point))
        return points


@pytest.fixture
def otel() -> Iterator[Telemetry]:
    outputs = Telemetry()
    MemoraInstrumentor().instrument(
        tracer_provider=outputs.tracer_provider, meter_provider=outputs.meter_provider
    )
    yield outputs
    MemoraInstrumentor().uninstrument()


class Sent:
    """The statement texts the driver was sent, by either twin."""

    def __init__(self) -> None:
        self.texts: list[str] = []

    def wrap(self, run: Callable[..., Any]) -> Callable[..., Any]:
        sent = self

        def recorded(self: Any, query: Any, parameters: Any = None, **kwargs: Any) -> Any:
            sent.texts.append(str(query))
            return run(self, query, parameters, **kwargs)

        return recorded

    def take(self) -> list[str]:
        texts, self.texts = self.texts, []
        return texts


@pytest.fixture
def sent(monkeypatch: pytest.MonkeyPatch) -> Sent:
    recorder = Sent()
    for cls in (AsyncSession, AsyncTransactionBase, Session, TransactionBase):
        monkeypatch.setattr(cls, "run", recorder.wrap(cls.run))
    return recorder


def query_text(texts: list[str]) -> str:
    """``db.query.text`` of a call that sent ``texts``: each distinct one once, in order."""
    return "; ".join(dict.fromkeys(texts))


def facade(twin: str, uri: str, conn: Neo4jConnection, vectors: bool = False) -> Any:
    """The async facade, or the sync one dressed as async, optionally with a vector store."""
    args = (uri, conn.username, conn.password, conn.database)
    if twin == "async":
        store: Any = QdrantDB(embedding_function=HashingEmbedding()) if vectors else None
        return Neo4jGraphInterface(*args, store)
    store = sync.QdrantDB(embedding_function=HashingEmbedding()) if vectors else None
    return AwaitableTwin(sync.Neo4jGraphInterface(*args, store), Neo4jGraphInterface)


@pytest.fixture(params=["async", "sync"])
async def memora(
    request: pytest.FixtureRequest, neo4j_connection: Neo4jConnection, neo4j_driver: Driver
) -> AsyncIterator[Any]:
    """A facade with an in-memory vector store, on an emptied graph."""
    clear_database(neo4j_driver, neo4j_connection.database)
    interface = facade(request.param, neo4j_connection.uri, neo4j_connection, vectors=True)
    await interface.setup()
    yield interface
    await interface.close()


def server(conn: Neo4jConnection, uri: str | None = None) -> dict[str, Any]:
    """The attributes every span of a graph call carries."""
    parts = urlsplit(uri or conn.uri)
    return {
        "db.system.name": "neo4j",
        "db.namespace": conn.database,
        "server.address": parts.hostname,
        "server.port": parts.port or 7687,
    }


def named(operation: str) -> dict[str, str]:
    return {"db.operation.name": operation, "db.query.summary": operation}


def vector_span(span: ReadableSpan, operation: str, parent: ReadableSpan) -> None:
    """``span`` is the vector store's ``operation``, a child of ``parent``."""
    assert span.name == operation
    assert span.kind is SpanKind.CLIENT
    assert dict(span.attributes or {}) == {
        "db.system.name": "qdrant",
        "db.collection.name": "memora_ogm_memories",
        **named(operation),
    }
    assert span.parent is not None and parent.context is not None
    assert span.parent.span_id == parent.context.span_id


def vectors_of(memora: Any) -> Any:
    """The facade's vector store, dressed as async like the facade."""
    store = memora.associated_vector_db
    return AwaitableTwin(store, QdrantDB) if isinstance(memora, AwaitableTwin) else store


async def world_with_a_save(memora: Any) -> World:
    """A tenant with one saved interaction (the first save asks the server about APOC)."""
    world = await make_world(memora)
    await save(memora, world, conversation(chat("hello"), memories=[("greets", [0])]))
    return world


async def test_a_save_is_one_client_span_with_the_statement_as_sent(
    memora: Any, otel: Telemetry, sent: Sent, neo4j_connection: Neo4jConnection
) -> None:
    world = await world_with_a_save(memora)
    otel.spans(), otel.points(), sent.take()

    data = conversation(chat(SECRET_MESSAGE, "Noted"), memories=[(SECRET_MEMORY, [0])])
    await save(memora, world, data)

    add, call = otel.spans()
    assert call.name == "save_interaction_with_memories"
    assert call.kind is SpanKind.CLIENT
    assert call.status.status_code is StatusCode.UNSET
    assert call.parent is None
    attributes = dict(call.attributes or {})
    assert attributes == {
        **server(neo4j_connection),
        **named("save_interaction_with_memories"),
        "db.query.text": query_text(sent.take()),
    }
    assert "$" in str(attributes["db.query.text"])
    vector_span(add, "add_memories", call)
    (point,) = [p for a, p in otel.points() if a["db.system.name"] == "neo4j"]
    assert dict(point.attributes or {}) == {
        **server(neo4j_connection),
        **named("save_interaction_with_memories"),
    }
    assert point.count == 1 and 0 < point.sum < 10


async def test_a_paged_read(
    memora: Any, otel: Telemetry, sent: Sent, neo4j_connection: Neo4jConnection
) -> None:
    world = await world_with_a_save(memora)
    await save(memora, world, conversation(chat("again")))
    otel.spans(), sent.take()

    page = await memora.get_all_user_interactions(world.org_id, world.user_id, skip=1, limit=1)

    assert len(page) == 1
    (call,) = otel.spans()
    assert call.name == "get_all_user_interactions"
    assert dict(call.attributes or {}) == {
        **server(neo4j_connection),
        **named("get_all_user_interactions"),
        "db.query.text": query_text(sent.take()),
    }


async def test_a_call_that_fails_says_what_with(
    memora: Any, otel: Telemetry, neo4j_connection: Neo4jConnection
) -> None:
    world = await world_with_a_save(memora)
    otel.spans(), otel.points()

    with pytest.raises(UserNotFound):
        await memora.get_user(world.org_id, "no-such-user")

    (call,) = otel.spans()
    assert call.name == "get_user"
    assert call.status.status_code is StatusCode.ERROR
    assert call.status.description is None  # an error's message may hold a caller's values
    assert call.events == ()
    attributes = dict(call.attributes or {})
    assert attributes.pop("db.query.text")
    assert attributes == {
        **server(neo4j_connection),
        **named("get_user"),
        "error.type": "memora_ogm.errors.UserNotFound",
    }
    ((measured, _),) = otel.points()
    assert measured["error.type"] == "memora_ogm.errors.UserNotFound"


async def test_a_bad_argument_fails_before_any_statement(memora: Any, otel: Telemetry) -> None:
    with pytest.raises(ValueError):
        await memora.get_user("", "")
    (call,) = otel.spans()
    assert call.attributes is not None and call.attributes["error.type"] == "ValueError"
    assert "db.query.text" not in call.attributes


async def test_a_retried_write_shows_its_retry_and_the_vector_changes_undone(
    memora: Any, otel: Telemetry, sent: Sent
) -> None:
    world = await world_with_a_save(memora)
    graph = memora.graph
    graph.base_backoff = 0.001
    commit = graph.commit
    failed: list[bool] = []

    def fail_once() -> None:
        if not failed:
            failed.append(True)
            raise TransientError("a deadlock, once")

    if inspect.iscoroutinefunction(commit):

        async def failing_commit(transaction: Any) -> None:
            fail_once()
            await commit(transaction)

        graph.commit = failing_commit
    else:

        def failing_sync_commit(transaction: Any) -> None:
            fail_once()
            commit(transaction)

        graph.commit = failing_sync_commit
    otel.spans(), sent.take()

    await save(memora, world, conversation(chat("I like tea"), memories=[("likes tea", [0])]))

    *changes, call = otel.spans()
    assert call.name == "save_interaction_with_memories"
    assert call.status.status_code is StatusCode.UNSET
    (retry,) = call.events
    assert retry.name == "memora.retry"
    assert retry.attributes is not None
    assert dict(retry.attributes).keys() == {"error.type", "memora.attempt", "memora.backoff"}
    assert retry.attributes["error.type"] == "neo4j.exceptions.TransientError"
    assert retry.attributes["memora.attempt"] == 1
    # Sent twice, reported once.
    texts = sent.take()
    assert len(texts) == 2 and len(set(texts)) == 1
    assert call.attributes is not None and call.attributes["db.query.text"] == texts[0]
    # Added, removed when the commit failed, added again.
    assert [span.name for span in changes] == ["add_memories", "delete_memories", "add_memories"]
    for span in changes:
        vector_span(span, span.name, call)


@pytest.fixture(scope="module")
def proxy(neo4j_connection: Neo4jConnection) -> Iterator[ReplyLosingProxy]:
    losing = ReplyLosingProxy(neo4j_connection.uri)
    yield losing
    losing.close()


@pytest.mark.parametrize("twin", ["async", "sync"])
async def test_an_unanswered_commit_is_resolved_as_an_event(
    twin: str,
    otel: Telemetry,
    proxy: ReplyLosingProxy,
    neo4j_connection: Neo4jConnection,
    neo4j_driver: Driver,
) -> None:
    clear_database(neo4j_driver, neo4j_connection.database)
    proxy.lose_next(0)
    memora = facade(twin, proxy.uri, neo4j_connection)
    await memora.setup()
    try:
        org = await memora.create_organization("Acme")
        otel.spans()
        proxy.lose_next()

        await memora.create_user(org.org_id, "Ann")

        (call,) = otel.spans()
        assert dict(call.attributes or {}).items() >= server(neo4j_connection, proxy.uri).items()
        assert [(event.name, dict(event.attributes or {})) for event in call.events] == [
            ("memora.commit_outcome", {"memora.landed": True})
        ]
        assert call.status.status_code is StatusCode.UNSET
    finally:
        await memora.close()


async def test_an_export_and_an_import_report_their_batches(
    memora: Any, otel: Telemetry, sent: Sent, neo4j_connection: Neo4jConnection
) -> None:
    org = await build_organisation(memora)
    otel.spans(), sent.take()

    records = await records_of(memora.export_organization(org.org_id))

    (export,) = otel.spans()
    texts = sent.take()
    pages = [text for text in texts if "LIMIT $limit" in text]  # after the organisation's read
    assert len(pages) == len(texts) - 1 > 1
    assert export.name == "export_organization"
    assert dict(export.attributes or {}) == {
        **server(neo4j_connection),
        **named("export_organization"),
        "db.query.text": query_text(texts),
        "db.operation.batch.size": len(pages),
    }

    memora.erase_batch_size = 1
    await memora.delete_organization(org.org_id)
    *removals, erasure = otel.spans()
    batches = sent.take()
    assert erasure.attributes is not None
    assert erasure.attributes["db.operation.batch.size"] == len(batches) > 1
    assert removals[-1].name == "delete_all_organization_memories"  # the last batch's purge
    for span in removals:
        vector_span(span, span.name, erasure)

    written: list[int] = []
    await memora.import_records(records, progress=lambda done, total: written.append(done))

    *stores, imported = otel.spans()
    assert imported.name == "import_records"
    attributes = dict(imported.attributes or {})
    assert attributes.pop("db.query.text") == query_text(sent.take())
    assert attributes == {
        **server(neo4j_connection),
        **named("import_records"),
        "db.operation.batch.size": len(written),
    }
    assert len(written) > 1
    # A batch of one tenant's memories adds them as Memora's store does; one of several
    # tenants' in one write (the embedded store flushes each).
    assert stores and {span.name for span in stores} == {"add_memories", "add_memory_models"}
    for span in stores:
        vector_span(span, span.name, imported)


async def test_a_search_with_a_vector_store(memora: Any, otel: Telemetry) -> None:
    """Memora's search: the vector store's, then the graph's resolution of what it found,
    both under the application's span."""
    world = await world_with_a_save(memora)
    await save(memora, world, conversation(chat("tea"), memories=[("likes green tea", [0])]))
    store = vectors_of(memora)
    otel.spans()
    tracer = otel.tracer_provider.get_tracer("the application")

    with tracer.start_as_current_span("answer") as answer:
        found = await store.search_memory(
            "green tea", MemorySearchScope.USER, world.org_id, world.user_id
        )
        ids = [world.ids(memory.memory_id) for memory, _ in found]
        memories = await memora.fetch_user_memories_resolved(ids)

    assert [memory.memory for memory in memories][:1] == ["likes green tea"]
    search, resolve, application = otel.spans()
    assert application.name == "answer"
    vector_span(search, "search_memory", application)  # one span: not search_memories too
    assert resolve.name == "fetch_user_memories_resolved"
    assert (
        resolve.parent is not None and resolve.parent.span_id == answer.get_span_context().span_id
    )
    assert resolve.attributes is not None and resolve.attributes["db.system.name"] == "neo4j"


async def test_no_value_of_a_caller_is_ever_recorded(
    memora: Any, otel: Telemetry, neo4j_connection: Neo4jConnection
) -> None:
    org = await memora.create_organization(SECRET_ORG)
    user = await memora.create_user(org.org_id, SECRET_USER)
    agent = await memora.create_agent(org.org_id, "Bot")
    world = World(org.org_id, user.user_id, agent.agent_id)
    data = conversation(chat(SECRET_MESSAGE, "Noted"), memories=[(SECRET_MEMORY, [0])])
    interaction_id = await save(memora, world, data)
    await memora.get_interaction(world.org_id, world.user_id, interaction_id)
    await memora.update_user(world.org_id, world.user_id, SECRET_USER + " Jr")
    await memora.get_all_user_memories(world.org_id, world.user_id)
    await vectors_of(memora).search_memory(
        SECRET_MEMORY, MemorySearchScope.USER, world.org_id, world.user_id
    )
    records = await records_of(memora.export_user(world.org_id, world.user_id))
    with pytest.raises(UserNotFound):
        await memora.get_user(world.org_id, SECRET_USER)
    await memora.delete_organization(world.org_id)
    await memora.import_records(records)

    spans = otel.spans()
    assert {span.name for span in spans} >= {"create_user", "import_records", "search_memory"}
    secrets = (SECRET_MESSAGE, SECRET_MEMORY, SECRET_USER, SECRET_ORG, org.org_id, user.user_id)
    recorded = []
    for span in spans:
        recorded += [span.name, repr(span.status.description)]
        recorded += [repr(value) for value in (span.attributes or {}).values()]
        for event in span.events:
            recorded += [event.name, *map(repr, (event.attributes or {}).values())]
    recorded += [repr(measured) for measured, _ in otel.points()]
    leaks = [text for text in recorded for secret in secrets if secret in text]
    assert leaks == []


async def test_tenant_ids_are_recorded_on_request_only(
    memora: Any, otel: Telemetry, neo4j_connection: Neo4jConnection
) -> None:
    world = await world_with_a_save(memora)
    MemoraInstrumentor().instrument(
        tracer_provider=otel.tracer_provider,
        meter_provider=otel.meter_provider,
        record_tenant_ids=True,
    )
    otel.spans(), otel.points()

    await memora.get_user(world.org_id, world.user_id)
    await memora.get_organization(org_id=world.org_id)

    user, org = otel.spans()
    assert user.attributes is not None and org.attributes is not None
    assert (user.attributes["memora.org_id"], user.attributes["memora.user_id"]) == (
        world.org_id,
        world.user_id,
    )
    assert org.attributes["memora.org_id"] == world.org_id
    assert "memora.user_id" not in org.attributes
    for measured, _ in otel.points():
        assert not {"memora.org_id", "memora.user_id"} & set(measured)


async def test_nothing_is_recorded_once_uninstrumented(memora: Any, otel: Telemetry) -> None:
    world = await world_with_a_save(memora)
    otel.spans(), otel.points()
    instrumentor = MemoraInstrumentor()
    assert instrumentor.is_instrumented_by_opentelemetry

    await memora.get_user(world.org_id, world.user_id)
    assert [span.name for span in otel.spans()] == ["get_user"]
    assert [(labels["db.operation.name"], point.count) for labels, point in otel.points()] == [
        ("get_user", 1)
    ]

    instrumentor.uninstrument()
    assert observe.observer is None
    assert not MemoraInstrumentor().is_instrumented_by_opentelemetry  # no instance's state
    await memora.get_user(world.org_id, world.user_id)
    await vectors_of(memora).search_memory(
        "hello", MemorySearchScope.USER, world.org_id, world.user_id
    )
    records = await records_of(memora.export_user(world.org_id, world.user_id))
    assert len(records) > 1
    assert otel.spans() == []
    assert otel.points() == []


async def test_the_metric_alone(memora: Any, otel: Telemetry) -> None:
    """A meter provider and no tracer provider: every call measured, none traced."""
    world = await world_with_a_save(memora)
    MemoraInstrumentor().instrument(meter_provider=otel.meter_provider)
    otel.spans(), otel.points()
    tracer = otel.tracer_provider.get_tracer("the application")

    with tracer.start_as_current_span("answer"):
        found = await vectors_of(memora).search_memory(
            "hello", MemorySearchScope.USER, world.org_id, world.user_id
        )
        await memora.fetch_user_memories_resolved([world.ids(m.memory_id) for m, _ in found])

    (application,) = otel.spans()
    assert application.name == "answer"
    measured = sorted(
        (attributes["db.system.name"], attributes["db.operation.name"], point.count)
        for attributes, point in otel.points()
    )
    assert measured == [
        ("neo4j", "fetch_user_memories_resolved", 1),
        ("qdrant", "search_memory", 1),
    ]


GLOBAL_PROVIDERS = """
from opentelemetry import metrics, trace
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from memora_ogm.sync import QdrantDB
from memora_ogm.telemetry import MemoraInstrumentor
from memora_ogm.vector_db.embedding import HashingEmbedding

MemoraInstrumentor().instrument()
spans, reader = InMemorySpanExporter(), InMemoryMetricReader()
tracer_provider = TracerProvider()
tracer_provider.add_span_processor(SimpleSpanProcessor(spans))
trace.set_tracer_provider(tracer_provider)
metrics.set_meter_provider(MeterProvider(metric_readers=[reader]))
store = QdrantDB(embedding_function=HashingEmbedding())
store.setup()
store.tenants()
print(*[span.name for span in spans.get_finished_spans()])
for resource in reader.get_metrics_data().resource_metrics:
    for scope in resource.scope_metrics:
        for metric in scope.metrics:
            print(metric.name, sum(point.count for point in metric.data.data_points))
"""


def test_global_providers_set_after_instrumenting_are_used() -> None:
    """Instrumented without providers, before the application sets the global ones (which
    can be set once per process: here, in a child)."""
    ran = subprocess.run(
        [sys.executable, "-c", GLOBAL_PROVIDERS], capture_output=True, text=True, timeout=120
    )
    assert ran.returncode == 0, ran.stderr
    assert ran.stdout.splitlines() == ["setup tenants", "db.client.operation.duration 2"]


def test_a_framework_view_is_traced_as_it_stands(
    neo4j_connection: Neo4jConnection, clean_neo4j: Driver, otel: Telemetry
) -> None:
    """A Flask view calling the extension's facade, with no tracing code of its own, gives
    the call's client span and its measurement."""
    app = Flask(__name__)
    app.config.update(
        {f"MEMORA_OGM_{name}": value for name, value in neo4j_connection.env().items()}
    )
    memora = MemoraOGM(app)

    @app.post("/organizations")
    def create() -> dict[str, str]:
        return {"org_id": memora.interface.create_organization(SECRET_ORG).org_id}

    try:
        response = app.test_client().post("/organizations")
    finally:
        state(app).close()
    assert response.status_code == 200
    (span,) = [span for span in otel.spans() if span.name == "create_organization"]
    assert span.kind == SpanKind.CLIENT
    attributes = dict(span.attributes or {})
    assert attributes["db.system.name"] == "neo4j"
    assert attributes["db.namespace"] == neo4j_connection.database
    assert SECRET_ORG not in str(attributes)
    measured = [
        point
        for labels, point in otel.points()
        if labels.get("db.operation.name") == "create_organization"
    ]
    assert [point.count for point in measured] == [1]


def traced(cls: type) -> set[str]:
    """The methods of ``cls`` that are observed calls."""
    return {name for name in dir(cls) if hasattr(inspect.getattr_static(cls, name), "__wrapped__")}


def test_every_public_method_of_the_facade_is_traced() -> None:
    base = {name for name in dir(sync.BaseGraphDB) if not name.startswith("_")}
    for cls in (Neo4jGraphInterface, sync.Neo4jGraphInterface):
        assert traced(cls) >= base - {"close", "get_associated_vector_db"}
        assert {"import_records", "export_user", "check_consistency"} <= traced(cls)
    vector = {name for name in dir(BaseVectorDB) if not name.startswith("_")}
    for store in (QdrantDB, sync.QdrantDB):
        assert traced(store) >= vector - {"close"}
        assert {"tenants", "points_page", "payloads"} <= traced(store)
