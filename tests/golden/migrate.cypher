// parameters: -
CREATE CONSTRAINT `unique_memora_migration` IF NOT EXISTS FOR (n:`MemoraMigration`) REQUIRE (n.`version`) IS UNIQUE

// ---

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

// ---

// parameters: limit, memories_limit, times
CYPHER replan=skip
WITH [] AS missing
OPTIONAL CALL (missing) {
  WITH missing WHERE missing = []
  WITH COLLECT {
    MATCH (node:Memory) WHERE NOT EXISTS { (node)-[:DATE_OBTAINED]->() }
    RETURN node LIMIT $memories_limit
  } AS memories
  FOREACH (node IN memories |
    MERGE (linked:Date {org_id: node.org_id, user_id: node.user_id, date: date(node.obtained_at)})
    MERGE (node)-[:DATE_OBTAINED]->(linked)
  )
  WITH (size(memories) < $limit) AS finished
  RETURN finished
}
RETURN missing, finished

// ---

// parameters: -
DROP INDEX `interaction_updated_timestamp_index` IF EXISTS

// ---

// parameters: applied_migration, times
WITH [] AS missing
OPTIONAL CALL (missing) {
  WITH missing WHERE missing = []
  CREATE (applied_migration:MemoraMigration)
  SET
    applied_migration = $applied_migration,
    applied_migration.applied_at = CASE WHEN $times[0] IS NULL THEN null ELSE datetime({epochSeconds: $times[0][0], nanosecond: $times[0][1], timezone: $times[0][2]}) END
  RETURN true AS written
}
RETURN missing
