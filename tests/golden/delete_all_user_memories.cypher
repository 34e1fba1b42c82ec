// parameters: limit, memories_limit, org_id, times, user_id
CYPHER replan=skip
OPTIONAL MATCH (user:User {org_id: $org_id, user_id: $user_id})
OPTIONAL MATCH (user)-[:HAS_MEMORIES]->(memory_collection:MemoryCollection)
WITH memory_collection,
  CASE WHEN user IS NULL THEN [[0, null]] ELSE [] END +
  CASE WHEN memory_collection IS NULL THEN [[1, null]] ELSE [] END AS missing
OPTIONAL CALL (memory_collection, missing) {
  WITH memory_collection, missing WHERE missing = []
  FOREACH (node IN [memory_collection] | SET node:MemoryCollection)
  WITH COLLECT {
    MATCH (node:Memory {org_id: $org_id, user_id: $user_id}) WHERE node.memory_id IS NOT NULL
    RETURN node LIMIT $memories_limit
  } AS memories
  WITH memories, COLLECT {
    UNWIND memories AS start
    MATCH (start)-[:DATE_OBTAINED]->(node:Date) WHERE node.org_id IS NOT NULL
    RETURN DISTINCT node
  } AS dates
  WITH memories, dates, [node IN memories[..1] | node {.org_id, .user_id, .memory_id}] AS memories_2
  FOREACH (node IN memories | DETACH DELETE node)
  FOREACH (node IN [n IN dates WHERE NOT EXISTS { (n)--() }] | DELETE node)
  WITH memories_2, (size(memories) < $limit) AS finished
  RETURN memories_2, finished
}
RETURN missing, memories_2 AS memories, finished
