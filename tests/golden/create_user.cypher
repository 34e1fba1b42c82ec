// parameters: interaction_collection, memory_collection, org_id, times, user
OPTIONAL MATCH (org:Org {org_id: $org_id})
WITH org, CASE WHEN org IS NULL THEN [[0, null]] ELSE [] END AS missing
OPTIONAL CALL (org, missing) {
  WITH org, missing WHERE missing = []
  FOREACH (node IN [org] | SET node:Org)
  CREATE (user:User)
  SET
    user = $user,
    user.created_at = CASE WHEN $times[0] IS NULL THEN null ELSE datetime({epochSeconds: $times[0][0], nanosecond: $times[0][1], timezone: $times[0][2]}) END
  CREATE (user)-[:BELONGS_TO]->(org)
  CREATE (interaction_collection:InteractionCollection)
  SET interaction_collection = $interaction_collection
  CREATE (user)-[:INTERACTIONS_IN]->(interaction_collection)
  CREATE (memory_collection:MemoryCollection)
  SET memory_collection = $memory_collection
  CREATE (user)-[:HAS_MEMORIES]->(memory_collection)
  RETURN true AS written
}
RETURN missing
