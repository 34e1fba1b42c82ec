"""Resolving ``user_<id>``/``agent_<id>`` placeholders in memory text.

Memories are stored with placeholders so that renaming a user or an agent
renames it in every memory. Reads replace, case-insensitively and in one pass,
``user_[a-z0-9-]+`` with the memory's user's name and ``agent_[a-z0-9-]+`` with
its agent's label. One pass matters: a user called ``agent_smith`` must stay
``agent_smith``. Names are inserted literally (``$``, ``\\``, quotes, emoji), a
following ``'s`` is kept, and a placeholder whose user or agent is gone is left
as it is.

On the server this runs in Cypher with APOC (see ``memora_ogm.queries``); this
module is the same replacement in Python for servers without APOC.
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
