"""``memora-ogm shell``: a Python shell on the memory graph, like ``manage.py shell``.

It connects as ``memora-ogm demo`` does, installs the schema (idempotent) and opens IPython
if it is installed, else the standard REPL; ``-c`` or a script on stdin runs without a
prompt. An ``Interaction`` or ``Memory`` node prints with what the facade reads about it.
"""

from __future__ import annotations

import argparse
import builtins
import code
import contextlib
import functools
import os
import sys
import tempfile
import traceback
from collections.abc import Callable
from importlib.util import find_spec
from typing import TYPE_CHECKING, Any

from memora_ogm import nodes
from memora_ogm._version import __version__
from memora_ogm.cli.commands import add_store_options
from memora_ogm.cli.inspector import DEFAULT_LIMIT, timeline_lines
from memora_ogm.cli.pretty import format_value
from memora_ogm.errors import NotFoundError
from memora_ogm.schema import models, storage
from memora_ogm.schema.models import node_line
from memora_ogm.server.connection import Neo4jConnection

if TYPE_CHECKING:  # memora_ogm.sync loads qdrant-client: only when the shell starts
    from memora_ogm.sync import Neo4jGraphInterface, QdrantDB

NODE_NAMES = tuple(cls.__name__ for cls in nodes.NODE_CLASSES)
STORAGE_NAMES = ("MemoriesAndInteraction", "MemoryToStore", "ContraryMemoryToStore")


def shown(memora: Neo4jGraphInterface, value: object) -> str | None:
    """Readable text for a shell result, ``None`` to leave it to the default display. An
    interaction or memory node comes with its messages or sources, read by the facade."""
    try:
        if isinstance(value, nodes.Interaction):
            found = memora.get_interaction(value.org_id, value.user_id, value.interaction_id)
            return "\n".join([node_line(value), *found.lines("  ")])
        if isinstance(value, nodes.Memory):
            memory = memora.get_user_memory(value.org_id, value.user_id, value.memory_id)
            return "\n".join([node_line(value), *memory.entry_lines("  ")])
    except NotFoundError:
        pass  # deleted since, or not a facade-shaped node: show its properties
    return format_value(value)


def _vectors(args: argparse.Namespace) -> tuple[QdrantDB | None, str]:
    """The store named, in the layout its collection was written in (Memora's for a new one)."""
    from memora_ogm.cli.stores import stored_layout
    from memora_ogm.sync import QdrantDB

    where: dict[str, Any]
    if args.qdrant_path is not None:
        where, label = {"path": args.qdrant_path}, f"Qdrant Edge in {args.qdrant_path}"
    elif args.qdrant_url is not None:
        where, label = {"url": args.qdrant_url}, f"Qdrant at {args.qdrant_url}"
    else:
        return None, "none (pass --qdrant-path DIR or --qdrant-url URL)"
    return QdrantDB(**where, **(stored_layout(where, None) or {})), label


def namespace(memora: Neo4jGraphInterface, vectors: QdrantDB | None) -> dict[str, Any]:
    from neomodel import db

    def show(org_id: str, user_id: str, limit: int = DEFAULT_LIMIT, graph: bool = False) -> None:
        """Print a user's interactions, newest first, with messages, memories and history;
        with ``graph=True``, write their picture to a page and print where."""
        if not graph:
            print("\n".join(timeline_lines(memora, org_id, user_id, limit)))
            return
        handle, path = tempfile.mkstemp(prefix="memora-graph-", suffix=".html")
        os.close(handle)
        picture = memora.graph_of(org_id, user_id, limit).write_html(path)
        print(f"{picture}: open it in a browser")

    loaded: dict[str, Any] = {"memora": memora, "vectors": vectors, "db": db, "show": show}
    loaded.update(models=models, storage=storage)
    loaded.update({name: getattr(nodes, name) for name in NODE_NAMES})
    loaded.update({name: getattr(storage, name) for name in STORAGE_NAMES})
    return loaded


def banner(conn: Neo4jConnection, vector_text: str, started: bool) -> str:
    how = "started for this shell, stopped on exit" if started else f"via {conn.backend}"
    return "\n".join(
        [
            f"memora-ogm {__version__} shell: Neo4j at {conn.uri} "
            f"(database {conn.database}, {how})",
            f"vector store: {vector_text}",
            "loaded:",
            "  memora    memora_ogm.sync.Neo4jGraphInterface, e.g. memora.get_all_organizations()",
            "  show      show(org_id, user_id, limit=20): a user's interactions, newest first;"
            " graph=True draws them in a page",
            "  nodes     " + ", ".join(NODE_NAMES) + " (memora_ogm.nodes)",
            "  db        neomodel's db, on the same server: db.cypher_query('RETURN 1')",
            "  storage   " + ", ".join(STORAGE_NAMES) + " (memora_ogm.schema.storage)",
            "  models    memora_ogm.schema.models (the return models)",
            "  vectors   the vector store, or None",
        ]
    )


def _ipython(ns: dict[str, Any], text: str, show: Callable[[object], str | None]) -> None:
    from IPython.terminal.ipapp import TerminalIPythonApp
    from traitlets.config import Config

    config = Config()
    config.TerminalInteractiveShell.banner2 = text + "\n"
    app = TerminalIPythonApp.instance(config=config, user_ns=ns)
    app.initialize(argv=[])
    formatter = app.shell.display_formatter.formatters["text/plain"]  # type: ignore[union-attr]

    def printer_for(fallback: Any) -> Callable[[object, Any, bool], None]:
        def printer(value: object, p: Any, cycle: bool) -> None:
            readable = None if cycle else show(value)
            if readable is not None:
                p.text(readable)
            elif fallback is not None:
                fallback(value, p, cycle)
            else:
                p.text(repr(value))

        return printer

    for cls in (list, tuple, nodes.Interaction, nodes.Memory):
        formatter.for_type(cls, printer_for(formatter.type_printers.get(cls)))
    app.start()


def _plain(ns: dict[str, Any], text: str, show: Callable[[object], str | None]) -> None:
    with contextlib.suppress(ImportError):  # Windows without pyreadline
        import readline
        import rlcompleter

        readline.set_completer(rlcompleter.Completer(ns).complete)
        readline.parse_and_bind("tab: complete")
    previous = sys.displayhook

    def displayhook(value: object) -> None:
        readable = None if value is None else show(value)
        if readable is None:
            previous(value)
        else:
            print(readable)
            builtins._ = value  # type: ignore[attr-defined]

    sys.displayhook = displayhook
    try:
        with contextlib.suppress(SystemExit):
            code.interact(banner=text, local=ns, exitmsg="")
    finally:
        sys.displayhook = previous


def _run(source: str, filename: str, ns: dict[str, Any]) -> int:
    """Run code as ``python -c`` would, in the shell's namespace; 1 on an exception."""
    try:
        exec(compile(source, filename, "exec"), ns)
    except SystemExit as exc:
        return exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    except BaseException:  # noqa: B036 - report it as python does, then fail
        traceback.print_exc()
        return 1
    return 0


def connect_neomodel(conn: Neo4jConnection) -> None:
    """Connect neomodel's ``db`` (the node classes, ``db.cypher_query``) to the server, as
    an application does: an interface never lends neomodel its own driver."""
    from neo4j import GraphDatabase
    from neomodel import db, get_config

    get_config().database_name = conn.database
    db.set_connection(
        driver=GraphDatabase.driver(conn.uri, auth=conn.auth, notifications_min_severity="OFF")
    )


def cmd_shell(args: argparse.Namespace) -> int:
    from neomodel import db

    from memora_ogm.cli.demo import demo_connection
    from memora_ogm.sync import Neo4jGraphInterface

    with demo_connection() as conn:
        vectors, vector_text = _vectors(args)
        memora = Neo4jGraphInterface.from_connection(conn, vectors)
        connect_neomodel(conn)
        try:
            memora.setup()
            ns = namespace(memora, vectors)
            text = banner(conn, vector_text, started=conn.backend in ("maven", "docker"))
            if args.command is None and sys.stdin.isatty():
                interact = _plain if args.plain or find_spec("IPython") is None else _ipython
                interact(ns, text, functools.partial(shown, memora))
                return 0
            print(text, file=sys.stderr)
            if args.command is not None:
                return _run(args.command, "<shell -c>", ns)
            return _run(sys.stdin.read(), "<stdin>", ns)
        finally:
            memora.close()
            db.close_connection()
            if vectors is not None:
                vectors.close()


def add_shell_parser(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    shell = subparsers.add_parser(
        "shell", help="a Python shell with memora, the node classes and neomodel's db loaded"
    )
    shell.add_argument("-c", dest="command", help="run this code, no prompt")
    shell.add_argument(
        "--plain", action="store_true", help="the standard library REPL even if IPython is here"
    )
    add_store_options(shell)
    shell.set_defaults(func=cmd_shell)
