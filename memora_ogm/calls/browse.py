"""The reads of Django's admin (:mod:`memora_ogm.contrib.django.admin`): pages of
organisations, of an organisation's users and agents, a user with its counts, which
memories of a page were superseded, the agents serving a user with the labels of a
page's agents, and a text match over a user's memories. Each is
one statement that reads only its page's rows (SKIP and LIMIT on the server).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from pydantic import BaseModel

from memora_ogm.calls.memory import Reads, check_memory_key, user_page
from memora_ogm.calls.picture import organization_counts, user_counts
from memora_ogm.calls.user import match_user
from memora_ogm.engine import queries
from memora_ogm.engine.call import Call, Query, Row
from memora_ogm.engine.nodes import Nodes
from memora_ogm.engine.pages import Count, output_each
from memora_ogm.engine.projection import projection, reading
from memora_ogm.engine.unit_of_work import UnitOfWork
from memora_ogm.errors import OrganizationNotFound
from memora_ogm.schema import models
from memora_ogm.schema.validation import check_ids, check_name, check_page

M = TypeVar("M", bound=BaseModel)


@dataclass(frozen=True)
class Counted(Generic[M]):
    """A node as its return model, with what it is counted with (``memories``, ...)."""

    item: M
    counts: dict[str, int]


@dataclass(frozen=True)
class Page(Generic[M]):
    """One page of nodes and how many there are in all (matching the search)."""

    rows: list[Counted[M]]
    total: int


@dataclass(frozen=True)
class OrganizationPage:
    """An organisation with its counts, a page of its users and one of its agents."""

    organization: Counted[models.Organization]
    users: Page[models.User]
    agents: Page[models.Agent]


def _counts(nodes: Nodes, counts: Mapping[str, Count]) -> dict[str, Count]:
    """``counts`` less ``superseded``: it walks every memory's updates, so a page that
    shows it would cost what the tenant has, not what the page shows."""
    return {name: count for name, count in counts.items() if name != "superseded"}


def _node_map(cls: type, var: str, counts: Mapping[str, Count]) -> str:
    """The map of ``var`` (a node of ``cls``) with its counts, as the reads render it."""
    added = {name: count.cypher(var) for name, count in counts.items()}
    return projection(reading(cls)).map(var, **added).render({})


def _counted(cls: type, model: type[M], row: Mapping[str, Any], names: Any) -> Counted[M]:
    return Counted(projection(reading(cls)).model(model, row), {name: row[name] for name in names})


def _check_search(search: str | None) -> None:
    if search is not None:
        check_name("search", search)


def organizations_page(
    nodes: Nodes, search: str | None = None, skip: int = 0, limit: int = 50
) -> Call[Page[models.Organization]]:
    """Organisations by name whose name contains ``search`` or whose id it is, each
    with its numbers of users, agents, interactions and memories."""
    _check_search(search)
    check_page(skip, limit)
    counts = _counts(nodes, organization_counts(nodes))
    text = queries.with_maps(
        queries.ORGANIZATIONS_PAGE, ORG_MAP=_node_map(nodes.Org, "org", counts)
    )

    def page(rows: list[Row]) -> Page[models.Organization]:
        found = [_counted(nodes.Org, models.Organization, org, counts) for org in rows[0]["page"]]
        return Page(found, rows[0]["total"])

    return Call(Query(text, {"search": search, "skip": skip, "limit": limit}), page)


def organization_page(
    nodes: Nodes,
    org_id: str,
    search: str | None = None,
    skip: int = 0,
    agents_skip: int = 0,
    limit: int = 50,
) -> Call[OrganizationPage]:
    """An organisation with its counts, a page of its users (newest first, with their
    counts) and one of its agents, both narrowed by ``search`` as above."""
    check_ids(org_id=org_id)
    _check_search(search)
    check_page(skip, limit)
    check_page(agents_skip, limit)
    org_counts = _counts(nodes, organization_counts(nodes))
    each_user = _counts(nodes, user_counts(nodes))
    text = queries.with_maps(
        queries.ORGANIZATION_PAGE,
        ORG_MAP=_node_map(nodes.Org, "org", org_counts),
        USER_MAP=_node_map(nodes.User, "user", each_user),
        AGENT_MAP=_node_map(nodes.Agent, "agent", {}),
    )

    def page(rows: list[Row]) -> OrganizationPage:
        row = rows[0]
        if not row["found"]:
            raise OrganizationNotFound(org_id)
        users = [_counted(nodes.User, models.User, user, each_user) for user in row["users"]]
        agents = [_counted(nodes.Agent, models.Agent, agent, ()) for agent in row["agents"]]
        return OrganizationPage(
            _counted(nodes.Org, models.Organization, row["org"], org_counts),
            Page(users, row["user_total"]),
            Page(agents, row["agent_total"]),
        )

    values = {"org_id": org_id, "search": search, "skip": skip, "agents_skip": agents_skip}
    return Call(Query(text, {**values, "limit": limit}), page)


def user_with_counts(nodes: Nodes, org_id: str, user_id: str) -> Call[Counted[models.User]]:
    """The user with its numbers of interactions and memories."""
    check_ids(org_id=org_id, user_id=user_id)
    work = UnitOfWork()
    user = match_user(nodes, work, org_id, user_id)
    counts = _counts(nodes, user_counts(nodes))
    output_each(work, "user", user, **counts)
    return Call(work, lambda row: _counted(nodes.User, models.User, row["user"], counts))


@dataclass(frozen=True)
class MemoryState:
    """Whether a newer memory superseded this one, and whether it superseded an older."""

    superseded: bool
    supersedes: bool


def memory_states(
    nodes: Nodes, org_id: str, user_id: str, memory_ids: list[str]
) -> Call[dict[str, MemoryState]]:
    """The :class:`MemoryState` of each of the user's ``memory_ids`` (a page's)."""
    for memory_id in memory_ids:
        check_memory_key(org_id, user_id, memory_id)
    params = {"org_id": org_id, "user_id": user_id, "memory_ids": list(memory_ids)}

    def states(rows: list[Row]) -> dict[str, MemoryState]:
        return {row["memory_id"]: MemoryState(row["superseded"], row["supersedes"]) for row in rows}

    return Call(Query(queries.MEMORY_STATES, params), states)


@dataclass(frozen=True)
class UserAgents:
    """The agents serving a user (``total`` in all) and the labels of the agents asked
    for by id, so that a page's rows name their agents, organisation-wide ones included."""

    agents: list[models.Agent]
    total: int
    labels: dict[str, str]


def user_agents(
    nodes: Nodes, org_id: str, user_id: str, agent_ids: list[str], limit: int = 50
) -> Call[UserAgents]:
    """The first ``limit`` agents serving the user (theirs, then the organisation's of no
    user, by label) and the labels of ``agent_ids``."""
    check_ids(org_id=org_id, user_id=user_id)
    for agent_id in agent_ids:
        check_ids(agent_id=agent_id)
    check_page(0, limit)
    text = queries.with_maps(
        queries.USER_AGENTS_PAGE, AGENT_MAP=_node_map(nodes.Agent, "agent", {})
    )

    def found(rows: list[Row]) -> UserAgents:
        row = rows[0]
        agents = [_counted(nodes.Agent, models.Agent, agent, ()).item for agent in row["agents"]]
        return UserAgents(agents, row["total"], dict(row["labels"]))

    values = {"org_id": org_id, "user_id": user_id, "agent_ids": sorted(set(agent_ids))}
    return Call(Query(text, {**values, "limit": limit}), found)


def memories_matching(
    nodes: Nodes,
    apoc: bool,
    org_id: str,
    user_id: str,
    search: str,
    skip: int = 0,
    limit: int = 50,
) -> Call[list[models.Memory]]:
    """A page of the user's memories whose stored text contains ``search`` (any case),
    newest first: the admin's memory search when no vector store is configured."""
    check_ids(org_id=org_id, user_id=user_id)
    check_name("search", search)
    check_page(skip, limit)
    return user_page(
        nodes,
        apoc,
        queries.MEMORIES_MATCHING,
        "memory",
        Reads.memory_of,
        org_id,
        user_id,
        search=search,
        skip=skip,
        limit=limit,
    )
