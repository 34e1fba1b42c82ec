"""What every domain part of the facade shares: the connection, a logger and node look-ups."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any, TypeVar

from memora_ogm._async.base import BaseGraphDB
from memora_ogm._async.graph import Graph
from memora_ogm._async.nodes import Agent, MemoraNode, Org, User
from memora_ogm._async.ogm import lock_nodes
from memora_ogm.errors import AgentNotFound, OrganizationNotFound, UserNotFound

N = TypeVar("N", bound=MemoraNode)


class GraphComponent(BaseGraphDB):
    """Base of the per-domain mixins composed into ``Neo4jGraphInterface``."""

    graph: Graph
    logger: logging.Logger


async def get_org(org_id: str) -> Org:
    node = await Org.nodes.get_or_none(org_id=org_id)
    if node is None:
        raise OrganizationNotFound(org_id)
    return node


async def get_user(org_id: str, user_id: str) -> User:
    node = await User.nodes.get_or_none(org_id=org_id, user_id=user_id)
    if node is None:
        raise UserNotFound(org_id, user_id)
    return node


async def get_agent(org_id: str, agent_id: str) -> Agent:
    node = await Agent.nodes.get_or_none(org_id=org_id, agent_id=agent_id)
    if node is None:
        raise AgentNotFound(org_id, agent_id)
    return node


async def lock(node: N, missing: Callable[[], Exception], **changes: Any) -> N:
    """``node``, write-locked until the transaction ends and read again, with ``changes`` saved;
    ``missing()`` if a concurrent delete removed it.

    (A delete that held the lock makes the locking fail with ``EntityNotFound``, which
    the unit of work retries.)
    """
    if not await lock_nodes([node]):
        raise missing()
    try:
        await node.refresh()
    except type(node).DoesNotExist as error:
        raise missing() from error
    if changes:
        for name, value in changes.items():
            setattr(node, name, value)
        await node.save()
    return node


async def locked_user(
    org_id: str, user_id: str, missing: Callable[[], Exception] | None = None
) -> User:
    """The user, write-locked: every write to one user's interactions and memories takes turns.

    Without it a delete of the user, of an interaction or of a memory could commit
    between a concurrent write's reads and its links, and that write would link to
    nodes that are gone (orphaned interactions, messages or memories). ``missing``
    makes the error for a user that does not exist (``UserNotFound`` by default).
    """
    node = await User.nodes.get_or_none(org_id=org_id, user_id=user_id)
    error = missing or (lambda: UserNotFound(org_id, user_id))
    if node is None:
        raise error()
    return await lock(node, error)


async def locked_org(org_id: str) -> Org:
    """The organisation, write-locked: what adds users or agents to it takes turns with
    its deletion, which locks it last to make sure nothing was added meanwhile."""
    return await lock(await get_org(org_id), lambda: OrganizationNotFound(org_id))
