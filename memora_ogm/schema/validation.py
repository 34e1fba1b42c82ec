"""Argument checks shared by every facade method: beyond Memora's non-empty strings,
whitespace-only values, control characters in ids and values over the documented limits
fail with a clear exception before anything is written.
"""

from __future__ import annotations

import re
import uuid
from typing import Any

#: Longest id accepted (shortuuid ids have 22 characters, uuid4 strings 36).
MAX_ID_LENGTH = 64
#: A UUID in the one spelling ``str(uuid.UUID(...))`` gives: lower case, hyphenated.
_CANONICAL_UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
#: Longest organisation name, user name or agent label.
MAX_NAME_LENGTH = 1_000
#: Longest message content or memory text.
MAX_TEXT_LENGTH = 100_000
#: Largest ``skip`` or ``limit``: Neo4j's INTEGER is 64-bit, a larger int cannot be sent.
MAX_PAGE_VALUE = 2**63 - 1


def check_encodable(name: str, value: str, error: type[Exception] = ValueError) -> str:
    """A string the driver can send: one with a lone surrogate (``"\\ud800"``) has no UTF-8."""
    if value.isascii():  # the common case, without encoding a copy
        return value
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise error(f"`{name}` is not valid unicode (it holds a lone surrogate).") from None
    return value


def _check_text(name: str, value: Any, max_length: int, error: type[Exception]) -> str:
    if not isinstance(value, str):
        raise error(f"`{name}` must be a string, not {type(value).__name__}.")
    if not value.strip():
        raise error(f"`{name}` must be a string and have a value.")
    if len(value) > max_length:
        raise error(f"`{name}` is longer than {max_length} characters.")
    return check_encodable(name, value, error)


def check_ids(error: type[Exception] = ValueError, **ids: Any) -> None:
    """Each id must be a non-empty string of printable characters, at most MAX_ID_LENGTH."""
    for name, value in ids.items():
        check_id(name, value, error)


def check_id(name: str, value: Any, error: type[Exception] = ValueError) -> str:
    """:func:`check_ids` of one id, returned."""
    _check_text(name, value, MAX_ID_LENGTH, error)
    if not value.isprintable():
        raise error(f"`{name}` must not contain control characters.")
    return str(value)


def check_memory_id(name: str, value: Any, error: type[Exception] = ValueError) -> str:
    """A UUID in its canonical spelling (``str(uuid.UUID(x))``) only: Qdrant keys a point by
    the UUID, so two spellings would be two memories in the graph but one point."""
    if isinstance(value, str) and _CANONICAL_UUID.fullmatch(value):
        return value  # exactly what ``str(uuid.UUID(value))`` gives back
    check_id(name, value, error)
    try:
        canonical = str(uuid.UUID(value))
    except ValueError:
        raise error(f"`{name}` {value!r} is not a UUID.") from None
    if canonical != value:
        raise error(f"`{name}` {value!r} is not a UUID in canonical form ({canonical!r}).")
    return str(value)


def check_name(name: str, value: Any, error: type[Exception] = ValueError) -> str:
    """A human name or label: non-empty, at most MAX_NAME_LENGTH characters."""
    return _check_text(name, value, MAX_NAME_LENGTH, error)


def check_text(name: str, value: Any, error: type[Exception] = ValueError) -> str:
    """Message content or memory text: non-empty, at most MAX_TEXT_LENGTH characters."""
    return _check_text(name, value, MAX_TEXT_LENGTH, error)


def check_flag(name: str, value: Any) -> bool:
    if not isinstance(value, bool):
        raise ValueError(f"`{name}` must be a bool, not {type(value).__name__}.")
    return value


def check_page(skip: Any, limit: Any) -> None:
    """``skip`` and ``limit`` are ints from 0 to MAX_PAGE_VALUE (a bool is not an int here)."""
    for name, value in (("skip", skip), ("limit", limit)):
        if isinstance(value, bool) or not isinstance(value, int):
            raise ValueError(f"`{name}` must be an integer, not {type(value).__name__}.")
        if value < 0:
            raise ValueError(f"`{name}` must not be negative.")
        if value > MAX_PAGE_VALUE:
            raise ValueError(f"`{name}` must be at most {MAX_PAGE_VALUE}.")
