-- KEYS[1] deadlines; ARGV: now, limit, held until
-- The tables due by `now` (at most `limit`, the oldest deadline first), each moved to
-- `held until` so that no other clock takes it meanwhile; the change the claiming
-- clock commits schedules the table's next deadline, and an entry whose clock died
-- before that comes due again once the hold ends.
local due = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[1], 'LIMIT', 0, tonumber(ARGV[2]))
for _, table_id in ipairs(due) do
  redis.call('ZADD', KEYS[1], 'XX', ARGV[3], table_id)
end
return due
