-- KEYS[1] deadlines; ARGV: now, claim length in seconds, limit
-- The tables due by `now` (at most `limit`), each moved `claim` seconds later, so that
-- the clocks of other processes do not take them too; the change a clock then commits
-- schedules the table at its real deadline, and a claim left behind (the clock's
-- process failed) makes the table due again when it runs out.
local due = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[1], 'LIMIT', 0, ARGV[3])
local later = tonumber(ARGV[1]) + tonumber(ARGV[2])
for _, table_id in ipairs(due) do
  redis.call('ZADD', KEYS[1], 'XX', later, table_id)
end
return due
