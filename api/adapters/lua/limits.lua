-- Write fields of a player's limits hash if it is still at the version read.
-- KEYS[1] limits hash (doc, effective, exclusion, excluded_until, version)
-- ARGV: the version read (0: none yet), then (field, value) pairs: the limits document
--       and the limits that apply, or the exclusion and its end, which wallet.lua
--       enforces from the moment this returns
-- Returns 1 if written, 0 if another change came first (nothing written).
if tonumber(redis.call('HGET', KEYS[1], 'version') or '0') ~= tonumber(ARGV[1]) then
  return 0
end
for i = 2, #ARGV, 2 do
  redis.call('HSET', KEYS[1], ARGV[i], ARGV[i + 1])
end
redis.call('HSET', KEYS[1], 'version', ARGV[1] + 1)
return 1
