"""``Neo4jGraphInterface``: every ``BaseGraphDB`` method, composed from one mixin per domain."""

from __future__ import annotations

import logging

from typing_extensions import Self

from memora_ogm._async.agent import Neo4jAgent
from memora_ogm._async.graph import Graph
from memora_ogm._async.interaction import Neo4jInteraction
from memora_ogm._async.memory import Neo4jMemory
from memora_ogm._async.migrate import run_migrations
from memora_ogm._async.organization import Neo4jOrganization
from memora_ogm._async.schema import install_node_keys
from memora_ogm._async.transfer import Neo4jTransfer
from memora_ogm._async.user import Neo4jUser
from memora_ogm._async.vector_base import BaseVectorDB
from memora_ogm.migrations import MIGRATIONS


class Neo4jGraphInterface(
    Neo4jOrganization, Neo4jAgent, Neo4jUser, Neo4jInteraction, Neo4jMemory, Neo4jTransfer
):
    """Memora's graph layer over the neomodel node classes of :mod:`memora_ogm.nodes`.

    The constructor is Memora's. neomodel keeps one driver per process, so the
    interface points neomodel at its own driver on first use; the target
    ``database`` is chosen per transaction.
    """

    def __init__(
        self,
        uri: str,
        username: str,
        password: str,
        database: str,
        associated_vector_db: BaseVectorDB | None = None,
        enable_logging: bool = False,
    ) -> None:
        self._attach(Graph(uri, username, password, database, associated_vector_db), enable_logging)

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
        defaults to neomodel's; ``close()`` leaves the connection open, it is the
        application's.
        """
        interface = cls.__new__(cls)
        interface._attach(Graph(None, None, None, database, associated_vector_db), enable_logging)
        return interface

    def _attach(self, graph: Graph, enable_logging: bool) -> None:
        self.graph = graph
        self.database = graph.database
        self.associated_vector_db = graph.vector_db
        self.logger = logging.getLogger("memora_ogm")
        if enable_logging:
            logging.basicConfig(level=logging.INFO)

    async def close(self) -> None:
        self.logger.info("closing the Neo4j driver")
        await self.graph.close()

    def get_associated_vector_db(self) -> BaseVectorDB | None:
        return self.associated_vector_db

    async def setup(self, *args: object, **kwargs: object) -> None:
        """Install the schema's uniqueness guarantees (and the vector store's collection)."""
        await self.graph.connect()
        await self.graph.write(lambda _: install_node_keys())
        if self.associated_vector_db is not None:
            await self.associated_vector_db.setup()

    async def migrate_to_schema_for_memora_v0_3_x(self, *args: object, **kwargs: object) -> None:
        """Run Memora's v0.3.x migration (``migrations/m0001_memora_v0_3_x.py``) if pending."""
        await run_migrations(self.graph, MIGRATIONS, up_to="0001")

    async def migrate(self) -> list[str]:
        """Apply every pending migration of ``memora_ogm.migrations``; returns their versions."""
        return await run_migrations(self.graph, MIGRATIONS)
