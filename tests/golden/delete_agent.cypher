// parameters: agent_id, org_id, times
OPTIONAL MATCH (agent:Agent {org_id: $org_id, agent_id: $agent_id})
WITH agent, CASE WHEN agent IS NULL THEN [[0, null]] ELSE [] END AS missing
OPTIONAL CALL (agent, missing) {
  WITH agent, missing WHERE missing = []
  FOREACH (node IN [agent] | DETACH DELETE node)
  RETURN true AS written
}
RETURN missing
