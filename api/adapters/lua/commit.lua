-- KEYS[1] table hash, KEYS[2] events stream, KEYS[3] tokens hash, KEYS[4..] as ARGV says
-- ARGV: expected version, new version, state JSON, last seq, scheduled deadline,
--       expected stamp, new stamp, index in KEYS of a key that must not exist (0: none),
--       event count, (id, payload) pairs,
--       token-op count, (op, field, value) triples,
--       extra-key count, (value, ttl seconds or 0) pairs, one key each,
--       copies count (0: none; else the number of players a finished deal's copies
--       go to, then: "1" to write them as notes to the table's recall outbox (its key)
--       or "0" to keep them in the players' keys (two keys each: their deals index and
--       their copies), the deal's first and last event, its member, when it ended, the
--       notes' due time, copies kept, deals indexed, a copy's JSON from after its
--       players' ids up to its events, then (account, ids JSON) pairs),
--       the deal that ended ("": none), the time its packing is due and the table id
--       (its key, the packing set; "" on a cluster, where it is written before),
--       trim count (0: none; else first kept hand, its key, then keys to delete),
--       close count (0: none; else grace ttl, closed_at, keep ttl, then hand keys to
--       delete, or to keep with the events for keep ttl seconds when it is not 0),
--       deadline op ("sync" member: schedule at ARGV[5] if it changed | "del" member |
--       "none"), its key unless "none",
--       lobby op ("del" member | "none"), its key unless "none",
--       listing op ("none" | "note" place member: keep the place ("<shard>:<member>")
--       in the table hash | "list" place member table id: and the member in the
--       lobby's shard, its two keys: api.adapters.lobby),
--       hash-set count, (field, value) pairs, one key each (the table's ledger and
--       outbox entries),
--       last: the time (Unix, Redis's clock) the commit must land before ("": any)
-- Returns 0 if the version or stamp changed (nothing written), 3 if the commit came
-- too late for the transfers it accepts (nothing written), 2 if the table's deadline
-- changed, else 1; plus 4 when the table's lobby member changed. When it wrote notes to
-- the recall outbox: that code, then each note's field and value.
local before = ARGV[#ARGV]
if before ~= '' then
  local now = redis.call('TIME')
  if tonumber(now[1]) + tonumber(now[2]) / 1000000 >= tonumber(before) then
    return 3
  end
end
local current = redis.call('HMGET', KEYS[1], 'version', 'stamp', 'deadline')
if (current[1] or '0') ~= ARGV[1] or (current[2] or '') ~= ARGV[6] then
  return 0
end
local absent = tonumber(ARGV[8])
if absent > 0 and redis.call('EXISTS', KEYS[absent]) == 1 then
  return 0
end
local moved = (current[3] or '') ~= ARGV[5]
redis.call('HSET', KEYS[1], 'state', ARGV[3], 'version', ARGV[2], 'seq', ARGV[4],
  'deadline', ARGV[5], 'stamp', ARGV[7])
local i = 9
local k = 4
local events = tonumber(ARGV[i]); i = i + 1
for _ = 1, events do
  redis.call('XADD', KEYS[2], ARGV[i], 'event', ARGV[i + 1])
  i = i + 2
end
local ops = tonumber(ARGV[i]); i = i + 1
for _ = 1, ops do
  if ARGV[i] == 'set' then
    redis.call('HSET', KEYS[3], ARGV[i + 1], ARGV[i + 2])
  else
    -- deleting "player:<id>" also deletes the token digest it points to
    local digest = redis.call('HGET', KEYS[3], ARGV[i + 1])
    if digest then
      redis.call('HDEL', KEYS[3], digest)
    end
    redis.call('HDEL', KEYS[3], ARGV[i + 1])
  end
  i = i + 3
end
local extras = tonumber(ARGV[i]); i = i + 1
for _ = 1, extras do
  local ttl = tonumber(ARGV[i + 1])
  if ttl > 0 then
    redis.call('SET', KEYS[k], ARGV[i], 'EX', ttl)
  else
    redis.call('SET', KEYS[k], ARGV[i])
  end
  i = i + 2
  k = k + 1
end
local copies = tonumber(ARGV[i]); i = i + 1
local notes = {}
if copies > 0 then
  -- a finished deal's copy for each of its players (api.service.recall): its history and
  -- every event of the deal, all in the stream now, after the player's ids
  local outbox = ARGV[i] == '1'
  local member, at, due = ARGV[i + 3], ARGV[i + 4], ARGV[i + 5]
  local kept, indexed = tonumber(ARGV[i + 6]), tonumber(ARGV[i + 7])
  local events = {}
  local range = redis.call('XRANGE', KEYS[2], ARGV[i + 1] .. '-0', ARGV[i + 2] .. '-0')
  for _, entry in ipairs(range) do
    events[#events + 1] = entry[2][2]
  end
  local shared = ARGV[i + 8] .. table.concat(events, ',') .. ']}'
  i = i + 9
  for _ = 1, copies do
    local copy = '{"players":' .. ARGV[i + 1] .. ',' .. shared
    if outbox then
      local name = ARGV[i] .. ' ' .. member
      local note = '{"player":' .. cjson.encode(ARGV[i]) .. ',"member":' ..
        cjson.encode(member) .. ',"at":' .. at .. ',"copy":' .. cjson.encode(copy) ..
        ',"due":' .. due .. '}'
      redis.call('HSET', KEYS[k], name, note)
      notes[#notes + 1] = name
      notes[#notes + 1] = note
    else
      -- a single Redis: the player's keys at once, as lua/recall_keep.lua does them
      if not redis.call('ZSCORE', KEYS[k], member) then
        redis.call('LPUSH', KEYS[k + 1], copy)
        redis.call('LTRIM', KEYS[k + 1], 0, kept - 1)
        redis.call('ZADD', KEYS[k], at, member)
        redis.call('ZREMRANGEBYRANK', KEYS[k], 0, -indexed - 1)
      end
      k = k + 2
    end
    i = i + 2
  end
  if outbox then
    k = k + 1
  end
end
local ended = ARGV[i]
if ended ~= '' then
  -- the deals before it are packed by the packer (api.service.packing)
  redis.call('HSET', KEYS[1], 'ended', ended)
  if ARGV[i + 1] ~= '' then
    redis.call('ZADD', KEYS[k], ARGV[i + 1], ARGV[i + 2])
    k = k + 1
  end
end
i = i + 3
local trim = tonumber(ARGV[i]); i = i + 1
if trim > 0 then
  -- the oldest kept deal's history says where its events start: older ones go
  local kept = redis.call('GET', KEYS[k])
  if kept then
    local first
    if string.sub(kept, 1, 1) == 'H' then
      first = tonumber(string.match(kept, '^H%d+ %d+ (%d+) '))
    else
      first = cjson.decode(kept)['first_event']
    end
    redis.call('XTRIM', KEYS[2], 'MINID', string.format('%d-0', first))
    redis.call('HSET', KEYS[1], 'first_event', string.format('%d', first),
      'first_hand', ARGV[i])
  end
  i = i + 1
  k = k + 1
  for _ = 2, trim do
    redis.call('DEL', KEYS[k])
    k = k + 1
  end
end
local close = tonumber(ARGV[i]); i = i + 1
if close > 0 then
  -- watchers still read the closing events during the grace; then everything goes
  local grace = tonumber(ARGV[i])
  local keep = tonumber(ARGV[i + 2])
  redis.call('HSET', KEYS[1], 'closed', ARGV[i + 1])
  redis.call('EXPIRE', KEYS[1], grace)
  redis.call('EXPIRE', KEYS[2], keep > 0 and keep or grace)
  redis.call('DEL', KEYS[3])
  i = i + 3
  for _ = 2, close do
    if keep > 0 then
      redis.call('EXPIRE', KEYS[k], keep)
    else
      redis.call('DEL', KEYS[k])
    end
    k = k + 1
  end
end
local deadline = ARGV[i]; i = i + 1
if deadline == 'sync' then
  if moved then
    if ARGV[5] == '' then
      redis.call('ZREM', KEYS[k], ARGV[i])
    else
      redis.call('ZADD', KEYS[k], ARGV[5], ARGV[i])
    end
  end
  i = i + 1
  k = k + 1
elseif deadline == 'del' then
  redis.call('ZREM', KEYS[k], ARGV[i])
  i = i + 1
  k = k + 1
end
if ARGV[i] == 'del' then
  redis.call('ZREM', KEYS[k], ARGV[i + 1])
  i = i + 2
  k = k + 1
else
  i = i + 1
end
local relisted = 0
local listing = ARGV[i]
if listing == 'none' then
  i = i + 1
else
  local member = ARGV[i + 2]
  if (redis.call('HGET', KEYS[1], 'listing') or '') ~= ARGV[i + 1] then
    relisted = 4
    redis.call('HSET', KEYS[1], 'listing', ARGV[i + 1])
    if listing == 'list' then
      local old = redis.call('HGET', KEYS[k + 1], ARGV[i + 3])
      if old then
        redis.call('ZREM', KEYS[k], old)
      end
      if member == '' then
        redis.call('HDEL', KEYS[k + 1], ARGV[i + 3])
      else
        redis.call('ZADD', KEYS[k], 0, member)
        redis.call('HSET', KEYS[k + 1], ARGV[i + 3], member)
      end
    end
  end
  if listing == 'list' then
    i = i + 4
    k = k + 2
  else
    i = i + 3
  end
end
local hsets = tonumber(ARGV[i]); i = i + 1
for _ = 1, hsets do
  redis.call('HSET', KEYS[k], ARGV[i], ARGV[i + 1])
  i = i + 2
  k = k + 1
end
local done = 1 + relisted
if moved then
  done = 2 + relisted
end
if #notes > 0 then
  table.insert(notes, 1, done)
  return notes
end
return done
