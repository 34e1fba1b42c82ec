"""Connects neomodel at start-up and builds the app's one memora-ogm interface lazily."""

from __future__ import annotations

from functools import cache

from django.apps import AppConfig
from django.conf import settings
from neomodel import get_config

from memora_ogm.sync import Neo4jGraphInterface, QdrantDB
from memora_ogm.vector_db.embedding import HashingEmbedding


class MemoraExampleConfig(AppConfig):  # type: ignore[misc]  # Django ships no types
    name = "examples.django_app"
    label = "memora_example"

    def ready(self) -> None:
        # What django_neomodel does with this setting.
        get_config().database_url = settings.NEOMODEL_NEO4J_BOLT_URL


@cache
def memora() -> Neo4jGraphInterface:
    """The interface on neomodel's connection, set up on first use (``setup`` is idempotent)."""
    interface = Neo4jGraphInterface.from_neomodel(
        database=settings.MEMORA_DATABASE,
        # Offline feature hashing, so the example runs where no model can be downloaded;
        # without embedding_function the store embeds with Memora's models.
        associated_vector_db=QdrantDB(
            location=settings.MEMORA_QDRANT_LOCATION, embedding_function=HashingEmbedding()
        ),
    )
    interface.setup()
    return interface
