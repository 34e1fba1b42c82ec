"""A Qdrant server for the tests: Qdrant's REST API, as far as ``QdrantDB`` calls it.

No Qdrant server can be installed here. This one answers over real HTTP, the way a
Qdrant server does, and keeps the points in qdrant-client's own local engine, so
filters, cosine search and scrolling behave as Qdrant's. It also notes, per request,
the client's TCP port, and which connections are open: what the tests of fork safety
and of event loops check (which connection carries whose requests, and that a store's
connections are closed with their event loop).
"""

from __future__ import annotations

import json
import re
import threading
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from pydantic import TypeAdapter
from qdrant_client import QdrantClient, models


class StandIn:
    """What the server holds and saw: the points, and each request's method, path and port."""

    def __init__(self) -> None:
        self.engine = QdrantClient(location=":memory:")
        self.engine_lock = threading.Lock()  # the local engine is not thread-safe
        self.requests: list[tuple[str, str, int]] = []
        self.open_connections: set[int] = set()
        self.lock = threading.Lock()

    def ports(self, method: str, path_end: str) -> list[int]:
        """The client port of each request with this method whose path ends so."""
        with self.lock:
            return [
                port
                for seen, path, port in self.requests
                if seen == method and path.endswith(path_end)
            ]

    def points(self, collection_name: str) -> dict[str, dict[str, Any]]:
        """The payload of every point the server holds, by point id."""
        with self.engine_lock:
            records, _ = self.engine.scroll(collection_name, limit=100_000)
        return {str(record.id): record.payload or {} for record in records}

    def answer(self, method: str, path: str, body: Any) -> Any:
        """The ``result`` of one REST call, computed by the local engine."""
        found = re.fullmatch(r"/collections/([^/]+)(/.*)?", path)
        if found is None:
            raise LookupError(path)
        name, rest = found.group(1), found.group(2) or ""
        with self.engine_lock:
            return _ROUTES[(method, rest)](self.engine, name, body)


def _create(engine: QdrantClient, name: str, body: Any) -> Any:
    request = models.CreateCollection.model_validate(body)
    return engine.create_collection(
        name,
        vectors_config=request.vectors,
        sparse_vectors_config=request.sparse_vectors,
        hnsw_config=request.hnsw_config,
        quantization_config=request.quantization_config,
    )


def _index(engine: QdrantClient, name: str, body: Any) -> Any:
    request = models.CreateFieldIndex.model_validate(body)
    with warnings.catch_warnings():  # the local engine ignores indexes, and says so
        warnings.simplefilter("ignore", UserWarning)
        return engine.create_payload_index(
            name, field_name=request.field_name, field_schema=request.field_schema
        )


def _upsert(engine: QdrantClient, name: str, body: Any) -> Any:
    points: models.PointInsertOperations = TypeAdapter(
        models.PointInsertOperations
    ).validate_python(body)
    assert isinstance(points, models.PointsList)
    return engine.upsert(name, points=points.points)


def _delete(engine: QdrantClient, name: str, body: Any) -> Any:
    selector: models.PointsSelector = TypeAdapter(models.PointsSelector).validate_python(body)
    return engine.delete(name, points_selector=selector)


def _query(engine: QdrantClient, name: str, body: Any) -> Any:
    batch = models.QueryRequestBatch.model_validate(body)
    return engine.query_batch_points(name, requests=batch.searches)


def _scroll(engine: QdrantClient, name: str, body: Any) -> Any:
    request = models.ScrollRequest.model_validate(body)
    points, offset = engine.scroll(
        name,
        scroll_filter=request.filter,
        limit=request.limit or 10,
        offset=request.offset,
        with_payload=True if request.with_payload is None else request.with_payload,
    )
    return models.ScrollResult(points=points, next_page_offset=offset)


def _retrieve(engine: QdrantClient, name: str, body: Any) -> Any:
    request = models.PointRequest.model_validate(body)
    return engine.retrieve(
        name,
        ids=request.ids,
        with_payload=True if request.with_payload is None else request.with_payload,
        with_vectors=request.with_vector or False,
    )


def _count(engine: QdrantClient, name: str, body: Any) -> Any:
    request = models.CountRequest.model_validate(body)
    return engine.count(name, count_filter=request.filter, exact=True)


_ROUTES: dict[tuple[str, str], Callable[[QdrantClient, str, Any], Any]] = {
    ("GET", "/exists"): lambda engine, name, _: {"exists": engine.collection_exists(name)},
    ("GET", ""): lambda engine, name, _: engine.get_collection(name),
    ("PUT", ""): _create,
    ("PUT", "/index"): _index,
    ("PUT", "/points"): _upsert,
    ("POST", "/points/delete"): _delete,
    ("POST", "/points/query/batch"): _query,
    ("POST", "/points/scroll"): _scroll,
    ("POST", "/points"): _retrieve,
    ("POST", "/points/count"): _count,
}


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keeps connections alive, as Qdrant does
    standin: StandIn

    def handle(self) -> None:
        port = self.client_address[1]
        with self.standin.lock:
            self.standin.open_connections.add(port)
        try:
            super().handle()
        except ConnectionError:
            pass  # a client that went away mid-request: nothing to answer
        finally:
            with self.standin.lock:
                self.standin.open_connections.discard(port)

    def _serve(self, method: str) -> None:
        length = int(self.headers.get("Content-Length", 0))
        body = json.loads(self.rfile.read(length)) if length else None
        path = self.path.split("?", 1)[0]
        with self.standin.lock:
            self.standin.requests.append((method, path, self.client_address[1]))
        if path == "/":
            self._send(200, {"title": "qdrant - vector search engine", "version": "1.20.0"})
            return
        try:
            result = self.standin.answer(method, path, body)
        except Exception as error:  # as Qdrant does: an error status, the connection kept
            self._send(
                404 if isinstance(error, LookupError | ValueError) else 500,
                {"status": {"error": repr(error)}, "time": 0.0},
            )
            return
        if isinstance(result, list):
            result = [_plain(item) for item in result]
        self._send(200, {"result": _plain(result), "status": "ok", "time": 0.0})

    def _send(self, status: int, body: dict[str, Any]) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self) -> None:
        self._serve("GET")

    def do_PUT(self) -> None:
        self._serve("PUT")

    def do_POST(self) -> None:
        self._serve("POST")

    def log_message(self, *args: Any) -> None:
        pass


def _plain(value: Any) -> Any:
    """A model as Qdrant's JSON, which leaves unset fields out (so older clients, whose
    models forbid fields they do not know, read it)."""
    return (
        value.model_dump(mode="json", exclude_none=True) if hasattr(value, "model_dump") else value
    )


@contextmanager
def qdrant_standin() -> Iterator[tuple[str, StandIn]]:
    """A running stand-in: its URL and what it holds and saw."""
    standin = StandIn()
    handler = type("Handler", (_Handler,), {"standin": standin})
    # Not 127.0.0.1: qdrant-client keeps no connections alive to "localhost" or 127.0.0.1.
    server = ThreadingHTTPServer(("127.0.0.2", 0), handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.2:{server.server_address[1]}", standin
    finally:
        server.shutdown()
        server.server_close()
        standin.engine.close()
