// parameters: org_org_id_1
MATCH (org:Org) WHERE org.org_id = $org_org_id_1 RETURN org LIMIT 2

// ---

// parameters: ids
UNWIND $ids AS id MATCH (n) WHERE elementId(n) = id RETURN id, [CASE WHEN n.`created_at` IS NULL THEN null ELSE [n.`created_at`.epochMillis, n.`created_at`.nanosecond, n.`created_at`.timezone] END]

// ---

// parameters: user_org_id_1, user_user_id_1
MATCH (user:User) WHERE user.org_id = $user_org_id_1 AND user.user_id = $user_user_id_1 RETURN user LIMIT 2

// ---

// parameters: user_org_id_1, user_user_id_1
MATCH (user:User) WHERE user.org_id = $user_org_id_1 AND user.user_id = $user_user_id_1 RETURN user ORDER BY user.org_id, user.user_id LIMIT 500

// ---

// parameters: ids
UNWIND $ids AS id MATCH (n) WHERE elementId(n) = id RETURN id, [CASE WHEN n.`created_at` IS NULL THEN null ELSE [n.`created_at`.epochMillis, n.`created_at`.nanosecond, n.`created_at`.timezone] END]

// ---

// parameters: agent_org_id_1
MATCH (agent:Agent) WHERE agent.org_id = $agent_org_id_1 RETURN agent ORDER BY agent.org_id, agent.agent_id LIMIT 500

// ---

// parameters: ids
UNWIND $ids AS id MATCH (n) WHERE elementId(n) = id RETURN id, [CASE WHEN n.`created_at` IS NULL THEN null ELSE [n.`created_at`.epochMillis, n.`created_at`.nanosecond, n.`created_at`.timezone] END]

// ---

// parameters: user_org_id_1, user_user_id_1
MATCH (user:User) WHERE user.org_id = $user_org_id_1 AND user.user_id = $user_user_id_1 RETURN user ORDER BY user.org_id, user.user_id LIMIT 500

// ---

// parameters: ids
UNWIND $ids AS id MATCH (n) WHERE elementId(n) = id RETURN id, [CASE WHEN n.`created_at` IS NULL THEN null ELSE [n.`created_at`.epochMillis, n.`created_at`.nanosecond, n.`created_at`.timezone] END]

// ---

// parameters: interaction_org_id_1, interaction_user_id_1
MATCH (interaction:Interaction) WHERE interaction.org_id = $interaction_org_id_1 AND interaction.user_id = $interaction_user_id_1 RETURN interaction ORDER BY interaction.org_id, interaction.user_id, interaction.interaction_id LIMIT 500

// ---

// parameters: ids
UNWIND $ids AS id MATCH (n) WHERE elementId(n) = id RETURN id, [CASE WHEN n.`created_at` IS NULL THEN null ELSE [n.`created_at`.epochMillis, n.`created_at`.nanosecond, n.`created_at`.timezone] END, CASE WHEN n.`updated_at` IS NULL THEN null ELSE [n.`updated_at`.epochMillis, n.`updated_at`.nanosecond, n.`updated_at`.timezone] END]

// ---

// parameters: ids
UNWIND $ids AS id MATCH (s) WHERE elementId(s) = id MATCH (s)-[:FIRST_MESSAGE]->(first), (first)-[:IS_NEXT*0..]->(n) WHERE n:`MessageBlock` AND size(keys(n)) > 0 RETURN id, n

// ---

// parameters: ids
UNWIND $ids AS id MATCH (s) WHERE elementId(s) = id MATCH (s)-[:HAS_OCCURRENCE_ON]->(n) WHERE n:`Date` AND size(keys(n)) > 0 RETURN id, n

// ---

// parameters: memory_org_id_1, memory_user_id_1
MATCH (memory:Memory) WHERE memory.org_id = $memory_org_id_1 AND memory.user_id = $memory_user_id_1 RETURN memory ORDER BY memory.org_id, memory.user_id, memory.memory_id LIMIT 500

// ---

// parameters: ids
UNWIND $ids AS id MATCH (n) WHERE elementId(n) = id RETURN id, [CASE WHEN n.`obtained_at` IS NULL THEN null ELSE [n.`obtained_at`.epochMillis, n.`obtained_at`.nanosecond, n.`obtained_at`.timezone] END]

// ---

// parameters: ids
UNWIND $ids AS id MATCH (s) WHERE elementId(s) = id MATCH (s)-[:MESSAGE_SOURCE]->(n) WHERE n:`MessageBlock` AND size(keys(n)) > 0 RETURN id, n

// ---

// parameters: ids
UNWIND $ids AS id MATCH (s) WHERE elementId(s) = id MATCH (s)-[:DATE_OBTAINED]->(n) WHERE n:`Date` AND size(keys(n)) > 0 RETURN id, n

// ---

// parameters: memory_org_id_1, memory_user_id_1
MATCH (memory:Memory) WHERE memory.org_id = $memory_org_id_1 AND memory.user_id = $memory_user_id_1 RETURN memory ORDER BY memory.org_id, memory.user_id, memory.memory_id LIMIT 500

// ---

// parameters: ids
UNWIND $ids AS id MATCH (n) WHERE elementId(n) = id RETURN id, [CASE WHEN n.`obtained_at` IS NULL THEN null ELSE [n.`obtained_at`.epochMillis, n.`obtained_at`.nanosecond, n.`obtained_at`.timezone] END]

// ---

// parameters: ids
UNWIND $ids AS id MATCH (s) WHERE elementId(s) = id MATCH (s)-[:CONTRARY_UPDATE]->(n) WHERE n:`Memory` AND size(keys(n)) > 0 RETURN id, n
