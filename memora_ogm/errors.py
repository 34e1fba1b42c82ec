"""Errors raised by memora-ogm.

Memora reports a missing node with a bare ``neo4j.exceptions.Neo4jError``, which code written
for Memora catches; ``NotFoundError`` is one too, with a precise class and the missing ids.
"""

from __future__ import annotations

from neo4j.exceptions import (
    ClientError,
    Neo4jError,
    ServiceUnavailable,
    SessionExpired,
    TransientError,
)
from neomodel.exceptions import NodeClassNotDefined, UniqueProperty


class MemoraOGMError(Exception):
    """Base class of the errors memora-ogm raises itself."""


class _OwnNeo4jError(Neo4jError, MemoraOGMError):
    """A ``Neo4jError`` whose text is memora-ogm's, not a server's."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        # ``Neo4jError.message`` reads this; the driver fills it from server metadata.
        self._message = message

    def __str__(self) -> str:
        return self._message


class NotFoundError(_OwnNeo4jError):
    """A requested organisation, user, agent, interaction or memory does not exist."""

    def __init__(self, what: str, **ids: str) -> None:
        described = " (" + ", ".join(f"{name}={value!r}" for name, value in ids.items()) + ")"
        super().__init__(f"{what}{described if ids else ''} does not exist.")
        self.what = what
        self.ids = ids


class OrganizationNotFound(NotFoundError):
    def __init__(self, org_id: str) -> None:
        super().__init__("Organization", org_id=org_id)


class UserNotFound(NotFoundError):
    def __init__(self, org_id: str, user_id: str) -> None:
        super().__init__("User", org_id=org_id, user_id=user_id)


class AgentNotFound(NotFoundError):
    def __init__(self, org_id: str, agent_id: str) -> None:
        super().__init__("Agent", org_id=org_id, agent_id=agent_id)


class InteractionNotFound(NotFoundError):
    def __init__(self, org_id: str, user_id: str, interaction_id: str) -> None:
        super().__init__(
            "Interaction", org_id=org_id, user_id=user_id, interaction_id=interaction_id
        )


class MemoryNotFound(NotFoundError):
    def __init__(self, org_id: str, user_id: str, memory_id: str) -> None:
        super().__init__("Memory", org_id=org_id, user_id=user_id, memory_id=memory_id)


class NodeVanished(MemoraOGMError):
    """A node was read while a concurrent transaction deleted it (it came back without
    its properties); the read is retried and then no longer finds it."""


class RetriesExhausted(MemoraOGMError):
    """A write kept conflicting with concurrent writers after every retry."""


class OutcomeUnknown(RetriesExhausted):
    """The server did not answer a write's commit and could not be asked afterwards whether
    it took effect: the write may or may not have landed."""


class ConflictError(_OwnNeo4jError):
    """A write would give a node the key of one that already exists (a unique constraint
    refused it); retrying cannot help. A ``Neo4jError``, as that failure is in Memora."""


# Which server errors running the work again may cure (the retry policy of every call).

CONSTRAINT_FAILED = "Neo.ClientError.Schema.ConstraintValidationFailed"
#: A node found was deleted by a concurrent transaction before this one could lock it.
ENTITY_NOT_FOUND = "Neo.ClientError.Statement.EntityNotFound"
#: Labels units of work ``MERGE`` (a user's days): the loser of a race on a new one's key
#: runs again and finds it. A violation of any other key is a conflict.
MERGED_LABELS = ("Date",)
#: The driver's errors for a connection lost (or never made) under a statement.
CONNECTION_LOST = (ServiceUnavailable, SessionExpired)
#: Transient by its code, but the same work would not fit the next time either.
OUT_OF_TRANSACTION_MEMORY = "Neo.TransientError.General.MemoryPoolOutOfMemoryError"
#: Words of the server's message for a unique key that exists already (the same code
#: also reports a node deleted while a concurrent transaction linked to it).
KEY_EXISTS = "already exists with"


def violated_key(error: BaseException) -> str | None:
    """The server's message of a unique constraint violation, else None."""
    if isinstance(error, UniqueProperty):
        return str(error.message)
    if isinstance(error, ClientError) and error.code == CONSTRAINT_FAILED:
        message = str(error.message)
        return message if KEY_EXISTS in message else None
    return None


def is_retryable(error: BaseException) -> bool:
    """Whether running the work again is safe and may succeed (a lost connection is: an
    unanswered commit reaches here only once resolved)."""
    if isinstance(error, TransientError) and error.code == OUT_OF_TRANSACTION_MEMORY:
        return False
    if isinstance(error, (TransientError, ServiceUnavailable, SessionExpired, NodeVanished)):
        return True
    if isinstance(error, NodeClassNotDefined) and not error.db_node_rel_class.labels:
        return True  # a node read while a concurrent transaction deleted it has no labels
    violated = violated_key(error)
    if violated is not None:
        return any(f"label `{label}`" in violated for label in MERGED_LABELS)
    # A node deleted while this transaction linked to it, or waited for its lock.
    return isinstance(error, ClientError) and error.code in (CONSTRAINT_FAILED, ENTITY_NOT_FOUND)


# The vector store's errors live here, not beside the store, so that naming them (the MCP
# server's reasons do) imports no Qdrant client.


class FolderInUseError(RuntimeError):
    """The folder is open already, by another store in this process or in another one."""


class LocalModeFolderError(RuntimeError):
    """The folder holds qdrant-client's local mode, which Qdrant Edge cannot open."""


class EmbedderUnavailableError(RuntimeError):
    """fastembed or one of Memora's models cannot be had (not installed, not downloadable)."""
