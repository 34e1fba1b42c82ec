// parameters: agent_id, org_id, times
OPTIONAL MATCH (agent:Agent {org_id: $org_id, agent_id: $agent_id})
RETURN
  CASE WHEN agent IS NULL THEN [[0, null]] ELSE [] END AS missing,
  agent {
    .org_id,
    .agent_id,
    .agent_label,
    created_at: CASE WHEN agent.created_at IS NULL THEN null ELSE [agent.created_at.epochMillis, agent.created_at.nanosecond, agent.created_at.timezone] END,
    .user_id
  } AS agent
