// parameters: memory_id, org_id, times, user_id
OPTIONAL MATCH (memory:Memory {org_id: $org_id, user_id: $user_id, memory_id: $memory_id})
OPTIONAL MATCH (user:User {org_id: $org_id, user_id: $user_id})
OPTIONAL MATCH (user)-[:HAS_MEMORIES]->(memory_collection:MemoryCollection)
WITH memory, memory_collection, CASE WHEN memory IS NULL THEN [[0, null]] ELSE [] END AS missing
OPTIONAL CALL (memory, memory_collection, missing) {
  WITH memory, memory_collection, missing WHERE missing = []
  WITH memory, memory_collection, COLLECT {
    UNWIND [memory] AS start
    MATCH (start)-[:INTERACTION_SOURCE]->(node:Interaction) WHERE node.org_id IS NOT NULL
    RETURN DISTINCT node
  } AS interactions
  FOREACH (node IN interactions | SET node:Interaction)
  FOREACH (node IN [memory_collection] | SET node:MemoryCollection)
  FOREACH (node IN [memory] | SET node:Memory)
  RETURN true AS written
}
RETURN missing

// ---

// parameters: memory_id, org_id, times, user_id
OPTIONAL MATCH (memory:Memory {org_id: $org_id, user_id: $user_id, memory_id: $memory_id})
WITH memory, CASE WHEN memory IS NULL THEN [[0, null]] ELSE [] END AS missing
OPTIONAL CALL (memory, missing) {
  WITH memory, missing WHERE missing = []
  WITH memory, COLLECT {
    UNWIND [memory] AS start
    MATCH (start)-[:DATE_OBTAINED]->(node:Date) WHERE node.org_id IS NOT NULL
    RETURN DISTINCT node
  } AS dates
  WITH memory, dates, [node IN [memory][..1] | node {.org_id, .user_id, .memory_id}] AS memories
  FOREACH (node IN [memory] | DETACH DELETE node)
  FOREACH (node IN [n IN dates WHERE NOT EXISTS { (n)--() }] | DELETE node)
  RETURN memories
}
RETURN missing, memories
