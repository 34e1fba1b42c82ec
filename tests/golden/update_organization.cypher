// parameters: org_changes, org_id, times
OPTIONAL MATCH (org:Org {org_id: $org_id})
WITH org, CASE WHEN org IS NULL THEN [[0, null]] ELSE [] END AS missing
OPTIONAL CALL (org, missing) {
  WITH org, missing WHERE missing = []
  FOREACH (node IN [org] | SET node += $org_changes)
  WITH org {
    .org_id,
    .org_name,
    created_at: CASE WHEN org.created_at IS NULL THEN null ELSE [org.created_at.epochMillis, org.created_at.nanosecond, org.created_at.timezone] END
  } AS org_2
  RETURN org_2
}
RETURN missing, org_2 AS org
