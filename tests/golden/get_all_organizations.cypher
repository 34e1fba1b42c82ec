// parameters: times
WITH COLLECT {
  MATCH (node:Org {})
  RETURN node
} AS orgs
RETURN
  [] AS missing,
  [node IN orgs | node {
    .org_id,
    .org_name,
    created_at: CASE WHEN node.created_at IS NULL THEN null ELSE [node.created_at.epochMillis, node.created_at.nanosecond, node.created_at.timezone] END
  }] AS orgs
