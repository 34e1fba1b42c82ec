"""Resolving ``user_<id>``/``agent_<id>`` placeholders in memory text, for servers
without APOC (:mod:`memora_ogm.queries` does the same in Cypher).

Memories keep placeholders so that renaming a user or an agent renames it everywhere.
Reads replace, case-insensitively and in one pass (a user called ``agent_smith`` stays
``agent_smith``), ``user_[a-z0-9-]+`` with the user's name and ``agent_[a-z0-9-]+`` with
the agent's label, literally (a following ``'s`` is kept); a placeholder whose user or
agent is gone stays.
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
