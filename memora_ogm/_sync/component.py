# Generated from memora_ogm/_async by scripts/generate_sync.py: do not edit.
"""What every domain part of the facade shares: the connection and a logger; and the
node look-ups of the tenant export, which works on node objects."""

from __future__ import annotations

import logging

from memora_ogm._sync.base import BaseGraphDB
from memora_ogm._sync.erasure import BATCH_SIZE
from memora_ogm._sync.graph import Graph
from memora_ogm._sync.nodes import Org, User
from memora_ogm.errors import OrganizationNotFound, UserNotFound


class GraphComponent(BaseGraphDB):
    """Base of the per-domain mixins composed into ``Neo4jGraphInterface``."""

    graph: Graph
    logger: logging.Logger
    #: Memories and messages one batch of an erasure deletes at most (see
    #: :mod:`memora_ogm._async.erasure`): within the server's transaction memory.
    erase_batch_size: int = BATCH_SIZE


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
