-- KEYS[1] table hash, KEYS[2] events stream, KEYS[3] the deal's history
-- ARGV: the last packed event as read ("0": none), the history's compact form, the
--       first and last event it holds, the deal's number
-- Packs a finished deal's history (api.service.packing) unless the table changed the
-- packing since it was read: closed, another packer's pack, or the history trimmed or
-- packed already. Returns 1 if it packed, else 0.
local fields = redis.call('HMGET', KEYS[1], 'packed', 'closed')
if fields[2] or (fields[1] or '0') ~= ARGV[1] then
  return 0
end
local history = redis.call('GETRANGE', KEYS[3], 0, 0)
if history == '' or history == 'H' then
  return 0
end
-- the deal's history now holds its events and those before it since the last one
-- packed: they leave the stream (a prefix of it, unless older events were kept there)
local first = tonumber(ARGV[3])
local last = tonumber(ARGV[4])
redis.call('SET', KEYS[3], ARGV[2], 'KEEPTTL')
local head = redis.call('XRANGE', KEYS[2], '-', '+', 'COUNT', 1)[1]
if head == nil or tonumber(string.match(head[1], '^(%d+)')) >= first then
  redis.call('XTRIM', KEYS[2], 'MINID', string.format('%d-0', last + 1))
else
  for id = first, last do
    redis.call('XDEL', KEYS[2], string.format('%d-0', id))
  end
end
redis.call('HSET', KEYS[1], 'packed', ARGV[4], 'packed_hand', ARGV[5])
return 1
