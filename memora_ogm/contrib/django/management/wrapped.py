"""``manage.py memora_<name>``: the ``memora-ogm <name>`` command on the project's settings.

Options come from the subcommand's own parser function, so the two never differ; it runs
through :func:`memora_ogm.cli.main` with the settings as its environment, and its exit
status is the management command's.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Mapping
from typing import Any, TypeAlias, cast

from django.core.management.base import BaseCommand, CommandError, CommandParser

from memora_ogm import cli
from memora_ogm.config import ConfigurationError, MemoraConfig
from memora_ogm.contrib.django.conf import memora_config

Subparsers: TypeAlias = "argparse._SubParsersAction[argparse.ArgumentParser]"
#: Exit status when the project's ``MEMORA_OGM`` settings are unusable: bad input.
EXIT_BAD_SETTINGS = 2
#: Options that name the vector store, filled from ``MEMORA_OGM`` when not given.
STORE_OPTIONS = ("qdrant_url", "qdrant_path")


class _OptionsOnly(argparse.ArgumentParser):
    """A subcommand's parser without ``-h``: Django's parser has its own."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **{**kwargs, "add_help": False})


def subcommand_parser(declare: Callable[[Subparsers], None]) -> tuple[str, argparse.ArgumentParser]:
    """The subcommand's name and its options, as ``declare`` gives them to ``memora-ogm``."""
    options_only = argparse.ArgumentParser().add_subparsers(parser_class=_OptionsOnly)
    subparsers = cast("Subparsers", options_only)  # a parser class of its own, same API
    declare(subparsers)
    ((name, parser),) = subparsers.choices.items()
    (choice,) = subparsers._choices_actions
    parser.description = choice.help
    return name, parser


def command_line(parser: argparse.ArgumentParser, options: Mapping[str, Any]) -> list[str]:
    """The arguments that make ``parser`` parse to ``options`` again (defaults left out)."""
    argv: list[str] = []
    for action in parser._actions:
        value = options.get(action.dest, action.default)
        if not action.option_strings:
            argv.append(str(value))
        elif value is not None and value != action.default:
            argv.append(action.option_strings[-1])
            if action.nargs != 0:
                argv.append(str(value))
    return argv


def with_store_defaults(options: Mapping[str, Any], config: MemoraConfig) -> dict[str, Any]:
    """``options`` with ``MEMORA_OGM``'s vector store, collection and embedder (when it is
    named, not a function object) where none was given."""
    filled = dict(options)
    if not any(filled.get(name) for name in STORE_OPTIONS):
        filled.update(qdrant_url=config.qdrant_url, qdrant_path=config.qdrant_path)
    if not filled.get("collection"):
        filled["collection"] = config.collection
    if not filled.get("embedder") and isinstance(config.embedder, str):
        filled["embedder"] = config.embedder
    return filled


class WrappedCommand(BaseCommand):  # type: ignore[misc]  # Django ships no types
    """A management command that runs a ``memora-ogm`` subcommand (see :func:`command`)."""

    declare: Callable[[Subparsers], None]
    #: They mend what the checks report, so they run when the checks fail.
    requires_system_checks: list[str] = []

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self.subcommand, self.cli_parser = subcommand_parser(type(self).declare)
        self.help = self.cli_parser.description
        super().__init__(*args, **kwargs)

    def create_parser(self, prog_name: str, subcommand: str, **kwargs: Any) -> CommandParser:
        parser: CommandParser = super().create_parser(
            prog_name, subcommand, parents=[self.cli_parser], **kwargs
        )
        if self._settings_name_a_store():
            for group in parser._mutually_exclusive_groups:
                group.required = False  # MEMORA_OGM gives the store
        return parser

    @staticmethod
    def _settings_name_a_store() -> bool:
        try:
            return memora_config().has_vector_store
        except ConfigurationError:
            return False  # handle() reports the settings

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            config = memora_config()
        except ConfigurationError as error:
            raise CommandError(f"MEMORA_OGM: {error}", returncode=EXIT_BAD_SETTINGS) from error
        argv = [
            self.subcommand,
            *command_line(self.cli_parser, with_store_defaults(options, config)),
        ]
        status = cli.main(argv, environ=config.environ())
        if status:
            raise CommandError(f"memora-ogm {self.subcommand} exited {status}", returncode=status)


def command(declare: Callable[[Subparsers], None]) -> type[WrappedCommand]:
    """The management command of the ``memora-ogm`` subcommand ``declare`` declares."""
    return type("Command", (WrappedCommand,), {"declare": staticmethod(declare)})
