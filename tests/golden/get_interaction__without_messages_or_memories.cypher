// parameters: interaction_id, org_id, times, user_id
OPTIONAL MATCH (interaction:Interaction {org_id: $org_id, user_id: $user_id, interaction_id: $interaction_id})
RETURN
  CASE WHEN interaction IS NULL THEN [[0, null]] ELSE [] END AS missing,
  interaction {
    .org_id,
    .user_id,
    .agent_id,
    .interaction_id,
    created_at: CASE WHEN interaction.created_at IS NULL THEN null ELSE [interaction.created_at.epochMillis, interaction.created_at.nanosecond, interaction.created_at.timezone] END,
    updated_at: CASE WHEN interaction.updated_at IS NULL THEN null ELSE [interaction.updated_at.epochMillis, interaction.updated_at.nanosecond, interaction.updated_at.timezone] END
  } AS interaction
