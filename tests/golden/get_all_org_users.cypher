// parameters: org_id, times
OPTIONAL MATCH (org:Org {org_id: $org_id})
WITH org, COLLECT {
  UNWIND [org] AS start
  MATCH (start)<-[:BELONGS_TO]-(node:User) WHERE node.org_id IS NOT NULL
  RETURN DISTINCT node
} AS users
RETURN
  CASE WHEN org IS NULL THEN [[0, null]] ELSE [] END AS missing,
  [node IN users | node {
    .org_id,
    .user_id,
    .user_name,
    created_at: CASE WHEN node.created_at IS NULL THEN null ELSE [node.created_at.epochMillis, node.created_at.nanosecond, node.created_at.timezone] END
  }] AS users
