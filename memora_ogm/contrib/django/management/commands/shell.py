"""``manage.py shell`` with memora-ogm's facade and node classes auto-imported.

Django's documented way to add auto-imports (5.2+): an app's ``shell`` command that
extends ``get_auto_imports()``. Django runs the first app's command of a name, so this
one replaces the stock shell and keeps all it does; on older Django, which has no
auto-imports, it is the stock shell.
"""

from __future__ import annotations

from django.core.management.commands import shell

from memora_ogm.contrib.django.shell import AUTO_IMPORTS


class Command(shell.Command):  # type: ignore[misc]  # Django ships no types
    def get_auto_imports(self) -> list[str]:
        return [*super().get_auto_imports(), *AUTO_IMPORTS]
