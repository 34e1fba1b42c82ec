"""``MemorySearchScope``: one enum shared by the async vector stores and their sync twins."""

from __future__ import annotations

from enum import Enum


class MemorySearchScope(Enum):
    """Which memories a search may return."""

    ORGANIZATION = "organization"
    USER = "user"
