"""What every part of the facade shares: the connection, a logger, and its methods.

Each of Memora's methods is a declaration of :mod:`memora_ogm.calls` made a method of
the interface: it has the declaration's name, documentation and signature (less what the
interface puts in: its node classes first), and runs it through the graph's door
(:meth:`Graph.execute`), which hands the declaration the graph's node classes.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Coroutine
from typing import Any, Concatenate, ParamSpec, TypeVar

from memora_ogm._async.base import BaseGraphDB
from memora_ogm._async.graph import Graph
from memora_ogm.engine.call import Batches, Call, method_of
from memora_ogm.engine.erasure import BATCH_SIZE, Erasure
from memora_ogm.engine.nodes import Nodes

P = ParamSpec("P")
T = TypeVar("T")


class GraphComponent(BaseGraphDB):
    """Base of the interface and of the parts composed into it."""

    graph: Graph
    logger: logging.Logger
    #: Memories and messages one batch of an erasure deletes at most (see
    #: :mod:`memora_ogm.engine.erasure`): within the server's transaction memory.
    erase_batch_size: int = BATCH_SIZE


Method = Callable[Concatenate[GraphComponent, P], Coroutine[Any, Any, T]]
"""A method of the interface taking ``P``."""


def facade_method(declare: Callable[Concatenate[Nodes, P], Call[T]]) -> Method[P, T]:
    """A method of a declaration that needs only the interface's node classes."""

    async def run(self: GraphComponent, /, *args: P.args, **kwargs: P.kwargs) -> T:
        return await self.graph.execute(declare, *args, **kwargs)

    return method_of(declare, 1, run)


def resolving(declare: Callable[Concatenate[Nodes, bool, P], Call[T]]) -> Method[P, T]:
    """A method of a read that resolves placeholders, on the server when it has APOC."""

    async def run(self: GraphComponent, /, *args: P.args, **kwargs: P.kwargs) -> T:
        return await self.graph.execute(declare, await self.graph.has_apoc(), *args, **kwargs)

    return method_of(declare, 2, run)


def erasing(
    declare: Callable[Concatenate[Nodes, Erasure, P], Call[None] | Batches],
) -> Method[P, None]:
    """A method of an erasure, in the interface's batches, of both stores."""

    async def run(self: GraphComponent, /, *args: P.args, **kwargs: P.kwargs) -> None:
        erasure = Erasure(self.erase_batch_size, self.graph.vector_db is not None)
        await self.graph.execute(declare, erasure, *args, **kwargs)

    return method_of(declare, 2, run)
