// parameters: org_id, times
OPTIONAL MATCH (org:Org {org_id: $org_id})
RETURN
  CASE WHEN org IS NULL THEN [[0, null]] ELSE [] END AS missing,
  org {
    .org_id,
    .org_name,
    created_at: CASE WHEN org.created_at IS NULL THEN null ELSE [org.created_at.epochMillis, org.created_at.nanosecond, org.created_at.timezone] END
  } AS org
