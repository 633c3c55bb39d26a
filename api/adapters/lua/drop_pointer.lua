-- KEYS[1] a sweeper's pointer set; ARGV: member, the score it was read at, the new
-- score ("" to drop the member)
-- Moves (or drops) the member only if its score is still the one read: a step that
-- pointed at it again since keeps its pointer.
local score = redis.call('ZSCORE', KEYS[1], ARGV[1])
if not score or tonumber(score) ~= tonumber(ARGV[2]) then
  return 0
end
if ARGV[3] == '' then
  redis.call('ZREM', KEYS[1], ARGV[1])
else
  redis.call('ZADD', KEYS[1], ARGV[3], ARGV[1])
end
return 1
