"""Every hand-written Cypher query of memora-ogm, by name.

Only two kinds of work are written by hand (everything else goes through the
neomodel classes): the date-ordered pagination of a user's interactions and
memories, and the reads that return memories with placeholders resolved. All
caller values travel as parameters (``$name``).

Memory reads come in two variants built from the same text: with APOC the
placeholders are resolved on the server (``RESOLVE_WITH_APOC``); without it the
query returns the raw text with the user's name and agent's label, and
``memora_ogm.placeholders`` does the same replacement in Python. Both bind
``resolved``, ``user_name`` and ``agent_label`` for a ``mem`` with its ``owner``
(User) and ``agent`` (Agent) matched, possibly null.
"""

from __future__ import annotations

#: Whether the server has APOC's text functions.
APOC_AVAILABLE = """
SHOW FUNCTIONS YIELD name WHERE name IN ['apoc.text.split', 'apoc.text.regexGroups']
RETURN count(name) = 2 AS available
"""

#: One-pass placeholder replacement on the server: split the text around the
#: placeholders and stitch it back with each one replaced (or kept when its name is null).
RESOLVE_WITH_APOC = """
CALL (mem, owner, agent) {
    WITH apoc.text.split(mem.memory, $placeholder_pattern, -1) AS parts,
         apoc.text.regexGroups(mem.memory, $placeholder_pattern) AS found
    RETURN reduce(text = parts[0], i IN range(1, size(parts) - 1) |
        text + CASE
            WHEN toLower(found[i - 1][1]) = 'user' THEN coalesce(owner.user_name, found[i - 1][0])
            ELSE coalesce(agent.agent_label, found[i - 1][0])
        END + parts[i]) AS resolved
}
"""

#: The same slot without APOC: the raw text, resolved in Python afterwards.
RESOLVE_IN_PYTHON = """
WITH *, mem.memory AS resolved
"""

#: Placeholder for the slot above inside the query texts below.
RESOLVE_SLOT = "//RESOLVE//"


def with_resolution(query: str, apoc: bool) -> str:
    """The variant of ``query`` (which contains ``RESOLVE_SLOT`` once) for this server."""
    return query.replace(RESOLVE_SLOT, RESOLVE_WITH_APOC if apoc else RESOLVE_IN_PYTHON)
