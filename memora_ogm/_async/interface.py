"""``Neo4jGraphInterface``: every ``BaseGraphDB`` method, each a call of :mod:`memora_ogm.calls`."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from datetime import datetime
from typing import TYPE_CHECKING, Any

from neomodel import adb
from typing_extensions import Self

from memora_ogm._async.consistency import Neo4jConsistency
from memora_ogm._async.graph import Graph
from memora_ogm._async.migrate import applied_versions, run_migrations
from memora_ogm._async.schema import CONSTRAINT_NAMES, install_node_keys, missing_node_keys
from memora_ogm._async.transfer import Neo4jTransfer
from memora_ogm._async.vector_base import BaseVectorDB
from memora_ogm.calls import agent, interaction, memory, organization, user
from memora_ogm.migrations import MIGRATIONS
from memora_ogm.schema import models
from memora_ogm.schema.storage import MemoriesAndInteraction

if TYPE_CHECKING:
    from memora_ogm.server import Neo4jConnection


class Neo4jGraphInterface(Neo4jTransfer, Neo4jConsistency):
    """Memora's graph layer over the neomodel node classes of :mod:`memora_ogm.nodes`.

    Each of Memora's methods declares its call in the domain's module of
    :mod:`memora_ogm.calls` and runs it through the graph's door
    (:meth:`Graph.execute`), which is all the I/O a call does.

    The constructor is Memora's, with the driver settings an operator expects on
    top. Each interface runs every unit of work on its own driver and ``database``
    (bound to neomodel per transaction, see :func:`~memora_ogm._async.connection.bind_neomodel`),
    so interfaces on several servers or databases can share one process. neomodel's own
    connection stays the application's: an interface never puts its driver there.
    """

    def __init__(
        self,
        uri: str,
        username: str,
        password: str,
        database: str,
        associated_vector_db: BaseVectorDB | None = None,
        enable_logging: bool = False,
        *,
        max_connection_pool_size: int | None = None,
        connection_acquisition_timeout: float | None = None,
        driver_config: Mapping[str, Any] | None = None,
    ) -> None:
        """``driver_config`` goes to ``neo4j.AsyncGraphDatabase.driver`` as keyword
        arguments (``max_connection_lifetime``, ``trusted_certificates``, ...); the pool
        size and acquisition timeout are the two settings most deployments tune."""
        config = dict(driver_config or {})
        if max_connection_pool_size is not None:
            config["max_connection_pool_size"] = max_connection_pool_size
        if connection_acquisition_timeout is not None:
            config["connection_acquisition_timeout"] = connection_acquisition_timeout
        graph = Graph(uri, username, password, database, associated_vector_db, config)
        self._attach(graph, enable_logging)

    @classmethod
    def from_connection(
        cls, conn: Neo4jConnection, associated_vector_db: BaseVectorDB | None = None
    ) -> Self:
        """An interface on a server of :mod:`memora_ogm.server` (the pytest fixtures,
        ``memora-ogm server start``, ``NEO4J_URI`` & co.)."""
        return cls(conn.uri, conn.username, conn.password, conn.database, associated_vector_db)

    @classmethod
    def from_neomodel(
        cls,
        database: str | None = None,
        associated_vector_db: BaseVectorDB | None = None,
        enable_logging: bool = False,
    ) -> Self:
        """An interface on the connection the application already gave neomodel.

        For applications that configured neomodel themselves (django_neomodel settings,
        ``NEOMODEL_DATABASE_URL``, ``config.DATABASE_URL`` or ``config.DRIVER``,
        ``set_connection``): no second driver and no credentials to repeat. ``database``
        defaults to the one neomodel targets where this is called; ``close()`` leaves the
        connection open, it is the application's.
        """
        interface = cls.__new__(cls)
        graph = Graph(None, None, None, database or adb._database_name, associated_vector_db)
        interface._attach(graph, enable_logging)
        return interface

    def _attach(self, graph: Graph, enable_logging: bool) -> None:
        self.graph = graph
        self.logger = logging.getLogger("memora_ogm")
        if enable_logging:
            logging.basicConfig(level=logging.INFO)

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close()

    async def close(self) -> None:
        self.logger.info("closing the Neo4j driver")
        await self.graph.close()

    @property
    def database(self) -> str | None:
        """The database every transaction targets (``None``: the server's default).

        The graph's own, like :attr:`associated_vector_db`, so assigning it takes effect.
        """
        return self.graph.database

    @database.setter
    def database(self, database: str | None) -> None:
        self.graph.database = database or None

    @property
    def associated_vector_db(self) -> BaseVectorDB | None:
        """The vector store the next write and delete go through (``None``: none).

        One live attribute, the graph's own: Memora's agent assigns it after building
        the interface (``graph_db.associated_vector_db = vector_db``), and that store
        must be the one written from then on. Assigning ``None`` detaches it.
        """
        return self.graph.vector_db

    @associated_vector_db.setter
    def associated_vector_db(self, vector_db: BaseVectorDB | None) -> None:
        self.graph.vector_db = vector_db

    def get_associated_vector_db(self) -> BaseVectorDB | None:
        return self.associated_vector_db

    async def setup(self, *args: object, **kwargs: object) -> None:
        """Install the schema's uniqueness guarantees (and the vector store's collection)."""
        await self.graph.connect()
        enterprise = await self.graph.is_enterprise()
        await self.graph.write(lambda _: install_node_keys(enterprise, self.graph.cypher))
        if self.associated_vector_db is not None:
            await self.associated_vector_db.setup()

    async def migrate_to_schema_for_memora_v0_3_x(self, *args: object, **kwargs: object) -> None:
        """Run Memora's v0.3.x migration (``migrations/m0001_memora_v0_3_x.py``) if pending."""
        await run_migrations(self.graph, MIGRATIONS, up_to="0001")

    async def migrate(self) -> list[str]:
        """Apply every pending migration of ``memora_ogm.migrations``; returns their versions."""
        return await run_migrations(self.graph, MIGRATIONS)

    async def missing_constraints(self) -> list[str]:
        """The names of the schema's constraints this database lacks (``setup()`` adds
        them), for health checks."""
        await self.graph.connect()
        return await self.graph.query(
            CONSTRAINT_NAMES, {}, lambda rows: missing_node_keys({row["name"] for row in rows})
        )

    async def applied_migrations(self) -> list[str]:
        """The versions of the migrations this database has had, oldest first."""
        return await applied_versions(self.graph)

    # Organisations

    async def create_organization(self, org_name: str) -> models.Organization:
        return await self.graph.execute(organization.create_organization, org_name)

    async def update_organization(self, org_id: str, new_org_name: str) -> models.Organization:
        return await self.graph.execute(organization.update_organization, org_id, new_org_name)

    async def delete_organization(self, org_id: str) -> None:
        await self.graph.execute_batches(
            organization.delete_organization, org_id, self.erase_batch_size, self._vectors
        )

    async def get_organization(self, org_id: str) -> models.Organization:
        return await self.graph.execute(organization.get_organization, org_id)

    async def get_all_organizations(self) -> list[models.Organization]:
        return await self.graph.execute(organization.get_all_organizations)

    # Agents

    async def create_agent(
        self, org_id: str, agent_label: str, user_id: str | None = None
    ) -> models.Agent:
        return await self.graph.execute(agent.create_agent, org_id, agent_label, user_id)

    async def update_agent(self, org_id: str, agent_id: str, new_agent_label: str) -> models.Agent:
        return await self.graph.execute(agent.update_agent, org_id, agent_id, new_agent_label)

    async def delete_agent(self, org_id: str, agent_id: str) -> None:
        await self.graph.execute(agent.delete_agent, org_id, agent_id)

    async def get_agent(self, org_id: str, agent_id: str) -> models.Agent:
        return await self.graph.execute(agent.get_agent, org_id, agent_id)

    async def get_all_org_agents(self, org_id: str) -> list[models.Agent]:
        return await self.graph.execute(agent.get_all_org_agents, org_id)

    async def get_all_user_agents(self, org_id: str, user_id: str) -> list[models.Agent]:
        return await self.graph.execute(agent.get_all_user_agents, org_id, user_id)

    # Users

    async def create_user(self, org_id: str, user_name: str) -> models.User:
        return await self.graph.execute(user.create_user, org_id, user_name)

    async def update_user(self, org_id: str, user_id: str, new_user_name: str) -> models.User:
        return await self.graph.execute(user.update_user, org_id, user_id, new_user_name)

    async def delete_user(self, org_id: str, user_id: str) -> None:
        await self.graph.execute_batches(
            user.delete_user, org_id, user_id, self.erase_batch_size, self._vectors
        )

    async def get_user(self, org_id: str, user_id: str) -> models.User:
        return await self.graph.execute(user.get_user, org_id, user_id)

    async def get_all_org_users(self, org_id: str) -> list[models.User]:
        return await self.graph.execute(user.get_all_org_users, org_id)

    # Interactions

    async def save_interaction_with_memories(
        self,
        org_id: str,
        agent_id: str,
        user_id: str,
        memories_and_interaction: MemoriesAndInteraction,
    ) -> tuple[str, datetime]:
        return await self.graph.execute(
            interaction.save_interaction_with_memories,
            org_id,
            agent_id,
            user_id,
            memories_and_interaction,
        )

    async def update_interaction_and_memories(
        self,
        org_id: str,
        agent_id: str,
        user_id: str,
        interaction_id: str,
        updated_memories_and_interaction: MemoriesAndInteraction,
    ) -> tuple[str, datetime]:
        return await self.graph.execute(
            interaction.update_interaction_and_memories,
            org_id,
            agent_id,
            user_id,
            interaction_id,
            updated_memories_and_interaction,
        )

    async def get_interaction(
        self,
        org_id: str,
        user_id: str,
        interaction_id: str,
        with_messages: bool = True,
        with_memories: bool = True,
    ) -> models.Interaction:
        return await self.graph.execute(
            interaction.get_interaction,
            await self.graph.has_apoc(),
            org_id,
            user_id,
            interaction_id,
            with_messages,
            with_memories,
        )

    async def get_all_user_interactions(
        self,
        org_id: str,
        user_id: str,
        with_their_messages: bool = True,
        with_their_memories: bool = True,
        skip: int = 0,
        limit: int = 100,
    ) -> list[models.Interaction]:
        return await self.graph.execute(
            interaction.get_all_user_interactions,
            await self.graph.has_apoc(),
            org_id,
            user_id,
            with_their_messages,
            with_their_memories,
            skip,
            limit,
        )

    async def delete_user_interaction_and_its_memories(
        self, org_id: str, user_id: str, interaction_id: str
    ) -> None:
        await self.graph.execute_batches(
            interaction.delete_user_interaction_and_its_memories,
            org_id,
            user_id,
            interaction_id,
            self.erase_batch_size,
            self._vectors,
        )

    async def delete_all_user_interactions_and_their_memories(
        self, org_id: str, user_id: str
    ) -> None:
        await self.graph.execute_batches(
            interaction.delete_all_user_interactions_and_their_memories,
            org_id,
            user_id,
            self.erase_batch_size,
            self._vectors,
        )

    # Memories

    async def get_all_user_memories(
        self,
        org_id: str,
        user_id: str,
        agent_id: str | None = None,
        skip: int = 0,
        limit: int = 1000,
    ) -> list[models.Memory]:
        return await self.graph.execute(
            memory.get_all_user_memories,
            await self.graph.has_apoc(),
            org_id,
            user_id,
            agent_id,
            skip,
            limit,
        )

    async def get_user_memory(self, org_id: str, user_id: str, memory_id: str) -> models.Memory:
        apoc = await self.graph.has_apoc()
        return await self.graph.execute(memory.get_user_memory, apoc, org_id, user_id, memory_id)

    async def get_user_memory_history(
        self, org_id: str, user_id: str, memory_id: str
    ) -> list[models.Memory]:
        apoc = await self.graph.has_apoc()
        return await self.graph.execute(
            memory.get_user_memory_history, apoc, org_id, user_id, memory_id
        )

    async def fetch_user_memories_resolved(
        self, org_user_mem_ids: list[dict[str, str]]
    ) -> list[models.Memory]:
        results = await self.fetch_user_memories_resolved_batch([org_user_mem_ids])
        return results[0]

    async def fetch_user_memories_resolved_batch(
        self, batch_org_user_mem_ids: list[list[dict[str, str]]]
    ) -> list[list[models.Memory]]:
        apoc = await self.graph.has_apoc()
        return await self.graph.execute(
            memory.fetch_user_memories_resolved_batch, apoc, batch_org_user_mem_ids
        )

    async def delete_user_memory(self, org_id: str, user_id: str, memory_id: str) -> None:
        await self.graph.execute(
            memory.delete_user_memory,
            org_id,
            user_id,
            memory_id,
            self.erase_batch_size,
            self._vectors,
        )

    async def delete_all_user_memories(self, org_id: str, user_id: str) -> None:
        await self.graph.execute_batches(
            memory.delete_all_user_memories, org_id, user_id, self.erase_batch_size, self._vectors
        )

    @property
    def _vectors(self) -> bool:
        """Whether this call's deletes record their memories for a vector store."""
        return self.graph.vector_db is not None
