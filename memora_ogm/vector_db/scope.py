"""``MemorySearchScope``: one enum shared by the async vector stores and their sync twins."""

from __future__ import annotations

from enum import Enum


class MemorySearchScope(Enum):
    """Which memories a search may return."""

    ORGANIZATION = "organization"
    """Every memory of the organisation, whichever user it belongs to."""
    USER = "user"
    """Only the memories of one user of the organisation."""
