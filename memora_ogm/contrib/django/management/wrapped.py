"""``manage.py memora_<name>``: the function ``memora-ogm <name>`` runs, on the project's
settings, with the same options (declared on Django's parser) and exit status."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from memora_ogm.cli.commands import COMMANDS, Command, add_arguments, run
from memora_ogm.config import ConfigurationError
from memora_ogm.contrib.django.conf import SETTING, memora_config

#: Exit status when the project's ``MEMORA_OGM`` settings are unusable: bad input.
EXIT_BAD_SETTINGS = 2


class SharedCommand(BaseCommand):  # type: ignore[misc]  # Django ships no types
    """A management command running one of :data:`memora_ogm.cli.commands.COMMANDS`."""

    command: Command
    #: They mend what the checks report, so they run when the checks fail.
    requires_system_checks: list[str] = []

    def add_arguments(self, parser: CommandParser) -> None:
        add_arguments(parser, self.command)

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            config = memora_config()
        except ConfigurationError as error:
            raise CommandError(f"{SETTING}: {error}", returncode=EXIT_BAD_SETTINGS) from error
        status = run(self.command, config, options, lambda name: f"{SETTING}[{name!r}]")
        if status:
            name = self.command.name
            raise CommandError(f"memora-ogm {name} exited {status}", returncode=status)


def command(name: str) -> type[SharedCommand]:
    """The management command of the shared command ``name``."""
    shared = COMMANDS[name]
    return type("Command", (SharedCommand,), {"command": shared, "help": shared.help})
