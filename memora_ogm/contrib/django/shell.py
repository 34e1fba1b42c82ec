"""What ``manage.py shell`` auto-imports (Django 5.2+): ``memora``, this process's sync
facade, and the node classes, by ``memora-ogm shell``'s names. ``memora`` is computed on
access (PEP 562), so importing this module opens nothing.
"""

from __future__ import annotations

from typing import Any

from memora_ogm.cli.shell import NODE_NAMES, STORAGE_NAMES

#: The import paths ``manage.py shell`` adds to Django's own auto-imports.
AUTO_IMPORTS = (
    f"{__name__}.memora",
    *(f"memora_ogm.nodes.{name}" for name in NODE_NAMES),
    *(f"memora_ogm.schema.storage.{name}" for name in STORAGE_NAMES),
)


def __getattr__(name: str) -> Any:
    if name == "memora":
        from memora_ogm.contrib.django.interfaces import get_interface

        return get_interface()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
