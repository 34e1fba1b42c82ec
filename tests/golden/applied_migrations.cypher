// parameters: times
WITH COLLECT {
  MATCH (node:MemoraMigration {})
  RETURN node
} AS applied_migrations
RETURN
  [] AS missing,
  [node IN applied_migrations | node {
    .version,
    .name,
    applied_at: CASE WHEN node.applied_at IS NULL THEN null ELSE [node.applied_at.epochMillis, node.applied_at.nanosecond, node.applied_at.timezone] END
  }] AS applied
