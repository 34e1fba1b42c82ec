// parameters: agents_limit, interactions_limit, memories_limit, org_id, orgs_limit, times, users_limit
WITH COLLECT {
  MATCH (node:Org {org_id: $org_id})
  RETURN node LIMIT $orgs_limit
} AS orgs
WITH [node IN orgs | node {
  .org_id,
  .org_name,
  created_at: CASE WHEN node.created_at IS NULL THEN null ELSE [node.created_at.epochMillis, node.created_at.nanosecond, node.created_at.timezone] END
}] AS organization
WITH organization, COLLECT {
  MATCH (node:User {org_id: $org_id}) WHERE node.user_id IS NOT NULL
  RETURN node LIMIT $users_limit
} AS users
WITH organization, [node IN users | node {
  .org_id,
  .user_id,
  .user_name,
  created_at: CASE WHEN node.created_at IS NULL THEN null ELSE [node.created_at.epochMillis, node.created_at.nanosecond, node.created_at.timezone] END
}] AS user
WITH organization, user, COLLECT {
  MATCH (node:Agent {org_id: $org_id}) WHERE node.agent_id IS NOT NULL
  RETURN node LIMIT $agents_limit
} AS agents
WITH organization, user, [node IN agents | node {
  .org_id,
  .agent_id,
  .agent_label,
  created_at: CASE WHEN node.created_at IS NULL THEN null ELSE [node.created_at.epochMillis, node.created_at.nanosecond, node.created_at.timezone] END,
  .user_id
}] AS agent
WITH organization, user, agent, COLLECT {
  MATCH (node:Interaction {org_id: $org_id}) WHERE node.user_id IS NOT NULL AND node.interaction_id IS NOT NULL
  RETURN node LIMIT $interactions_limit
} AS interactions
WITH organization, user, agent, [node IN interactions | node {
  .org_id,
  .user_id,
  .agent_id,
  .interaction_id,
  created_at: CASE WHEN node.created_at IS NULL THEN null ELSE [node.created_at.epochMillis, node.created_at.nanosecond, node.created_at.timezone] END,
  updated_at: CASE WHEN node.updated_at IS NULL THEN null ELSE [node.updated_at.epochMillis, node.updated_at.nanosecond, node.updated_at.timezone] END
}] AS interaction
WITH organization, user, agent, interaction, COLLECT {
  MATCH (node:Memory {org_id: $org_id}) WHERE node.user_id IS NOT NULL AND node.memory_id IS NOT NULL
  RETURN node LIMIT $memories_limit
} AS memories
RETURN
  [] AS missing,
  organization,
  user,
  agent,
  interaction,
  [node IN memories | node {
    .org_id,
    .user_id,
    .agent_id,
    .interaction_id,
    .memory_id,
    .memory,
    obtained_at: CASE WHEN node.obtained_at IS NULL THEN null ELSE [node.obtained_at.epochMillis, node.obtained_at.nanosecond, node.obtained_at.timezone] END
  }] AS memory

// ---

// parameters: org_keys, times
CYPHER replan=skip
WITH COLLECT {
  UNWIND $org_keys AS key
  MATCH (node:Org {org_id: key.org_id})
  RETURN node
} AS orgs
RETURN
  [] AS missing,
  [node IN orgs | node {
    .org_id,
    .org_name,
    created_at: CASE WHEN node.created_at IS NULL THEN null ELSE [node.created_at.epochMillis, node.created_at.nanosecond, node.created_at.timezone] END
  }] AS found

// ---

// parameters: times, user_keys
CYPHER replan=skip
WITH COLLECT {
  UNWIND $user_keys AS key
  MATCH (node:User {org_id: key.org_id, user_id: key.user_id})
  RETURN node
} AS users
RETURN
  [] AS missing,
  [node IN users | node {
    .org_id,
    .user_id,
    .user_name,
    created_at: CASE WHEN node.created_at IS NULL THEN null ELSE [node.created_at.epochMillis, node.created_at.nanosecond, node.created_at.timezone] END
  }] AS found

// ---

// parameters: agent_keys, times
CYPHER replan=skip
WITH COLLECT {
  UNWIND $agent_keys AS key
  MATCH (node:Agent {org_id: key.org_id, agent_id: key.agent_id})
  RETURN node
} AS agents
RETURN
  [] AS missing,
  [node IN agents | node {
    .org_id,
    .agent_id,
    .agent_label,
    created_at: CASE WHEN node.created_at IS NULL THEN null ELSE [node.created_at.epochMillis, node.created_at.nanosecond, node.created_at.timezone] END,
    .user_id
  }] AS found

// ---

// parameters: memory_id_values, times
WITH COLLECT {
  MATCH (node:Memory) WHERE node.memory_id IN $memory_id_values
  RETURN node
} AS memories
RETURN
  [] AS missing,
  [node IN memories | node {
    .org_id,
    .user_id,
    .agent_id,
    .interaction_id,
    .memory_id,
    .memory,
    obtained_at: CASE WHEN node.obtained_at IS NULL THEN null ELSE [node.obtained_at.epochMillis, node.obtained_at.nanosecond, node.obtained_at.timezone] END
  }] AS found

// ---

// parameters: org_keys, times
CYPHER replan=skip
WITH COLLECT {
  UNWIND $org_keys AS key
  MATCH (node:Org {org_id: key.org_id})
  RETURN node
} AS orgs
RETURN
  [] AS missing,
  [node IN orgs | node {
    .org_id,
    .org_name,
    created_at: CASE WHEN node.created_at IS NULL THEN null ELSE [node.created_at.epochMillis, node.created_at.nanosecond, node.created_at.timezone] END
  }] AS found

// ---

// parameters: times, user_keys
CYPHER replan=skip
WITH COLLECT {
  UNWIND $user_keys AS key
  MATCH (node:User {org_id: key.org_id, user_id: key.user_id})
  RETURN node
} AS users
RETURN
  [] AS missing,
  [node IN users | node {
    .org_id,
    .user_id,
    .user_name,
    created_at: CASE WHEN node.created_at IS NULL THEN null ELSE [node.created_at.epochMillis, node.created_at.nanosecond, node.created_at.timezone] END
  }] AS found

// ---

// parameters: agent_keys, times
CYPHER replan=skip
WITH COLLECT {
  UNWIND $agent_keys AS key
  MATCH (node:Agent {org_id: key.org_id, agent_id: key.agent_id})
  RETURN node
} AS agents
RETURN
  [] AS missing,
  [node IN agents | node {
    .org_id,
    .agent_id,
    .agent_label,
    created_at: CASE WHEN node.created_at IS NULL THEN null ELSE [node.created_at.epochMillis, node.created_at.nanosecond, node.created_at.timezone] END,
    .user_id
  }] AS found

// ---

// parameters: agent_keys, agents, has_agent, has_agent_2, org_id, times, user_keys
CYPHER replan=skip
OPTIONAL MATCH (org:Org {org_id: $org_id})
CALL () {
  UNWIND $user_keys AS key
  OPTIONAL MATCH (found:User {})
  RETURN collect(found) AS users, collect(CASE WHEN found IS NULL THEN key END) AS user_missing
}
CALL () {
  UNWIND $agent_keys AS key
  OPTIONAL MATCH (found:Agent {org_id: key.org_id, agent_id: key.agent_id})
  RETURN collect(found) AS agents, collect(CASE WHEN found IS NULL THEN key END) AS agent_missing
}
WITH org, users, agents,
  CASE WHEN org IS NULL THEN [[0, null]] ELSE [] END +
  [key IN user_missing | [1, key]] +
  [key IN agent_missing | [2, key]] AS missing
OPTIONAL CALL (org, users, agents, missing) {
  WITH org, users, agents, missing WHERE missing = []
  FOREACH (node IN [org] | SET node:Org)
  WITH org, users, agents
  CALL () {
    UNWIND $agents AS row
    CREATE (node:Agent)
    SET
      node = row.p,
      node.created_at = CASE WHEN $times[row.t[0]] IS NULL THEN null ELSE datetime({epochSeconds: $times[row.t[0]][0], nanosecond: $times[row.t[0]][1], timezone: $times[row.t[0]][2]}) END
    RETURN collect(node) AS agents_2
  }
  FOREACH (node IN agents_2 | CREATE (org)-[:HAS_AGENT]->(node))
  WITH org, users, agents, agents_2
  CALL (users, agents_2) {
    UNWIND $has_agent AS pair
    WITH users[pair[0]] AS a, agents_2[pair[1]] AS b
    CREATE (a)-[:HAS_AGENT]->(b)
  }
  FOREACH (node IN agents | MERGE (org)-[:HAS_AGENT]->(node))
  WITH users, agents
  CALL (users, agents) {
    UNWIND $has_agent_2 AS pair
    WITH users[pair[0]] AS a, agents[pair[1]] AS b
    MERGE (a)-[:HAS_AGENT]->(b)
  }
  RETURN true AS written
}
RETURN missing

// ---

// parameters: interaction_keys, times
CYPHER replan=skip
WITH COLLECT {
  UNWIND $interaction_keys AS key
  MATCH (node:Interaction {org_id: key.org_id, user_id: key.user_id, interaction_id: key.interaction_id})
  RETURN node
} AS interactions
RETURN
  [] AS missing,
  [node IN interactions | node {
    .org_id,
    .user_id,
    .agent_id,
    .interaction_id,
    created_at: CASE WHEN node.created_at IS NULL THEN null ELSE [node.created_at.epochMillis, node.created_at.nanosecond, node.created_at.timezone] END,
    updated_at: CASE WHEN node.updated_at IS NULL THEN null ELSE [node.updated_at.epochMillis, node.updated_at.nanosecond, node.updated_at.timezone] END
  }] AS found

// ---

// parameters: date_keys, first_message, had_interaction, has_occurrence_on, interactions, is_next, message_blocks, times, user_keys
CYPHER replan=skip
CALL () {
  UNWIND $user_keys AS key
  OPTIONAL MATCH (found:User {org_id: key.org_id, user_id: key.user_id})
  RETURN collect(found) AS users, collect(CASE WHEN found IS NULL THEN key END) AS user_missing
}
WITH users, [key IN user_missing | [0, key]] AS missing
OPTIONAL CALL (users, missing) {
  WITH users, missing WHERE missing = []
  FOREACH (node IN users | SET node:User)
  WITH [start IN users | head([(start)-[:INTERACTIONS_IN]->(node:InteractionCollection) | node])] AS interaction_collections
  WITH interaction_collections
  CALL () {
    UNWIND $interactions AS row
    CREATE (node:Interaction)
    SET
      node = row.p,
      node.created_at = CASE WHEN $times[row.t[0]] IS NULL THEN null ELSE datetime({epochSeconds: $times[row.t[0]][0], nanosecond: $times[row.t[0]][1], timezone: $times[row.t[0]][2]}) END,
      node.updated_at = CASE WHEN $times[row.t[1]] IS NULL THEN null ELSE datetime({epochSeconds: $times[row.t[1]][0], nanosecond: $times[row.t[1]][1], timezone: $times[row.t[1]][2]}) END
    RETURN collect(node) AS interactions
  }
  WITH interaction_collections, interactions
  CALL () {
    UNWIND $message_blocks AS row
    CREATE (node:MessageBlock)
    SET node = row
    RETURN collect(node) AS message_blocks
  }
  WITH interaction_collections, interactions, message_blocks
  CALL (interactions, message_blocks) {
    UNWIND $first_message AS pair
    WITH interactions[pair[0]] AS a, message_blocks[pair[1]] AS b
    CREATE (a)-[:FIRST_MESSAGE]->(b)
  }
  WITH interaction_collections, interactions, message_blocks
  CALL (message_blocks) {
    UNWIND $is_next AS pair
    WITH message_blocks[pair[0]] AS a, message_blocks[pair[1]] AS b
    CREATE (a)-[:IS_NEXT]->(b)
  }
  WITH interaction_collections, interactions
  CALL (interaction_collections, interactions) {
    UNWIND $had_interaction AS pair
    WITH interaction_collections[pair[0]] AS a, interactions[pair[1]] AS b
    CREATE (a)-[:HAD_INTERACTION]->(b)
  }
  WITH interactions
  CALL () {
    UNWIND $date_keys AS row
    MERGE (node:Date {org_id: row.org_id, user_id: row.user_id, date: row.date})
    RETURN collect(node) AS dates
  }
  WITH interactions, dates
  CALL (interactions, dates) {
    UNWIND $has_occurrence_on AS pair
    WITH interactions[pair[0]] AS a, dates[pair[1]] AS b
    CREATE (a)-[:HAS_OCCURRENCE_ON]->(b)
  }
  RETURN true AS written
}
RETURN missing

// ---

// parameters: memory_keys, times
CYPHER replan=skip
WITH COLLECT {
  UNWIND $memory_keys AS key
  MATCH (node:Memory {org_id: key.org_id, user_id: key.user_id, memory_id: key.memory_id})
  RETURN node
} AS memories
RETURN
  [] AS missing,
  [node IN memories | node {
    .org_id,
    .user_id,
    .agent_id,
    .interaction_id,
    .memory_id,
    .memory,
    obtained_at: CASE WHEN node.obtained_at IS NULL THEN null ELSE [node.obtained_at.epochMillis, node.obtained_at.nanosecond, node.obtained_at.timezone] END
  }] AS found

// ---

// parameters: date_keys, date_obtained, has_occurrence_on, includes, interaction_keys, interaction_source, memories, message_source, times, user_keys
CYPHER replan=skip
CALL () {
  UNWIND $user_keys AS key
  OPTIONAL MATCH (found:User {org_id: key.org_id, user_id: key.user_id})
  RETURN collect(found) AS users, collect(CASE WHEN found IS NULL THEN key END) AS user_missing
}
CALL () {
  UNWIND $interaction_keys AS key
  OPTIONAL MATCH (found:Interaction {org_id: key.org_id, user_id: key.user_id, interaction_id: key.interaction_id})
  RETURN collect(found) AS interactions, collect(CASE WHEN found IS NULL THEN key END) AS interaction_missing
}
WITH users, interactions,
  [key IN user_missing | [0, key]] + [key IN interaction_missing | [1, key]] AS missing
OPTIONAL CALL (users, interactions, missing) {
  WITH users, interactions, missing WHERE missing = []
  FOREACH (node IN users | SET node:User)
  WITH interactions,
    [start IN users | head([(start)-[:HAS_MEMORIES]->(node:MemoryCollection) | node])] AS memory_collections
  WITH interactions, memory_collections
  CALL () {
    UNWIND $memories AS row
    CREATE (node:Memory)
    SET
      node = row.p,
      node.obtained_at = CASE WHEN $times[row.t[0]] IS NULL THEN null ELSE datetime({epochSeconds: $times[row.t[0]][0], nanosecond: $times[row.t[0]][1], timezone: $times[row.t[0]][2]}) END
    RETURN collect(node) AS memories
  }
  WITH interactions, memory_collections, memories
  CALL (interactions, memories) {
    UNWIND $interaction_source AS pair
    WITH memories[pair[0]] AS a, interactions[pair[1]] AS b
    CREATE (a)-[:INTERACTION_SOURCE]->(b)
  }
  WITH interactions, memory_collections, memories
  CALL (interactions, memories) {
    UNWIND $message_source AS chain
    WITH memories AS sources, interactions[chain[0]] AS start, chain[1] AS wanted
    WITH sources, wanted, COLLECT {
      MATCH (start)-[:FIRST_MESSAGE]->(:MessageBlock)-[:IS_NEXT*0..]->(node:MessageBlock)
      RETURN node ORDER BY node.msg_position
    } AS nodes
    UNWIND wanted AS link
    WITH sources[link[0]] AS a, nodes[link[1]] AS b, link[1] AS position WHERE b.msg_position = position
    CREATE (a)-[:MESSAGE_SOURCE]->(b)
  }
  WITH interactions, memory_collections, memories
  CALL (memory_collections, memories) {
    UNWIND $includes AS pair
    WITH memory_collections[pair[0]] AS a, memories[pair[1]] AS b
    CREATE (a)-[:INCLUDES]->(b)
  }
  WITH interactions, memories
  CALL () {
    UNWIND $date_keys AS row
    MERGE (node:Date {org_id: row.org_id, user_id: row.user_id, date: row.date})
    RETURN collect(node) AS dates
  }
  WITH interactions, memories, dates
  CALL (interactions, dates) {
    UNWIND $has_occurrence_on AS pair
    WITH interactions[pair[0]] AS a, dates[pair[1]] AS b
    MERGE (a)-[:HAS_OCCURRENCE_ON]->(b)
  }
  WITH memories, dates
  CALL (memories, dates) {
    UNWIND $date_obtained AS pair
    WITH memories[pair[0]] AS a, dates[pair[1]] AS b
    CREATE (a)-[:DATE_OBTAINED]->(b)
  }
  RETURN true AS written
}
RETURN missing
