"""A vector store that stops a settler between its graph read and its vector write (issue 46).

The settler of pending vector changes reads the graph, then writes the points of what it
found with ``add_memories``. :class:`Gate` holds the first ``add_memories`` after it is
armed, until the test lets it go: whatever the test runs meanwhile (a delete of the same
memories) commits in exactly the window where a settler would write a deleted memory's
point back. :func:`held_record` makes what the settler settles: a record of pending
changes, held as a write whose commit outcome went unknown would leave it.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Sequence
from typing import Any

from memora_ogm._sync.qdrant import QdrantDB as SyncQdrantDB
from memora_ogm.vector_db.pending import Journal
from memora_ogm.vector_db.qdrant import QdrantDB

#: Seconds a gate or a test waits for the other side before failing loudly.
PATIENCE = 60.0


class Gate:
    """Stops the first call after :meth:`arm` (of the given user's points, if one is
    given) until :meth:`open`."""

    def __init__(self, held: str = "the settler's vector write") -> None:
        #: What the gate holds, as a failure names it.
        self.held = held
        self.armed = False
        self.user_id: str | None = None
        self.reached = threading.Event()
        self.opened = threading.Event()

    def arm(self, user_id: str | None = None) -> None:
        self.armed, self.user_id = True, user_id

    def stops(self, user_id: str | None = None) -> bool:
        """Whether this call is the one to hold (then the gate is disarmed)."""
        if not self.armed or self.user_id not in (None, user_id):
            return False
        self.armed = False
        self.reached.set()
        return True

    def wait_reached(self) -> None:
        if not self.reached.wait(PATIENCE):
            raise AssertionError(f"{self.held} was never reached")

    def wait_opened(self) -> None:
        if not self.opened.wait(PATIENCE):
            raise AssertionError("the test never let the settler go")

    def open(self) -> None:
        self.opened.set()


class GatedQdrant(QdrantDB):
    """The async ``QdrantDB``, its writes held by :attr:`gate` when armed, its removals
    of points by id by :attr:`deletes`."""

    gate: Gate
    deletes: Gate

    async def add_memories(self, *args: Any, **kwargs: Any) -> None:
        if self.gate.stops(kwargs.get("user_id")):
            await asyncio.to_thread(self.gate.wait_opened)
        await super().add_memories(*args, **kwargs)

    async def delete_memories(self, memory_ids: list[str]) -> None:
        if self.deletes.stops():
            await asyncio.to_thread(self.deletes.wait_opened)
        await super().delete_memories(memory_ids)


class SyncGatedQdrant(SyncQdrantDB):
    """The sync ``QdrantDB``, its writes held by :attr:`gate` when armed, its removals
    of points by id by :attr:`deletes`."""

    gate: Gate
    deletes: Gate

    def add_memories(self, *args: Any, **kwargs: Any) -> None:
        if self.gate.stops(kwargs.get("user_id")):
            self.gate.wait_opened()
        super().add_memories(*args, **kwargs)

    def delete_memories(self, memory_ids: list[str]) -> None:
        if self.deletes.stops():
            self.deletes.wait_opened()
        super().delete_memories(memory_ids)


def hold_commits(graph: Any) -> Gate:
    """A gate on ``graph``'s commits: the first commit after it is armed waits, after the
    write's vector half was applied, until the gate opens."""
    gate, commit = Gate(), graph.commit
    if asyncio.iscoroutinefunction(commit):

        async def held(transaction: Any) -> None:
            if gate.stops():
                await asyncio.to_thread(gate.wait_opened)
            await commit(transaction)

    else:

        def held(transaction: Any) -> None:  # type: ignore[misc]
            if gate.stops():
                gate.wait_opened()
            commit(transaction)

    graph.commit = held
    return gate


def gated(store: Any) -> Any:
    """``store`` with its gates (disarmed)."""
    store.gate, store.deletes = Gate(), Gate("a removal of points by id")
    return store


async def held_record(
    store: Any,
    kind: str,
    org_id: str,
    user_id: str,
    memory_ids: Sequence[str],
) -> None:
    """Journal and hold what a write of ``kind`` touched, as an unknown commit outcome
    leaves it: ``memories`` (added points, hidden), ``user`` or ``organization`` (a purge,
    applied)."""
    journal = Journal.kept_by(store)
    if kind == "memories":
        record = journal.begin(memory_ids)
        hidden: Any = store.delete_memories(list(memory_ids))
    elif kind == "user":
        record = journal.begin((), users=[(org_id, user_id)])
        hidden = store.delete_all_user_memories(org_id, user_id)
    else:
        record = journal.begin((), organizations=[org_id])
        hidden = store.delete_all_organization_memories(org_id)
    journal.hold(record)
    if asyncio.iscoroutine(hidden):
        await hidden
