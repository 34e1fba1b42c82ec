// parameters: interactions_limit, org_id, times, user_id
OPTIONAL MATCH (user:User {org_id: $org_id, user_id: $user_id})
OPTIONAL MATCH (user)-[:INTERACTIONS_IN]->(interaction_collection:InteractionCollection)
WITH user, interaction_collection
CALL (interaction_collection) {
  UNWIND [interaction_collection] AS start
  WITH start
  MATCH (start)-[:HAD_INTERACTION]->(node:Interaction) WHERE node.org_id IS NOT NULL
  WITH DISTINCT node ORDER BY node.updated_at DESC LIMIT $interactions_limit
  RETURN collect(node) AS interactions
}
WITH user, interactions, COLLECT {
  UNWIND interactions AS start
  MATCH (start)<-[:INTERACTION_SOURCE]-(node:Memory) WHERE node.org_id IS NOT NULL
  RETURN DISTINCT node ORDER BY node.obtained_at
} AS memories
WITH user, interactions, memories, user {
  .org_id,
  .user_id,
  .user_name,
  created_at: CASE WHEN user.created_at IS NULL THEN null ELSE [user.created_at.epochMillis, user.created_at.nanosecond, user.created_at.timezone] END
} AS user_2
WITH user, interactions, memories, user_2, COLLECT {
  MATCH (node:Agent {org_id: $org_id}) WHERE node.agent_id IS NOT NULL
  RETURN node
} AS agents
RETURN
  CASE WHEN user IS NULL THEN [[0, null]] ELSE [] END AS missing,
  user_2 AS user,
  [node IN agents | node {
    .org_id,
    .agent_id,
    .agent_label,
    created_at: CASE WHEN node.created_at IS NULL THEN null ELSE [node.created_at.epochMillis, node.created_at.nanosecond, node.created_at.timezone] END,
    .user_id
  }] AS agents,
  [node IN interactions | node {
    .org_id,
    .user_id,
    .agent_id,
    .interaction_id,
    created_at: CASE WHEN node.created_at IS NULL THEN null ELSE [node.created_at.epochMillis, node.created_at.nanosecond, node.created_at.timezone] END,
    updated_at: CASE WHEN node.updated_at IS NULL THEN null ELSE [node.updated_at.epochMillis, node.updated_at.nanosecond, node.updated_at.timezone] END,
    messages: COLLECT {
      MATCH (node)-[:FIRST_MESSAGE]->(:MessageBlock)-[:IS_NEXT*0..]->(reached:MessageBlock) WHERE reached.msg_position IS NOT NULL
      RETURN [reached.msg_position, reached.role, reached.content] ORDER BY reached.msg_position
    },
    days: COLLECT {
      MATCH (node)-[:HAS_OCCURRENCE_ON]->(reached:Date) WHERE reached.org_id IS NOT NULL
      RETURN reached.date ORDER BY reached.date
    }
  }] AS interactions,
  [node IN memories | node {
    .org_id,
    .user_id,
    .agent_id,
    .interaction_id,
    .memory_id,
    .memory,
    obtained_at: CASE WHEN node.obtained_at IS NULL THEN null ELSE [node.obtained_at.epochMillis, node.obtained_at.nanosecond, node.obtained_at.timezone] END,
    sources: COLLECT {
      MATCH (node)-[:MESSAGE_SOURCE]->(reached:MessageBlock) WHERE reached.msg_position IS NOT NULL
      RETURN reached.msg_position ORDER BY reached.msg_position
    },
    interaction: COLLECT {
      MATCH (node)-[:INTERACTION_SOURCE]->(reached:Interaction) WHERE reached.org_id IS NOT NULL
      RETURN reached.interaction_id
    },
    days: COLLECT {
      MATCH (node)-[:DATE_OBTAINED]->(reached:Date) WHERE reached.org_id IS NOT NULL
      RETURN reached.date ORDER BY reached.date
    },
    superseded: COLLECT {
      MATCH (node)<-[:CONTRARY_UPDATE]-(reached:Memory) WHERE reached.org_id IS NOT NULL
      RETURN [reached.memory_id, reached.memory, reached.interaction_id, reached.agent_id, reached.obtained_at] ORDER BY reached.obtained_at
    },
    superseded_by: COLLECT {
      MATCH (node)-[:CONTRARY_UPDATE]->(reached:Memory) WHERE reached.org_id IS NOT NULL
      RETURN [reached.memory_id, reached.memory, reached.interaction_id, reached.agent_id, reached.obtained_at] ORDER BY reached.obtained_at
    }
  }] AS memories
