-- KEYS[1] a player's sorted set of stream leases (score: when the lease ends, in ms of
-- the Redis server's clock); ARGV: limit, stream id, lease length in ms
-- Drops ended leases, then takes one unless `limit` are held; 1 if taken, else 0.
local now = redis.call('TIME')
local ms = tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', ms)
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[1]) then
  return 0
end
local ends = ms + tonumber(ARGV[3])
redis.call('ZADD', KEYS[1], ends, ARGV[2])
redis.call('PEXPIREAT', KEYS[1], ends)
return 1
