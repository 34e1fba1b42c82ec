// parameters: limit, memories_limit, org_id, times, user_id
OPTIONAL MATCH (user:User {org_id: $org_id, user_id: $user_id})
OPTIONAL MATCH (user)-[:HAS_MEMORIES]->(memory_collection:MemoryCollection)
WITH memory_collection, CASE WHEN user IS NULL THEN [[0, null]] ELSE [] END + CASE WHEN memory_collection IS NULL THEN [[1, null]] ELSE [] END AS missing
OPTIONAL CALL (memory_collection, missing) {
WITH memory_collection, missing WHERE missing = []
FOREACH (node IN [memory_collection] | SET node.memora_lock = true REMOVE node.memora_lock)
WITH COLLECT { MATCH (node:Memory {org_id: $org_id, user_id: $user_id}) WHERE node.memory_id IS NOT NULL RETURN node LIMIT $memories_limit } AS memories
WITH memories, COLLECT { UNWIND memories AS start MATCH (start)-[:DATE_OBTAINED]->(node:Date) WHERE size(keys(node)) > 0 RETURN DISTINCT node } AS dates
WITH memories, dates, [node IN memories | node {.org_id, .user_id, .agent_id, .interaction_id, .memory_id, .memory, obtained_at: CASE WHEN node.obtained_at IS NULL THEN null ELSE [node.obtained_at.epochMillis, node.obtained_at.nanosecond, node.obtained_at.timezone] END}] AS memories_2
FOREACH (node IN memories | DETACH DELETE node)
FOREACH (node IN [n IN dates WHERE NOT EXISTS { (n)--() }] | DELETE node)
WITH memories_2, (size(memories) < $limit) AS finished
RETURN memories_2, finished
}
RETURN missing, memories_2 AS memories, finished
