"""``manage.py shell`` with memora-ogm's facade and node classes auto-imported.

Django's documented way (5.2+): it replaces the stock shell and keeps all it does; on
older Django it is the stock shell.
"""

from __future__ import annotations

from django.core.management.commands import shell

from memora_ogm.contrib.django.shell import AUTO_IMPORTS


class Command(shell.Command):  # type: ignore[misc]  # Django ships no types
    def get_auto_imports(self) -> list[str]:
        return [*super().get_auto_imports(), *AUTO_IMPORTS]
