// parameters: org_id, times
OPTIONAL MATCH (org:Org {org_id: $org_id})
WITH org, COLLECT {
  UNWIND [org] AS start
  MATCH (start)-[:HAS_AGENT]->(node:Agent) WHERE node.org_id IS NOT NULL
  RETURN DISTINCT node
} AS agents
RETURN
  CASE WHEN org IS NULL THEN [[0, null]] ELSE [] END AS missing,
  [node IN agents | node {
    .org_id,
    .agent_id,
    .agent_label,
    created_at: CASE WHEN node.created_at IS NULL THEN null ELSE [node.created_at.epochMillis, node.created_at.nanosecond, node.created_at.timezone] END,
    .user_id
  }] AS agents
