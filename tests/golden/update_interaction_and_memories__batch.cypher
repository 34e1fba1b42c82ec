// parameters: batch
UNWIND $batch AS one
OPTIONAL MATCH (user:User {org_id: one.org_id, user_id: one.user_id})
OPTIONAL MATCH (interaction:Interaction {org_id: one.org_id, user_id: one.user_id, interaction_id: one.interaction_id})
OPTIONAL MATCH (agent:Agent {org_id: one.org_id, agent_id: one.agent_id})
OPTIONAL MATCH (user)-[:HAS_MEMORIES]->(memory_collection:MemoryCollection)
WITH one, interaction, memory_collection,
  CASE WHEN user IS NULL THEN [[0, null]] ELSE [] END +
  CASE WHEN interaction IS NULL THEN [[1, null]] ELSE [] END +
  CASE WHEN agent IS NULL THEN [[2, null]] ELSE [] END +
  CASE WHEN memory_collection IS NULL THEN [[3, null]] ELSE [] END AS missing
OPTIONAL CALL (one, interaction, memory_collection, missing) {
  WITH one, interaction, memory_collection, missing WHERE missing = []
  FOREACH (node IN [interaction] | SET node:Interaction)
  WITH one, interaction, memory_collection, COLLECT {
    UNWIND [interaction] AS start
    MATCH (start)-[:FIRST_MESSAGE]->(:MessageBlock)-[:IS_NEXT*0..]->(node:MessageBlock) WHERE node.msg_position IS NOT NULL
    RETURN DISTINCT node ORDER BY node.msg_position
  } AS message_blocks
  WITH one, interaction, memory_collection, message_blocks,
    coalesce(head([k IN range(0, size(one.message_blocks) - 1) WHERE
      k >= size(message_blocks) OR
      NOT coalesce(
        message_blocks[k].role = one.message_blocks[k].role AND
        message_blocks[k].content = one.message_blocks[k].content, false)]), size(one.message_blocks)) AS message_blocks_kept
  FOREACH (node IN message_blocks[message_blocks_kept..] | DETACH DELETE node)
  WITH one, interaction, memory_collection, message_blocks, message_blocks_kept
  CALL (one, message_blocks_kept) {
    UNWIND one.message_blocks[message_blocks_kept..] AS row
    CREATE (node:MessageBlock)
    SET node = row
    RETURN collect(node) AS message_blocks_2
  }
  FOREACH (node IN [interaction] | SET
    node += one.interaction_changes,
    node.updated_at = CASE WHEN one.times[0] IS NULL THEN null ELSE datetime({epochSeconds: one.times[0][0], nanosecond: one.times[0][1], timezone: one.times[0][2]}) END)
  WITH one, interaction, memory_collection,
    message_blocks[..message_blocks_kept] + message_blocks_2 AS message_blocks_3
  WITH one, interaction, memory_collection, message_blocks_3
  CALL (one, interaction, message_blocks_3) {
    UNWIND one.first_message AS pair
    WITH [interaction][pair[0]] AS a, message_blocks_3[pair[1]] AS b
    MERGE (a)-[:FIRST_MESSAGE]->(b)
  }
  WITH one, interaction, memory_collection, message_blocks_3
  CALL (one, message_blocks_3) {
    UNWIND one.is_next AS pair
    WITH message_blocks_3[pair[0]] AS a, message_blocks_3[pair[1]] AS b
    MERGE (a)-[:IS_NEXT]->(b)
  }
  WITH one, interaction, memory_collection, message_blocks_3
  CALL (one) {
    UNWIND one.memories AS row
    CREATE (node:Memory)
    SET
      node = row.p,
      node.obtained_at = CASE WHEN one.times[row.t[0]] IS NULL THEN null ELSE datetime({epochSeconds: one.times[row.t[0]][0], nanosecond: one.times[row.t[0]][1], timezone: one.times[row.t[0]][2]}) END
    RETURN collect(node) AS memories
  }
  FOREACH (node IN memories | CREATE (node)-[:INTERACTION_SOURCE]->(interaction))
  WITH one, interaction, memory_collection, message_blocks_3, memories
  CALL (one, message_blocks_3, memories) {
    UNWIND one.message_source AS pair
    WITH memories[pair[0]] AS a, message_blocks_3[pair[1]] AS b
    CREATE (a)-[:MESSAGE_SOURCE]->(b)
  }
  FOREACH (node IN memories | CREATE (memory_collection)-[:INCLUDES]->(node))
  MERGE (date:Date {org_id: one.org_id, user_id: one.user_id, date: one.date})
  MERGE (interaction)-[:HAS_OCCURRENCE_ON]->(date)
  FOREACH (node IN memories | CREATE (node)-[:DATE_OBTAINED]->(date))
  RETURN true AS written
}
RETURN one.index AS index, missing
