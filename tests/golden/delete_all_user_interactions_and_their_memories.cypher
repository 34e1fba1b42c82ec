// parameters: interactions_limit, limit, limit_2, memories_limit, message_blocks_limit, org_id, tails, times, user_id
CYPHER replan=skip
OPTIONAL MATCH (user:User {org_id: $org_id, user_id: $user_id})
OPTIONAL MATCH (user)-[:INTERACTIONS_IN]->(interaction_collection:InteractionCollection)
WITH interaction_collection,
  CASE WHEN user IS NULL THEN [[0, null]] ELSE [] END +
  CASE WHEN interaction_collection IS NULL THEN [[1, null]] ELSE [] END AS missing
OPTIONAL CALL (interaction_collection, missing) {
  WITH interaction_collection, missing WHERE missing = []
  FOREACH (node IN [interaction_collection] | SET node:InteractionCollection)
  WITH COLLECT {
    MATCH (node:Interaction {org_id: $org_id, user_id: $user_id}) WHERE node.interaction_id IS NOT NULL
    RETURN node LIMIT $interactions_limit
  } AS interactions
  FOREACH (node IN interactions | SET node:Interaction)
  WITH interactions
  CALL (interactions) {
    UNWIND interactions AS start
    WITH start
    MATCH (start)<-[:INTERACTION_SOURCE]-(node:Memory) WHERE node.org_id IS NOT NULL
    WITH DISTINCT node LIMIT $memories_limit
    RETURN collect(node) AS memories
  }
  WITH interactions, memories, COLLECT {
    UNWIND memories AS start
    MATCH (start)-[:DATE_OBTAINED]->(node:Date) WHERE node.org_id IS NOT NULL
    RETURN DISTINCT node
  } AS dates
  WITH interactions, memories, dates, COLLECT {
    UNWIND interactions AS start
    MATCH (start)-[:HAS_OCCURRENCE_ON]->(node:Date) WHERE node.org_id IS NOT NULL
    RETURN DISTINCT node
  } AS dates_2
  WITH interactions, memories, dates, dates_2
  CALL (interactions) {
    UNWIND interactions AS start
    WITH start, $tails[elementId(start)] AS known
    OPTIONAL MATCH (kept:MessageBlock) WHERE
      elementId(kept) = known[1] AND
      kept.msg_position = known[2] AND
      toString(start.updated_at) = known[3] AND
      NOT EXISTS { (kept)-[:IS_NEXT]->() }
    OPTIONAL CALL (start, kept) {
      WITH start WHERE kept IS NULL
      MATCH (start)-[:FIRST_MESSAGE]->(:MessageBlock)-[:IS_NEXT*0..]->(found:MessageBlock) WHERE found.msg_position IS NOT NULL AND NOT EXISTS { (found)-[:IS_NEXT]->() }
      RETURN found LIMIT 1
    }
    WITH start, coalesce(kept, found) AS last WHERE last IS NOT NULL
    WITH start, COLLECT {
      MATCH (node:MessageBlock)-[:IS_NEXT*0..]->(last) WHERE node.msg_position IS NOT NULL
      RETURN node LIMIT $message_blocks_limit + 1
    } AS nearest
    RETURN collect([start, nearest]) AS message_blocks_by_chain
  }
  WITH interactions, memories, dates, dates_2, message_blocks_by_chain,
    reduce(acc = [[], 0], chain IN message_blocks_by_chain | [
      acc[0] + [chain[1][..$message_blocks_limit - acc[1]]],
      acc[1] + size(chain[1][..$message_blocks_limit - acc[1]])
    ])[0] AS message_blocks_taken
  WITH interactions, memories, dates, dates_2, message_blocks_by_chain, message_blocks_taken,
    COLLECT {
      UNWIND message_blocks_taken AS t
      UNWIND t AS node
      RETURN node
    } AS message_blocks
  WITH interactions, memories, dates, dates_2, message_blocks,
    [k IN range(0, size(message_blocks_by_chain) - 1) WHERE size(message_blocks_taken[k]) < size(message_blocks_by_chain[k][1]) | [
      elementId(message_blocks_by_chain[k][0]),
      elementId(message_blocks_by_chain[k][1][size(message_blocks_taken[k])]),
      message_blocks_by_chain[k][1][size(message_blocks_taken[k])].msg_position,
      toString(message_blocks_by_chain[k][0].updated_at)
    ]] AS tails_ends
  WITH interactions, memories, dates, dates_2, message_blocks, tails_ends,
    [node IN memories[..1] | node {.org_id, .user_id, .memory_id}] AS memories_2
  FOREACH (node IN memories | DETACH DELETE node)
  FOREACH (node IN message_blocks | DETACH DELETE node)
  FOREACH (node IN [n IN interactions WHERE NOT (EXISTS { (n)-[:FIRST_MESSAGE]->() } OR EXISTS { (n)<-[:INTERACTION_SOURCE]-() })] | DETACH DELETE node)
  FOREACH (node IN [n IN dates WHERE NOT EXISTS { (n)--() }] | DELETE node)
  FOREACH (node IN [n IN dates_2 WHERE NOT EXISTS { (n)--() }] | DELETE node)
  WITH tails_ends, memories_2,
    (size(memories) < $limit AND size(message_blocks) < $limit AND size(interactions) < $limit_2) AS finished
  RETURN tails_ends, memories_2, finished
}
RETURN missing, tails_ends, memories_2 AS memories, finished
