"""What every domain part of the facade shares: the connection and a logger."""

from __future__ import annotations

import logging

from memora_ogm._async.base import BaseGraphDB
from memora_ogm._async.graph import Graph
from memora_ogm.calls.erasure import BATCH_SIZE


class GraphComponent(BaseGraphDB):
    """Base of the per-domain mixins composed into ``Neo4jGraphInterface``."""

    graph: Graph
    logger: logging.Logger
    #: Memories and messages one batch of an erasure deletes at most (see
    #: :mod:`memora_ogm.calls.erasure`): within the server's transaction memory.
    erase_batch_size: int = BATCH_SIZE
