// parameters: org_id, times, user_id
OPTIONAL MATCH (user:User {org_id: $org_id, user_id: $user_id})
RETURN
  CASE WHEN user IS NULL THEN [[0, null]] ELSE [] END AS missing,
  user {
    .org_id,
    .user_id,
    .user_name,
    created_at: CASE WHEN user.created_at IS NULL THEN null ELSE [user.created_at.epochMillis, user.created_at.nanosecond, user.created_at.timezone] END
  } AS user
