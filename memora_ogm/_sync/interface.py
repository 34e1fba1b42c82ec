# Generated from memora_ogm/_async by scripts/generate_sync.py: do not edit.
"""``Neo4jGraphInterface``: every ``BaseGraphDB`` method, composed from one mixin per domain."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from neomodel import db
from typing_extensions import Self

from memora_ogm import telemetry
from memora_ogm._sync.agent import Neo4jAgent
from memora_ogm._sync.consistency import Neo4jConsistency
from memora_ogm._sync.graph import Graph
from memora_ogm._sync.interaction import Neo4jInteraction
from memora_ogm._sync.memory import Neo4jMemory
from memora_ogm._sync.migrate import applied_versions, run_migrations
from memora_ogm._sync.organization import Neo4jOrganization
from memora_ogm._sync.schema import CONSTRAINT_NAMES, install_node_keys, missing_node_keys
from memora_ogm._sync.transfer import Neo4jTransfer
from memora_ogm._sync.user import Neo4jUser
from memora_ogm._sync.vector_base import BaseVectorDB
from memora_ogm.migrations import MIGRATIONS

if TYPE_CHECKING:
    from memora_ogm.server import Neo4jConnection


class Neo4jGraphInterface(
    Neo4jOrganization,
    Neo4jAgent,
    Neo4jUser,
    Neo4jInteraction,
    Neo4jMemory,
    Neo4jTransfer,
    Neo4jConsistency,
):
    """Memora's graph layer over the neomodel node classes of :mod:`memora_ogm.nodes`.

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
        graph = Graph(None, None, None, database or db._database_name, associated_vector_db)
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

    def setup(self, *args: object, **kwargs: object) -> None:
        """Install the schema's uniqueness guarantees (and the vector store's collection)."""
        self.graph.connect()
        enterprise = self.graph.is_enterprise()
        self.graph.write(lambda _: install_node_keys(enterprise, self.graph.cypher))
        if self.associated_vector_db is not None:
            self.associated_vector_db.setup()

    def migrate_to_schema_for_memora_v0_3_x(self, *args: object, **kwargs: object) -> None:
        """Run Memora's v0.3.x migration (``migrations/m0001_memora_v0_3_x.py``) if pending."""
        run_migrations(self.graph, MIGRATIONS, up_to="0001")

    def migrate(self) -> list[str]:
        """Apply every pending migration of ``memora_ogm.migrations``; returns their versions."""
        return run_migrations(self.graph, MIGRATIONS)

    def missing_constraints(self) -> list[str]:
        """The names of the schema's constraints this database lacks (``setup()`` adds
        them), for health checks."""
        self.graph.connect()
        return self.graph.query(
            CONSTRAINT_NAMES, {}, lambda rows: missing_node_keys({row["name"] for row in rows})
        )

    def applied_migrations(self) -> list[str]:
        """The versions of the migrations this database has had, oldest first."""
        return applied_versions(self.graph)


# Every public method traced, from one place (memora_ogm.telemetry).
telemetry.instrument_graph(Neo4jGraphInterface)
