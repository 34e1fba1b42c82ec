// parameters: org_id, times, user_changes, user_id
OPTIONAL MATCH (user:User {org_id: $org_id, user_id: $user_id})
WITH user, CASE WHEN user IS NULL THEN [[0, null]] ELSE [] END AS missing
OPTIONAL CALL (user, missing) {
  WITH user, missing WHERE missing = []
  FOREACH (node IN [user] | SET node += $user_changes)
  WITH user {
    .org_id,
    .user_id,
    .user_name,
    created_at: CASE WHEN user.created_at IS NULL THEN null ELSE [user.created_at.epochMillis, user.created_at.nanosecond, user.created_at.timezone] END
  } AS user_2
  RETURN user_2
}
RETURN missing, user_2 AS user
