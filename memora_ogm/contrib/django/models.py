"""The admin's anchor: a model with no table, so that Django's admin gives the memory
graph an entry, a content type and permissions. Its rows live in Neo4j and are read
through the facade; nothing reads or writes this model's table (it has none)."""

from __future__ import annotations

from django.db import models


class MemoryGraph(models.Model):  # type: ignore[misc]  # Django ships no types
    """Memora's graph in the admin: ``view``, ``delete`` (memories and interactions) and
    ``erase_user`` (a user from the graph and the vector store)."""

    class Meta:
        managed = False
        verbose_name = "memory graph"
        verbose_name_plural = "memory graph"
        default_permissions = ("view", "delete")
        permissions = [("erase_user", "Can erase a user from the graph and the vector store")]
