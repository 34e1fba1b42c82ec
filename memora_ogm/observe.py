"""The one hook through which the facade's calls can be observed: :data:`observer`.

Each public method of the facade and of its vector store is :func:`observed`; within a
call, the graph reports the statements it sends, its batches, retries and unanswered
commits. The slot is None unless an instrumentor sets it
(:class:`memora_ogm.telemetry.MemoraInstrumentor`): a call then costs one check.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import AsyncGenerator, AsyncIterator, Callable, Generator, Iterator
from contextlib import AbstractContextManager, aclosing, closing, contextmanager
from typing import Any, Protocol, TypeVar, cast

F = TypeVar("F", bound=Callable[..., Any])
#: The end of a stream.
_DONE = object()


class Observation(Protocol):
    """One observed call."""

    def current(self) -> AbstractContextManager[object]:
        """The call as the current one while its work runs."""

    def end(self, error: BaseException | None = None) -> None:
        """The call is over; ``error`` is what it failed with."""


class Observer(Protocol):
    """Whoever observes the calls."""

    def start(
        self,
        system: str,
        method: Callable[..., Any],
        owner: Any,
        args: tuple[Any, ...],
        kwargs: dict[str, Any],
    ) -> Observation | None:
        """A call of ``owner``'s ``method`` begins; None leaves it unobserved."""

    def sent(self, statement: str) -> None:
        """The current call sent a statement (its parameterized text)."""

    def batch(self) -> None:
        """The current call ran a batch of batched work."""

    def coalesced(self, size: int, statement: str, waited: float) -> None:
        """The current call's write went in a batch of ``size`` writes (``statement``),
        after waiting ``waited`` seconds in the queue."""

    def retrying(self, error: BaseException, attempt: int, backoff: float) -> None:
        """The current call runs its work again after ``error``."""

    def outcome(self, landed: bool) -> None:
        """The current call's unanswered commit was found to have landed, or not."""


#: The observer of every call, or None (the default): calls run unobserved.
observer: Observer | None = None


def sent(statement: str) -> None:
    if (now := observer) is not None:
        now.sent(statement)


def batch() -> None:
    if (now := observer) is not None:
        now.batch()


def coalesced(size: int, statement: str, waited: float) -> None:
    if (now := observer) is not None:
        now.coalesced(size, statement, waited)


def retrying(error: BaseException, attempt: int, backoff: float) -> None:
    if (now := observer) is not None:
        now.retrying(error, attempt, backoff)


def outcome(landed: bool) -> None:
    if (now := observer) is not None:
        now.outcome(landed)


@contextmanager
def _ending(call: Observation) -> Iterator[None]:
    """End ``call`` as the block ends: as failed if it raised (not if a stream was closed)."""
    try:
        yield
    except BaseException as error:
        call.end(None if isinstance(error, GeneratorExit) else error)
        raise
    call.end()


async def _over_async(call: Observation, items: AsyncGenerator[Any, Any]) -> AsyncIterator[Any]:
    """``items``, with ``call`` current while each is made; it ends with them."""
    with _ending(call):
        async with aclosing(items):
            while True:
                with call.current():
                    item = await anext(items, _DONE)
                if item is _DONE:
                    return
                yield item


def _over(call: Observation, items: Generator[Any, Any, Any]) -> Iterator[Any]:
    """:func:`_over_async` of a synchronous stream."""
    with _ending(call), closing(items):
        while True:
            with call.current():
                item = next(items, _DONE)
            if item is _DONE:
                return
            yield item


def observed(system: str) -> Callable[[F], F]:
    """Make a method a call of ``system`` (``neo4j``, ``qdrant``) that the observer sees;
    one returning a stream (an export) is observed until the stream ends."""

    def decorate(method: F) -> F:
        if inspect.iscoroutinefunction(method):

            @functools.wraps(method)
            async def run_async(owner: Any, /, *args: Any, **kwargs: Any) -> Any:
                now = observer  # once: another thread may uninstrument meanwhile
                call = None if now is None else now.start(system, method, owner, args, kwargs)
                if call is None:
                    return await method(owner, *args, **kwargs)
                with _ending(call), call.current():
                    return await method(owner, *args, **kwargs)

            return cast(F, run_async)

        @functools.wraps(method)
        def run(owner: Any, /, *args: Any, **kwargs: Any) -> Any:
            now = observer  # once: another thread may uninstrument meanwhile
            call = None if now is None else now.start(system, method, owner, args, kwargs)
            if call is None:
                return method(owner, *args, **kwargs)
            try:
                with call.current():
                    result = method(owner, *args, **kwargs)
            except BaseException as error:
                call.end(error)
                raise
            if inspect.isasyncgen(result):
                return _over_async(call, result)
            if inspect.isgenerator(result):
                return _over(call, result)
            call.end()
            return result

        return cast(F, run)

    return decorate
