-- KEYS[1] a player's deals index, KEYS[2] their kept copies
-- ARGV: member ("<table id>:<deal>"), when the deal ended, the copy (JSON), copies kept,
--       deals the index keeps
-- Notes the deal once: a note delivered again (a sweeper's, after a crash) changes nothing.
if redis.call('ZSCORE', KEYS[1], ARGV[1]) then
  return 0
end
redis.call('LPUSH', KEYS[2], ARGV[3])
redis.call('LTRIM', KEYS[2], 0, tonumber(ARGV[4]) - 1)
redis.call('ZADD', KEYS[1], ARGV[2], ARGV[1])
redis.call('ZREMRANGEBYRANK', KEYS[1], 0, -tonumber(ARGV[5]) - 1)
return 1
