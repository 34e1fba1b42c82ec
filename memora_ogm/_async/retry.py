"""The retry policy of every call: what running the work again may cure, and how long to wait.

Run again, with jittered exponential backoff: transient errors, races of concurrent
``MERGE``\\ s of a user's days, nodes deleted by a concurrent transaction. Any other
constraint violation is a conflict. A write whose commit went unanswered is not simply run
again: the server is asked whether it landed (:func:`ask_outcome`).
"""

from __future__ import annotations

import logging
import random
import time
from collections.abc import Awaitable, Callable
from typing import TypeVar

from memora_ogm import observe
from memora_ogm._async.compat import sleep
from memora_ogm.engine.call import Landed
from memora_ogm.errors import (
    CONNECTION_LOST,
    ConflictError,
    OutcomeUnknown,
    RetriesExhausted,
    is_retryable,
    violated_key,
)

T = TypeVar("T")
logger = logging.getLogger("memora_ogm")


async def retried(work: Callable[[], Awaitable[T]], max_attempts: int, base_backoff: float) -> T:
    """``work``, run up to ``max_attempts`` times while :func:`is_retryable`, with full
    jitter of ``base_backoff`` doubled each attempt; a key that exists: ``ConflictError``."""
    for attempt in range(1, max_attempts + 1):
        try:
            return await work()
        except Exception as error:
            if not is_retryable(error):
                violated = violated_key(error)
                if violated is not None:
                    raise ConflictError(violated) from error
                raise
            if attempt == max_attempts:
                raise RetriesExhausted(f"gave up after {attempt} attempts: {error}") from error
            delay = random.uniform(0, base_backoff * 2 ** (attempt - 1))
            logger.info("retrying after %s (attempt %d): %s", type(error).__name__, attempt, error)
            observe.retrying(error, attempt, delay)
            await sleep(delay)
    raise AssertionError("unreachable")  # pragma: no cover


async def ask_outcome(landed: Landed, found: Callable[[], Awaitable[bool]], timeout: float) -> bool:
    """Whether the write ``landed`` shows took effect, by ``found()``: asked again for up
    to ``timeout`` seconds while the server is away, then ``OutcomeUnknown`` (the write's
    vector changes are then held pending, not undone)."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            exists = await found()
            break
        except (RetriesExhausted, *CONNECTION_LOST) as error:
            if time.monotonic() >= deadline:
                raise OutcomeUnknown(
                    "the connection was lost as a write committed, and the server could "
                    f"not be asked whether it took effect: {error}"
                ) from error
            await sleep(0.5)
    logger.info("a commit went unanswered; it %s", "landed" if exists else "did not land")
    took_effect = exists == landed.present
    observe.outcome(took_effect)
    return took_effect
