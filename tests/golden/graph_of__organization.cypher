// parameters: agents_limit, org_id, times, users_limit
OPTIONAL MATCH (org:Org {org_id: $org_id})
WITH org
CALL (org) {
  UNWIND [org] AS start
  WITH start
  MATCH (start)<-[:BELONGS_TO]-(node:User) WHERE node.org_id IS NOT NULL
  WITH DISTINCT node ORDER BY node.created_at LIMIT $users_limit
  RETURN collect(node) AS users
}
WITH org, users
CALL (org) {
  UNWIND [org] AS start
  WITH start
  MATCH (start)-[:HAS_AGENT]->(node:Agent) WHERE node.org_id IS NOT NULL
  WITH DISTINCT node ORDER BY node.created_at LIMIT $agents_limit
  RETURN collect(node) AS agents
}
RETURN
  CASE WHEN org IS NULL THEN [[0, null]] ELSE [] END AS missing,
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
    },
    agents: COLLECT {
      MATCH (node)-[:HAS_AGENT]->(reached:Agent) WHERE reached.org_id IS NOT NULL
      RETURN reached.agent_id ORDER BY reached.agent_id
    }
  }] AS users,
  [node IN agents | node {
    .org_id,
    .agent_id,
    .agent_label,
    created_at: CASE WHEN node.created_at IS NULL THEN null ELSE [node.created_at.epochMillis, node.created_at.nanosecond, node.created_at.timezone] END,
    .user_id
  }] AS agents
