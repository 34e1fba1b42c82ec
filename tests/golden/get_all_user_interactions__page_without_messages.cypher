// parameters: limit, org_id, placeholder_pattern, skip, user_id, with_memories, with_messages
OPTIONAL MATCH (requested_user:User {org_id: $org_id, user_id: $user_id})
OPTIONAL CALL (requested_user) {
    WITH requested_user WHERE requested_user IS NOT NULL
    
MATCH (day:Date {org_id: $org_id, user_id: $user_id})
      <-[:HAS_OCCURRENCE_ON]-(interaction:Interaction)
WHERE day.date IS NOT NULL AND date(interaction.updated_at) = day.date
WITH day, interaction
ORDER BY day.org_id DESC, day.user_id DESC, day.date DESC,
         interaction.updated_at DESC, interaction.interaction_id DESC
SKIP $skip LIMIT $limit
WITH *, interaction {
  .org_id,
  .user_id,
  .agent_id,
  .interaction_id,
  created_at: CASE WHEN interaction.created_at IS NULL THEN null ELSE [interaction.created_at.epochMillis, interaction.created_at.nanosecond, interaction.created_at.timezone] END,
  updated_at: CASE WHEN interaction.updated_at IS NULL THEN null ELSE [interaction.updated_at.epochMillis, interaction.updated_at.nanosecond, interaction.updated_at.timezone] END,
  messages: CASE WHEN $with_messages THEN COLLECT {
    MATCH (interaction)-[:FIRST_MESSAGE]->(:MessageBlock)-[:IS_NEXT*0..]->(message:MessageBlock) WHERE message.msg_position IS NOT NULL
    RETURN message {.msg_position, .role, .content} ORDER BY message.msg_position
  } ELSE [] END,
  memories: CASE WHEN $with_memories THEN COLLECT {
    MATCH (interaction)<-[:INTERACTION_SOURCE]-(mem:Memory) WHERE mem.memory IS NOT NULL
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
    RETURN memory ORDER BY mem.obtained_at, mem.memory_id
  } ELSE [] END
} AS details
RETURN details
ORDER BY day.date DESC, interaction.updated_at DESC, interaction.interaction_id DESC

}
RETURN requested_user IS NOT NULL AS found, collect(details) AS page
