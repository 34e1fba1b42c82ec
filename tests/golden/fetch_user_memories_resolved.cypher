// parameters: placeholder_pattern, requested
UNWIND $requested AS requested
MATCH (start:Memory {
    org_id: requested.org_id, user_id: requested.user_id, memory_id: requested.memory_id
})
CALL (start) {
    MATCH (start)-[:CONTRARY_UPDATE*0..]->(mem:Memory)
    WHERE mem.org_id = start.org_id AND mem.user_id = start.user_id
      AND NOT EXISTS { (mem)-[:CONTRARY_UPDATE]->(:Memory) }
    RETURN mem ORDER BY mem.obtained_at DESC, mem.memory_id DESC LIMIT 1
}
OPTIONAL MATCH (owner:User {org_id: mem.org_id, user_id: mem.user_id})
OPTIONAL MATCH (agent:Agent {org_id: mem.org_id, agent_id: mem.agent_id})
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
WITH *, mem {
  .org_id,
  .user_id,
  .agent_id,
  .interaction_id,
  .memory_id,
  memory: resolved,
  obtained_at: CASE WHEN mem.obtained_at IS NULL THEN null ELSE [mem.obtained_at.epochMillis, mem.obtained_at.nanosecond, mem.obtained_at.timezone] END,
  user_name: owner.user_name,
  agent_label: agent.agent_label,
  message_sources: COLLECT {
    MATCH (mem)-[:MESSAGE_SOURCE]->(source:MessageBlock) WHERE source.msg_position IS NOT NULL
    RETURN source {.msg_position, .role, .content} ORDER BY source.msg_position
  }
} AS memory
RETURN requested, memory
