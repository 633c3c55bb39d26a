-- KEYS[1] a lobby shard (sorted set), KEYS[2] its rows (hash: table id -> member)
-- ARGV: table id, its member ("": not listed)
-- Replaces the table's member in the shard; returns 1 if it changed, else 0.
local old = redis.call('HGET', KEYS[2], ARGV[1])
if (old or '') == ARGV[2] then
  return 0
end
if old then
  redis.call('ZREM', KEYS[1], old)
end
if ARGV[2] == '' then
  redis.call('HDEL', KEYS[2], ARGV[1])
else
  redis.call('ZADD', KEYS[1], 0, ARGV[2])
  redis.call('HSET', KEYS[2], ARGV[1], ARGV[2])
end
return 1
