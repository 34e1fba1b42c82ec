// parameters: orgs_limit, times
WITH COLLECT {
  MATCH (node:Org {})
  RETURN node ORDER BY node.created_at, node.org_id LIMIT $orgs_limit
} AS orgs
RETURN
  [] AS missing,
  COUNT {
    MATCH (counted:Org {})
  } AS organizations,
  [node IN orgs | node {
    .org_id,
    .org_name,
    created_at: CASE WHEN node.created_at IS NULL THEN null ELSE [node.created_at.epochMillis, node.created_at.nanosecond, node.created_at.timezone] END,
    users: COUNT {
      MATCH (counted:User {org_id: node.org_id}) WHERE counted.user_id IS NOT NULL
    },
    agents: COUNT {
      MATCH (counted:Agent {org_id: node.org_id}) WHERE counted.agent_id IS NOT NULL
    },
    interactions: COUNT {
      MATCH (counted:Interaction {org_id: node.org_id}) WHERE counted.user_id IS NOT NULL AND counted.interaction_id IS NOT NULL
    },
    memories: COUNT {
      MATCH (counted:Memory {org_id: node.org_id}) WHERE counted.user_id IS NOT NULL AND counted.memory_id IS NOT NULL
    },
    superseded: COUNT {
      MATCH (counted:Memory {org_id: node.org_id}) WHERE counted.user_id IS NOT NULL AND counted.memory_id IS NOT NULL AND EXISTS { (counted)-[:CONTRARY_UPDATE]->(:Memory) }
    }
  }] AS orgs
