"""Readable text of what a shell shows: our return models and nodes carry their own
lines (``lines()``, :func:`~memora_ogm.schema.models.node_line`); this adds lists of them,
for IPython's display hook and ``memora-ogm shell``.
"""

from __future__ import annotations

from memora_ogm.schema.models import _Readable, node_line


def _one(value: object) -> list[str] | None:
    if isinstance(value, _Readable):
        return value.lines()
    if hasattr(type(value), "defined_properties") and hasattr(value, "element_id"):
        return [node_line(value)]
    return None


def format_value(value: object) -> str | None:
    """Readable lines for one of ours or a non-empty list/tuple of ours; else ``None``."""
    if isinstance(value, (list, tuple)) and value:
        parts = [_one(item) for item in value]
        if any(part is None for part in parts):
            return None
        counted = f"{len(value)} item{'s' if len(value) != 1 else ''}"
        body = [line for part in parts if part is not None for line in part]
        return "\n".join([f"[{counted}]", *body])
    lines = _one(value)
    return None if lines is None else "\n".join(lines)
