"""The vector-store interface the graph writes through, as Memora's ``BaseVectorDB``.

Graph and store stay in step (SPEC section 6) only if ``add_memories`` is idempotent per
id and deleting absent ids is a no-op: retries and rollbacks rely on both.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any

from memora_ogm.schema.models import Memory
from memora_ogm.vector_db.scope import MemorySearchScope


class BaseVectorDB(ABC):
    """Abstract vector store of memories, partitioned by organisation and user."""

    @abstractmethod
    async def close(self) -> None:
        """Release the connection to the store."""

    @abstractmethod
    async def setup(self, *args: Any, **kwargs: Any) -> None:
        """Create the collection and indexes if missing; safe to call on every start."""

    @abstractmethod
    async def add_memories(
        self,
        org_id: str,
        user_id: str,
        agent_id: str,
        memory_ids: list[str],
        memories: list[str],
        obtained_at: str,
    ) -> None:
        """Store ``memories[i]`` under ``memory_ids[i]`` with the owners' ids as metadata.

        ``obtained_at`` is an ISO-8601 datetime. Adding an id that is already stored
        replaces it, so retries never duplicate. Raises ``ValueError`` on bad input,
        including lists of different lengths.
        """

    @abstractmethod
    async def search_memory(
        self,
        query: str,
        memory_search_scope: MemorySearchScope,
        org_id: str,
        user_id: str | None = None,
        agent_id: str | None = None,
    ) -> list[tuple[Memory, float]]:
        """Memories most similar to ``query`` within the scope, best score first.

        The ``Memory`` objects carry the org/agent/user/memory ids, the stored text and
        ``obtained_at``; the graph resolves placeholders and contrary updates afterwards.
        ``USER`` scope requires ``user_id``; ``agent_id`` narrows either scope.
        """

    @abstractmethod
    async def search_memories(
        self,
        queries: list[str],
        memory_search_scope: MemorySearchScope,
        org_id: str,
        user_id: str | None = None,
        agent_id: str | None = None,
    ) -> list[list[tuple[Memory, float]]]:
        """Batch form of ``search_memory``: one result list per query, in query order."""

    @abstractmethod
    async def delete_memory(self, memory_id: str) -> None:
        """Delete one memory by id; an absent id is not an error."""

    @abstractmethod
    async def delete_memories(self, memory_ids: list[str]) -> None:
        """Delete several memories by id; absent ids are not an error."""

    @abstractmethod
    async def delete_all_user_memories(self, org_id: str, user_id: str) -> None:
        """Delete every memory of one user of an organisation."""

    @abstractmethod
    async def delete_all_organization_memories(self, org_id: str) -> None:
        """Delete every memory of an organisation."""
