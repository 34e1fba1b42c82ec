"""``BaseGraphDB``: the graph-layer interface Memora programs against (:mod:`memora_ogm.base`)."""

from __future__ import annotations

from abc import ABC, abstractmethod
from datetime import datetime
from typing import Any

from memora_ogm._async.vector_base import BaseVectorDB
from memora_ogm.schema import models
from memora_ogm.schema.storage import MemoriesAndInteraction


class BaseGraphDB(ABC):
    """Abstract graph store of organisations, users, agents, interactions and memories."""

    # Lifecycle and schema

    @abstractmethod
    def get_associated_vector_db(self) -> BaseVectorDB | None:
        """The vector store kept in step with the graph's memories, if any.

        Every write or delete of memories goes to both stores in the same call, all or
        nothing, so that a vector search never finds a memory the graph does not have.
        """

    @abstractmethod
    async def close(self) -> None:
        """Release the database connection."""

    @abstractmethod
    async def setup(self, *args: Any, **kwargs: Any) -> None:
        """Install the constraints and indexes the graph schema relies on; idempotent."""

    @abstractmethod
    async def migrate_to_schema_for_memora_v0_3_x(self, *args: Any, **kwargs: Any) -> None:
        """Bring a graph written by Memora before v0.3 to the current schema; idempotent.

        Links every ``Memory`` to its ``Date`` with ``DATE_OBTAINED`` (which the
        date-ordered memory listing walks) and drops the unused
        ``interaction_updated_timestamp_index``.
        """

    # Organisations

    @abstractmethod
    async def create_organization(self, org_name: str) -> models.Organization:
        """Create an organisation with a new short-UUID ``org_id``."""

    @abstractmethod
    async def update_organization(self, org_id: str, new_org_name: str) -> models.Organization:
        """Rename an organisation and return it."""

    @abstractmethod
    async def delete_organization(self, org_id: str) -> None:
        """Delete an organisation and everything under it, including its vector memories."""

    @abstractmethod
    async def get_organization(self, org_id: str) -> models.Organization:
        """One organisation by id."""

    @abstractmethod
    async def get_all_organizations(self) -> list[models.Organization]:
        """Every organisation in the graph."""

    # Agents

    @abstractmethod
    async def create_agent(
        self, org_id: str, agent_label: str, user_id: str | None = None
    ) -> models.Agent:
        """Create an agent of the organisation; with ``user_id``, also the user's own agent."""

    @abstractmethod
    async def update_agent(self, org_id: str, agent_id: str, new_agent_label: str) -> models.Agent:
        """Relabel an agent and return it."""

    @abstractmethod
    async def delete_agent(self, org_id: str, agent_id: str) -> None:
        """Delete an agent; the memories obtained through it are kept."""

    @abstractmethod
    async def get_agent(self, org_id: str, agent_id: str) -> models.Agent:
        """One agent of the organisation by id."""

    @abstractmethod
    async def get_all_org_agents(self, org_id: str) -> list[models.Agent]:
        """Every agent of the organisation, user-specific ones included."""

    @abstractmethod
    async def get_all_user_agents(self, org_id: str, user_id: str) -> list[models.Agent]:
        """The agents created specifically for one user."""

    # Users

    @abstractmethod
    async def create_user(self, org_id: str, user_name: str) -> models.User:
        """Create a user of the organisation, with its interaction and memory collections."""

    @abstractmethod
    async def update_user(self, org_id: str, user_id: str, new_user_name: str) -> models.User:
        """Rename a user and return it."""

    @abstractmethod
    async def delete_user(self, org_id: str, user_id: str) -> None:
        """Delete a user with its interactions, messages, memories (vector ones too), dates."""

    @abstractmethod
    async def get_user(self, org_id: str, user_id: str) -> models.User:
        """One user of the organisation by id."""

    @abstractmethod
    async def get_all_org_users(self, org_id: str) -> list[models.User]:
        """Every user of the organisation."""

    # Interactions

    @abstractmethod
    async def save_interaction_with_memories(
        self,
        org_id: str,
        agent_id: str,
        user_id: str,
        memories_and_interaction: MemoriesAndInteraction,
    ) -> tuple[str, datetime]:
        """Store a new interaction, its messages and the memories extracted from it.

        Contrary memories supersede the memories they name. Returns the new
        ``interaction_id`` and its creation datetime.
        """

    @abstractmethod
    async def update_interaction_and_memories(
        self,
        org_id: str,
        agent_id: str,
        user_id: str,
        interaction_id: str,
        updated_memories_and_interaction: MemoriesAndInteraction,
    ) -> tuple[str, datetime]:
        """Replace an interaction's messages from the first difference on and add memories.

        Messages before the first difference are kept; memories of deleted messages stay
        but lose their message sources. Returns the id and the update's datetime.
        """

    @abstractmethod
    async def get_interaction(
        self,
        org_id: str,
        user_id: str,
        interaction_id: str,
        with_messages: bool = True,
        with_memories: bool = True,
    ) -> models.Interaction:
        """One interaction, optionally with its messages and the memories drawn from it."""

    @abstractmethod
    async def get_all_user_interactions(
        self,
        org_id: str,
        user_id: str,
        with_their_messages: bool = True,
        with_their_memories: bool = True,
        skip: int = 0,
        limit: int = 100,
    ) -> list[models.Interaction]:
        """A page of the user's interactions, most recently updated first."""

    @abstractmethod
    async def delete_user_interaction_and_its_memories(
        self, org_id: str, user_id: str, interaction_id: str
    ) -> None:
        """Delete an interaction with its messages and memories, in both stores."""

    @abstractmethod
    async def delete_all_user_interactions_and_their_memories(
        self, org_id: str, user_id: str
    ) -> None:
        """Delete every interaction of the user with their messages and memories."""

    # Memories

    @abstractmethod
    async def get_all_user_memories(
        self,
        org_id: str,
        user_id: str,
        agent_id: str | None = None,
        skip: int = 0,
        limit: int = 1000,
    ) -> list[models.Memory]:
        """A page of the user's memories, newest first, optionally of one agent only."""

    @abstractmethod
    async def get_user_memory(self, org_id: str, user_id: str, memory_id: str) -> models.Memory:
        """One memory of the user by id."""

    @abstractmethod
    async def get_user_memory_history(
        self, org_id: str, user_id: str, memory_id: str
    ) -> list[models.Memory]:
        """The memory and the older memories it superseded, newest first."""

    @abstractmethod
    async def fetch_user_memories_resolved(
        self, org_user_mem_ids: list[dict[str, str]]
    ) -> list[models.Memory]:
        """Memories by ``{org_id, user_id, memory_id}``, each replaced by its latest update.

        Meant for the ids a vector search returns; ids that do not exist are left out.
        """

    @abstractmethod
    async def fetch_user_memories_resolved_batch(
        self, batch_org_user_mem_ids: list[list[dict[str, str]]]
    ) -> list[list[models.Memory]]:
        """``fetch_user_memories_resolved`` for several id lists in one round trip."""

    @abstractmethod
    async def delete_user_memory(self, org_id: str, user_id: str, memory_id: str) -> None:
        """Delete one memory, in both stores."""

    @abstractmethod
    async def delete_all_user_memories(self, org_id: str, user_id: str) -> None:
        """Delete every memory of the user, in both stores; interactions are kept."""
