-- KEYS[1] table hash, KEYS[2] deadlines (absent on a cluster)
-- ARGV: version read, scheduled deadline ("" for none), table id
if redis.call('HGET', KEYS[1], 'version') ~= ARGV[1] then
  return 0
end
redis.call('HSET', KEYS[1], 'deadline', ARGV[2])
if KEYS[2] then
  if ARGV[2] == '' then
    redis.call('ZREM', KEYS[2], ARGV[3])
  else
    redis.call('ZADD', KEYS[2], ARGV[2], ARGV[3])
  end
end
return 1
