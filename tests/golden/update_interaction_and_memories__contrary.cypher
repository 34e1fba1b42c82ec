// parameters: agent_id, contrary_update, date, first_message, interaction_changes, interaction_id, is_next, memories, memory_keys, message_blocks, message_source, org_id, times, user_id
OPTIONAL MATCH (user:User {org_id: $org_id, user_id: $user_id})
OPTIONAL MATCH (interaction:Interaction {org_id: $org_id, user_id: $user_id, interaction_id: $interaction_id})
OPTIONAL MATCH (agent:Agent {org_id: $org_id, agent_id: $agent_id})
OPTIONAL MATCH (user)-[:HAS_MEMORIES]->(memory_collection:MemoryCollection)
CALL () {
  UNWIND $memory_keys AS key
  OPTIONAL MATCH (found:Memory {org_id: key.org_id, user_id: key.user_id, memory_id: key.memory_id})
  RETURN collect(found) AS memories, collect(CASE WHEN found IS NULL THEN key END) AS memory_missing
}
WITH interaction, memory_collection, memories,
  CASE WHEN user IS NULL THEN [[0, null]] ELSE [] END +
  CASE WHEN interaction IS NULL THEN [[1, null]] ELSE [] END +
  CASE WHEN agent IS NULL THEN [[2, null]] ELSE [] END +
  CASE WHEN memory_collection IS NULL THEN [[3, null]] ELSE [] END +
  [key IN memory_missing | [4, key]] AS missing
OPTIONAL CALL (interaction, memory_collection, memories, missing) {
  WITH interaction, memory_collection, memories, missing WHERE missing = []
  FOREACH (node IN [interaction] | SET node:Interaction)
  WITH interaction, memory_collection, memories, COLLECT {
    UNWIND [interaction] AS start
    MATCH (start)-[:FIRST_MESSAGE]->(:MessageBlock)-[:IS_NEXT*0..]->(node:MessageBlock) WHERE node.msg_position IS NOT NULL
    RETURN DISTINCT node ORDER BY node.msg_position
  } AS message_blocks
  WITH interaction, memory_collection, memories, message_blocks,
    coalesce(head([k IN range(0, size($message_blocks) - 1) WHERE
      k >= size(message_blocks) OR
      NOT coalesce(
        message_blocks[k].role = $message_blocks[k].role AND
        message_blocks[k].content = $message_blocks[k].content, false)]), size($message_blocks)) AS message_blocks_kept
  FOREACH (node IN message_blocks[message_blocks_kept..] | DETACH DELETE node)
  WITH interaction, memory_collection, memories, message_blocks, message_blocks_kept
  CALL (message_blocks_kept) {
    UNWIND $message_blocks[message_blocks_kept..] AS row
    CREATE (node:MessageBlock)
    SET node = row
    RETURN collect(node) AS message_blocks_2
  }
  FOREACH (node IN [interaction] | SET
    node += $interaction_changes,
    node.updated_at = CASE WHEN $times[0] IS NULL THEN null ELSE datetime({epochSeconds: $times[0][0], nanosecond: $times[0][1], timezone: $times[0][2]}) END)
  WITH interaction, memory_collection, memories,
    message_blocks[..message_blocks_kept] + message_blocks_2 AS message_blocks_3
  WITH interaction, memory_collection, memories, message_blocks_3
  CALL (interaction, message_blocks_3) {
    UNWIND $first_message AS pair
    WITH [interaction][pair[0]] AS a, message_blocks_3[pair[1]] AS b
    MERGE (a)-[:FIRST_MESSAGE]->(b)
  }
  WITH interaction, memory_collection, memories, message_blocks_3
  CALL (message_blocks_3) {
    UNWIND $is_next AS pair
    WITH message_blocks_3[pair[0]] AS a, message_blocks_3[pair[1]] AS b
    MERGE (a)-[:IS_NEXT]->(b)
  }
  WITH interaction, memory_collection, memories, message_blocks_3
  CALL () {
    UNWIND $memories AS row
    CREATE (node:Memory)
    SET
      node = row.p,
      node.obtained_at = CASE WHEN $times[row.t[0]] IS NULL THEN null ELSE datetime({epochSeconds: $times[row.t[0]][0], nanosecond: $times[row.t[0]][1], timezone: $times[row.t[0]][2]}) END
    RETURN collect(node) AS memories_2
  }
  FOREACH (node IN memories_2 | CREATE (node)-[:INTERACTION_SOURCE]->(interaction))
  WITH interaction, memory_collection, memories, message_blocks_3, memories_2
  CALL (message_blocks_3, memories_2) {
    UNWIND $message_source AS pair
    WITH memories_2[pair[0]] AS a, message_blocks_3[pair[1]] AS b
    CREATE (a)-[:MESSAGE_SOURCE]->(b)
  }
  FOREACH (node IN memories_2 | CREATE (memory_collection)-[:INCLUDES]->(node))
  MERGE (date:Date {org_id: $org_id, user_id: $user_id, date: $date})
  MERGE (interaction)-[:HAS_OCCURRENCE_ON]->(date)
  FOREACH (node IN memories_2 | CREATE (node)-[:DATE_OBTAINED]->(date))
  WITH memories, memories_2
  CALL (memories, memories_2) {
    UNWIND $contrary_update AS pair
    WITH memories[pair[0]] AS a, memories_2[pair[1]] AS b
    CREATE (a)-[:CONTRARY_UPDATE]->(b)
  }
  RETURN true AS written
}
RETURN missing
