// parameters: org, times
WITH [] AS missing
OPTIONAL CALL (missing) {
  WITH missing WHERE missing = []
  CREATE (org:Org)
  SET
    org = $org,
    org.created_at = CASE WHEN $times[0] IS NULL THEN null ELSE datetime({epochSeconds: $times[0][0], nanosecond: $times[0][1], timezone: $times[0][2]}) END
  RETURN true AS written
}
RETURN missing
