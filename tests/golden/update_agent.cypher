// parameters: agent_changes, agent_id, org_id, times
OPTIONAL MATCH (agent:Agent {org_id: $org_id, agent_id: $agent_id})
WITH agent, CASE WHEN agent IS NULL THEN [[0, null]] ELSE [] END AS missing
OPTIONAL CALL (agent, missing) {
  WITH agent, missing WHERE missing = []
  FOREACH (node IN [agent] | SET node += $agent_changes)
  WITH agent {
    .org_id,
    .agent_id,
    .agent_label,
    created_at: CASE WHEN agent.created_at IS NULL THEN null ELSE [agent.created_at.epochMillis, agent.created_at.nanosecond, agent.created_at.timezone] END,
    .user_id
  } AS agent_2
  RETURN agent_2
}
RETURN missing, agent_2 AS agent
