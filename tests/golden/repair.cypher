// parameters: limit, times
WITH COLLECT {
  MATCH (node:Org {})
  RETURN node ORDER BY node.org_id LIMIT $limit
} AS orgs
RETURN
  [] AS missing,
  [node IN orgs | node {
    .org_id,
    .org_name,
    created_at: CASE WHEN node.created_at IS NULL THEN null ELSE [node.created_at.epochMillis, node.created_at.nanosecond, node.created_at.timezone] END
  }] AS page

// ---

// parameters: limit, org_id, times
WITH COLLECT {
  MATCH (node:User {org_id: $org_id})
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
    obtained_at: CASE WHEN node.obtained_at IS NULL THEN null ELSE [node.obtained_at.epochMillis, node.obtained_at.nanosecond, node.obtained_at.timezone] END
  }] AS page

// ---

// parameters: memory_id_values, times
WITH COLLECT {
  MATCH (node:Memory) WHERE node.memory_id IN $memory_id_values
  RETURN node
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
    obtained_at: CASE WHEN node.obtained_at IS NULL THEN null ELSE [node.obtained_at.epochMillis, node.obtained_at.nanosecond, node.obtained_at.timezone] END
  }] AS found

// ---

// parameters: memory_id_values, times
WITH COLLECT {
  MATCH (node:Memory) WHERE node.memory_id IN $memory_id_values
  RETURN node
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
    obtained_at: CASE WHEN node.obtained_at IS NULL THEN null ELSE [node.obtained_at.epochMillis, node.obtained_at.nanosecond, node.obtained_at.timezone] END
  }] AS found
