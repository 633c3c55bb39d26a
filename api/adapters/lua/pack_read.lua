-- KEYS[1] a finished deal's history, KEYS[2] the table's events stream
-- ARGV[1] the stream's events to read at most
-- What the packer (api.service.packing) needs to pack the deal: its history as stored
-- and the stream's first events up to the deal's last, as one flat reply
-- {history, id, event JSON, id, event JSON, ...}; {} when there is nothing to pack (no
-- history, or one packed already). Flat, so that the gateway reads it without parsing
-- each stream entry's fields.
local history = redis.call('GET', KEYS[1])
if not history or string.sub(history, 1, 1) == 'H' then
  return {}
end
local last = cjson.decode(history)['last_event']
local reply = {history}
local entries = redis.call('XRANGE', KEYS[2], '-', string.format('%d-0', last), 'COUNT', ARGV[1])
for _, entry in ipairs(entries) do
  reply[#reply + 1] = tonumber(string.match(entry[1], '^(%d+)'))
  reply[#reply + 1] = entry[2][2]
end
return reply
