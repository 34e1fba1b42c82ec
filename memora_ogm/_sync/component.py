# Generated from memora_ogm/_async by scripts/generate_sync.py: do not edit.
"""What every domain part of the facade shares: the connection, a logger and node look-ups."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any, TypeVar

from memora_ogm._sync.base import BaseGraphDB
from memora_ogm._sync.graph import Graph
from memora_ogm._sync.nodes import Agent, MemoraNode, Org, User
from memora_ogm._sync.ogm import lock_nodes
from memora_ogm.errors import AgentNotFound, OrganizationNotFound, UserNotFound

N = TypeVar("N", bound=MemoraNode)


class GraphComponent(BaseGraphDB):
    """Base of the per-domain mixins composed into ``Neo4jGraphInterface``."""

    graph: Graph
    logger: logging.Logger


def get_org(org_id: str) -> Org:
    node = Org.nodes.get_or_none(org_id=org_id)
    if node is None:
        raise OrganizationNotFound(org_id)
    return node


def get_user(org_id: str, user_id: str) -> User:
    node = User.nodes.get_or_none(org_id=org_id, user_id=user_id)
    if node is None:
        raise UserNotFound(org_id, user_id)
    return node


def get_agent(org_id: str, agent_id: str) -> Agent:
    node = Agent.nodes.get_or_none(org_id=org_id, agent_id=agent_id)
    if node is None:
        raise AgentNotFound(org_id, agent_id)
    return node


def lock(node: N, missing: Callable[[], Exception], **changes: Any) -> N:
    """``node``, write-locked until the transaction ends and read again, with ``changes`` saved;
    ``missing()`` if a concurrent delete removed it.

    (A delete that held the lock makes the locking fail with ``EntityNotFound``, which
    the unit of work retries.)
    """
    if not lock_nodes([node]):
        raise missing()
    try:
        node.refresh()
    except type(node).DoesNotExist as error:
        raise missing() from error
    if changes:
        for name, value in changes.items():
            setattr(node, name, value)
        node.save()
    return node


def locked_user(org_id: str, user_id: str, missing: Callable[[], Exception] | None = None) -> User:
    """The user, write-locked: every write to one user's interactions and memories takes turns.

    Without it a delete of the user, of an interaction or of a memory could commit
    between a concurrent write's reads and its links, and that write would link to
    nodes that are gone (orphaned interactions, messages or memories). ``missing``
    makes the error for a user that does not exist (``UserNotFound`` by default).
    """
    node = User.nodes.get_or_none(org_id=org_id, user_id=user_id)
    error = missing or (lambda: UserNotFound(org_id, user_id))
    if node is None:
        raise error()
    return lock(node, error)


def locked_org(org_id: str) -> Org:
    """The organisation, write-locked: what adds users or agents to it takes turns with
    its deletion, which locks it last to make sure nothing was added meanwhile."""
    return lock(get_org(org_id), lambda: OrganizationNotFound(org_id))
