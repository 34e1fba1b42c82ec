"""The generated Cypher of every public method, as golden files a review shows.

Each shape (a method, and where its statements differ: found or not, with contrary
memories or without, new or updated...) runs the real facade on a server while every
statement the driver is sent is recorded; the statements must equal
``tests/golden/<shape>.cypher`` (``MEMORA_OGM_UPDATE_GOLDEN=1`` rewrites the files).
Every public method of the facade has a golden file, so do the compiled counting
reads of ``memora-ogm inspect`` (run on the facade's graph as the inspector runs them),
and every golden statement is accepted by the server's planner (``EXPLAIN``).
"""

from __future__ import annotations

import inspect
import os
import re
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from interaction_helpers import DAY, LATER, NO_MEMORY, World, chat, conversation, make_world, save
from neo4j import AsyncSession, Driver
from neo4j._async.work.transaction import AsyncTransactionBase

from memora_ogm._async import paging as async_paging
from memora_ogm._async.interface import Neo4jGraphInterface
from memora_ogm.calls.picture import organization_overview, overview
from memora_ogm.errors import NotFoundError
from memora_ogm.server import Neo4jConnection
from memora_ogm.testing import clear_database
from memora_ogm.vector_db.embedding import HashingEmbedding
from memora_ogm.vector_db.pending import Journal, Pending
from memora_ogm.vector_db.qdrant import QdrantDB

GOLDEN = Path(__file__).parent / "golden"
UPDATE = os.environ.get("MEMORA_OGM_UPDATE_GOLDEN") == "1"
#: Public methods that send no statement (the constructors among them).
SEND_NOTHING = {"close", "get_associated_vector_db", "from_connection", "from_neomodel"}
#: The longest line a golden file may hold (its parameter header aside).
LINE_LIMIT = 200
#: Separates the statements of one golden file.
SEPARATOR = "\n\n// ---\n\n"


@dataclass
class Tenant:
    """A world with one saved interaction of two messages and two memories."""

    world: World
    interaction_id: str
    memory_id: str
    #: What the shape's preparation (:data:`PREPARED`) gave, made before recording.
    prepared: Any = None


Call = Callable[[Any, Tenant], Awaitable[Any]]


async def _collect(stream: AsyncIterator[Any]) -> list[Any]:
    return [record async for record in stream]


def _resolved(memora: Any, t: Tenant, ids: list[str]) -> Any:
    return memora.fetch_user_memories_resolved([t.world.ids(m) for m in ids])


def _save(memories: bool = True, contrary: bool = False, messages: int = 2) -> Call:
    def call(memora: Any, t: Tenant) -> Any:
        data = conversation(
            chat(*(f"message {n}" for n in range(messages))),
            when=LATER,
            memories=[("likes tea", [0] if messages else [])] if memories else [],
            contrary=[("likes coffee", [0] if messages else [], t.memory_id)] if contrary else [],
        )
        w = t.world
        return memora.save_interaction_with_memories(w.org_id, w.agent_id, w.user_id, data)

    return call


def _update(messages: list[str], contrary: bool = False, found: bool = True) -> Call:
    def call(memora: Any, t: Tenant) -> Any:
        data = conversation(
            chat(*messages),
            when=LATER,
            memories=[("likes tea", [0])],
            contrary=[("likes coffee", [0], t.memory_id)] if contrary else [],
        )
        w = t.world
        interaction_id = t.interaction_id if found else "no-interaction"
        return memora.update_interaction_and_memories(
            w.org_id, w.agent_id, w.user_id, interaction_id, data
        )

    return call


def _save_many(memora: Any, t: Tenant) -> Any:
    """Two saves of one shape from one caller: one batched statement."""
    w = t.world
    data = conversation(chat("message 0", "message 1"), when=LATER, memories=[("likes tea", [0])])
    items = [(w.user_id, data), (w.user_id, data)]
    return memora.save_interactions_with_memories(w.org_id, w.agent_id, items)


#: Shape name -> the call whose statements its golden file holds.
SHAPES: dict[str, Call] = {
    "save_interactions_with_memories": _save_many,
    "setup": lambda m, t: m.setup(),
    "migrate_to_schema_for_memora_v0_3_x": lambda m, t: m.migrate_to_schema_for_memora_v0_3_x(),
    "create_organization": lambda m, t: m.create_organization("Globex"),
    "update_organization": lambda m, t: m.update_organization(t.world.org_id, "Initech"),
    "delete_organization": lambda m, t: m.delete_organization(t.world.org_id),
    "delete_organization__vector_store": lambda m, t: _with_store(
        m, m.delete_organization(t.world.org_id)
    ),
    "get_organization": lambda m, t: m.get_organization(t.world.org_id),
    "get_all_organizations": lambda m, t: m.get_all_organizations(),
    "create_agent": lambda m, t: m.create_agent(t.world.org_id, "Helper"),
    "create_agent__of_user": lambda m, t: m.create_agent(
        t.world.org_id, "Helper", user_id=t.world.user_id
    ),
    "update_agent": lambda m, t: m.update_agent(t.world.org_id, t.world.agent_id, "Helper"),
    "delete_agent": lambda m, t: m.delete_agent(t.world.org_id, t.world.agent_id),
    "get_agent": lambda m, t: m.get_agent(t.world.org_id, t.world.agent_id),
    "get_all_org_agents": lambda m, t: m.get_all_org_agents(t.world.org_id),
    "get_all_user_agents": lambda m, t: m.get_all_user_agents(t.world.org_id, t.world.user_id),
    "create_user": lambda m, t: m.create_user(t.world.org_id, "Bea"),
    "update_user": lambda m, t: m.update_user(t.world.org_id, t.world.user_id, "Bea"),
    "delete_user": lambda m, t: m.delete_user(t.world.org_id, t.world.user_id),
    "delete_user__vector_store": lambda m, t: _with_store(
        m, m.delete_user(t.world.org_id, t.world.user_id)
    ),
    "get_user": lambda m, t: m.get_user(t.world.org_id, t.world.user_id),
    "get_all_org_users": lambda m, t: m.get_all_org_users(t.world.org_id),
    "save_interaction_with_memories": _save(),
    "save_interaction_with_memories__no_memories": _save(memories=False),
    "save_interaction_with_memories__contrary": _save(contrary=True),
    "save_interaction_with_memories__no_messages": _save(messages=0),
    "update_interaction_and_memories__same_messages": _update(["I live in Oslo", "Nice!"]),
    "update_interaction_and_memories__contrary": _update(["I live in Bergen"], contrary=True),
    "update_interaction_and_memories__not_found": _update(["Hi"], found=False),
    "get_interaction": lambda m, t: m.get_interaction(
        t.world.org_id, t.world.user_id, t.interaction_id
    ),
    "get_interaction__without_messages": lambda m, t: m.get_interaction(
        t.world.org_id, t.world.user_id, t.interaction_id, with_messages=False
    ),
    "get_interaction__without_messages_or_memories": lambda m, t: m.get_interaction(
        t.world.org_id, t.world.user_id, t.interaction_id, with_messages=False, with_memories=False
    ),
    "get_all_user_interactions": lambda m, t: m.get_all_user_interactions(
        t.world.org_id, t.world.user_id
    ),
    "get_all_user_interactions__page_without_messages": lambda m, t: m.get_all_user_interactions(
        t.world.org_id, t.world.user_id, with_their_messages=False, skip=1, limit=5
    ),
    "get_all_user_interactions__page_without_either": lambda m, t: m.get_all_user_interactions(
        t.world.org_id, t.world.user_id, False, False
    ),
    "delete_user_interaction_and_its_memories": lambda m, t: (
        m.delete_user_interaction_and_its_memories(
            t.world.org_id, t.world.user_id, t.interaction_id
        )
    ),
    "delete_all_user_interactions_and_their_memories": lambda m, t: (
        m.delete_all_user_interactions_and_their_memories(t.world.org_id, t.world.user_id)
    ),
    "get_all_user_memories": lambda m, t: m.get_all_user_memories(t.world.org_id, t.world.user_id),
    "get_all_user_memories__of_agent_page": lambda m, t: m.get_all_user_memories(
        t.world.org_id, t.world.user_id, t.world.agent_id, skip=1, limit=5
    ),
    "get_user_memory": lambda m, t: m.get_user_memory(t.world.org_id, t.world.user_id, t.memory_id),
    "get_user_memory__not_found": lambda m, t: m.get_user_memory(
        t.world.org_id, t.world.user_id, NO_MEMORY
    ),
    "get_user_memory_history": lambda m, t: m.get_user_memory_history(
        t.world.org_id, t.world.user_id, t.memory_id
    ),
    "fetch_user_memories_resolved": lambda m, t: _resolved(m, t, [t.memory_id, NO_MEMORY]),
    "fetch_user_memories_resolved_batch": lambda m, t: m.fetch_user_memories_resolved_batch(
        [[t.world.ids(t.memory_id)], [t.world.ids(NO_MEMORY)]]
    ),
    "delete_user_memory": lambda m, t: m.delete_user_memory(
        t.world.org_id, t.world.user_id, t.memory_id
    ),
    "delete_user_memory__not_found": lambda m, t: m.delete_user_memory(
        t.world.org_id, t.world.user_id, NO_MEMORY
    ),
    "delete_all_user_memories": lambda m, t: m.delete_all_user_memories(
        t.world.org_id, t.world.user_id
    ),
    # The bulk methods, being rewritten (issue 22): their golden files change with them.
    "export_organization": lambda m, t: _collect(m.export_organization(t.world.org_id)),
    "export_user": lambda m, t: _collect(m.export_user(t.world.org_id, t.world.user_id)),
    "export_user__pages_of_one": lambda m, t: _pages_of_one(
        m.export_user(t.world.org_id, t.world.user_id)
    ),
    "import_records": lambda m, t: m.import_records(t.prepared),
    "import_records__skip": lambda m, t: m.import_records(t.prepared, on_conflict="skip"),
    # The consistency check: the tenant's memory has no point in an empty store, so the
    # check also looks its id up across the graph.
    "check_consistency": lambda m, t: _checked(m),
    "repair": lambda m, t: _with_store(m, m.repair()),
    "settle_pending": lambda m, t: _settled(m, t),
    # The schema and the migrations, on a database that setup() prepared.
    "missing_constraints": lambda m, t: m.missing_constraints(),
    "applied_migrations": lambda m, t: m.applied_migrations(),
    "migrate": lambda m, t: m.migrate(),
    # A picture of a user's memory graph, and of the organisation's.
    "graph_of": lambda m, t: m.graph_of(t.world.org_id, t.world.user_id),
    "graph_of__organization": lambda m, t: m.graph_of(t.world.org_id),
    # Not a facade method: the counting reads of ``memora-ogm inspect``.
    "inspect": lambda m, t: m.graph.execute(overview, 20),
    "inspect__organization_and_user": lambda m, t: m.graph.execute(
        organization_overview, t.world.org_id, t.world.user_id, 20
    ),
}


async def _with_store(memora: Any, call: Awaitable[Any], store: Any = None) -> Any:
    """``call`` with an empty store of its own attached (the store sends no Cypher): an
    erasure then returns whole memories, which the store removes and could add back."""
    memora.associated_vector_db = store or QdrantDB(location=":memory:")
    await memora.associated_vector_db.setup()
    try:
        return await call
    finally:
        await memora.associated_vector_db.close()
        memora.associated_vector_db = None


async def _settled(memora: Any, t: Tenant) -> Any:
    """A pending change of the tenant's memory and a pending purge of its user, settled
    (offline embeddings: the settling writes the points again)."""
    store = QdrantDB(location=":memory:", embedding_function=HashingEmbedding())
    purge = ((t.world.org_id, t.world.user_id),)
    Journal.kept_by(store).hold(Pending("golden", (t.memory_id,), purge))
    return await _with_store(memora, memora.settle_pending(), store)


async def _checked(memora: Any) -> Any:
    """The check against an empty store: the tenant's memory has no point."""
    return await _with_store(memora, memora.check_consistency())


async def _exported_then_deleted(memora: Any, t: Tenant) -> list[Any]:
    """The organisation's records, the organisation deleted: a fail-mode import is new."""
    records = await _collect(memora.export_organization(t.world.org_id))
    await memora.delete_organization(t.world.org_id)
    return records


async def _exported_then_interaction_deleted(memora: Any, t: Tenant) -> list[Any]:
    """The organisation's records, its interaction (and memories) deleted: a skip-mode
    import keeps the rest and writes those again."""
    records = await _collect(memora.export_organization(t.world.org_id))
    w = t.world
    await memora.delete_user_interaction_and_its_memories(w.org_id, w.user_id, t.interaction_id)
    return records


#: Shape name -> what its call needs made first, not recorded (its result in ``prepared``).
PREPARED: dict[str, Call] = {
    "import_records": _exported_then_deleted,
    "import_records__skip": _exported_then_interaction_deleted,
}


async def _pages_of_one(stream: AsyncIterator[Any]) -> list[Any]:
    """An export a page per node: the statements of the pages after the first (keyset
    reads after a key)."""
    saved = async_paging.FIRST_PAGE, async_paging.PAGE_NODES
    async_paging.FIRST_PAGE = async_paging.PAGE_NODES = 1
    try:
        return await _collect(stream)
    finally:
        async_paging.FIRST_PAGE, async_paging.PAGE_NODES = saved


class Recorder:
    """The statements the async driver is sent while :attr:`on`."""

    def __init__(self) -> None:
        self.on = False
        self.statements: list[tuple[str, list[str]]] = []

    def wrap(self, run: Callable[..., Any]) -> Callable[..., Any]:
        recorder = self

        def recorded(self: Any, query: Any, parameters: Any = None, **kwargs: Any) -> Any:
            if recorder.on:
                names = sorted({**(parameters or {}), **kwargs})
                recorder.statements.append((str(getattr(query, "text", query)), names))
            return run(self, query, parameters, **kwargs)

        return recorded


@pytest.fixture
def recorder(monkeypatch: pytest.MonkeyPatch) -> Recorder:
    recorder = Recorder()
    monkeypatch.setattr(AsyncSession, "run", recorder.wrap(AsyncSession.run))
    monkeypatch.setattr(AsyncTransactionBase, "run", recorder.wrap(AsyncTransactionBase.run))
    return recorder


@pytest.fixture
async def facade(
    neo4j_connection: Neo4jConnection, neo4j_driver: Driver
) -> AsyncIterator[Neo4jGraphInterface]:
    clear_database(neo4j_driver, neo4j_connection.database)
    conn = neo4j_connection
    interface = Neo4jGraphInterface(conn.uri, conn.username, conn.password, conn.database)
    await interface.setup()
    yield interface
    await interface.close()


async def _tenant(memora: Any) -> Tenant:
    world = await make_world(memora)
    data = conversation(
        chat("I live in Oslo", "Nice!"), when=DAY, memories=[("lives in Oslo", [0])]
    )
    interaction_id = await save(memora, world, data)
    (memory,) = await memora.get_all_user_memories(world.org_id, world.user_id)
    return Tenant(world, interaction_id, memory.memory_id)


def _render(statements: list[tuple[str, list[str]]]) -> str:
    return (
        SEPARATOR.join(
            f"// parameters: {', '.join(names) or '-'}\n{query.strip()}"
            for query, names in statements
        )
        + "\n"
    )


def _statements(text: str) -> Iterator[str]:
    """The statements of a golden file, without their comment lines."""
    for block in text.split(SEPARATOR):
        yield "\n".join(line for line in block.splitlines() if not line.startswith("// "))


@pytest.mark.parametrize("shape", sorted(SHAPES))
async def test_each_call_sends_its_golden_statements(
    facade: Neo4jGraphInterface, recorder: Recorder, shape: str
) -> None:
    tenant = await _tenant(facade)
    if shape in PREPARED:
        tenant.prepared = await PREPARED[shape](facade, tenant)
    recorder.on = True
    try:
        await SHAPES[shape](facade, tenant)
    except NotFoundError:
        assert shape.endswith("__not_found"), "only a not-found shape raises"
    recorder.on = False
    sent = _render(recorder.statements)
    golden = GOLDEN / f"{shape}.cypher"
    if UPDATE:
        GOLDEN.mkdir(exist_ok=True)
        golden.write_text(sent)
    assert golden.exists(), f"no golden file {golden.name}: MEMORA_OGM_UPDATE_GOLDEN=1 writes it"
    assert sent == golden.read_text(), f"{shape} sends other statements than {golden.name}"


def test_every_public_method_has_a_golden_file() -> None:
    methods = {
        name
        for name, _ in inspect.getmembers(Neo4jGraphInterface, callable)
        if not name.startswith("_")
    } - SEND_NOTHING
    covered = {path.stem.split("__")[0] for path in GOLDEN.glob("*.cypher")}
    assert methods <= covered, f"no golden file for {sorted(methods - covered)}"
    assert covered <= set(SHAPES) | {s.split("__")[0] for s in SHAPES}


def test_golden_lines_are_short_enough_to_read() -> None:
    """The renderer lays a statement out one clause per line, subquery bodies and long
    lists indented on lines of their own: no line but the parameter header runs long."""
    long = [
        f"{path.name}: {len(line)} characters"
        for path in sorted(GOLDEN.glob("*.cypher"))
        for line in path.read_text().splitlines()
        if len(line) > LINE_LIMIT and not line.startswith("// parameters: ")
    ]
    assert not long


@pytest.mark.parametrize("path", sorted(GOLDEN.glob("*.cypher")), ids=lambda path: path.stem)
def test_every_golden_statement_is_accepted_by_the_planner(
    neo4j_connection: Neo4jConnection, neo4j_driver: Driver, path: Path
) -> None:
    """``EXPLAIN`` plans a statement without running it: a golden statement that does not
    parse, names a variable out of scope or mistypes a clause fails here."""
    statements = [s for s in _statements(path.read_text()) if s.strip()]
    for statement in statements:
        if re.match(r"\s*(CREATE|DROP|SHOW)\s+(CONSTRAINT|INDEX)|\s*SHOW\b", statement, re.I):
            continue  # schema commands and SHOW cannot be explained
        neo4j_driver.execute_query(f"EXPLAIN {statement}", database_=neo4j_connection.database)
