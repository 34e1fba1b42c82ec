"""What every domain part of the facade shares: the connection, a logger and node look-ups."""

from __future__ import annotations

import logging

from memora_ogm._async.base import BaseGraphDB
from memora_ogm._async.graph import Graph
from memora_ogm._async.nodes import Agent, Org, User
from memora_ogm.errors import AgentNotFound, OrganizationNotFound, UserNotFound


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
