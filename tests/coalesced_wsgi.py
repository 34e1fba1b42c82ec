"""A WSGI app whose saves share transactions, for gunicorn's ``gthread`` worker (issue 48).

    gunicorn -k gthread --threads 16 -w 1 coalesced_wsgi:app    (``NEO4J_*`` set)

Each worker opens one sync facade on its first request, with ``coalesce_writes`` on, and
its threads share it as a Flask or Django app's would. ``POST /save`` with a JSON body
``{org_id, agent_id, user_id, text}`` saves an interaction of one message with a memory
of that text and answers the interaction's id; ``GET /batches`` answers how many batches
of each size the worker's coalescer sent.
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Callable, Iterable
from datetime import datetime, timezone
from typing import Any

from memora_ogm import sync
from memora_ogm.schema.storage import MemoriesAndInteraction, MemoryToStore

_opening = threading.Lock()
_facade: list[sync.Neo4jGraphInterface] = []

Respond = Callable[[str, list[tuple[str, str]]], Any]


def facade() -> sync.Neo4jGraphInterface:
    """This worker's facade, opened once whichever thread asks first."""
    with _opening:
        if not _facade:
            env = os.environ
            _facade.append(
                sync.Neo4jGraphInterface(
                    env["NEO4J_URI"],
                    env["NEO4J_USERNAME"],
                    env["NEO4J_PASSWORD"],
                    env["NEO4J_DATABASE"],
                    coalesce_writes=True,
                )
            )
        return _facade[0]


def _save(body: dict[str, str]) -> dict[str, Any]:
    data = MemoriesAndInteraction(
        interaction=[{"role": "user", "content": body["text"]}],
        interaction_date=datetime(2026, 12, 7, 5, tzinfo=timezone.utc),
        memories=[MemoryToStore(memory=body["text"], source_msg_block_pos=[0])],
        contrary_memories=[],
    )
    interaction_id, _ = facade().save_interaction_with_memories(
        body["org_id"], body["agent_id"], body["user_id"], data
    )
    return {"interaction_id": interaction_id}


def app(environ: dict[str, Any], respond: Respond) -> Iterable[bytes]:
    try:
        if environ["REQUEST_METHOD"] == "POST" and environ["PATH_INFO"] == "/save":
            size = int(environ.get("CONTENT_LENGTH") or 0)
            answer: Any = _save(json.loads(environ["wsgi.input"].read(size)))
        elif environ["PATH_INFO"] == "/batches":
            answer = dict(facade().graph.coalescer.sizes)
        else:
            respond("404 Not Found", [("Content-Type", "text/plain")])
            return [b"not found"]
    except Exception as error:  # noqa: BLE001 - the test reads the cause from the answer
        respond("500 Internal Server Error", [("Content-Type", "text/plain")])
        return [f"{type(error).__name__}: {error}".encode()]
    respond("200 OK", [("Content-Type", "application/json")])
    return [json.dumps(answer).encode()]
