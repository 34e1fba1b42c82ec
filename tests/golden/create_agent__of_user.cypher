// parameters: agent, org_id, times, user_id
OPTIONAL MATCH (org:Org {org_id: $org_id})
OPTIONAL MATCH (user:User {org_id: $org_id, user_id: $user_id})
WITH org, user,
  CASE WHEN org IS NULL THEN [[0, null]] ELSE [] END +
  CASE WHEN user IS NULL THEN [[1, null]] ELSE [] END AS missing
OPTIONAL CALL (org, user, missing) {
  WITH org, user, missing WHERE missing = []
  FOREACH (node IN [org] | SET node:Org)
  CREATE (agent:Agent)
  SET
    agent = $agent,
    agent.created_at = CASE WHEN $times[0] IS NULL THEN null ELSE datetime({epochSeconds: $times[0][0], nanosecond: $times[0][1], timezone: $times[0][2]}) END
  CREATE (org)-[:HAS_AGENT]->(agent)
  CREATE (user)-[:HAS_AGENT]->(agent)
  RETURN true AS written
}
RETURN missing
