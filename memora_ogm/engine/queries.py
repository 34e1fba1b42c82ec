"""The hand-written Cypher reads: date-ordered pages, memories with placeholders resolved
(by APOC, or raw text plus names for :mod:`memora_ogm.placeholders`), and the APOC probes.

The walks, labels and hops are written out as the graph stores them; node maps are slots
filled with the projections of the classes a call reads through. Reads skip nodes a
concurrent delete emptied (``IS NOT NULL`` on a property every such node has).
"""

from __future__ import annotations

import functools
import re

from memora_ogm.engine.plan import INDENT, cy, indent, subquery
from memora_ogm.engine.projection import projection

MESSAGE, MEMORY, INTERACTION = "MessageBlock", "Memory", "Interaction"
USER, AGENT, DATE = "User", "Agent", "Date"

#: APOC's version, which ``memora-ogm demo`` prints (a server without APOC fails it).
APOC_VERSION = "RETURN apoc.version() AS version"

#: Whether the server has APOC's text functions.
APOC_AVAILABLE = """
SHOW FUNCTIONS YIELD name WHERE name IN ['apoc.text.split', 'apoc.text.regexGroups']
RETURN count(name) = 2 AS available
"""

#: One-pass placeholder replacement on the server: split the text around the
#: placeholders and stitch it back with each one replaced (or kept when its name is null).
#: A memory deleted while this read walked past it has no text: it resolves to null. Its
#: text is read once, so a delete between a check and a use cannot null it halfway.
RESOLVE_WITH_APOC = """
OPTIONAL CALL (mem, owner, agent) {
    WITH owner, agent, mem.memory AS stored WHERE stored IS NOT NULL
    WITH apoc.text.split(stored, $placeholder_pattern, -1) AS parts,
         apoc.text.regexGroups(stored, $placeholder_pattern) AS found
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

#: Slots of the texts below: the resolution above, and the projections of a memory
#: (binds ``memory``) and of an interaction (binds ``details``).
RESOLVE_SLOT = "//RESOLVE//"
MEMORY_SLOT = "//MEMORY//"
INTERACTION_SLOT = "//INTERACTION//"


def memory_projection(memory: type, message: type) -> str:
    """``mem`` as ``memory``: resolved text, owner's and agent's names (for the Python
    fallback) and its message sources in order."""
    sources = subquery(
        "COLLECT",
        f"MATCH (mem)-[:MESSAGE_SOURCE]->(source:{MESSAGE}) WHERE source.msg_position IS NOT NULL",
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
    """``interaction`` as ``details``, with its messages and memories when
    ``$with_messages`` and ``$with_memories`` (else empty lists)."""
    messages = subquery(
        "COLLECT",
        f"MATCH (interaction)-[:FIRST_MESSAGE]->(:{MESSAGE})"
        f"-[:IS_NEXT*0..]->(message:{MESSAGE})"
        " WHERE message.msg_position IS NOT NULL",
        cy("RETURN ", projection(message).map("message"), " ORDER BY message.msg_position"),
    )
    memories = subquery(
        "COLLECT",
        f"MATCH (interaction)<-[:INTERACTION_SOURCE]-(mem:{MEMORY}) WHERE mem.memory IS NOT NULL",
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
    return re.sub(
        rf"^( *){re.escape(slot)}$",
        lambda found: indent(text.strip("\n"), len(found[1]) // len(INDENT)),
        query,
        flags=re.M,
    )


@functools.cache
def statement(query: str, apoc: bool, interaction: type, memory: type, message: type) -> str:
    """``query`` with its slots filled, cached: a memory read would rebuild it per call."""
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

#: A page of interactions, newest ``updated_at`` first: ``date IS NOT NULL`` and the whole
#: Date key in ORDER BY let the planner read the key index backwards and stop at a full
#: page. An interaction counts on the day of its last update.
INTERACTIONS_PAGE = f"""
MATCH (day:{DATE} {{org_id: $org_id, user_id: $user_id}})
      <-[:HAS_OCCURRENCE_ON]-(interaction:{INTERACTION})
WHERE day.date IS NOT NULL AND date(interaction.updated_at) = day.date
WITH day, interaction
ORDER BY day.org_id DESC, day.user_id DESC, day.date DESC,
         interaction.updated_at DESC, interaction.interaction_id DESC
SKIP $skip LIMIT $limit
{INTERACTION_SLOT}
RETURN details
ORDER BY day.date DESC, interaction.updated_at DESC, interaction.interaction_id DESC
"""

#: A page of memories, newest ``obtained_at`` first, walking the Date index as above.
MEMORIES_PAGE = f"""
MATCH (day:{DATE} {{org_id: $org_id, user_id: $user_id}})<-[:DATE_OBTAINED]-(mem:{MEMORY})
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
MATCH path = (latest)<-[:CONTRARY_UPDATE*0..]-(mem:{MEMORY})
WHERE mem.org_id = $org_id AND mem.user_id = $user_id
WITH mem, length(path) AS age
{MEMORY_SLOT}
RETURN memory ORDER BY age
"""

#: For each requested key, the newest memory at the end of its CONTRARY_UPDATE chain.
RESOLVED_MEMORIES = f"""
UNWIND $requested AS requested
MATCH (start:{MEMORY} {{
    org_id: requested.org_id, user_id: requested.user_id, memory_id: requested.memory_id
}})
CALL (start) {{
    MATCH (start)-[:CONTRARY_UPDATE*0..]->(mem:{MEMORY})
    WHERE mem.org_id = start.org_id AND mem.user_id = start.user_id
      AND NOT EXISTS {{ (mem)-[:CONTRARY_UPDATE]->(:{MEMORY}) }}
    RETURN mem ORDER BY mem.obtained_at DESC, mem.memory_id DESC LIMIT 1
}}
{MEMORY_SLOT}
RETURN requested, memory
"""


@functools.cache
def of_existing_user(query: str, column: str) -> str:
    """``query``'s page as one row with ``found`` (does the user exist): no second statement."""
    return f"""
OPTIONAL MATCH (requested_user:{USER} {{org_id: $org_id, user_id: $user_id}})
OPTIONAL CALL (requested_user) {{
    WITH requested_user WHERE requested_user IS NOT NULL
    {query}
}}
RETURN requested_user IS NOT NULL AS found, collect({column}) AS page
"""


# The Django admin's pages (memora_ogm.calls.browse): each reads its page's rows only,
# SKIP and LIMIT on the server, and counts what the page shows in the same statement.

ORG = "Org"
#: Slots of a page's node maps (a projection with its counts), filled by the caller.
ORG_MAP, USER_MAP, AGENT_MAP = "//ORG_MAP//", "//USER_MAP//", "//AGENT_MAP//"


def _matching(var: str, name: str, key: str) -> str:
    """The admin's search: the name contains ``$search`` in any case, or the id is it."""
    return (
        f"($search IS NULL OR toLower({var}.{name}) CONTAINS toLower($search)"
        f" OR {var}.{key} = $search)"
    )


#: A page of organisations by name, with the number of those matching.
ORGANIZATIONS_PAGE = f"""
CALL () {{
    MATCH (org:{ORG}) WHERE org.org_id IS NOT NULL AND {_matching("org", "org_name", "org_id")}
    WITH org ORDER BY org.org_name, org.org_id SKIP $skip LIMIT $limit
    RETURN collect({ORG_MAP}) AS page
}}
RETURN COUNT {{
    MATCH (org:{ORG}) WHERE org.org_id IS NOT NULL AND {_matching("org", "org_name", "org_id")}
}} AS total, page
"""

#: An organisation with a page of its users (newest first) and one of its agents, and
#: the number of each matching the search; ``found`` is false when it does not exist.
ORGANIZATION_PAGE = f"""
OPTIONAL MATCH (org:{ORG} {{org_id: $org_id}})
CALL (org) {{
    MATCH (user:{USER} {{org_id: $org_id}})
    WHERE org IS NOT NULL AND user.user_id IS NOT NULL
      AND {_matching("user", "user_name", "user_id")}
    WITH user ORDER BY user.created_at DESC, user.user_id SKIP $skip LIMIT $limit
    RETURN collect({USER_MAP}) AS users
}}
CALL (org) {{
    MATCH (agent:{AGENT} {{org_id: $org_id}})
    WHERE org IS NOT NULL AND agent.agent_id IS NOT NULL
      AND {_matching("agent", "agent_label", "agent_id")}
    WITH agent ORDER BY agent.agent_label, agent.agent_id SKIP $agents_skip LIMIT $limit
    RETURN collect({AGENT_MAP}) AS agents
}}
RETURN org IS NOT NULL AS found, {ORG_MAP} AS org, users, agents,
    COUNT {{
        MATCH (user:{USER} {{org_id: $org_id}})
        WHERE user.user_id IS NOT NULL AND {_matching("user", "user_name", "user_id")}
    }} AS user_total,
    COUNT {{
        MATCH (agent:{AGENT} {{org_id: $org_id}})
        WHERE agent.agent_id IS NOT NULL AND {_matching("agent", "agent_label", "agent_id")}
    }} AS agent_total
"""

#: An agent that serves ``$user_id``: the organisation's agents of no user, and the user's.
_SERVES_USER = "agent.agent_id IS NOT NULL AND (agent.user_id IS NULL OR agent.user_id = $user_id)"

#: The agents that serve a user (the user's own first, then the organisation-wide ones,
#: by label) with their number, and the labels of the agents ``$agent_ids`` (a page's
#: rows name them).
USER_AGENTS_PAGE = f"""
CALL () {{
    MATCH (agent:{AGENT} {{org_id: $org_id}})
    WHERE {_SERVES_USER}
    WITH agent ORDER BY agent.user_id IS NULL, agent.agent_label, agent.agent_id LIMIT $limit
    RETURN collect({AGENT_MAP}) AS agents
}}
CALL () {{
    MATCH (agent:{AGENT} {{org_id: $org_id}})
    WHERE agent.agent_id IN $agent_ids
    RETURN collect([agent.agent_id, agent.agent_label]) AS labels
}}
RETURN agents, labels,
    COUNT {{ MATCH (agent:{AGENT} {{org_id: $org_id}}) WHERE {_SERVES_USER} }} AS total
"""

#: Of the given memories of a user, which a newer one superseded and which superseded
#: an older one (``CONTRARY_UPDATE`` runs from the older to the newer).
MEMORY_STATES = f"""
UNWIND $memory_ids AS memory_id
MATCH (mem:{MEMORY} {{org_id: $org_id, user_id: $user_id, memory_id: memory_id}})
RETURN memory_id,
    EXISTS {{ (mem)-[:CONTRARY_UPDATE]->(:{MEMORY}) }} AS superseded,
    EXISTS {{ (mem)<-[:CONTRARY_UPDATE]-(:{MEMORY}) }} AS supersedes
"""

#: A page of the user's memories whose stored text contains ``$search`` (any case),
#: newest first.
MEMORIES_MATCHING = f"""
MATCH (mem:{MEMORY} {{org_id: $org_id, user_id: $user_id}})
WHERE mem.memory_id IS NOT NULL AND toLower(mem.memory) CONTAINS toLower($search)
WITH mem ORDER BY mem.obtained_at DESC, mem.memory_id DESC SKIP $skip LIMIT $limit
{MEMORY_SLOT}
RETURN memory
ORDER BY mem.obtained_at DESC, mem.memory_id DESC
"""


@functools.cache
def with_maps(query: str, **maps: str) -> str:
    """``query`` with its map slots (``ORG_MAP=...``) filled."""
    for slot, text in maps.items():
        query = query.replace(f"//{slot}//", text)
    return query
