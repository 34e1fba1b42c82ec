"""The hand-written Cypher reads of memora-ogm, by name.

Only these are written by hand (everything else is generated from the neomodel
classes by :mod:`memora_ogm.unit_of_work`, and the schema install in
:mod:`memora_ogm.constraints` writes its constraints and the edition read they
depend on): the date-ordered pagination of a user's interactions and memories, the
reads that return memories with placeholders resolved, and the APOC probes that
resolution depends on (whether the server has APOC, and its version, which the demo
prints). All caller values travel as parameters (``$name``).

The node maps these reads return are not written here, nor their labels and hops (taken
from the node classes and their relationship definitions): each text has slots where
:func:`statement` inserts the projections :mod:`memora_ogm.projection` generates from
the node classes' property tables (for the classes a call reads through), once per
text, server kind and classes. What stays by hand is the walk: the paging along the
``Date`` index, the chains, the contrary-update resolution and the placeholders.

Memory reads come in two variants built from the same text: with APOC the
placeholders are resolved on the server (``RESOLVE_WITH_APOC``); without it the
query returns the raw text with the user's name and agent's label, and
``memora_ogm.placeholders`` does the same replacement in Python. Both bind
``resolved``, ``user_name`` and ``agent_label`` for a ``mem`` with its ``owner``
(User) and ``agent`` (Agent) matched, possibly null.

A node that a concurrent transaction deletes while a read walks past it can come
back without its properties; the reads skip such nodes (``IS NOT NULL`` on a
property every node of the label has).
"""

from __future__ import annotations

import functools
import re

from memora_ogm._async.nodes import Agent, Date, Interaction, Memory, MessageBlock, User
from memora_ogm.mapping import arrow, label
from memora_ogm.plan import INDENT, cy, indent, subquery
from memora_ogm.projection import projection

# The hops and labels of the walks below, from the node classes' relationship definitions.
MESSAGE = label(MessageBlock)
MEMORY = label(Memory)
INTERACTION = label(Interaction)
USER = label(User)
AGENT = label(Agent)
DATE = label(Date)
SOURCE = arrow(Memory.message_source)
FIRST = arrow(Interaction.first_message)
NEXT_0_OR_MORE = arrow(MessageBlock.is_next, "*0..")
MEMORIES_OF_INTERACTION = arrow(Interaction.memories)
OCCURRENCES = arrow(Date.interactions)
OBTAINED = arrow(Date.memories)
SUPERSEDED_0_OR_MORE = arrow(Memory.contradicts, "*0..")
SUPERSEDING_0_OR_MORE = arrow(Memory.contrary_update, "*0..")
SUPERSEDING = arrow(Memory.contrary_update)

#: APOC's version, which ``memora-ogm demo`` prints (a server without APOC fails it).
APOC_VERSION = "RETURN apoc.version() AS version"

#: Whether the server has APOC's text functions.
APOC_AVAILABLE = """
SHOW FUNCTIONS YIELD name WHERE name IN ['apoc.text.split', 'apoc.text.regexGroups']
RETURN count(name) = 2 AS available
"""

#: One-pass placeholder replacement on the server: split the text around the
#: placeholders and stitch it back with each one replaced (or kept when its name is null).
#: A memory deleted by a concurrent transaction while this read walked past it has no
#: text: it resolves to null (``convert`` raises ``NodeVanished`` and the read is retried).
RESOLVE_WITH_APOC = """
OPTIONAL CALL (mem, owner, agent) {
    WITH mem WHERE mem.memory IS NOT NULL
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

#: Placeholders inside the query texts below: the resolution slot above, and where the
#: generated projections of a memory (binds ``memory``) and of an interaction (binds
#: ``details``) go.
RESOLVE_SLOT = "//RESOLVE//"
MEMORY_SLOT = "//MEMORY//"
INTERACTION_SLOT = "//INTERACTION//"


def memory_projection(memory: type, message: type) -> str:
    """One memory ``mem`` as the reads return it, as ``memory``: its properties as the
    class ``memory`` projects them (:mod:`memora_ogm.projection`) with the text resolved
    (the slot above), the owner's name and agent's label for the Python fallback, and its
    message sources (of the class ``message``) in position order."""
    sources = subquery(
        "COLLECT",
        f"MATCH (mem){SOURCE}(source:{MESSAGE}) WHERE source.msg_position IS NOT NULL",
        cy("RETURN ", projection(message).map("source"), " ORDER BY source.msg_position"),
    )
    fields = projection(memory).map(
        "mem",
        memory="resolved",
        user_name="owner.user_name",
        agent_label="agent.agent_label",
        message_sources=sources,
    )
    return f"""
OPTIONAL MATCH (owner:{USER} {{org_id: mem.org_id, user_id: mem.user_id}})
OPTIONAL MATCH (agent:{AGENT} {{org_id: mem.org_id, agent_id: mem.agent_id}})
{RESOLVE_SLOT}
WITH *, {fields.render({})} AS memory
"""


def interaction_projection(interaction: type, memory: type, message: type) -> str:
    """One interaction ``interaction`` as the reads return it, as ``details``: its
    properties as the class ``interaction`` projects them, with its messages in position
    order when ``$with_messages`` and its memories in ``obtained_at`` then ``memory_id``
    order when ``$with_memories`` (each list empty otherwise)."""
    messages = subquery(
        "COLLECT",
        f"MATCH (interaction){FIRST}(:{MESSAGE}){NEXT_0_OR_MORE}"
        f"(message:{MESSAGE}) WHERE message.msg_position IS NOT NULL",
        cy("RETURN ", projection(message).map("message"), " ORDER BY message.msg_position"),
    )
    memories = subquery(
        "COLLECT",
        f"MATCH (interaction){MEMORIES_OF_INTERACTION}(mem:{MEMORY}) WHERE mem.memory IS NOT NULL",
        *memory_projection(memory, message).strip().split("\n"),
        "RETURN memory ORDER BY mem.obtained_at, mem.memory_id",
    )
    fields = projection(interaction).map(
        "interaction",
        messages=cy("CASE WHEN $with_messages THEN ", messages, " ELSE [] END"),
        memories=cy("CASE WHEN $with_memories THEN ", memories, " ELSE [] END"),
    )
    return f"\nWITH *, {fields.render({})} AS details\n"


def _fill(query: str, slot: str, text: str) -> str:
    """``query`` with each line holding ``slot`` replaced by ``text``, indented as it."""
    return re.sub(
        rf"^( *){re.escape(slot)}$",
        lambda found: indent(text.strip("\n"), len(found[1]) // len(INDENT)),
        query,
        flags=re.M,
    )


@functools.cache
def statement(query: str, apoc: bool, interaction: type, memory: type, message: type) -> str:
    """The statement of ``query`` (a text below, with its slots) for this server and these
    read classes (:func:`memora_ogm.projection.reading`), made once: a memory read's text
    would otherwise be rebuilt on every call."""
    query = _fill(query, INTERACTION_SLOT, interaction_projection(interaction, memory, message))
    query = _fill(query, MEMORY_SLOT, memory_projection(memory, message))
    return _fill(query, RESOLVE_SLOT, RESOLVE_WITH_APOC if apoc else RESOLVE_IN_PYTHON)


#: One interaction of a user.
USER_INTERACTION = f"""
MATCH (interaction:{INTERACTION} {{
    org_id: $org_id, user_id: $user_id, interaction_id: $interaction_id
}})
{INTERACTION_SLOT}
RETURN details
"""

#: One page of a user's interactions, newest ``updated_at`` first. The page walks
#: the user's Date nodes newest first: ``date IS NOT NULL`` and the Date key
#: (org_id, user_id, date) in full in ORDER BY let the planner read the
#: ``unique_user_date`` index backwards and stop once the page is full
#: (PartialTop), so a page costs the same however long the history is. An
#: interaction counts on the day of its last update only, so one updated on
#: several days appears once.
INTERACTIONS_PAGE = f"""
MATCH (day:{DATE} {{org_id: $org_id, user_id: $user_id}})
      {OCCURRENCES}(interaction:{INTERACTION})
WHERE day.date IS NOT NULL AND date(interaction.updated_at) = day.date
WITH day, interaction
ORDER BY day.org_id DESC, day.user_id DESC, day.date DESC,
         interaction.updated_at DESC, interaction.interaction_id DESC
SKIP $skip LIMIT $limit
{INTERACTION_SLOT}
RETURN details
ORDER BY day.date DESC, interaction.updated_at DESC, interaction.interaction_id DESC
"""

#: One page of a user's memories (of one agent when ``$agent_id`` is not null),
#: newest ``obtained_at`` first, walking the Date index like the page above.
MEMORIES_PAGE = f"""
MATCH (day:{DATE} {{org_id: $org_id, user_id: $user_id}}){OBTAINED}(mem:{MEMORY})
WHERE day.date IS NOT NULL AND mem.memory IS NOT NULL
  AND ($agent_id IS NULL OR mem.agent_id = $agent_id)
WITH day, mem
ORDER BY day.org_id DESC, day.user_id DESC, day.date DESC, mem.obtained_at DESC, mem.memory_id DESC
SKIP $skip LIMIT $limit
{MEMORY_SLOT}
RETURN memory
ORDER BY day.date DESC, mem.obtained_at DESC, mem.memory_id DESC
"""

#: One memory of a user.
USER_MEMORY = f"""
MATCH (mem:{MEMORY} {{org_id: $org_id, user_id: $user_id, memory_id: $memory_id}})
{MEMORY_SLOT}
RETURN memory
"""

#: A memory and every memory it superseded, transitively: newest (itself) first.
MEMORY_HISTORY = f"""
MATCH (latest:{MEMORY} {{org_id: $org_id, user_id: $user_id, memory_id: $memory_id}})
MATCH path = (latest){SUPERSEDED_0_OR_MORE}(mem:{MEMORY})
WHERE mem.org_id = $org_id AND mem.user_id = $user_id
WITH mem, length(path) AS age
{MEMORY_SLOT}
RETURN memory ORDER BY age
"""

#: For each requested ``{org_id, user_id, memory_id}``, the newest memory at the
#: end of its CONTRARY_UPDATE chain (itself when nothing superseded it).
RESOLVED_MEMORIES = f"""
UNWIND $requested AS requested
MATCH (start:{MEMORY} {{
    org_id: requested.org_id, user_id: requested.user_id, memory_id: requested.memory_id
}})
CALL (start) {{
    MATCH (start){SUPERSEDING_0_OR_MORE}(mem:{MEMORY})
    WHERE mem.org_id = start.org_id AND mem.user_id = start.user_id
      AND NOT EXISTS {{ (mem){SUPERSEDING}(:{MEMORY}) }}
    RETURN mem ORDER BY mem.obtained_at DESC, mem.memory_id DESC LIMIT 1
}}
{MEMORY_SLOT}
RETURN requested, memory
"""


@functools.cache
def of_existing_user(query: str, column: str) -> str:
    """``query`` (a page of ``column`` rows for ``$org_id``/``$user_id``) as one row:
    whether the user exists (``found``) and the ``page`` in order, so a missing user
    costs no second statement."""
    return f"""
OPTIONAL MATCH (requested_user:{USER} {{org_id: $org_id, user_id: $user_id}})
OPTIONAL CALL (requested_user) {{
    WITH requested_user WHERE requested_user IS NOT NULL
    {query}
}}
RETURN requested_user IS NOT NULL AS found, collect({column}) AS page
"""
