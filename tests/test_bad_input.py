"""Bad input for every argument of every public method (issue 6, SPEC sections 4 and 9).

A table sweep: for each method of ``BaseGraphDB`` and each of its arguments, the
argument is replaced by wrong types, blank, huge, unencodable or control-character
strings, out-of-range pages and malformed ``MemoriesAndInteraction``\\ s while the
other arguments stay valid. Each case must raise the documented exception
(``TypeError`` for ``create/get/delete_organization``, ``ValueError`` elsewhere, a
not-found error for a well-formed id that does not exist) and leave the graph
and the vector store exactly as they were (full snapshots). Names and texts with
Cypher or regex syntax are valid input: they are stored literally and read back
equal.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

import pytest
from interaction_helpers import DAY, World, chat, conversation, save
from invariants import all_violations, full_snapshot
from neo4j import Driver
from neo4j.exceptions import Neo4jError
from tenants import (
    DATA_ARGS,
    FLAG_ARGS,
    ID_ARGS,
    ID_LIST_ARGS,
    NAME_ARGS,
    PAGE_ARGS,
    Tenant,
    make_tenant,
    public_arguments,
    valid_argument,
)
from test_vector_consistency import Stores, open_stores, stores

from memora_ogm.errors import NotFoundError
from memora_ogm.schema.storage import ContraryMemoryToStore, MemoriesAndInteraction, MemoryToStore
from memora_ogm.schema.validation import MAX_ID_LENGTH, MAX_NAME_LENGTH
from memora_ogm.server import Neo4jConnection

__all__ = ["stores"]  # the fixture, imported so pytest finds it here

#: ``None`` as the expected outcome: the call succeeds with an empty result.
EMPTY = None

HUGE = "x" * 1_000_000
#: A lone surrogate: a Python string that has no UTF-8 form, so no driver can send it.
UNENCODABLE = "a\ud800b"
WRONG_TYPES: tuple[Any, ...] = (None, 0, 7, True, False, 1.5, ["x"], ("x",), {"x": 1}, b"x")
BLANK = ("", " ", "\t\n\r ", "\u00a0\u3000")
#: Well-formed ids that exist nowhere: Cypher and regex syntax, unicode, the longest id.
MISSING_IDS = (
    "missing",
    "'}) DETACH DELETE n //",
    '"}) MATCH (n) DETACH DELETE n //',
    "$1",
    "\\",
    ".*",
    "user_x",
    "ünïcødé-✓-🙂",
    "x" * MAX_ID_LENGTH,
)
#: A memory id is a canonical UUID: a well-formed one of no memory, and other spellings
#: of one (refused like malformed ids, since no memory can have them).
MISSING_MEMORY_ID = "0d5e6c8a-9b1f-4c2e-8a7d-3f4b5c6d7e8f"
MISSPELLED_MEMORY_IDS = (
    MISSING_MEMORY_ID.upper(),
    "{" + MISSING_MEMORY_ID + "}",
    "urn:uuid:" + MISSING_MEMORY_ID,
    MISSING_MEMORY_ID.replace("-", ""),
)
BAD_IDS = (
    *WRONG_TYPES,
    *BLANK,
    HUGE,
    "x" * (MAX_ID_LENGTH + 1),
    "a\x00b",
    "a\nb",
    "\x1b[31m",
    UNENCODABLE,
)
BAD_NAMES = (*WRONG_TYPES, *BLANK, "x" * (MAX_NAME_LENGTH + 1), HUGE, UNENCODABLE)
BAD_FLAGS: tuple[Any, ...] = (None, 0, 1, "true", [], 1.0)
BAD_PAGES: tuple[Any, ...] = (-1, -(2**63), True, False, 1.5, "1", None, [], 2**63, 2**64)
#: Valid names that look like code: stored as they are, read back equal.
LITERAL_NAMES = (
    "'}) DETACH DELETE n //",
    '"}) MATCH (n) DETACH DELETE n RETURN 1 //',
    "$1 $0 \\1 \\g<0> ${name}",
    "\\",
    ".*[a-z]+(?:x)",
    "ünïcødé ✓ 🙂 中文 עברית",
    "tab\there, new\nline, nul\x00 end",
    "  padded  ",
    "x" * MAX_NAME_LENGTH,
)

#: Optional ids: ``None`` is valid for them.
OPTIONAL_IDS = {("get_all_user_memories", "agent_id"), ("create_agent", "user_id")}
#: An unknown agent id filters the memories down to none instead of failing.
NARROWING_IDS = {("get_all_user_memories", "agent_id")}
TYPE_ERROR_METHODS = {"create_organization", "get_organization", "delete_organization"}


@dataclass(frozen=True)
class Case:
    method: str
    argument: str
    value: Any
    #: The exception class the call must raise, or EMPTY for an empty result.
    expected: type[Exception] | None


@dataclass(frozen=True)
class Tenants:
    mine: Tenant
    #: Another user of the same organisation, and a user of another organisation.
    neighbour: Tenant
    stranger: Tenant


def _mai(**fields: Any) -> MemoriesAndInteraction:
    """A MemoriesAndInteraction pydantic would refuse, as a caller mutating one still can."""
    defaults = {"interaction": chat("one", "two"), "interaction_date": DAY}
    return MemoriesAndInteraction.model_construct(
        **{**defaults, "memories": [], "contrary_memories": [], **fields}
    )


def _memory(**fields: Any) -> MemoryToStore:
    return MemoryToStore.model_construct(**{"memory": "m", "source_msg_block_pos": [0], **fields})


def _contrary(memory_id: Any, **fields: Any) -> ContraryMemoryToStore:
    return ContraryMemoryToStore.model_construct(
        **{"memory": "m", "source_msg_block_pos": [0], "existing_contrary_memory_id": memory_id}
        | fields
    )


def bad_data(tenants: Tenants) -> list[tuple[Any, type[Exception]]]:
    """Malformed messages, memories, positions and contrary memories, and what they raise."""
    messages: list[Any] = [
        None,
        "hi",
        [None],
        ["hi"],
        [{"role": "user"}],
        [{"role": 7, "content": "x"}],
        [{"role": "user", "content": None}],
        [{"role": "user", "content": HUGE}],
        [{"role": HUGE, "content": "x"}],
        [{"role": "user", "content": UNENCODABLE}],
    ]
    memories: list[Any] = [None, "m", [None], [{"memory": "m", "source_msg_block_pos": [0]}]]
    memories += [[_memory(memory=text)] for text in (*BLANK, None, 7, HUGE, UNENCODABLE)]
    positions: list[Any] = [[2], [-1], [0, 5], [0, 0], [True], ["0"], [1.5], [None], None, "0", 0]
    memories += [[_memory(source_msg_block_pos=p)] for p in positions]
    contrary: list[Any] = [None, [None], [_memory()]]
    contrary += [
        [_contrary(memory_id)]
        for memory_id in ("", None, 7, "a\x00b", HUGE, "missing", *MISSPELLED_MEMORY_IDS)
    ]
    contrary += [[_contrary(tenants.mine.memory_id, source_msg_block_pos=[2])]]
    not_found = [  # well-formed, but no memory of this user has that id
        MISSING_MEMORY_ID,
        tenants.neighbour.memory_id,
        tenants.stranger.memory_id,
    ]
    return [
        *((value, ValueError) for value in (*WRONG_TYPES, {"interaction": []}, "interaction")),
        *((_mai(interaction=value), ValueError) for value in messages),
        *((_mai(interaction_date=value), ValueError) for value in (None, "2024-05-01", DAY.date())),
        *((_mai(memories=value), ValueError) for value in memories),
        *((_mai(contrary_memories=value), ValueError) for value in contrary),
        # Valid for pydantic, wrong for the messages they come with.
        (conversation([], memories=[("m", [0])]), ValueError),
        (conversation(chat("one"), memories=[("m", [-1])]), ValueError),
        (conversation(chat("one"), memories=[("m", [1])]), ValueError),
        *(
            (_mai(contrary_memories=[_contrary(memory_id)]), NotFoundError)
            for memory_id in not_found
        ),
    ]


def bad_id_lists(tenants: Tenants) -> list[tuple[Any, type[Exception] | None]]:
    """Malformed ``[{org_id, user_id, memory_id}, ...]`` lists, and ones that match nothing."""
    t = tenants.mine
    entries: list[Any] = [None, "x", ["x"], {}, {"org_id": t.org_id}, t.identifiers()]
    for name in ("org_id", "user_id", "memory_id"):
        entries += [{**t.ids(), name: value} for value in ("", " ", 7, None, HUGE, "a\x00b")]
    entries += [
        {**t.ids(), "memory_id": value}
        for value in ("'}) DETACH DELETE n //", *MISSPELLED_MEMORY_IDS)
    ]
    cases: list[tuple[Any, type[Exception] | None]] = [(value, ValueError) for value in WRONG_TYPES]
    cases += [([entry], ValueError) for entry in entries]
    unknown = [
        {**t.ids(), "memory_id": MISSING_MEMORY_ID},
        {**t.ids(), "user_id": "$1"},
        t.ids(tenants.stranger.memory_id),  # another tenant's memory under my ids
        {**tenants.neighbour.ids(), "user_id": t.user_id},
    ]
    return cases + [([entry], EMPTY) for entry in unknown]


def cases_for(method: str, argument: str, tenants: Tenants) -> list[Case]:
    invalid = TypeError if method in TYPE_ERROR_METHODS else ValueError
    found: list[tuple[Any, type[Exception] | None]]
    if argument in ID_ARGS:
        unknown = EMPTY if (method, argument) in NARROWING_IDS else NotFoundError
        optional = (method, argument) in OPTIONAL_IDS
        found = [(value, invalid) for value in BAD_IDS if value is not None or not optional]
        if argument == "memory_id":
            found += [(value, invalid) for value in (*MISSING_IDS, *MISSPELLED_MEMORY_IDS)]
            found += [(MISSING_MEMORY_ID, unknown)]
        else:
            found += [(value, unknown) for value in MISSING_IDS]
    elif argument in NAME_ARGS:
        found = [(value, invalid) for value in BAD_NAMES]
    elif argument in FLAG_ARGS:
        found = [(value, invalid) for value in BAD_FLAGS]
    elif argument in PAGE_ARGS:
        found = [(value, invalid) for value in BAD_PAGES]
    elif argument in DATA_ARGS:
        found = list(bad_data(tenants))
    elif argument == "org_user_mem_ids":
        found = bad_id_lists(tenants)
    elif argument == "batch_org_user_mem_ids":
        found = [(value, ValueError) for value in WRONG_TYPES]
        found += [([value], expected) for value, expected in bad_id_lists(tenants)]
    else:
        raise AssertionError(f"no bad values known for {method}({argument})")
    return [Case(method, argument, value, expected) for value, expected in found]


def describe(case: Case) -> str:
    shown = repr(case.value)
    return f"{case.method}({case.argument}={shown[:60]}{'...' if len(shown) > 60 else ''})"


async def check(graph: Any, tenants: Tenants, case: Case) -> str | None:
    """Run one case; what went wrong with its outcome, or None (the stores are checked
    by :func:`sweep`)."""
    arguments = {
        name: valid_argument(case.method, name, tenants.mine)
        for name in public_arguments()[case.method]
    }
    arguments[case.argument] = case.value
    problem = None
    try:
        result = await getattr(graph, case.method)(**arguments)
    except Exception as error:  # noqa: BLE001 - any exception is examined below
        if case.expected is None or not isinstance(error, case.expected):
            problem = f"raised {type(error).__name__}: {str(error)[:120]}"
        elif case.expected is NotFoundError and not isinstance(error, Neo4jError):
            problem = "a not-found error that is no Neo4jError"
        elif case.expected is not NotFoundError and case.argument in ID_ARGS | NAME_ARGS | (
            FLAG_ARGS | PAGE_ARGS
        ):
            if f"`{case.argument}`" not in str(error):
                problem = f"the message does not name the argument: {str(error)[:120]}"
    else:
        if case.expected is not None:
            problem = f"returned {str(result)[:80]} instead of raising {case.expected.__name__}"
        elif result not in ([], [[]]):
            problem = f"returned {str(result)[:80]} instead of nothing"
    return f"{describe(case)}: {problem}" if problem else None


async def sweep(stores: Stores, tenants: Tenants, cases: list[Case], driver: Driver) -> list[str]:
    """Run ``cases``; what went wrong. The stores are compared with full snapshots once
    after all of them (a change stays), and on a change after each case again, to name
    the cases that made it (a snapshot after every case was a round trip each)."""
    before = await full_snapshot(driver, stores.vectors)
    problems = [p for case in cases if (p := await check(stores.graph, tenants, case))]
    if await full_snapshot(driver, stores.vectors) == before:
        return problems
    changed = [f"{len(cases)} cases changed the stores; again one at a time:"]
    for case in cases:
        before = await full_snapshot(driver, stores.vectors)
        await check(stores.graph, tenants, case)
        if await full_snapshot(driver, stores.vectors) != before:
            changed.append(f"{describe(case)} changed the stores")
    return problems + changed


#: Methods are swept in groups, one test each; a method is in the first group its name names.
GROUPS = ("organization", "interaction", "memor", "agent", "user")


def group_of(method: str) -> str:
    return next(group for group in GROUPS if group in method)


@pytest.fixture(scope="module")
async def swept(
    neo4j_connection: Neo4jConnection, neo4j_driver: Driver
) -> AsyncIterator[tuple[Stores, Tenants]]:
    """One set-up for every group of the sweep: no case may change the stores (each case
    checks), so every group starts from the same three tenants."""
    found = await open_stores("async", neo4j_connection, neo4j_driver)
    mine = await make_tenant(found.graph, "mine")
    neighbour = await make_tenant(found.graph, "neighbour", mine.org_id)
    yield found, Tenants(mine, neighbour, await make_tenant(found.graph, "stranger"))
    await found.graph.close()


def test_the_sweep_covers_every_argument_of_every_method() -> None:
    arguments = public_arguments()
    known = ID_ARGS | NAME_ARGS | FLAG_ARGS | PAGE_ARGS | DATA_ARGS | ID_LIST_ARGS
    assert {(m, a) for m, names in arguments.items() for a in names if a not in known} == set()
    assert {group_of(method) for method in arguments} == set(GROUPS)  # none left out
    # 28 methods take arguments; the others (setup, close, ...) take none of their own.
    assert len(arguments) == 28


# The sync twin is generated from the same checks (test_sync_twin keeps it current) and runs
# them in the literal-names test below and the tenant tests; sweeping it again doubles the time.
@pytest.mark.parametrize("group", GROUPS)
async def test_bad_input_raises_the_documented_error_and_changes_nothing(
    swept: tuple[Stores, Tenants], neo4j_driver: Driver, group: str
) -> None:
    stores, tenants = swept
    problems = []
    count = 0
    for method, names in sorted(public_arguments().items()):
        if group_of(method) != group:
            continue
        for argument in names:
            cases = cases_for(method, argument, tenants)
            count += len(cases)
            problems += await sweep(stores, tenants, cases, neo4j_driver)
    assert not problems, f"{len(problems)} of {count} cases:\n" + "\n".join(problems)
    assert count > 50
    assert await all_violations(neo4j_driver, stores.vectors) == []


@pytest.mark.parametrize("stores", ["async"], indirect=True)
async def test_the_sweep_names_each_case_that_changed_the_stores(
    stores: Stores, neo4j_driver: Driver
) -> None:
    mine = await make_tenant(stores.graph, "mine")
    tenants = Tenants(mine, mine, mine)
    missing = Case("get_organization", "org_id", "missing", NotFoundError)
    planted = Case("create_organization", "org_name", "planted", EMPTY)  # it writes
    problems = await sweep(stores, tenants, [missing, planted, missing], neo4j_driver)
    assert problems[0].startswith("create_organization(org_name='planted'): returned ")
    assert problems[1:] == [
        "3 cases changed the stores; again one at a time:",
        "create_organization(org_name='planted') changed the stores",
    ]
    assert await sweep(stores, tenants, [missing, missing], neo4j_driver) == []


# -- valid input that looks like code --------------------------------------------------------


@pytest.mark.parametrize("name", LITERAL_NAMES)
async def test_names_with_cypher_or_regex_syntax_are_stored_literally(
    stores: Stores, neo4j_driver: Driver, name: str
) -> None:
    graph = stores.graph
    org = await graph.create_organization(name)
    user = await graph.create_user(org.org_id, name)
    agent = await graph.create_agent(org.org_id, name, user.user_id)
    assert (await graph.get_organization(org.org_id)).org_name == name
    assert (await graph.get_user(org.org_id, user.user_id)).user_name == name
    assert (await graph.get_agent(org.org_id, agent.agent_id)).agent_label == name

    text = f"user_{user.user_id}'s {name} met agent_{agent.agent_id}"
    interaction_id = await save(
        graph,
        World(org.org_id, user.user_id, agent.agent_id),
        conversation([{"role": name, "content": name}], memories=[(text, [0])]),
    )
    found = await graph.get_interaction(org.org_id, user.user_id, interaction_id)
    assert [(m.role, m.content) for m in found.messages] == [(name, name)]
    assert [m.memory for m in found.memories] == [f"{name}'s {name} met {name}"]

    renamed = name[::-1]
    assert (await graph.update_organization(org.org_id, renamed)).org_name == renamed
    assert (await graph.update_user(org.org_id, user.user_id, renamed)).user_name == renamed
    updated = await graph.update_agent(org.org_id, agent.agent_id, renamed)
    assert updated.agent_label == renamed
    assert [o.org_name for o in await graph.get_all_organizations()] == [renamed]
    assert await all_violations(neo4j_driver, stores.vectors) == []
    nodes = neo4j_driver.execute_query("MATCH (n) RETURN count(n)").records[0][0]
    assert nodes == 9  # org, user, 2 collections, agent, interaction, message, memory, date
