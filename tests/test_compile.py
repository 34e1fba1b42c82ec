"""Every public method compiled to its golden statements, with no server.

The facade's calls are declared apart from running them (:mod:`memora_ogm.calls`), so a
statement change is reviewed and tested here on any machine: no Neo4j, Java or Docker.
Each shape (a method, and where its statements differ: found or not, with contrary
memories or without, with a vector store or without...) is declared with fixed ids and
compiled; its statements must equal ``tests/golden/<shape>.cypher``, the file
``tests/test_golden.py`` checks against what a server is sent and through ``EXPLAIN``.
Like SQLAlchemy's ``assert_compile``: :func:`assert_compiles` is the one assertion.
"""

from __future__ import annotations

import inspect
import socket
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, cast

import pytest
from interaction_helpers import LATER, NO_MEMORY, chat, conversation
from memora_ogm.migrations import MIGRATIONS

from memora_ogm._async.interface import Neo4jGraphInterface
from memora_ogm._async.nodes import NODE_CLASSES, NODES
from memora_ogm.calls import (
    agent,
    interaction,
    memory,
    migration,
    organization,
    picture,
    user,
)
from memora_ogm.engine import constraints
from memora_ogm.engine.call import Batches, Call, Query, batch_of
from memora_ogm.engine.constraints import node_key_statement
from memora_ogm.engine.erasure import BATCH_SIZE, Erasure
from memora_ogm.engine.pages import Part, page_read
from memora_ogm.engine.unit_of_work import Statement, UnitOfWork
from memora_ogm.transfer import export, validation
from memora_ogm.transfer import format as transfer
from memora_ogm.transfer.importing import (
    Batch,
    batches,
    kinds_held,
    memories_with_ids,
    new_records,
    validated,
    write_of,
)

GOLDEN = Path(__file__).parent / "golden"
#: Separates the statements of one golden file (as tests/test_golden.py writes them).
SEPARATOR = "\n\n// ---\n\n"
#: Public methods that send nothing (the constructors among them).
NOT_COMPILED = {"close", "get_associated_vector_db", "from_connection", "from_neomodel"}
#: An export of a user (tests/test_transfer_format.py writes it), which the import's shapes
#: take as tests/test_golden.py's world: an organisation, a user, an org-wide agent, an
#: interaction and its memories. Their statements depend on which records there are (a
#: user's own agent adds a lookup of users), not on their values.
RECORDS = GOLDEN / "transfer" / "user.jsonl"

ORG, USER, AGENT, INTERACTION, MEMORY = "org-1", "user-1", "agent-1", "interaction-1", NO_MEMORY
APOC = True  # the test server has APOC: the goldens resolve placeholders on the server
ERASE = Erasure(BATCH_SIZE, vectors=False)
ERASE_WITH_STORE = Erasure(BATCH_SIZE, vectors=True)


@pytest.fixture(autouse=True)
def no_server(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Compiling opens no connection: any attempt fails the test."""

    def refuse(*args: object) -> None:
        raise AssertionError("compiling a call must not connect anywhere")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket.socket, "connect_ex", refuse)
    yield


def compiled(*statements: Any) -> str:
    """Statements (units of work, prepared reads, queries, or schema text) as a golden
    file holds them: each with the sorted names of its parameters."""
    blocks = []
    for statement in statements:
        query, params = (statement, {}) if isinstance(statement, str) else statement.compile()
        blocks.append(f"// parameters: {', '.join(sorted(params)) or '-'}\n{query.strip()}")
    return SEPARATOR.join(blocks) + "\n"


def assert_compiles(shape: str, *statements: Any) -> None:
    """``statements`` compile to the golden file of ``shape``."""
    golden = GOLDEN / f"{shape}.cypher"
    assert compiled(*statements) == golden.read_text(), f"{shape} compiles otherwise"


def sent(call: Call[Any] | Batches, found: bool = True) -> list[Statement | Any]:
    """What a call sends: its statements in order; a call whose first statement finds
    something missing sends only that one."""
    if isinstance(call, Batches):
        return [call.statement]
    statements = [*call.before, call.statement]
    return statements if found else statements[:1]


def _save(memories: bool = True, contrary: bool = False, messages: int = 2) -> Call[Any]:
    data = conversation(
        chat(*(f"message {n}" for n in range(messages))),
        when=LATER,
        memories=[("likes tea", [0] if messages else [])] if memories else [],
        contrary=[("likes coffee", [0] if messages else [], MEMORY)] if contrary else [],
    )
    return interaction.save_interaction_with_memories(NODES, ORG, AGENT, USER, data)


def _update(messages: list[str], contrary: bool = False) -> Call[Any]:
    data = conversation(
        chat(*messages),
        when=LATER,
        memories=[("likes tea", [0])],
        contrary=[("likes coffee", [0], MEMORY)] if contrary else [],
    )
    return interaction.update_interaction_and_memories(NODES, ORG, AGENT, USER, INTERACTION, data)


def _ids(memory_id: str) -> dict[str, str]:
    return {"org_id": ORG, "user_id": USER, "memory_id": memory_id}


#: Shape name -> the call's declaration, with fixed ids.
SHAPES: dict[str, Callable[[], Call[Any] | Batches]] = {
    "missing_constraints": lambda: constraints.missing_constraints(NODES),
    "applied_migrations": lambda: migration.applied_migrations(NODES),
    "graph_of": lambda: picture.graph_of(NODES, ORG, USER),
    "graph_of__organization": lambda: picture.graph_of(NODES, ORG),
    "create_organization": lambda: organization.create_organization(NODES, "Globex"),
    "update_organization": lambda: organization.update_organization(NODES, ORG, "Initech"),
    "delete_organization": lambda: organization.delete_organization(NODES, ERASE, ORG),
    "delete_organization__vector_store": lambda: organization.delete_organization(
        NODES, ERASE_WITH_STORE, ORG
    ),
    "get_organization": lambda: organization.get_organization(NODES, ORG),
    "get_all_organizations": lambda: organization.get_all_organizations(NODES),
    "create_agent": lambda: agent.create_agent(NODES, ORG, "Helper"),
    "create_agent__of_user": lambda: agent.create_agent(NODES, ORG, "Helper", user_id=USER),
    "update_agent": lambda: agent.update_agent(NODES, ORG, AGENT, "Helper"),
    "delete_agent": lambda: agent.delete_agent(NODES, ORG, AGENT),
    "get_agent": lambda: agent.get_agent(NODES, ORG, AGENT),
    "get_all_org_agents": lambda: agent.get_all_org_agents(NODES, ORG),
    "get_all_user_agents": lambda: agent.get_all_user_agents(NODES, ORG, USER),
    "create_user": lambda: user.create_user(NODES, ORG, "Bea"),
    "update_user": lambda: user.update_user(NODES, ORG, USER, "Bea"),
    "delete_user": lambda: user.delete_user(NODES, ERASE, ORG, USER),
    "delete_user__vector_store": lambda: user.delete_user(NODES, ERASE_WITH_STORE, ORG, USER),
    "get_user": lambda: user.get_user(NODES, ORG, USER),
    "get_all_org_users": lambda: user.get_all_org_users(NODES, ORG),
    "save_interaction_with_memories": _save,
    "save_interaction_with_memories__no_memories": lambda: _save(memories=False),
    "save_interaction_with_memories__contrary": lambda: _save(contrary=True),
    "save_interaction_with_memories__no_messages": lambda: _save(messages=0),
    "update_interaction_and_memories__same_messages": lambda: _update(["I live in Oslo", "Nice!"]),
    "update_interaction_and_memories__contrary": lambda: _update(["I live in Bergen"], True),
    "update_interaction_and_memories__not_found": lambda: _update(["Hi"]),
    "get_interaction": lambda: interaction.get_interaction(NODES, APOC, ORG, USER, INTERACTION),
    "get_interaction__without_messages": lambda: interaction.get_interaction(
        NODES, APOC, ORG, USER, INTERACTION, with_messages=False
    ),
    "get_interaction__without_messages_or_memories": lambda: interaction.get_interaction(
        NODES, APOC, ORG, USER, INTERACTION, with_messages=False, with_memories=False
    ),
    "get_all_user_interactions": lambda: interaction.get_all_user_interactions(
        NODES, APOC, ORG, USER
    ),
    "get_all_user_interactions__page_without_messages": lambda: (
        interaction.get_all_user_interactions(
            NODES, APOC, ORG, USER, with_their_messages=False, skip=1, limit=5
        )
    ),
    "get_all_user_interactions__page_without_either": lambda: interaction.get_all_user_interactions(
        NODES, APOC, ORG, USER, False, False
    ),
    "delete_user_interaction_and_its_memories": lambda: (
        interaction.delete_user_interaction_and_its_memories(NODES, ERASE, ORG, USER, INTERACTION)
    ),
    "delete_all_user_interactions_and_their_memories": lambda: (
        interaction.delete_all_user_interactions_and_their_memories(NODES, ERASE, ORG, USER)
    ),
    "get_all_user_memories": lambda: memory.get_all_user_memories(NODES, APOC, ORG, USER),
    "get_all_user_memories__of_agent_page": lambda: memory.get_all_user_memories(
        NODES, APOC, ORG, USER, AGENT, skip=1, limit=5
    ),
    "get_user_memory": lambda: memory.get_user_memory(NODES, APOC, ORG, USER, MEMORY),
    "get_user_memory__not_found": lambda: memory.get_user_memory(NODES, APOC, ORG, USER, MEMORY),
    "get_user_memory_history": lambda: memory.get_user_memory_history(
        NODES, APOC, ORG, USER, MEMORY
    ),
    "fetch_user_memories_resolved": lambda: memory.fetch_user_memories_resolved(
        NODES, APOC, [_ids(MEMORY), _ids(NO_MEMORY)]
    ),
    "fetch_user_memories_resolved_batch": lambda: memory.fetch_user_memories_resolved_batch(
        NODES, APOC, [[_ids(MEMORY)], [_ids(NO_MEMORY)]]
    ),
    "delete_user_memory": lambda: memory.delete_user_memory(NODES, ERASE, ORG, USER, MEMORY),
    "delete_user_memory__not_found": lambda: memory.delete_user_memory(
        NODES, ERASE, ORG, USER, MEMORY
    ),
    "delete_all_user_memories": lambda: memory.delete_all_user_memories(NODES, ERASE, ORG, USER),
}


@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_each_call_compiles_to_its_golden_statements(shape: str) -> None:
    call = SHAPES[shape]()
    assert_compiles(shape, *sent(call, found=not shape.endswith("__not_found")))


@pytest.mark.parametrize(
    "shape", ["save_interaction_with_memories", "update_interaction_and_memories__same_messages"]
)
def test_a_batched_write_compiles_to_its_golden_statement(shape: str) -> None:
    """Concurrent writes of one shape share one statement: the single write's clauses run
    once per row of ``$batch``, each parameter read from the row, the index returned."""
    writes = [SHAPES[shape](), SHAPES[shape]()]
    works = [write.statement for write in writes if isinstance(write, Call)]
    assert len(works) == 2 and all(isinstance(work, UnitOfWork) for work in works)
    forms = [cast(UnitOfWork, work).compile(per_row=True) for work in works]
    single, params = cast(UnitOfWork, works[0]).compile()
    assert forms[0][0] == forms[1][0]
    assert set(forms[0][1]) == set(params)
    rows = [
        (cast(Call[Any], write).batch_key or (), row)
        for write, (_, row) in zip(writes, forms, strict=True)
    ]
    batched = shape.split("__")[0] + "__batch"
    assert_compiles(batched, Query(forms[0][0], batch_of(rows)))
    golden = (GOLDEN / f"{shape}.cypher").read_text()
    assert single == golden.split("\n", 1)[1].strip()  # the single write is unchanged
    if shape == "save_interaction_with_memories":  # the bulk save sends the same
        assert_compiles("save_interactions_with_memories", Query(forms[0][0], batch_of(rows)))


def test_setup_compiles_to_its_golden_statements() -> None:
    """``setup()`` on Community Edition: one composite uniqueness constraint per key."""
    assert_compiles(
        "setup", *(s for cls in NODE_CLASSES if (s := node_key_statement(cls, False)) is not None)
    )


def test_the_migration_compiles_to_its_golden_statements() -> None:
    """Memora's v0.3.x migration on a database that never had one: the records' key, the
    applied versions, each operation (a batch of links, an index dropped), the record."""
    (first,) = MIGRATIONS
    operations = [sent(migration.apply(NODES, operation)) for operation in first.operations]
    for shape in ("migrate_to_schema_for_memora_v0_3_x", "migrate"):
        assert_compiles(
            shape,
            *sent(migration.install_record(NODES, False)),
            *sent(migration.applied_migrations(NODES)),
            *(statement for statements in operations for statement in statements),
            *sent(migration.record(NODES, first)),
        )


def _page(part: Part, owner: dict[str, str], after: bool = False) -> Any:
    """The read of a keyset page of ``part`` for ``owner``: the first, or one after a key."""
    values = {"limit": 1, **owner, **({"after": "key"} if after else {})}
    return page_read(part, tuple(owner), not after).bind(NODES, **values)


def _export(user_id: str | None, pages_of_one: bool = False) -> list[Any]:
    """An export's reads, of a world with one user: the organisation, the users, the
    agents, then each user's interactions and memories; with pages of one node, each
    kind's page after the first node too (the golden world has one user, one org-wide
    agent besides the user's, one interaction and two memories)."""
    tenant = {"org_id": ORG} if user_id is None else {"org_id": ORG, "user_id": user_id}
    pages = export.export_pages(NODES)
    users, agents, interactions, memories = (
        pages.users,
        pages.agents,
        pages.interactions,
        pages.memories,
    )
    owned = {"org_id": ORG, "user_id": USER}
    if not pages_of_one:
        return [
            *sent(export.tenant(NODES, ORG, user_id)),
            _page(users, tenant),
            _page(agents, {"org_id": ORG}),
            _page(users, tenant),
            _page(interactions, owned),
            _page(memories, owned),
        ]
    return [
        *sent(export.tenant(NODES, ORG, user_id)),
        _page(users, tenant),
        _page(users, tenant, after=True),
        _page(agents, {"org_id": ORG}),
        _page(agents, {"org_id": ORG}, after=True),
        _page(users, tenant),
        _page(interactions, owned),
        _page(interactions, owned, after=True),
        _page(memories, owned),
        _page(memories, owned, after=True),
        _page(users, tenant, after=True),
    ]


def test_the_exports_compile_to_their_golden_statements() -> None:
    assert_compiles("export_organization", *_export(None))
    assert_compiles("export_user", *_export(USER))
    assert_compiles("export_user__pages_of_one", *_export(USER, pages_of_one=True))


def _batches() -> list[tuple[str, Batch]]:
    """The import batches of :data:`RECORDS` without the user's own agent, what it took
    part in, and the end record that counted them."""
    records = list(transfer.JsonLinesFile(RECORDS))
    own = {r["agent_id"] for r in records if r["type"] == transfer.AGENT and r["user_id"]}
    world = [r for r in records if r.get("agent_id") not in own and r["type"] != transfer.END]
    return list(batches(validated(world, validation.Validator(NODES), None)))


def test_the_imports_compile_to_their_golden_statements() -> None:
    """An import checks the whole input first (which record types the graph holds some
    node of, and those records one by one; the memory ids across the graph), then writes
    a batch per transaction: into an empty graph, or, skipping, into one that holds all
    but the interaction and its memories (each batch checked again in its transaction)."""
    imported = _batches()
    memory_ids = [
        record["memory_id"]
        for kind, batch in imported
        for _, record in batch
        if kind == transfer.MEMORY
    ]
    held = (transfer.ORGANIZATION, transfer.USER, transfer.AGENT)

    def write(kind: str, batch: Batch, skip: bool) -> list[Any]:
        new = [] if skip and kind in held else [record for _, record in batch]
        declared = write_of(NODES, kind, batch, new)
        return [declared[0]] if declared is not None else []

    assert_compiles(
        "import_records",
        *sent(kinds_held(NODES, ORG)),
        *sent(memories_with_ids(NODES, memory_ids)),
        *(statement for kind, batch in imported for statement in write(kind, batch, False)),
    )
    assert_compiles(
        "import_records__skip",
        *sent(kinds_held(NODES, ORG)),
        *(
            sent(new_records(NODES, kind, batch, "skip"))[0]
            for kind, batch in imported
            if kind in held
        ),
        *sent(memories_with_ids(NODES, memory_ids)),
        *(
            statement
            for kind, batch in imported
            for statement in [
                sent(new_records(NODES, kind, batch, "skip"))[0],
                *write(kind, batch, True),
            ]
        ),
    )


def test_the_consistency_check_compiles_to_its_golden_statements() -> None:
    """The check of every organisation against an empty store: the graph's tenants, each
    user's memories, then the memory ids the store does not hold, across the graph. A
    repair reads the same, writes the missing points, then reads their ids back (a delete
    may have taken some meanwhile)."""
    check = [
        _page(Part(NODES.Org, "org_id"), {}),
        _page(export.export_pages(NODES).users, {"org_id": ORG}),
        _page(Part(NODES.Memory, "memory_id"), {"org_id": ORG, "user_id": USER}),
        *sent(memories_with_ids(NODES, [MEMORY])),
    ]
    assert_compiles("check_consistency", *check)
    assert_compiles("repair", *check, *sent(memories_with_ids(NODES, [MEMORY])))


def _settling() -> list[Any]:
    """Each write-back of points is followed by a read of their ids (what a delete took
    meanwhile loses its point again)."""
    return [
        *sent(memories_with_ids(NODES, [MEMORY])),
        *sent(memories_with_ids(NODES, [MEMORY])),
        *sent(user.tenant_exists(NODES, ORG, USER)),
        _page(Part(NODES.Memory, "memory_id"), {"org_id": ORG, "user_id": USER}),
        *sent(memories_with_ids(NODES, [MEMORY])),
    ]


def test_settling_pending_vector_changes_compiles_to_its_golden_statements() -> None:
    """A pending write's memories by id; a pending purge of a user asks whether the user
    is still there and, if so, pages through its memories; each write-back is checked."""
    assert_compiles("settle_pending", *_settling())


def test_every_public_method_is_compiled_here() -> None:
    methods = {
        name
        for name, _ in inspect.getmembers(Neo4jGraphInterface, callable)
        if not name.startswith("_")
    }
    compiled_here = {shape.split("__")[0] for shape in SHAPES} | {
        "save_interactions_with_memories",
        "setup",
        "migrate_to_schema_for_memora_v0_3_x",
        "migrate",
        "repair",
        "export_organization",
        "export_user",
        "import_records",
        "check_consistency",
        "settle_pending",
    }
    assert methods - NOT_COMPILED == compiled_here
