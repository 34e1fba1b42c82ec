"""``user_<id>``/``agent_<id>`` placeholders resolved in Python for servers without APOC,
as :mod:`memora_ogm.engine.queries` does in Cypher: case-insensitively, in one pass (a user named
``agent_smith`` stays so), literally; a placeholder whose owner is gone stays.
"""

from __future__ import annotations

import re

#: The pattern as Java (APOC) reads it; ``(user|agent)`` is group 1.
PLACEHOLDER_PATTERN = "(?i)(user|agent)_[a-z0-9-]+"

# re.ASCII keeps [a-z] to ASCII under IGNORECASE, as Java's (?i) does.
_PLACEHOLDER = re.compile(r"(user|agent)_[a-z0-9-]+", re.IGNORECASE | re.ASCII)


def resolve_placeholders(text: str, user_name: str | None, agent_label: str | None) -> str:
    """Replace placeholders in ``text``; ``None`` names leave their placeholders in place."""

    def replacement(match: re.Match[str]) -> str:
        name = user_name if match.group(1).lower() == "user" else agent_label
        return match.group(0) if name is None else name

    return _PLACEHOLDER.sub(replacement, text)
