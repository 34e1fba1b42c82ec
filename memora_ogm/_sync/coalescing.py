# Generated from memora_ogm/_async by scripts/generate_sync.py: do not edit.
"""Natural batching of a graph's saves: concurrent saves share a transaction.

While fewer than :attr:`Coalescer.limit` of a graph's coalescing writes are in flight, a
save goes at once, alone, as it always did. At the limit, later saves queue; each time a
transaction returns, the saves waiting (of one statement shape and one caller's event
loop, within the caps) go together as one batched statement in one transaction, run on
that loop. No timer: a lone caller never waits for company. Each caller gets its own
result or its own exception: a row whose user or agent is missing fails alone, and a
batch the server refuses is split in halves until the save at fault is alone.
"""

from __future__ import annotations

import pickle
import threading
import time
import weakref
from collections import Counter, deque
from collections.abc import Callable, Iterable
from typing import Any, TypeVar, cast

from neo4j.exceptions import IncompleteCommit

from memora_ogm import fork, observe
from memora_ogm._sync import compat
from memora_ogm.engine.call import Call, sealed
from memora_ogm.engine.unit_of_work import Compiled
from memora_ogm.errors import CONNECTION_LOST, RetriesExhausted

T = TypeVar("T")

#: Errors that say nothing about one save of a batch (the server away, a commit
#: unanswered, transient conflicts that outlasted their retries): every caller gets them.
SHARED_ERRORS = (RetriesExhausted, IncompleteCommit, *CONNECTION_LOST)


class Waiting:
    """A queued save: its call, its batched form, and where its caller waits (the caller's
    event loop, where its batch runs: another caller's loop may end while it runs)."""

    __slots__ = ("call", "text", "params", "weight", "future", "loop", "queued", "waited", "size")

    def __init__(self, call: Call[Any]) -> None:
        statement = call.statement
        assert isinstance(statement, Compiled) and statement.batched, "a write not sealed"
        self.call = call
        self.text, self.params = statement.batched, statement.statement[1]
        self.weight = weight(self.params)
        self.loop = compat.caller_loop()
        self.future = compat.answer_slot()
        self.queued = time.perf_counter()
        #: Seconds in the queue, and the size of the batch that took it, once taken.
        self.waited = 0.0
        self.size = 0


def weight(value: Any) -> int:
    """About how many bytes ``value`` takes as parameters: its pickled size (a tenth of
    the time of walking it in Python; a string held twice counts once)."""
    return len(pickle.dumps(value, pickle.HIGHEST_PROTOCOL))


#: Send one write as today (``Graph._call``).
SendAlone = Callable[[Call[Any]], Any]
#: Send writes of one shape as one statement (``Graph._batch``): the calls, the batched
#: statement's text, each row's batch key and parameters; each call's result or error.
SendTogether = Callable[
    [list[Call[Any]], str, list[tuple[tuple[str, ...], dict[str, Any]]]], list[Any]
]


class Coalescer:
    """The queue of one graph's coalescing writes and the batches sent from it."""

    #: Coalescing transactions in flight before writes queue. One: then every save that
    #: comes while a transaction is out waits for the next batch. On the 2-core test
    #: machine (``benchmarks/bench_coalesce.py --limit``, two paired runs) a limit of 2
    #: sent half of its transactions with one save, twice the transactions per save, and
    #: async callers made 24 to 37 % fewer saves/s (sync ones about as many); 4 gave
    #: smaller batches still.
    limit = 1
    #: Batches of one caller's many writes (:meth:`write_each`) in flight at once.
    lanes = 2
    #: Saves in one batch at most.
    max_saves = 64
    #: Parameter bytes in one batch at most (about: :func:`weight`).
    max_bytes = 4 << 20

    def __init__(self, alone: SendAlone, together: SendTogether) -> None:
        #: The graph's ways to send a write alone and writes of one shape together.
        #: Held weakly: a graph let go is freed at once (and with it an embedded store's
        #: folder), as no cycle through its coalescer keeps it for the collector.
        self._alone = weakref.WeakMethod(alone)
        self._together = weakref.WeakMethod(together)
        self.lock = threading.Lock()  # callers may wait in several threads and loops
        self.in_flight = 0
        self.queue: deque[Waiting] = deque()
        #: How many batches of each size were sent (a save sent alone is a batch of one).
        self.sizes: Counter[int] = Counter()
        #: The serial keys (:attr:`Call.serial`) of the writes in flight.
        self.busy: Counter[tuple[str, ...]] = Counter()
        fork.register(self)

    def _send_alone(self) -> SendAlone:
        send = self._alone()
        assert send is not None, "the graph of this coalescer was freed"
        return send

    def _send_together(self) -> SendTogether:
        send = self._together()
        assert send is not None, "the graph of this coalescer was freed"
        return send

    def forget_inherited(self) -> None:
        """In a forked child: the parent's writes in flight and waiting are not this
        process's (their threads and tasks stayed behind), nor is a lock they held."""
        self.lock = threading.Lock()
        self.in_flight = 0
        self.queue.clear()
        self.busy.clear()

    def write(self, call: Call[T]) -> T:
        """``call``'s result: sent at once below the limit, else in the next batch."""
        with self.lock:
            alone = (
                self.in_flight < self.limit
                and not self.queue
                and (call.serial is None or call.serial not in self.busy)
            )
            if alone:
                self._occupy([call])
        if alone:
            try:
                # The tasks one batch answered resume one after the other, in one turn of
                # the loop. Waiting for that turn to end lets the others queue behind this
                # save, and it leads them in one batch instead of going alone before them.
                # Not a timer: nothing waits for company (the sync twin waits for nothing).
                compat.turn()
            except BaseException:
                self._release([call])
                raise
            if not self.queue:  # none came (at the limit of 1, nothing else takes from it)
                self.sizes[1] += 1
                try:
                    return cast(T, self._send_alone()(call))
                finally:
                    self._release([call])
        waiting = Waiting(call)  # checked and compiled before it joins the queue
        with self.lock:
            if alone:  # it came first: it leads the batch of those that came meanwhile
                self._free([call])
                self.queue.appendleft(waiting)
            else:
                self.queue.append(waiting)
            batch = self._take()
        if batch:
            compat.start(self._send, batch, loop=batch[0].loop)
        try:
            return cast(T, compat.answer_of(waiting.future))
        except BaseException:
            # Cancelled before its batch took it: out of the queue (once taken, its batch
            # runs to the end, and the rules of unknown outcomes apply).
            with self.lock:
                if waiting in self.queue:
                    self.queue.remove(waiting)
            raise
        finally:
            if waiting.size:
                observe.coalesced(waiting.size, waiting.text, waiting.waited)

    def write_each(self, calls: Iterable[Call[Any]]) -> list[Any]:
        """One caller's many writes, in batches within the caps, :attr:`lanes` batches at
        once: each call's result or its own exception, in order. ``calls`` is drawn
        (declared, if it is a generator) a batch at a time as a lane comes free, so a large
        import holds only the batches in flight, not every declared write at once."""
        coming = iter(calls)
        answers: list[Any] = []  # each drawn write's answer slot, in order
        #: A write drawn that did not fit the batch before it: it starts the next one.
        carried: list[Waiting] = []
        drawing = threading.Lock()  # the sync twin's lanes are threads
        failed: list[Exception] = []

        def draw() -> list[Waiting]:
            """The next batch; none once ``calls`` ran out, or raised (no more is drawn)."""
            with drawing:
                batch = carried[:]
                carried.clear()
                size = sum(waiting.weight for waiting in batch)
                try:
                    for call in [] if failed else coming:
                        waiting = Waiting(sealed(call))
                        compat.claim(waiting.future)
                        answers.append(waiting.future)
                        if batch and (
                            waiting.text != batch[0].text
                            or len(batch) == self.max_saves
                            or size + waiting.weight > self.max_bytes
                        ):
                            carried.append(waiting)
                            break
                        batch.append(waiting)
                        size += waiting.weight
                except Exception as error:  # declaring failed: what was drawn still goes
                    failed.append(error)
                return batch

        def lane() -> None:
            while batch := draw():
                self.sizes[len(batch)] += 1
                self._settle(batch)

        for _ in range(self.lanes - 1):
            compat.start(lane)
        lane()
        outcomes: list[Any] = []
        for slot in answers:  # the batches drawn before a failure still land
            try:
                outcomes.append(compat.answer_of(slot))
            except Exception as error:
                outcomes.append(error)
        if failed:
            raise failed[0]
        return outcomes

    def _take(self) -> list[Waiting]:
        """The next batch, if a slot is free: the first waiting save and those after it of
        its shape, within the caps; cancelled ones are dropped. Called under the lock."""
        if self.in_flight >= self.limit:
            return []
        batch: list[Waiting] = []
        kept: deque[Waiting] = deque()
        held: set[tuple[str, ...]] = set()  # serial keys that wait for an earlier write
        size = 0
        while self.queue:
            waiting = self.queue.popleft()
            serial = waiting.call.serial
            if serial is not None and (serial in self.busy or serial in held):
                held.add(serial)
                kept.append(waiting)
                continue
            fits = not batch or (
                waiting.text == batch[0].text
                and waiting.loop is batch[0].loop
                and len(batch) < self.max_saves
                and size + waiting.weight <= self.max_bytes
            )
            if not fits:
                kept.append(waiting)
                if serial is not None:
                    held.add(serial)
                if len(batch) >= self.max_saves:
                    break
                continue
            if compat.claim(waiting.future):  # False: cancelled
                batch.append(waiting)
                size += waiting.weight
                if serial is not None:
                    held.add(serial)
        self.queue.extendleft(reversed(kept))
        if batch:
            self._occupy([waiting.call for waiting in batch])
            self.sizes[len(batch)] += 1
            now = time.perf_counter()
            for waiting in batch:
                waiting.waited, waiting.size = now - waiting.queued, len(batch)
        return batch

    def _occupy(self, calls: list[Call[Any]]) -> None:
        """Take a slot for ``calls`` (under the lock), and their serial keys."""
        self.in_flight += 1
        for call in calls:
            if call.serial is not None:
                self.busy[call.serial] += 1

    def _release(self, calls: list[Call[Any]]) -> None:
        """A transaction returned: its slot goes to the next batch, if writes wait."""
        with self.lock:
            self._free(calls)
            batch = self._take()
        if batch:
            compat.start(self._send, batch, loop=batch[0].loop)

    def _free(self, calls: list[Call[Any]]) -> None:
        """Give back the slot of ``calls`` and their serial keys (under the lock)."""
        self.in_flight -= 1
        for call in calls:
            if call.serial is not None:
                self.busy[call.serial] -= 1
                if not self.busy[call.serial]:
                    del self.busy[call.serial]

    def _send(self, batch: list[Waiting]) -> None:
        try:
            self._settle(batch)
        finally:
            self._release([waiting.call for waiting in batch])

    def _settle(self, batch: list[Waiting]) -> None:
        """Send ``batch`` and give each caller its answer; split it if the server refused it."""
        if len(batch) == 1:
            (waiting,) = batch
            try:
                compat.answer(waiting.future, self._send_alone()(waiting.call))
            except BaseException as error:
                compat.answer(waiting.future, error=error)
                if not isinstance(error, Exception):
                    raise
            return
        rows = [(w.call.batch_key or (), w.params) for w in batch]
        try:
            outcomes = self._send_together()([w.call for w in batch], batch[0].text, rows)
        except Exception as error:
            if isinstance(error, SHARED_ERRORS):
                for waiting in batch:
                    compat.answer(waiting.future, error=error)
                return
            half = len(batch) // 2
            self._settle(batch[:half])
            self._settle(batch[half:])
            return
        except BaseException as error:
            for waiting in batch:
                compat.answer(waiting.future, error=error)
            raise
        for waiting, outcome in zip(batch, outcomes, strict=True):
            if isinstance(outcome, Exception):
                compat.answer(waiting.future, error=outcome)
            else:
                compat.answer(waiting.future, outcome)
