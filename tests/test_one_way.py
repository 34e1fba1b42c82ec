"""One way to the database (issue 22): which library modules send statements, and which
write Cypher text.

Read from the package's source: a statement leaves through a driver, session or
transaction call (``run``, ``execute_query``, ``cypher_query``...), and Cypher text is a
string other than a docstring (the first statement of a module, class or function) that
starts with a clause or holds an expression: a call of ``size``, ``coalesce``, ``reduce``,
``range`` or ``head``, an ``AS`` alias, a ``NOT (`` or a ``$parameter``. Only the graph's
one statement path sends, and only the renderer, the named queries and the schema install
write Cypher.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

import memora_ogm

PACKAGE = Path(memora_ogm.__file__).parent
#: Calls that send a statement (or open a transaction) on a driver, session or ``adb``.
SENDING = {"cypher_query", "execute_query", "execute_read", "execute_write", "run"}
#: Owners of a ``run`` that is not a statement: processes, event loops, the ``Work`` of
#: ``Graph.transaction`` (which sends through the graph's one path), the MCP server's
#: web server and session manager, a ``memora-ogm`` command's function, and the empty
#: context a batch of coalesced writes starts in.
NOT_STATEMENTS = {
    "subprocess",
    "asyncio",
    "work",
    "uvicorn",
    "app_server",
    "server.session_manager",
    "command",
    "contextvars.Context()",
}
#: Where statements may leave, by module: the graph's one statement path, the schema
#: install on neomodel's own connection (neomodel's ``install_labels``) and the test
#: clean, which sends the compiler's plans on the test's bare driver.
SENDERS = {
    ("_async/graph.py", "runner.run"),
    ("_async/schema.py", "adb.cypher_query"),
    ("testing.py", "driver.execute_query"),
}
#: Where ``Graph.run(call)``, the door of a call declared already, is taken: it sends
#: through the graph's one path above.
DOORS = {
    ("_async/graph.py", "self.run"),
    ("_async/paging.py", "graph.run"),
    ("_async/vector_changes.py", "graph.run"),
    ("cli/demo.py", "graph.graph.run"),
}
#: Modules allowed to write Cypher text: the engine's renderer (its clauses and the layout
#: of a compiled statement), the named queries and the schema install. The compiler and
#: the operations of one domain that extend it (an interaction's chain, an erasure's or a
#: transfer's batches, a migration's) build their statements from the renderer's clauses.
CYPHER_WRITERS = {"engine/plan.py", "engine/queries.py", "engine/constraints.py"}
CLAUSE = re.compile(
    r"^\s*(MATCH|OPTIONAL MATCH|CREATE|MERGE|UNWIND|CALL|RETURN|WITH|SHOW|DROP|FOREACH|DETACH"
    r"|SET|WHERE|LIMIT|DELETE|REMOVE)\b"
)
#: A function the renderer builds, an alias, a negation, or a ``$parameter`` (``$NAME`` in
#: capitals is an environment variable).
EXPRESSION = re.compile(
    r"\b(size|coalesce|reduce|range|head)\(|\bAS [A-Za-z_`]|\bNOT \(|\$(?![A-Z0-9_]+\b)[A-Za-z_]"
)


def _modules() -> dict[str, ast.Module]:
    """The hand-written modules (the sync twin is generated from ``_async``)."""
    return {
        path.relative_to(PACKAGE).as_posix(): ast.parse(path.read_text())
        for path in sorted(PACKAGE.rglob("*.py"))
        if "_sync" not in path.relative_to(PACKAGE).parts
    }


def _senders(module: ast.Module) -> set[str]:
    return {
        ast.unparse(node.func)
        for node in ast.walk(module)
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr in SENDING
        and not (node.func.attr == "run" and ast.unparse(node.func.value) in NOT_STATEMENTS)
    }


def _docstrings(module: ast.Module) -> set[int]:
    """The docstrings: a string as the first statement of a module, class or function."""
    return {
        id(node.body[0].value)
        for node in ast.walk(module)
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef)
        and node.body
        and isinstance(node.body[0], ast.Expr)
        and isinstance(node.body[0].value, ast.Constant)
        and isinstance(node.body[0].value.value, str)
    }


def _strings(module: ast.Module) -> list[str]:
    """Each string's text but the docstrings'."""
    docstrings = _docstrings(module)
    texts = []
    for node in ast.walk(module):
        if id(node) in docstrings:
            continue
        if isinstance(node, ast.JoinedStr):
            texts.append("".join(map(_text, node.values)))
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            texts.append(node.value)
    return texts


def _text(part: ast.expr) -> str:
    """An f-string's part, a value as its source: ``${name}`` is a parameter, ``${ENV}`` not."""
    if isinstance(part, ast.FormattedValue):
        return ast.unparse(part.value)
    return str(part.value) if isinstance(part, ast.Constant) else ""


def _cypher_texts(module: ast.Module) -> list[str]:
    """The strings of ``module`` that read as Cypher."""
    return [text for text in _strings(module) if CLAUSE.match(text) or EXPRESSION.search(text)]


def test_only_the_one_statement_path_sends_statements() -> None:
    sent = {(name, call) for name, module in _modules().items() for call in _senders(module)}
    assert sent - DOORS == SENDERS


def test_only_the_renderer_the_named_queries_and_the_schema_write_cypher() -> None:
    texts = {name: _cypher_texts(module) for name, module in _modules().items()}
    writers = {name for name, found in texts.items() if found}
    assert writers == CYPHER_WRITERS, {name: texts[name] for name in writers - CYPHER_WRITERS}


#: One of each kind of Cypher literal, as a builder might write it, and what the check finds.
PLANTED = {
    "a clause in a call's argument": 'work.add(cy("MATCH (n) DETACH DELETE n"))',
    "a string statement after the docstring": 'def f():\n    """Prose."""\n    "RETURN 1"',
    "SET": 'cy("SET ", assigned)',
    "WHERE": 'cy("WHERE n.id = ", value)',
    "LIMIT": 'cy("LIMIT 10")',
    "DELETE": 'cy("DELETE node")',
    "REMOVE": 'cy("REMOVE n:Label")',
    "WITH": 'cy("WITH n")',
    "an alias": 'cy(value, " AS a")',
    "a negation": 'cy("NOT (", condition, ")")',
    "a parameter in an f-string": 'cy(f"n.id = ${name}")',
    "a function": 'cy("size(", value, ")")',
}


@pytest.mark.parametrize("source", PLANTED.values(), ids=PLANTED.keys())
def test_each_kind_of_planted_cypher_is_caught(source: str) -> None:
    assert _cypher_texts(ast.parse(source)), source


def test_docstrings_and_prose_are_not_cypher() -> None:
    source = (
        '"""MATCH in a module\'s docstring."""\n'
        'class C:\n    """RETURN in a class\'s docstring."""\n'
        'def f():\n    """SET in a function\'s: size(x), $param, a AS b."""\n'
        '    raise ValueError("the name is set as given; see $MEMORA_OGM_HOME")\n'
    )
    assert _cypher_texts(ast.parse(source)) == []
