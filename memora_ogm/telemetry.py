"""OpenTelemetry spans and the ``db.client.operation.duration`` histogram of every facade
call, after the database semantic conventions (``docs/observability.md``).

:class:`MemoraInstrumentor` sets the facade's hook (:mod:`memora_ogm.observe`) for both
twins, and ``uninstrument()`` clears it. OpenTelemetry's public API only. Never recorded:
a parameter's value, an error's message; tenant ids only with ``record_tenant_ids``.
"""

from __future__ import annotations

import functools
import inspect
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any
from urllib.parse import urlsplit

from opentelemetry import context, metrics, trace
from opentelemetry.metrics import MeterProvider
from opentelemetry.trace import SpanKind, StatusCode, TracerProvider
from opentelemetry.util.types import AttributeValue

from memora_ogm import observe
from memora_ogm._version import __version__

Attributes = dict[str, AttributeValue]

#: The instrumentation scope's name, the tracer's and the meter's.
SCOPE = "memora_ogm"
DURATION = "db.client.operation.duration"
#: Seconds a coalesced write waited in its interface's queue before its batch was sent.
COALESCE_WAIT = "memora.coalesce.wait"
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


class MemoraInstrumentor:
    """Reports every call to OpenTelemetry, as the contrib instrumentations do."""

    def instrument(
        self,
        *,
        tracer_provider: TracerProvider | None = None,
        meter_provider: MeterProvider | None = None,
        record_tenant_ids: bool = False,
    ) -> None:
        """Trace and measure every call from now on, in the whole process, into the given
        providers (else the global ones, even if set later); again, with new settings.

        ``record_tenant_ids`` adds each call's ``org_id`` and ``user_id`` arguments to its
        span (as ``memora.org_id``, ``memora.user_id``), never to the metric.
        """
        observe.observer = Telemetry(tracer_provider, meter_provider, record_tenant_ids)

    def uninstrument(self) -> None:
        """Calls run unobserved again."""
        observe.observer = None

    @property
    def is_instrumented_by_opentelemetry(self) -> bool:
        return isinstance(observe.observer, Telemetry)


def error_type(error: BaseException) -> str:
    """``error.type``: the exception's qualified class name (a builtin's bare name)."""
    cls = type(error)
    module = cls.__module__
    return cls.__qualname__ if module == "builtins" else f"{module}.{cls.__qualname__}"


class Telemetry:
    """The observer of :mod:`memora_ogm.observe`: a span and a measurement per call."""

    def __init__(
        self,
        tracer_provider: TracerProvider | None,
        meter_provider: MeterProvider | None,
        record_tenant_ids: bool,
    ) -> None:
        self.tracer = trace.get_tracer(SCOPE, __version__, tracer_provider)
        self.duration = metrics.get_meter(SCOPE, __version__, meter_provider).create_histogram(
            DURATION,
            unit="s",
            description="Duration of memora-ogm's database client operations.",
            explicit_bucket_boundaries_advisory=DURATION_BUCKETS,
        )
        self.wait = metrics.get_meter(SCOPE, __version__, meter_provider).create_histogram(
            COALESCE_WAIT,
            unit="s",
            description="Time a coalesced write waited for its batch to be sent.",
            explicit_bucket_boundaries_advisory=DURATION_BUCKETS,
        )
        self.record_tenant_ids = record_tenant_ids

    def start(
        self,
        system: str,
        method: Callable[..., Any],
        owner: Any,
        args: tuple[Any, ...],
        kwargs: dict[str, Any],
    ) -> Call | None:
        """A span of its own unless a call of the same system is under way (a method
        calling another: the outer one is the operation)."""
        current = _current.get()
        if current is not None and current.system == system:
            return None
        operation = method.__name__
        attributes = DESCRIBE[system](owner)
        attributes["db.operation.name"] = attributes["db.query.summary"] = operation
        if self.record_tenant_ids:
            for name, position in _tenant_positions(method).items():
                value = kwargs.get(name, args[position] if position < len(args) else None)
                if isinstance(value, str):
                    attributes[TENANT_IDS[name]] = value
        return Call(self, system, operation, attributes)

    def sent(self, statement: str) -> None:
        if (call := _current.get()) is not None:
            call.statements[statement] = None

    def batch(self) -> None:
        if (call := _current.get()) is not None:
            call.batches += 1

    def coalesced(self, size: int, statement: str, waited: float) -> None:
        if (call := _current.get()) is not None:
            call.statements[statement] = None
            call.batches = size
            self.wait.record(waited, call.measured)

    def retrying(self, error: BaseException, attempt: int, backoff: float) -> None:
        if (call := _current.get()) is not None:
            call.span.add_event(
                "memora.retry",
                {
                    "error.type": error_type(error),
                    "memora.attempt": attempt,
                    "memora.backoff": backoff,
                },
            )

    def outcome(self, landed: bool) -> None:
        if (call := _current.get()) is not None:
            call.span.add_event("memora.commit_outcome", {"memora.landed": landed})


class Call:
    """One traced call: its span, and what the code it runs reports to it."""

    def __init__(
        self, telemetry: Telemetry, system: str, operation: str, attributes: Attributes
    ) -> None:
        self.system = system
        self.duration = telemetry.duration
        self.measured = {k: v for k, v in attributes.items() if k not in NOT_MEASURED}
        self.span = telemetry.tracer.start_span(
            operation, kind=SpanKind.CLIENT, attributes=attributes
        )
        self.statements: dict[str, None] = {}  # distinct, in the order first sent
        self.batches = 0
        self.started = time.perf_counter()

    @contextmanager
    def current(self) -> Iterator[None]:
        """This call as the current one, its span the parent of spans started inside."""
        token = _current.set(self)
        attached = context.attach(trace.set_span_in_context(self.span))
        try:
            yield
        finally:
            context.detach(attached)
            _current.reset(token)

    def end(self, error: BaseException | None = None) -> None:
        """End the span and measure the call; ``error`` is what it failed with."""
        span = self.span
        if self.statements:
            span.set_attribute("db.query.text", STATEMENT_SEPARATOR.join(self.statements))
        if self.batches > 1:  # a batch is two operations or more
            span.set_attribute("db.operation.batch.size", self.batches)
        measured = self.measured
        if error is not None:
            kind = error_type(error)
            measured = {**measured, "error.type": kind}
            span.set_attribute("error.type", kind)
            span.set_status(StatusCode.ERROR)
        span.end()
        self.duration.record(time.perf_counter() - self.started, measured)


_current: ContextVar[Call | None] = ContextVar("memora_ogm_call", default=None)


@functools.cache
def _tenant_positions(method: Callable[..., Any]) -> dict[str, int]:
    """Where ``method`` takes the tenant ids: their positions after ``self``, by name."""
    names = list(inspect.signature(method).parameters)[1:]
    return {name: names.index(name) for name in TENANT_IDS if name in names}


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


#: A call's first attributes, from its owner, by system.
DESCRIBE: dict[str, Callable[[Any], Attributes]] = {
    "neo4j": _graph_attributes,
    "qdrant": _vector_attributes,
}
