-- KEYS[1] a player's set of open tables; ARGV: limit, table id
-- Adds the table unless the set already holds `limit` tables; 1 if added (or there), else 0.
if redis.call('SISMEMBER', KEYS[1], ARGV[2]) == 1 then
  return 1
end
if redis.call('SCARD', KEYS[1]) >= tonumber(ARGV[1]) then
  return 0
end
redis.call('SADD', KEYS[1], ARGV[2])
return 1
