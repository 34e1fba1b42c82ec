// parameters: agent_id, date, first_message, interaction, is_next, memories, message_blocks, message_source, org_id, times, user_id
OPTIONAL MATCH (user:User {org_id: $org_id, user_id: $user_id})
OPTIONAL MATCH (agent:Agent {org_id: $org_id, agent_id: $agent_id})
OPTIONAL MATCH (user)-[:HAS_MEMORIES]->(memory_collection:MemoryCollection)
OPTIONAL MATCH (user)-[:INTERACTIONS_IN]->(interaction_collection:InteractionCollection)
WITH memory_collection, interaction_collection,
  CASE WHEN user IS NULL THEN [[0, null]] ELSE [] END +
  CASE WHEN agent IS NULL THEN [[1, null]] ELSE [] END +
  CASE WHEN memory_collection IS NULL THEN [[2, null]] ELSE [] END +
  CASE WHEN interaction_collection IS NULL THEN [[3, null]] ELSE [] END AS missing
OPTIONAL CALL (memory_collection, interaction_collection, missing) {
  WITH memory_collection, interaction_collection, missing WHERE missing = []
  CREATE (interaction:Interaction)
  SET
    interaction = $interaction,
    interaction.created_at = CASE WHEN $times[0] IS NULL THEN null ELSE datetime({epochSeconds: $times[0][0], nanosecond: $times[0][1], timezone: $times[0][2]}) END,
    interaction.updated_at = CASE WHEN $times[0] IS NULL THEN null ELSE datetime({epochSeconds: $times[0][0], nanosecond: $times[0][1], timezone: $times[0][2]}) END
  WITH memory_collection, interaction_collection, interaction
  CALL () {
    UNWIND $message_blocks AS row
    CREATE (node:MessageBlock)
    SET node = row
    RETURN collect(node) AS message_blocks
  }
  WITH memory_collection, interaction_collection, interaction, message_blocks
  CALL (interaction, message_blocks) {
    UNWIND $first_message AS pair
    WITH [interaction][pair[0]] AS a, message_blocks[pair[1]] AS b
    CREATE (a)-[:FIRST_MESSAGE]->(b)
  }
  WITH memory_collection, interaction_collection, interaction, message_blocks
  CALL (message_blocks) {
    UNWIND $is_next AS pair
    WITH message_blocks[pair[0]] AS a, message_blocks[pair[1]] AS b
    CREATE (a)-[:IS_NEXT]->(b)
  }
  WITH memory_collection, interaction_collection, interaction, message_blocks
  CALL () {
    UNWIND $memories AS row
    CREATE (node:Memory)
    SET
      node = row.p,
      node.obtained_at = CASE WHEN $times[row.t[0]] IS NULL THEN null ELSE datetime({epochSeconds: $times[row.t[0]][0], nanosecond: $times[row.t[0]][1], timezone: $times[row.t[0]][2]}) END
    RETURN collect(node) AS memories
  }
  FOREACH (node IN memories | CREATE (node)-[:INTERACTION_SOURCE]->(interaction))
  WITH memory_collection, interaction_collection, interaction, message_blocks, memories
  CALL (message_blocks, memories) {
    UNWIND $message_source AS pair
    WITH memories[pair[0]] AS a, message_blocks[pair[1]] AS b
    CREATE (a)-[:MESSAGE_SOURCE]->(b)
  }
  CREATE (interaction_collection)-[:HAD_INTERACTION]->(interaction)
  FOREACH (node IN memories | CREATE (memory_collection)-[:INCLUDES]->(node))
  MERGE (date:Date {org_id: $org_id, user_id: $user_id, date: $date})
  CREATE (interaction)-[:HAS_OCCURRENCE_ON]->(date)
  FOREACH (node IN memories | CREATE (node)-[:DATE_OBTAINED]->(date))
  RETURN true AS written
}
RETURN missing
