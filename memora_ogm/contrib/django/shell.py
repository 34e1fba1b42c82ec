"""What ``manage.py shell`` has at hand (Django 5.2+ auto-imports): ``memora``, this
process's sync facade, and the node classes, by the names ``memora-ogm shell`` uses.

``memora`` is a module attribute computed on access (PEP 562), so importing this module
opens nothing; the shell's import of ``memora_ogm.contrib.django.shell.memora`` does.
"""

from __future__ import annotations

from typing import Any

from memora_ogm.shell import NODE_NAMES, STORAGE_NAMES

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
