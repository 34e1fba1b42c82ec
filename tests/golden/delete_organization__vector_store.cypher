// parameters: agents_limit, dates_limit, interactions_limit, limit, limit_2, limit_3, memories_limit, message_blocks_limit, org_id, tails, times, users_limit
CYPHER replan=skip
OPTIONAL MATCH (org:Org {org_id: $org_id})
WITH org, CASE WHEN org IS NULL THEN [[0, null]] ELSE [] END AS missing
OPTIONAL CALL (org, missing) {
  WITH org, missing WHERE missing = []
  FOREACH (node IN [org] | SET node:Org)
  WITH org, COLLECT {
    MATCH (node:User {org_id: $org_id}) WHERE node.user_id IS NOT NULL
    RETURN node LIMIT $users_limit
  } AS users
  WITH org, users, COLLECT {
    UNWIND users AS start
    MATCH (start)-[:INTERACTIONS_IN]->(node:InteractionCollection) WHERE node.org_id IS NOT NULL
    RETURN DISTINCT node
  } AS interaction_collections
  WITH org, users, interaction_collections, COLLECT {
    UNWIND users AS start
    MATCH (start)-[:HAS_MEMORIES]->(node:MemoryCollection) WHERE node.org_id IS NOT NULL
    RETURN DISTINCT node
  } AS memory_collections
  FOREACH (node IN interaction_collections | SET node:InteractionCollection)
  FOREACH (node IN memory_collections | SET node:MemoryCollection)
  WITH org, users, interaction_collections, memory_collections, COLLECT {
    MATCH (node:Interaction {org_id: $org_id}) WHERE node.user_id IS NOT NULL AND node.interaction_id IS NOT NULL
    RETURN node LIMIT $interactions_limit
  } AS interactions
  FOREACH (node IN interactions | SET node:Interaction)
  WITH org, users, interaction_collections, memory_collections, interactions, COLLECT {
    MATCH (node:Memory {org_id: $org_id}) WHERE node.user_id IS NOT NULL AND node.memory_id IS NOT NULL
    RETURN node LIMIT $memories_limit
  } AS memories
  WITH org, users, interaction_collections, memory_collections, interactions, memories, COLLECT {
    MATCH (node:Agent {org_id: $org_id}) WHERE node.agent_id IS NOT NULL
    RETURN node LIMIT $agents_limit
  } AS agents
  WITH org, users, interaction_collections, memory_collections, interactions, memories, agents,
    COLLECT {
      UNWIND memories AS start
      MATCH (start)-[:DATE_OBTAINED]->(node:Date) WHERE node.org_id IS NOT NULL
      RETURN DISTINCT node
    } AS dates
  WITH org, users, interaction_collections, memory_collections, interactions, memories, agents, dates,
    COLLECT {
      UNWIND interactions AS start
      MATCH (start)-[:HAS_OCCURRENCE_ON]->(node:Date) WHERE node.org_id IS NOT NULL
      RETURN DISTINCT node
    } AS dates_2
  WITH org, users, interaction_collections, memory_collections, interactions, memories, agents, dates, dates_2
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
  WITH org, users, interaction_collections, memory_collections, interactions, memories, agents, dates, dates_2, message_blocks_by_chain,
    reduce(acc = [[], 0], chain IN message_blocks_by_chain | [
      acc[0] + [chain[1][..$message_blocks_limit - acc[1]]],
      acc[1] + size(chain[1][..$message_blocks_limit - acc[1]])
    ])[0] AS message_blocks_taken
  WITH org, users, interaction_collections, memory_collections, interactions, memories, agents, dates, dates_2, message_blocks_by_chain, message_blocks_taken,
    COLLECT {
      UNWIND message_blocks_taken AS t
      UNWIND t AS node
      RETURN node
    } AS message_blocks
  WITH org, users, interaction_collections, memory_collections, interactions, memories, agents, dates, dates_2, message_blocks,
    [k IN range(0, size(message_blocks_by_chain) - 1) WHERE size(message_blocks_taken[k]) < size(message_blocks_by_chain[k][1]) | [
      elementId(message_blocks_by_chain[k][0]),
      elementId(message_blocks_by_chain[k][1][size(message_blocks_taken[k])]),
      message_blocks_by_chain[k][1][size(message_blocks_taken[k])].msg_position,
      toString(message_blocks_by_chain[k][0].updated_at)
    ]] AS tails_ends
  WITH org, users, interaction_collections, memory_collections, interactions, memories, agents, dates, dates_2, message_blocks, tails_ends,
    [node IN memories | node {
      .org_id,
      .user_id,
      .agent_id,
      .interaction_id,
      .memory_id,
      .memory,
      obtained_at: CASE WHEN node.obtained_at IS NULL THEN null ELSE [node.obtained_at.epochMillis, node.obtained_at.nanosecond, node.obtained_at.timezone] END
    }] AS memories_2
  FOREACH (node IN memories | DETACH DELETE node)
  FOREACH (node IN message_blocks | DETACH DELETE node)
  FOREACH (node IN [n IN interactions WHERE NOT (EXISTS { (n)-[:FIRST_MESSAGE]->() } OR EXISTS { (n)<-[:INTERACTION_SOURCE]-() })] | DETACH DELETE node)
  FOREACH (node IN [n IN dates WHERE NOT EXISTS { (n)--() }] | DELETE node)
  FOREACH (node IN [n IN dates_2 WHERE NOT EXISTS { (n)--() }] | DELETE node)
  WITH org, users, interaction_collections, memory_collections, agents, tails_ends, memories_2,
    (size(memories) < $limit AND size(message_blocks) < $limit AND size(interactions) < $limit_2) AS emptied
  WITH org, users, interaction_collections, memory_collections, agents, tails_ends, memories_2, emptied,
    COLLECT {
      MATCH (node:Date {org_id: $org_id}) WHERE node.user_id IS NOT NULL AND node.date IS NOT NULL
      RETURN node LIMIT $dates_limit
    } AS dates_3
  FOREACH (node IN CASE WHEN emptied THEN interaction_collections ELSE [] END | DETACH DELETE node)
  FOREACH (node IN CASE WHEN emptied THEN memory_collections ELSE [] END | DETACH DELETE node)
  FOREACH (node IN CASE WHEN emptied THEN users ELSE [] END | DETACH DELETE node)
  FOREACH (node IN CASE WHEN emptied THEN agents ELSE [] END | DETACH DELETE node)
  FOREACH (node IN CASE WHEN emptied THEN dates_3 ELSE [] END | DETACH DELETE node)
  WITH org, tails_ends, memories_2, emptied,
    (emptied AND size(users) < $limit_3 AND size(agents) < $limit AND size(dates_3) < $limit) AS finished
  FOREACH (node IN CASE WHEN finished THEN [org] ELSE [] END | DETACH DELETE node)
  RETURN tails_ends, memories_2, emptied, finished
}
RETURN missing, tails_ends, memories_2 AS memories, emptied, finished
