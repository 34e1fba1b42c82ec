# Generated from memora_ogm/_async by scripts/generate_sync.py: do not edit.
"""``Neo4jGraphInterface``: every ``BaseGraphDB`` method, each a call of :mod:`memora_ogm.calls`."""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any

from neomodel import db
from typing_extensions import Self

from memora_ogm import observe
from memora_ogm._sync.component import erasing, facade_method, resolving
from memora_ogm._sync.consistency import Neo4jConsistency
from memora_ogm._sync.graph import Graph
from memora_ogm._sync.transfer import Neo4jTransfer
from memora_ogm._sync.vector_base import BaseVectorDB
from memora_ogm.calls import agent, interaction, memory, migration, organization, picture, user
from memora_ogm.engine import constraints
from memora_ogm.migrations import MIGRATIONS
from memora_ogm.neomodel_compat import database_name
from memora_ogm.schema.storage import MemoriesAndInteraction

if TYPE_CHECKING:
    from memora_ogm.server import Neo4jConnection


class Neo4jGraphInterface(Neo4jTransfer, Neo4jConsistency):
    """Memora's graph layer over the neomodel node classes of :mod:`memora_ogm.nodes`.

    Memora's constructor, plus driver settings. Each interface has its own driver and
    ``database``, so several can share a process; neomodel's connection stays the app's.
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
        coalesce_writes: bool | None = None,
    ) -> None:
        """``driver_config`` goes to ``neo4j.AsyncGraphDatabase.driver`` as keyword
        arguments (``max_connection_lifetime``, ``trusted_certificates``, ...); the pool
        size and acquisition timeout are the two settings most deployments tune.
        ``coalesce_writes``: see the property."""
        config = dict(driver_config or {})
        if max_connection_pool_size is not None:
            config["max_connection_pool_size"] = max_connection_pool_size
        if connection_acquisition_timeout is not None:
            config["connection_acquisition_timeout"] = connection_acquisition_timeout
        graph = Graph(uri, username, password, database, associated_vector_db, config)
        self._attach(graph, enable_logging)
        if coalesce_writes is not None:
            self.coalesce_writes = coalesce_writes

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
        """An interface on the connection the application already gave neomodel (however
        configured): no second driver, no credentials to repeat. ``database`` defaults to
        neomodel's here; ``close()`` leaves the connection, the application's, open.
        """
        interface = cls.__new__(cls)
        graph = Graph(None, None, None, database or database_name(db), associated_vector_db)
        interface._attach(graph, enable_logging)
        return interface

    def _attach(self, graph: Graph, enable_logging: bool) -> None:
        self.graph = graph
        self.logger = logging.getLogger("memora_ogm")
        if enable_logging:
            logging.basicConfig(level=logging.INFO)

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def close(self) -> None:
        self.logger.info("closing the Neo4j driver")
        self.graph.close()

    @property
    def database(self) -> str | None:
        """The database every transaction targets (``None``: the server's default);
        assigning it takes effect on the next call."""
        return self.graph.database

    @database.setter
    def database(self, database: str | None) -> None:
        self.graph.database = database or None

    @property
    def associated_vector_db(self) -> BaseVectorDB | None:
        """The vector store the next write and delete go through (``None``: none). Live:
        Memora's agent assigns it after building the interface, and ``None`` detaches it.
        """
        return self.graph.vector_db

    @associated_vector_db.setter
    def associated_vector_db(self, vector_db: BaseVectorDB | None) -> None:
        self.graph.vector_db = vector_db

    @property
    def coalesce_writes(self) -> bool:
        """Whether concurrent saves share a transaction: below a few transactions in
        flight a save goes alone, beyond them the waiting saves go together, each caller
        still getting its own result or error (:mod:`memora_ogm._async.coalescing`). On by
        default: a lone caller's save is the same statement and round trip either way."""
        return self.graph.coalesce_writes

    @coalesce_writes.setter
    def coalesce_writes(self, coalesce: bool) -> None:
        self.graph.coalesce_writes = bool(coalesce)

    def get_associated_vector_db(self) -> BaseVectorDB | None:
        return self.associated_vector_db

    @observe.observed("neo4j")
    def setup(self, *args: object, **kwargs: object) -> None:
        """Install the schema's uniqueness guarantees (and the vector store's collection)."""
        self.graph.connect()
        self.graph.execute(constraints.install_node_keys, self.graph.is_enterprise())
        if self.associated_vector_db is not None:
            self.associated_vector_db.setup()

    @observe.observed("neo4j")
    def migrate_to_schema_for_memora_v0_3_x(self, *args: object, **kwargs: object) -> None:
        """Run Memora's v0.3.x migration (``migrations/m0001_memora_v0_3_x.py``) if pending."""
        self.migrate(up_to="0001")

    @observe.observed("neo4j")
    def migrate(self, up_to: str | None = None) -> list[str]:
        """Apply the pending migrations of ``memora_ogm.migrations`` (up to ``up_to``
        inclusive), each recorded once applied; returns the versions applied."""
        enterprise = self.graph.is_enterprise()
        self.graph.execute(migration.install_record, enterprise)
        done = set(self.applied_migrations())
        applied = []
        for pending in MIGRATIONS:
            if up_to is not None and pending.version > up_to:
                break
            if pending.version in done:
                continue
            for operation in pending.operations:
                self.graph.execute(migration.apply, operation)
            self.graph.execute(migration.record, pending)
            applied.append(pending.version)
        return applied

    @observe.observed("neo4j")
    def missing_constraints(self) -> list[str]:
        """The schema's constraints this database lacks (``setup()`` adds them)."""
        self.graph.connect()
        return self.graph.execute(constraints.missing_constraints)

    @observe.observed("neo4j")
    def applied_migrations(self) -> list[str]:
        """The versions of the migrations this database has had, oldest first."""
        return self.graph.execute(migration.applied_migrations)

    # A picture of the memory graph (memora_ogm.picture)
    graph_of = facade_method(picture.graph_of)

    # Organisations
    create_organization = facade_method(organization.create_organization)
    update_organization = facade_method(organization.update_organization)
    delete_organization = erasing(organization.delete_organization)
    get_organization = facade_method(organization.get_organization)
    get_all_organizations = facade_method(organization.get_all_organizations)

    # Agents
    create_agent = facade_method(agent.create_agent)
    update_agent = facade_method(agent.update_agent)
    delete_agent = facade_method(agent.delete_agent)
    get_agent = facade_method(agent.get_agent)
    get_all_org_agents = facade_method(agent.get_all_org_agents)
    get_all_user_agents = facade_method(agent.get_all_user_agents)

    # Users
    create_user = facade_method(user.create_user)
    update_user = facade_method(user.update_user)
    delete_user = erasing(user.delete_user)
    get_user = facade_method(user.get_user)
    get_all_org_users = facade_method(user.get_all_org_users)

    # Interactions
    save_interaction_with_memories = facade_method(interaction.save_interaction_with_memories)
    update_interaction_and_memories = facade_method(interaction.update_interaction_and_memories)

    @observe.observed("neo4j")
    def save_interactions_with_memories(
        self,
        org_id: str,
        agent_id: str,
        items: Sequence[tuple[str, MemoriesAndInteraction]],
    ) -> list[tuple[str, datetime] | Exception]:
        """Save many interactions at once, for importers: each item a ``(user_id,
        memories_and_interaction)`` as ``save_interaction_with_memories`` takes them, saved
        in shared transactions. Returns, in order, each save's ``(interaction_id, date)``
        or the exception that refused it alone (bad input, an unknown user or agent)."""
        if not isinstance(items, list | tuple) or not all(
            isinstance(item, list | tuple) and len(item) == 2 for item in items
        ):
            raise ValueError("`items` must be a list of (user_id, memories_and_interaction) pairs.")
        arguments = [(org_id, agent_id, user_id, data) for user_id, data in items]
        return self.graph.execute_each(interaction.save_interaction_with_memories, arguments)

    get_interaction = resolving(interaction.get_interaction)
    get_all_user_interactions = resolving(interaction.get_all_user_interactions)
    delete_user_interaction_and_its_memories = erasing(
        interaction.delete_user_interaction_and_its_memories
    )
    delete_all_user_interactions_and_their_memories = erasing(
        interaction.delete_all_user_interactions_and_their_memories
    )

    # Memories
    get_all_user_memories = resolving(memory.get_all_user_memories)
    get_user_memory = resolving(memory.get_user_memory)
    get_user_memory_history = resolving(memory.get_user_memory_history)
    fetch_user_memories_resolved = resolving(memory.fetch_user_memories_resolved)
    fetch_user_memories_resolved_batch = resolving(memory.fetch_user_memories_resolved_batch)
    delete_user_memory = erasing(memory.delete_user_memory)
    delete_all_user_memories = erasing(memory.delete_all_user_memories)
