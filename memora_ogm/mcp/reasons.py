"""What a caller is told when a call or a start fails: the cause in the user's terms.

A client shows a tool error's text to a person or a model, so it names what went wrong
and what to do (the embedder's own advice, the Neo4j address or user, the argument at
fault), never a traceback, a query, a file path, a class name or a library's URL.
Anything unforeseen is said as such, its details left in the server's log.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from dataclasses import dataclass

from neo4j.exceptions import AuthError, ServiceUnavailable, SessionExpired
from pydantic import ValidationError

from memora_ogm.errors import (
    EmbedderUnavailableError,
    FolderInUseError,
    LocalModeFolderError,
    RetriesExhausted,
)

log = logging.getLogger("memora_ogm.mcp")

#: What a failure nobody foresaw is told (its traceback is in the server's log).
UNFORESEEN = "the server failed on this call; its log has the details"


@dataclass(frozen=True)
class GraphAddress:
    """Where the graph is and whom the server logs in as: what its errors name."""

    uri: str
    username: str


def field_errors(error: ValidationError) -> str:
    """Each refused argument by its path, as ``messages[0].content: required``."""
    said = []
    for problem in error.errors(include_url=False, include_input=False):
        path = ""
        for part in problem["loc"]:
            path += f"[{part}]" if isinstance(part, int) else f".{part}" if path else str(part)
        text = "required" if problem["type"] == "missing" else problem["msg"]
        said.append(f"{path}: {text.removeprefix('Value error, ')}" if path else text)
    return "; ".join(said)


def _chain(error: BaseException | None) -> Iterator[BaseException]:
    seen: set[int] = set()
    while error is not None and id(error) not in seen:
        seen.add(id(error))
        yield error
        error = error.__cause__ or error.__context__


def reason(error: BaseException, graph: GraphAddress) -> str | None:
    """The cause of ``error`` (or of what it wraps, the innermost cause first: a retry
    that ran out on a lost server names the server) in the user's terms, or None for one
    nobody foresaw."""
    for cause in reversed(list(_chain(error))):
        if isinstance(cause, ValidationError):
            return field_errors(cause)
        if isinstance(cause, EmbedderUnavailableError | FolderInUseError | LocalModeFolderError):
            return str(cause)
        if isinstance(cause, AuthError):
            return (
                f"authentication failed for user {graph.username} at {graph.uri}: check "
                "NEO4J_USERNAME and NEO4J_PASSWORD (a local server started again has a new "
                "password: `memora-ogm server status` prints it)"
            )
        if isinstance(cause, ServiceUnavailable | SessionExpired):
            return f"Neo4j unreachable at {graph.uri}: is it running? The next call tries again."
        if type(cause).__module__.startswith(("qdrant_client", "httpx")):
            return "the vector store did not answer; the next call tries again"
        if isinstance(cause, RetriesExhausted):
            return "the graph stayed busy with other writes; try the call again"
    return None


def said(error: BaseException, graph: GraphAddress) -> str:
    """:func:`reason`, else :data:`UNFORESEEN` with the traceback logged."""
    found = reason(error, graph)
    if found is None:
        log.error("unforeseen failure", exc_info=error)
        return UNFORESEEN
    return found
