// parameters: batch
UNWIND $batch AS one
OPTIONAL MATCH (user:User {org_id: one.org_id, user_id: one.user_id})
OPTIONAL MATCH (agent:Agent {org_id: one.org_id, agent_id: one.agent_id})
OPTIONAL MATCH (user)-[:HAS_MEMORIES]->(memory_collection:MemoryCollection)
OPTIONAL MATCH (user)-[:INTERACTIONS_IN]->(interaction_collection:InteractionCollection)
WITH one, memory_collection, interaction_collection,
  CASE WHEN user IS NULL THEN [[0, null]] ELSE [] END +
  CASE WHEN agent IS NULL THEN [[1, null]] ELSE [] END +
  CASE WHEN memory_collection IS NULL THEN [[2, null]] ELSE [] END +
  CASE WHEN interaction_collection IS NULL THEN [[3, null]] ELSE [] END AS missing
OPTIONAL CALL (one, memory_collection, interaction_collection, missing) {
  WITH one, memory_collection, interaction_collection, missing WHERE missing = []
  CREATE (interaction:Interaction)
  SET
    interaction = one.interaction,
    interaction.created_at = CASE WHEN one.times[0] IS NULL THEN null ELSE datetime({epochSeconds: one.times[0][0], nanosecond: one.times[0][1], timezone: one.times[0][2]}) END,
    interaction.updated_at = CASE WHEN one.times[0] IS NULL THEN null ELSE datetime({epochSeconds: one.times[0][0], nanosecond: one.times[0][1], timezone: one.times[0][2]}) END
  WITH one, memory_collection, interaction_collection, interaction
  CALL (one) {
    UNWIND one.message_blocks AS row
    CREATE (node:MessageBlock)
    SET node = row
    RETURN collect(node) AS message_blocks
  }
  WITH one, memory_collection, interaction_collection, interaction, message_blocks
  CALL (one, interaction, message_blocks) {
    UNWIND one.first_message AS pair
    WITH [interaction][pair[0]] AS a, message_blocks[pair[1]] AS b
    CREATE (a)-[:FIRST_MESSAGE]->(b)
  }
  WITH one, memory_collection, interaction_collection, interaction, message_blocks
  CALL (one, message_blocks) {
    UNWIND one.is_next AS pair
    WITH message_blocks[pair[0]] AS a, message_blocks[pair[1]] AS b
    CREATE (a)-[:IS_NEXT]->(b)
  }
  WITH one, memory_collection, interaction_collection, interaction, message_blocks
  CALL (one) {
    UNWIND one.memories AS row
    CREATE (node:Memory)
    SET
      node = row.p,
      node.obtained_at = CASE WHEN one.times[row.t[0]] IS NULL THEN null ELSE datetime({epochSeconds: one.times[row.t[0]][0], nanosecond: one.times[row.t[0]][1], timezone: one.times[row.t[0]][2]}) END
    RETURN collect(node) AS memories
  }
  FOREACH (node IN memories | CREATE (node)-[:INTERACTION_SOURCE]->(interaction))
  WITH one, memory_collection, interaction_collection, interaction, message_blocks, memories
  CALL (one, message_blocks, memories) {
    UNWIND one.message_source AS pair
    WITH memories[pair[0]] AS a, message_blocks[pair[1]] AS b
    CREATE (a)-[:MESSAGE_SOURCE]->(b)
  }
  CREATE (interaction_collection)-[:HAD_INTERACTION]->(interaction)
  FOREACH (node IN memories | CREATE (memory_collection)-[:INCLUDES]->(node))
  MERGE (date:Date {org_id: one.org_id, user_id: one.user_id, date: one.date})
  CREATE (interaction)-[:HAS_OCCURRENCE_ON]->(date)
  FOREACH (node IN memories | CREATE (node)-[:DATE_OBTAINED]->(date))
  RETURN true AS written
}
RETURN one.index AS index, missing
