-- The webhooks' pointers (KEYS[1] the sorted set of tables by when to look at their
-- outbox, KEYS[2] the hash of when a commit last pointed at each) and a table's lease.
-- ARGV[1] says which step:
--   "point", table id, now: a commit is on its way; look at the table now
--   "repoint", table id, score read, next look ("" none), now, grace: after a look,
--     unless a commit pointed again since; with nothing left to send, the pointer stays
--     until `grace` after the last commit's (whose outbox entries land by then)
--   "release" (KEYS[1] the lease), token: end the lease if it is still this one
local op = ARGV[1]
if op == 'point' then
  redis.call('ZADD', KEYS[1], ARGV[3], ARGV[2])
  redis.call('HSET', KEYS[2], ARGV[2], ARGV[3])
  return 1
end
if op == 'release' then
  if redis.call('GET', KEYS[1]) == ARGV[2] then
    redis.call('DEL', KEYS[1])
  end
  return 1
end
local member = ARGV[2]
local score = redis.call('ZSCORE', KEYS[1], member)
if not score or tonumber(score) ~= tonumber(ARGV[3]) then
  return 0
end
local now = tonumber(ARGV[5])
local written = tonumber(redis.call('HGET', KEYS[2], member) or '0')
local hold = written + tonumber(ARGV[6])
local nxt = nil
if ARGV[4] ~= '' then
  nxt = tonumber(ARGV[4])
end
if hold > now and (nxt == nil or hold < nxt) then
  nxt = hold
end
if nxt == nil then
  redis.call('ZREM', KEYS[1], member)
  redis.call('HDEL', KEYS[2], member)
else
  redis.call('ZADD', KEYS[1], nxt, member)
end
return 1
