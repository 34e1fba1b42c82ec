"""OpenTelemetry spans and the ``db.client.operation.duration`` histogram of every facade
call, after the database semantic conventions (``docs/observability.md``).

Classes are traced once where defined, so both twins' methods are traced without code of
their own; inside a call, the statement path, batches, retries and unanswered commits
report to it. Without ``opentelemetry-api`` or an SDK, a call checks once and runs
untraced. Never recorded: a parameter's value, an error's message; tenant ids only after
``configure(record_tenant_ids=True)``.
"""

from __future__ import annotations

import functools
import inspect
import os
import time
from collections.abc import AsyncGenerator, Callable, Collection, Generator, Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, NamedTuple, TypeVar
from urllib.parse import urlsplit

try:
    from opentelemetry import context as otel_context
    from opentelemetry import metrics, trace
    from opentelemetry.metrics import _internal as metrics_api
except ImportError:  # the optional extra memora-ogm[otel] is not installed
    trace = None  # type: ignore[assignment]

#: Whether "no global provider was set" can be read from the API's module slots (there
#: since 1.0): two attribute reads, where the public getters read the environment each
#: call. Not when a variable names a provider for the getters to load: they decide then.
GLOBAL_SLOTS = (
    trace is not None
    and hasattr(trace, "_TRACER_PROVIDER")
    and hasattr(metrics_api, "_METER_PROVIDER")
    and not {"OTEL_PYTHON_TRACER_PROVIDER", "OTEL_PYTHON_METER_PROVIDER"} & set(os.environ)
)

if TYPE_CHECKING:
    from opentelemetry.metrics import Histogram, MeterProvider
    from opentelemetry.trace import Span, Tracer, TracerProvider
    from opentelemetry.util.types import AttributeValue

C = TypeVar("C", bound=type)
Attributes = dict[str, "AttributeValue"]

#: The instrumentation scope's name, the tracer's and the meter's.
SCOPE = "memora_ogm"
DURATION = "db.client.operation.duration"
#: The conventions' advised bucket boundaries of ``db.client.operation.duration``.
DURATION_BUCKETS = (0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1.0, 5.0, 10.0)
#: Neo4j's port when a URI names none.
BOLT_PORT = 7687
#: Joins the distinct statements of a call of several in ``db.query.text``.
STATEMENT_SEPARATOR = "; "
#: Attributes of a span that the duration histogram leaves out (high cardinality).
NOT_MEASURED = ("db.query.text", "db.operation.batch.size", "memora.org_id", "memora.user_id")
#: The arguments recorded as tenant ids once a caller opts in.
TENANT_IDS = {"org_id": "memora.org_id", "user_id": "memora.user_id"}


@dataclass
class Settings:
    """What :func:`configure` set."""

    enabled: bool = True
    record_tenant_ids: bool = False
    tracer_provider: TracerProvider | None = None
    meter_provider: MeterProvider | None = None


settings = Settings()


def configure(
    *,
    enabled: bool = True,
    record_tenant_ids: bool = False,
    tracer_provider: TracerProvider | None = None,
    meter_provider: MeterProvider | None = None,
) -> None:
    """Set how calls are traced, for the whole process.

    ``record_tenant_ids`` adds each call's ``org_id`` and ``user_id`` arguments to its
    span (as ``memora.org_id``, ``memora.user_id``), never to the metric; off by default.
    ``tracer_provider`` and ``meter_provider`` replace OpenTelemetry's global providers
    for memora-ogm's spans and metric; ``enabled=False`` turns both off.
    """
    global settings
    settings = Settings(enabled, record_tenant_ids, tracer_provider, meter_provider)


def _is_sdk(provider: object) -> bool:
    """Whether ``provider`` records: not the API's own no-op or proxy (the global default)."""
    return not type(provider).__module__.startswith(
        ("opentelemetry.trace", "opentelemetry.metrics")
    )


class Instruments(NamedTuple):
    """A pair of providers' tracer and histogram (None for one that does not record)."""

    tracer: Tracer | None
    duration: Histogram | None


@functools.lru_cache(maxsize=8)
def _instruments_of(tracer_provider: TracerProvider, meter_provider: MeterProvider) -> Instruments:
    """The instruments of a pair of providers, made once (an SDK keeps them)."""
    from memora_ogm import __version__

    tracer = tracer_provider.get_tracer(SCOPE, __version__) if _is_sdk(tracer_provider) else None
    duration = None
    if _is_sdk(meter_provider):
        duration = meter_provider.get_meter(SCOPE, __version__).create_histogram(
            DURATION,
            unit="s",
            description="Duration of memora-ogm's database client operations.",
            explicit_bucket_boundaries_advisory=DURATION_BUCKETS,
        )
    return Instruments(tracer, duration)


def active() -> Instruments | None:
    """The instruments of the configured (else global) providers, or None when nothing
    would record: the one check of an untraced call."""
    if trace is None or not settings.enabled:
        return None
    if (
        GLOBAL_SLOTS
        and trace._TRACER_PROVIDER is None
        and metrics_api._METER_PROVIDER is None
        and settings.tracer_provider is None
        and settings.meter_provider is None
    ):
        return None  # nothing configured: the API's proxies, which record nothing
    tracer_provider = settings.tracer_provider or trace.get_tracer_provider()
    meter_provider = settings.meter_provider or metrics.get_meter_provider()
    instruments = _instruments_of(tracer_provider, meter_provider)
    return None if instruments == (None, None) else instruments


def error_type(error: BaseException) -> str:
    """``error.type``: the exception's qualified class name (a builtin's bare name)."""
    cls = type(error)
    module = cls.__module__
    return cls.__qualname__ if module == "builtins" else f"{module}.{cls.__qualname__}"


class Call:
    """One traced call: its span, and what the code it runs reports to it."""

    def __init__(
        self, instruments: Instruments, system: str, operation: str, attributes: Attributes
    ) -> None:
        self.system = system
        self.duration = instruments.duration
        self.measured = {k: v for k, v in attributes.items() if k not in NOT_MEASURED}
        self.span: Span = trace.INVALID_SPAN
        if instruments.tracer is not None:
            self.span = instruments.tracer.start_span(
                operation, kind=trace.SpanKind.CLIENT, attributes=attributes
            )
        self.statements: dict[str, None] = {}  # distinct, in the order first sent
        self.batches = 0
        self.started = time.perf_counter()

    @contextmanager
    def current(self) -> Iterator[None]:
        """This call as the current one, its span the parent of spans started inside."""
        token = _current.set(self)
        attached = None
        if self.span is not trace.INVALID_SPAN:
            attached = otel_context.attach(trace.set_span_in_context(self.span))
        try:
            yield
        finally:
            if attached is not None:
                otel_context.detach(attached)
            _current.reset(token)

    @contextmanager
    def ending(self) -> Iterator[None]:
        """End the span and measure the call as the block ends: as failed if it raised."""
        try:
            yield
        except BaseException as error:
            self.end(error)
            raise
        self.end()

    def end(self, error: BaseException | None = None) -> None:
        """End the span and measure the call; ``error`` is what it failed with."""
        span = self.span
        if self.statements:
            span.set_attribute("db.query.text", STATEMENT_SEPARATOR.join(self.statements))
        if self.batches > 1:  # a batch is two operations or more
            span.set_attribute("db.operation.batch.size", self.batches)
        measured = self.measured
        if error is not None and not isinstance(error, GeneratorExit):
            kind = error_type(error)
            measured = {**measured, "error.type": kind}
            span.set_attribute("error.type", kind)
            span.set_status(trace.StatusCode.ERROR)
        span.end()
        if self.duration is not None:
            self.duration.record(time.perf_counter() - self.started, measured)

    async def over_async(self, items: AsyncGenerator[Any, Any]) -> AsyncGenerator[Any, None]:
        """``items``, with the call current while each is made; it ends with them."""
        with self.ending():
            try:
                while True:
                    with self.current():
                        try:
                            item = await items.__anext__()
                        except StopAsyncIteration:
                            return
                    yield item
            finally:
                await items.aclose()

    def over(self, items: Generator[Any, Any, Any]) -> Generator[Any, None, None]:
        """:meth:`over_async` of a synchronous iterator."""
        with self.ending():
            try:
                while True:
                    with self.current():
                        try:
                            item = next(items)
                        except StopIteration:
                            return
                    yield item
            finally:
                items.close()


_current: ContextVar[Call | None] = ContextVar("memora_ogm_call", default=None)


def sent(statement: str) -> None:
    """A statement left for the server (its parameterized text)."""
    call = _current.get()
    if call is not None:
        call.statements[statement] = None


def batch() -> None:
    """A batch of batched work ran (an erasure's, an import's, a page of an export)."""
    call = _current.get()
    if call is not None:
        call.batches += 1


def retrying(error: BaseException, attempt: int, backoff: float) -> None:
    """The call runs its work again after ``error``."""
    call = _current.get()
    if call is not None:
        call.span.add_event(
            "memora.retry",
            {"error.type": error_type(error), "memora.attempt": attempt, "memora.backoff": backoff},
        )


def outcome(landed: bool) -> None:
    """A write whose commit went unanswered was found to have landed, or not."""
    call = _current.get()
    if call is not None:
        call.span.add_event("memora.commit_outcome", {"memora.landed": landed})


Describe = Callable[[Any], Attributes]


def _traced(func: Callable[..., Any], system: str, describe: Describe) -> Callable[..., Any]:
    """``func``, run in a span of its own unless nothing records, or a call of the same
    system is under way (a method calling another: the outer one is the operation)."""
    operation = func.__name__
    names = list(inspect.signature(func).parameters)[1:]  # after self
    #: Where ``func`` takes the tenant ids: their positions, by argument name.
    tenants = {name: names.index(name) for name in TENANT_IDS if name in names}

    def start(owner: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Call | None:
        instruments = active()
        if instruments is None:
            return None
        current = _current.get()
        if current is not None and current.system == system:
            return None
        attributes = describe(owner)
        attributes["db.operation.name"] = attributes["db.query.summary"] = operation
        if settings.record_tenant_ids:
            for name, position in tenants.items():
                value = kwargs.get(name, args[position] if position < len(args) else None)
                if isinstance(value, str):
                    attributes[TENANT_IDS[name]] = value
        return Call(instruments, system, operation, attributes)

    if inspect.iscoroutinefunction(func):

        @functools.wraps(func)
        async def traced_coroutine(owner: Any, *args: Any, **kwargs: Any) -> Any:
            call = start(owner, args, kwargs)
            if call is None:
                return await func(owner, *args, **kwargs)
            with call.ending(), call.current():
                return await func(owner, *args, **kwargs)

        return traced_coroutine

    @functools.wraps(func)
    def traced(owner: Any, *args: Any, **kwargs: Any) -> Any:
        call = start(owner, args, kwargs)
        if call is None:
            return func(owner, *args, **kwargs)
        try:
            with call.current():
                result = func(owner, *args, **kwargs)
        except BaseException as error:
            call.end(error)
            raise
        # A method that returns a stream (an export) is the span of its iteration.
        if inspect.isasyncgen(result):
            return call.over_async(result)
        if inspect.isgenerator(result):
            return call.over(result)
        call.end()
        return result

    return traced


def instrument(
    cls: C, system: str, describe: Describe, untraced: Collection[str] = ("close",)
) -> C:
    """Trace every public method of ``cls`` but ``untraced``; ``describe`` gives a call's
    attributes from the instance, ``db.system.name`` among them."""
    for name in dir(cls):
        method = inspect.getattr_static(cls, name)
        if not name.startswith("_") and name not in untraced and inspect.isfunction(method):
            setattr(cls, name, _traced(method, system, describe))
    return cls


@functools.cache
def _server(uri: str) -> Mapping[str, AttributeValue]:
    """``server.address`` and ``server.port`` of a Bolt or Neo4j URI."""
    parts = urlsplit(uri)
    if not parts.hostname:
        return {}
    return {"server.address": parts.hostname, "server.port": parts.port or BOLT_PORT}


def _graph_attributes(interface: Any) -> Attributes:
    """A graph call's database and server (none for a ``from_neomodel()`` interface)."""
    graph = interface.graph
    attributes: Attributes = {"db.system.name": "neo4j"}
    if graph.database is not None:
        attributes["db.namespace"] = graph.database
    if graph.uri is not None:
        attributes.update(_server(graph.uri))
    return attributes


def _vector_attributes(store: Any) -> Attributes:
    return {"db.system.name": "qdrant", "db.collection.name": store.collection_name}


def instrument_graph(cls: C) -> C:
    """Trace every public method of the facade but ``close`` and the vector store getter."""
    return instrument(cls, "neo4j", _graph_attributes, ("close", "get_associated_vector_db"))


def instrument_vector_store(cls: C) -> C:
    """Trace a vector store's calls: within a facade call, spans of their own under its."""
    return instrument(cls, "qdrant", _vector_attributes)
