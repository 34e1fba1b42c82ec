"""The Flask extension: ``MemoraOGM(app)``, or ``ext.init_app(app)`` (docs/flask.md).

Each app's state is in ``app.extensions["memora_ogm"]``, so one extension serves several
apps. ``ext.interface`` is opened per process on first use (a ``gunicorn --preload``
master opens nothing its workers would inherit); in an app context the node classes read
the app's Neo4j; ``flask memora-ogm ...`` runs the commands on the app's settings.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING, Any

import click
from flask import Flask, current_app, g
from flask.cli import AppGroup, with_appcontext
from neo4j import Driver, GraphDatabase

from memora_ogm.cli.commands import COMMANDS, Command, Option, run
from memora_ogm.config import NAMES, MemoraConfig, PerProcess, close_sync

if TYPE_CHECKING:
    from memora_ogm import sync

#: The key of the app's state in ``app.extensions``, and the prefix of its config keys.
EXTENSION = "memora_ogm"
CONFIG_PREFIX = "MEMORA_OGM_"
#: Where an app context keeps what it bound (``g`` is per app context).
_BOUND = "_memora_ogm_bound"


@dataclass
class MemoraState:
    """One app's settings and what it holds per process: ``app.extensions["memora_ogm"]``."""

    config: MemoraConfig
    interface: PerProcess[sync.Neo4jGraphInterface]
    #: The node classes' driver, separate so they never open the facade's vector store
    #: (an embedded one locks its folder, which ``check`` then could not open).
    driver: PerProcess[Driver]

    @classmethod
    def from_app(cls, app: Flask) -> MemoraState:
        keys = {CONFIG_PREFIX + name: name for name in NAMES}
        config = MemoraConfig.from_settings(
            {name: app.config[key] for key, name in keys.items() if key in app.config}
        )
        conn = config.neo4j
        driver = partial(
            GraphDatabase.driver, conn.uri, auth=conn.auth, notifications_min_severity="OFF"
        )
        return cls(
            config, PerProcess(config.open_sync, close_sync), PerProcess(driver, Driver.close)
        )

    def close(self) -> None:
        """Close what this process opened for the app (also done at exit)."""
        self.interface.close()
        self.driver.close()


def state(app: Flask) -> MemoraState:
    """The app's state; a clear error when the extension was never given the app."""
    found = app.extensions.get(EXTENSION)
    if not isinstance(found, MemoraState):
        raise RuntimeError(
            f"memora-ogm is not set up on the Flask app {app.name!r}: call "
            "MemoraOGM(app) or ext.init_app(app) in the app factory before using it"
        )
    return found


class MemoraOGM:
    """memora-ogm for Flask apps; holds no app (``init_app`` registers each one)."""

    def __init__(self, app: Flask | None = None) -> None:
        if app is not None:
            self.init_app(app)

    def init_app(self, app: Flask) -> None:
        """Read the app's settings and register its teardown, commands and shell names."""
        if EXTENSION in app.extensions:
            raise RuntimeError(f"memora-ogm is already set up on the Flask app {app.name!r}")
        app.extensions[EXTENSION] = MemoraState.from_app(app)
        app.teardown_appcontext(unbind_nodes)
        app.shell_context_processor(shell_context)
        app.cli.add_command(commands)
        from flask import appcontext_pushed

        appcontext_pushed.connect(bind_nodes, app, weak=False)

    @property
    def interface(self) -> sync.Neo4jGraphInterface:
        """The current app's sync facade in this process, opened on first use."""
        return state(current_app).interface.get()

    def config(self, app: Flask | None = None) -> MemoraConfig:
        """The settings the extension read for ``app`` (the current app by default)."""
        return state(app or current_app).config


def bind_nodes(app: Flask, **_: Any) -> None:
    """In a new app context, point neomodel at this app's Neo4j (driver and database).
    Only context variables are set (``memora_ogm.sync.point_neomodel``), so each thread
    or task serving a request sees its own app's, whichever apps the others are on."""
    from memora_ogm.sync import point_neomodel

    found = state(app)
    setattr(g, _BOUND, point_neomodel(found.driver.get(), found.config.neo4j.database))


def unbind_nodes(_: BaseException | None = None) -> None:
    """What :func:`bind_nodes` bound for this app context, undone."""
    undo: Callable[[], None] | None = g.pop(_BOUND, None)
    if undo is not None:
        undo()


def shell_context() -> dict[str, Any]:
    """``flask shell``'s names: those ``memora-ogm shell`` preloads, on this app's facade."""
    from memora_ogm.cli.shell import namespace

    memora = state(current_app).interface.get()
    return {**namespace(memora, None), "vectors": memora.get_associated_vector_db()}


commands = AppGroup("memora-ogm", help="memora-ogm's commands on this app's settings.")


def _parameter(option: Option) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """``option`` as click declares it."""
    if option.positional:
        return click.argument(option.dest, type=option.type)
    if option.switch:
        return click.option(*option.flags, is_flag=True, help=option.help)
    default = {} if option.default is None else {"default": option.default}  # None: unset
    return click.option(
        *option.flags,
        type=click.Choice(option.choices) if option.choices else option.type,
        required=option.required,
        help=option.help,
        **default,
    )


def _command(command: Command) -> click.Command:
    """``flask memora-ogm <name>``: the function ``memora-ogm <name>`` runs, on the app's
    settings (its vector store unless an option names one); exits with its status."""

    def run_on_app(**values: Any) -> None:
        config = state(current_app).config
        sys.exit(run(command, config, values, lambda name: CONFIG_PREFIX + name))

    for option in reversed(command.options):
        run_on_app = _parameter(option)(run_on_app)
    return click.command(command.name, help=command.help)(with_appcontext(run_on_app))


for _shared in COMMANDS.values():
    commands.add_command(_command(_shared))
