"""Ids of one tenant combined with ids of another never reach the other's data (issue 6).

For every public method that takes ids, every proper mix of my ids with those of
a user of another organisation (and, for the ids below the user, of another user
of my organisation) must fail with a not-found error or come back empty: nothing
of the other tenant is read, and neither store changes (full snapshots). Contrary
memories and resolved fetches that name the other tenant's memories are mixed
the same way.
"""

from __future__ import annotations

from itertools import combinations
from typing import Any

import pytest
from interaction_helpers import chat, conversation
from invariants import all_violations, full_snapshot
from neo4j import Driver
from tenants import (
    DATA_ARGS,
    ID_ARGS,
    ID_LIST_ARGS,
    Tenant,
    make_tenant,
    public_arguments,
    valid_argument,
)
from test_vector_consistency import Stores, stores

from memora_ogm.errors import NotFoundError

__all__ = ["stores"]  # the fixture, imported so pytest finds it here

#: The ids that belong to one user rather than to the whole organisation.
USER_LEVEL = ("user_id", "interaction_id", "memory_id")
MEMORY_KEYS = ("org_id", "user_id", "memory_id")

Mix = tuple[str, dict[str, Any]]
"""What was mixed, and the call's arguments."""


def _contrary(memory_id: str) -> Any:
    return conversation(chat("mine"), contrary=[("mine instead", [0], memory_id)])


def mixes(method: str, mine: Tenant, theirs: Tenant, neighbour: Tenant) -> list[Mix]:
    """Each proper mix of ``mine``'s ids with ``theirs``' (another organisation) and with
    ``neighbour``'s (another user of my organisation, for the ids below the user)."""
    names = public_arguments()[method]
    valid = {name: valid_argument(method, name, mine) for name in names}
    ids = [name for name in names if name in ID_ARGS]
    found: list[Mix] = []
    for size in range(1, len(ids)):
        for subset in combinations(ids, size):
            swapped = {name: getattr(theirs, name) for name in subset}
            found.append((f"theirs: {', '.join(subset)}", valid | swapped))
    below_user = [name for name in ids if name in USER_LEVEL]
    if "user_id" in below_user and len(below_user) > 1:
        for name in below_user:
            found.append((f"neighbour's {name}", valid | {name: getattr(neighbour, name)}))
    for name in set(names) & DATA_ARGS:
        for other in (theirs, neighbour):
            contrary = {name: _contrary(other.memory_id)}
            found.append((f"{other.label}'s memory contradicted", valid | contrary))
    for name in set(names) & ID_LIST_ARGS:
        for size in range(1, len(MEMORY_KEYS)):
            for subset in combinations(MEMORY_KEYS, size):
                entry = mine.ids() | {key: theirs.ids()[key] for key in subset}
                wrapped = [[entry]] if name.startswith("batch") else [entry]
                found.append((f"fetch with theirs: {', '.join(subset)}", valid | {name: wrapped}))
    return found


def leaked(result: Any, tenant: Tenant, others: list[Tenant]) -> list[str]:
    """The ids and texts of ``others`` (but not the ones they share with ``tenant``, such as
    the organisation of a neighbour) that appear in ``result``."""
    shown = repr(result)
    theirs = {value for other in others for value in [*other.identifiers(), other.label]}
    return sorted(value for value in theirs - set(tenant.identifiers()) if value in shown)


@pytest.fixture
async def world(stores: Stores) -> tuple[Tenant, Tenant, Tenant]:
    mine = await make_tenant(stores.graph, "mine")
    neighbour = await make_tenant(stores.graph, "neighbour", mine.org_id)
    return mine, await make_tenant(stores.graph, "stranger"), neighbour


async def test_mixed_ids_never_read_change_or_delete_another_tenants_data(
    stores: Stores, neo4j_driver: Driver, world: tuple[Tenant, Tenant, Tenant]
) -> None:
    mine, theirs, neighbour = world
    before = await full_snapshot(neo4j_driver, stores.vectors)
    problems = []
    tried = set()
    for method in sorted(public_arguments()):
        for what, arguments in mixes(method, mine, theirs, neighbour):
            tried.add(method)
            try:
                result = await getattr(stores.graph, method)(**arguments)
            except NotFoundError:
                pass
            except Exception as error:  # noqa: BLE001 - reported below
                problems.append(f"{method} ({what}): raised {type(error).__name__}: {error}")
            else:
                if result not in ([], [[]]):
                    problems.append(f"{method} ({what}): returned {str(result)[:100]}")
                if found := leaked(result, mine, [theirs, neighbour]):
                    problems.append(f"{method} ({what}): read {found}")
            if await full_snapshot(neo4j_driver, stores.vectors) != before:
                problems.append(f"{method} ({what}): changed the stores")
                before = await full_snapshot(neo4j_driver, stores.vectors)

    assert not problems, "\n".join(problems)
    # Every method that takes two ids or more was mixed.
    assert tried == {
        method
        for method, names in public_arguments().items()
        if len(set(names) & ID_ARGS) > 1 or set(names) & (DATA_ARGS | ID_LIST_ARGS)
    }
    assert len(tried) >= 20
    assert await all_violations(neo4j_driver, stores.vectors) == []


async def test_each_tenant_still_sees_exactly_its_own_data(
    stores: Stores, world: tuple[Tenant, Tenant, Tenant]
) -> None:
    """The control for the test above: with consistent ids every tenant reads its own data."""
    graph = stores.graph
    for tenant in world:
        others = [other for other in world if other is not tenant]
        reads = [
            await graph.get_all_user_memories(tenant.org_id, tenant.user_id),
            await graph.get_all_user_interactions(tenant.org_id, tenant.user_id),
            await graph.get_user_memory_history(tenant.org_id, tenant.user_id, tenant.memory_id),
            await graph.fetch_user_memories_resolved([tenant.ids(tenant.old_memory_id)]),
            await graph.get_all_user_agents(tenant.org_id, tenant.user_id),
        ]
        assert all(reads)
        assert leaked(reads, tenant, others) == []
        assert tenant.label in repr(reads)
