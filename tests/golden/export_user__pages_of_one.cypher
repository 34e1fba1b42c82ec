// parameters: org_id, times, user_id
OPTIONAL MATCH (org:Org {org_id: $org_id})
OPTIONAL MATCH (user:User {org_id: $org_id, user_id: $user_id})
RETURN
  CASE WHEN org IS NULL THEN [[0, null]] ELSE [] END +
  CASE WHEN user IS NULL THEN [[1, null]] ELSE [] END AS missing,
  org {
    .org_id,
    .org_name,
    created_at: CASE WHEN org.created_at IS NULL THEN null ELSE [org.created_at.epochMillis, org.created_at.nanosecond, org.created_at.timezone] END
  } AS org

// ---

// parameters: limit, org_id, times, user_id
WITH COLLECT {
  MATCH (node:User {org_id: $org_id, user_id: $user_id})
  RETURN node ORDER BY node.org_id, node.user_id LIMIT $limit
} AS users
RETURN
  [] AS missing,
  [node IN users | node {
    .org_id,
    .user_id,
    .user_name,
    created_at: CASE WHEN node.created_at IS NULL THEN null ELSE [node.created_at.epochMillis, node.created_at.nanosecond, node.created_at.timezone] END
  }] AS page

// ---

// parameters: after, limit, org_id, times, user_id
WITH COLLECT {
  MATCH (node:User {org_id: $org_id, user_id: $user_id}) WHERE node.user_id > $after
  RETURN node ORDER BY node.org_id, node.user_id LIMIT $limit
} AS users
RETURN
  [] AS missing,
  [node IN users | node {
    .org_id,
    .user_id,
    .user_name,
    created_at: CASE WHEN node.created_at IS NULL THEN null ELSE [node.created_at.epochMillis, node.created_at.nanosecond, node.created_at.timezone] END
  }] AS page

// ---

// parameters: limit, org_id, times
WITH COLLECT {
  MATCH (node:Agent {org_id: $org_id})
  RETURN node ORDER BY node.org_id, node.agent_id LIMIT $limit
} AS agents
RETURN
  [] AS missing,
  [node IN agents | node {
    .org_id,
    .agent_id,
    .agent_label,
    created_at: CASE WHEN node.created_at IS NULL THEN null ELSE [node.created_at.epochMillis, node.created_at.nanosecond, node.created_at.timezone] END,
    .user_id
  }] AS page

// ---

// parameters: after, limit, org_id, times
WITH COLLECT {
  MATCH (node:Agent {org_id: $org_id}) WHERE node.agent_id > $after
  RETURN node ORDER BY node.org_id, node.agent_id LIMIT $limit
} AS agents
RETURN
  [] AS missing,
  [node IN agents | node {
    .org_id,
    .agent_id,
    .agent_label,
    created_at: CASE WHEN node.created_at IS NULL THEN null ELSE [node.created_at.epochMillis, node.created_at.nanosecond, node.created_at.timezone] END,
    .user_id
  }] AS page

// ---

// parameters: limit, org_id, times, user_id
WITH COLLECT {
  MATCH (node:User {org_id: $org_id, user_id: $user_id})
  RETURN node ORDER BY node.org_id, node.user_id LIMIT $limit
} AS users
RETURN
  [] AS missing,
  [node IN users | node {
    .org_id,
    .user_id,
    .user_name,
    created_at: CASE WHEN node.created_at IS NULL THEN null ELSE [node.created_at.epochMillis, node.created_at.nanosecond, node.created_at.timezone] END
  }] AS page

// ---

// parameters: limit, org_id, times, user_id
WITH COLLECT {
  MATCH (node:Interaction {org_id: $org_id, user_id: $user_id})
  RETURN node ORDER BY node.org_id, node.user_id, node.interaction_id LIMIT $limit
} AS interactions
RETURN
  [] AS missing,
  [node IN interactions | node {
    .org_id,
    .user_id,
    .agent_id,
    .interaction_id,
    created_at: CASE WHEN node.created_at IS NULL THEN null ELSE [node.created_at.epochMillis, node.created_at.nanosecond, node.created_at.timezone] END,
    updated_at: CASE WHEN node.updated_at IS NULL THEN null ELSE [node.updated_at.epochMillis, node.updated_at.nanosecond, node.updated_at.timezone] END,
    messages: COLLECT {
      MATCH (node)-[:FIRST_MESSAGE]->(:MessageBlock)-[:IS_NEXT*0..]->(reached:MessageBlock) WHERE reached.msg_position IS NOT NULL
      RETURN [reached.role, reached.content] ORDER BY reached.msg_position
    },
    dates: COLLECT {
      MATCH (node)-[:HAS_OCCURRENCE_ON]->(reached:Date) WHERE reached.org_id IS NOT NULL
      RETURN reached.date
    }
  }] AS page

// ---

// parameters: after, limit, org_id, times, user_id
WITH COLLECT {
  MATCH (node:Interaction {org_id: $org_id, user_id: $user_id}) WHERE node.interaction_id > $after
  RETURN node ORDER BY node.org_id, node.user_id, node.interaction_id LIMIT $limit
} AS interactions
RETURN
  [] AS missing,
  [node IN interactions | node {
    .org_id,
    .user_id,
    .agent_id,
    .interaction_id,
    created_at: CASE WHEN node.created_at IS NULL THEN null ELSE [node.created_at.epochMillis, node.created_at.nanosecond, node.created_at.timezone] END,
    updated_at: CASE WHEN node.updated_at IS NULL THEN null ELSE [node.updated_at.epochMillis, node.updated_at.nanosecond, node.updated_at.timezone] END,
    messages: COLLECT {
      MATCH (node)-[:FIRST_MESSAGE]->(:MessageBlock)-[:IS_NEXT*0..]->(reached:MessageBlock) WHERE reached.msg_position IS NOT NULL
      RETURN [reached.role, reached.content] ORDER BY reached.msg_position
    },
    dates: COLLECT {
      MATCH (node)-[:HAS_OCCURRENCE_ON]->(reached:Date) WHERE reached.org_id IS NOT NULL
      RETURN reached.date
    }
  }] AS page

// ---

// parameters: limit, org_id, times, user_id
WITH COLLECT {
  MATCH (node:Memory {org_id: $org_id, user_id: $user_id})
  RETURN node ORDER BY node.org_id, node.user_id, node.memory_id LIMIT $limit
} AS memories
RETURN
  [] AS missing,
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
      RETURN reached.msg_position
    },
    days: COLLECT {
      MATCH (node)-[:DATE_OBTAINED]->(reached:Date) WHERE reached.org_id IS NOT NULL
      RETURN reached.date
    },
    newer: COLLECT {
      MATCH (node)-[:CONTRARY_UPDATE]->(reached:Memory) WHERE reached.org_id IS NOT NULL AND reached.org_id = node.org_id AND reached.user_id = node.user_id
      RETURN reached.memory_id ORDER BY reached.memory_id
    }
  }] AS page

// ---

// parameters: after, limit, org_id, times, user_id
WITH COLLECT {
  MATCH (node:Memory {org_id: $org_id, user_id: $user_id}) WHERE node.memory_id > $after
  RETURN node ORDER BY node.org_id, node.user_id, node.memory_id LIMIT $limit
} AS memories
RETURN
  [] AS missing,
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
      RETURN reached.msg_position
    },
    days: COLLECT {
      MATCH (node)-[:DATE_OBTAINED]->(reached:Date) WHERE reached.org_id IS NOT NULL
      RETURN reached.date
    },
    newer: COLLECT {
      MATCH (node)-[:CONTRARY_UPDATE]->(reached:Memory) WHERE reached.org_id IS NOT NULL AND reached.org_id = node.org_id AND reached.user_id = node.user_id
      RETURN reached.memory_id ORDER BY reached.memory_id
    }
  }] AS page

// ---

// parameters: after, limit, org_id, times, user_id
WITH COLLECT {
  MATCH (node:User {org_id: $org_id, user_id: $user_id}) WHERE node.user_id > $after
  RETURN node ORDER BY node.org_id, node.user_id LIMIT $limit
} AS users
RETURN
  [] AS missing,
  [node IN users | node {
    .org_id,
    .user_id,
    .user_name,
    created_at: CASE WHEN node.created_at IS NULL THEN null ELSE [node.created_at.epochMillis, node.created_at.nanosecond, node.created_at.timezone] END
  }] AS page
