// parameters: agents_limit, org_id, times, user_id, users_limit
OPTIONAL MATCH (org:Org {org_id: $org_id})
OPTIONAL MATCH (user:User {org_id: $org_id, user_id: $user_id})
WITH org, user, COLLECT {
  MATCH (node:Agent {org_id: $org_id}) WHERE node.agent_id IS NOT NULL
  RETURN node ORDER BY node.created_at, node.agent_id LIMIT $agents_limit
} AS agents
WITH org, user, agents, COLLECT {
  MATCH (node:User {org_id: $org_id}) WHERE node.user_id IS NOT NULL
  RETURN node ORDER BY node.created_at, node.user_id LIMIT $users_limit
} AS users
RETURN
  CASE WHEN org IS NULL THEN [[0, null]] ELSE [] END +
  CASE WHEN user IS NULL THEN [[1, null]] ELSE [] END AS missing,
  org {
    .org_id,
    .org_name,
    created_at: CASE WHEN org.created_at IS NULL THEN null ELSE [org.created_at.epochMillis, org.created_at.nanosecond, org.created_at.timezone] END,
    users: COUNT {
      MATCH (counted:User {org_id: org.org_id}) WHERE counted.user_id IS NOT NULL
    },
    agents: COUNT {
      MATCH (counted:Agent {org_id: org.org_id}) WHERE counted.agent_id IS NOT NULL
    },
    interactions: COUNT {
      MATCH (counted:Interaction {org_id: org.org_id}) WHERE counted.user_id IS NOT NULL AND counted.interaction_id IS NOT NULL
    },
    memories: COUNT {
      MATCH (counted:Memory {org_id: org.org_id}) WHERE counted.user_id IS NOT NULL AND counted.memory_id IS NOT NULL
    },
    superseded: COUNT {
      MATCH (counted:Memory {org_id: org.org_id}) WHERE counted.user_id IS NOT NULL AND counted.memory_id IS NOT NULL AND EXISTS { (counted)-[:CONTRARY_UPDATE]->(:Memory) }
    }
  } AS org,
  [node IN agents | node {
    .org_id,
    .agent_id,
    .agent_label,
    created_at: CASE WHEN node.created_at IS NULL THEN null ELSE [node.created_at.epochMillis, node.created_at.nanosecond, node.created_at.timezone] END,
    .user_id
  }] AS agents,
  [node IN users | node {
    .org_id,
    .user_id,
    .user_name,
    created_at: CASE WHEN node.created_at IS NULL THEN null ELSE [node.created_at.epochMillis, node.created_at.nanosecond, node.created_at.timezone] END,
    interactions: COUNT {
      MATCH (counted:Interaction {org_id: node.org_id, user_id: node.user_id}) WHERE counted.interaction_id IS NOT NULL
    },
    memories: COUNT {
      MATCH (counted:Memory {org_id: node.org_id, user_id: node.user_id}) WHERE counted.memory_id IS NOT NULL
    },
    superseded: COUNT {
      MATCH (counted:Memory {org_id: node.org_id, user_id: node.user_id}) WHERE counted.memory_id IS NOT NULL AND EXISTS { (counted)-[:CONTRARY_UPDATE]->(:Memory) }
    }
  }] AS users,
  user {
    .org_id,
    .user_id,
    .user_name,
    created_at: CASE WHEN user.created_at IS NULL THEN null ELSE [user.created_at.epochMillis, user.created_at.nanosecond, user.created_at.timezone] END,
    interactions: COUNT {
      MATCH (counted:Interaction {org_id: user.org_id, user_id: user.user_id}) WHERE counted.interaction_id IS NOT NULL
    },
    memories: COUNT {
      MATCH (counted:Memory {org_id: user.org_id, user_id: user.user_id}) WHERE counted.memory_id IS NOT NULL
    },
    superseded: COUNT {
      MATCH (counted:Memory {org_id: user.org_id, user_id: user.user_id}) WHERE counted.memory_id IS NOT NULL AND EXISTS { (counted)-[:CONTRARY_UPDATE]->(:Memory) }
    }
  } AS user
