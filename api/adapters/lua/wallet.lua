-- One step of a wallet's ledger, atomically, once per transfer id.
-- KEYS[1] wallet hash (posted, pending, issued, topped_day), KEYS[2] ledger list (JSON
-- entries, oldest first), KEYS[3] transfers hash (id -> "<state> <fingerprint>"),
-- KEYS[4] pending hash (id -> JSON {amount, table, expires}), KEYS[5] flows sorted set
-- (what the player's limits count: "<id> <tag> <amount>" by time), KEYS[6] limits hash
-- (effective: JSON {"<kind>:<window>": amount} of the limits that apply; excluded_until:
-- the end of a time-out or self-exclusion, Unix time or "forever"; session_limit: the
-- seconds a session may last; session_started: when the current one began)
-- ARGV: op, transfer id, amount, fingerprint, entry head (the entry's JSON up to its
--       balance), then per op: credit/debit "1" to count the amount as issued/redeemed
--       else "0"; reserve the pending JSON; top_up the day; then credit the balance
--       limit, reserve the time (Unix, Redis's clock) after which it is refused; then
--       the flow the limits count ("d" a deposit, "b" a buy-in or rebuy, both checked
--       against the limits first; "c" a cash-out; "" none)
-- ops: credit (to the wallet), debit (from it, never below zero), reserve (pending),
--      post (a pending transfer: debited), void (a pending transfer: released),
--      top_up (credit up to `amount` once a day)
-- Returns {outcome, posted, pending, the entry's position or "", the limit refused}:
-- outcome "done", "seen <state>" (the id was used already, by the same request),
-- "reused" (by another request), "insufficient", "limit", "expired", "over_limit" (a
-- player's limit: "<kind>:<window> <limit> <left> <resets at or ''>"), "excluded" (a
-- deposit or buy-in during a time-out or self-exclusion: its end), "session_limit" (a
-- buy-in once the session's time is up: when a new one may begin), "none".
local op, id, amount, fingerprint = ARGV[1], ARGV[2], tonumber(ARGV[3]), ARGV[4]
local posted = tonumber(redis.call('HGET', KEYS[1], 'posted') or '0')
local pending = tonumber(redis.call('HGET', KEYS[1], 'pending') or '0')

local position = ''
local flow = ARGV[8] or ''
local refused = ''

local function answer(outcome)
  return {outcome, string.format('%d', posted), string.format('%d', pending), position, refused}
end

local WINDOWS = {{'24h', 86400}, {'7d', 604800}, {'30d', 2592000}}
local LONGEST = 2592000

local function clock()
  local now = redis.call('TIME')
  return tonumber(now[1]) + tonumber(now[2]) / 1000000
end

-- the limit this flow of `amount` would pass, as "<slot> <limit> <left> <resets at>",
-- or nil: the tightest of the limits that apply (api/service/limits.py counts the same)
local function over_limit(now)
  local raw = redis.call('HGET', KEYS[6], 'effective')
  if not raw or (flow ~= 'd' and flow ~= 'b') then
    return nil
  end
  local limits = cjson.decode(raw)
  local rows = redis.call('ZRANGEBYSCORE', KEYS[5], '(' .. (now - LONGEST), '+inf', 'WITHSCORES')
  local worst, worst_left = nil, nil
  for _, window in ipairs(WINDOWS) do
    local name, seconds = window[1], window[2]
    local sums, oldest = {d = 0, b = 0, c = 0}, {}
    for r = 1, #rows, 2 do
      local at = tonumber(rows[r + 1])
      if at > now - seconds then
        local tag, value = string.match(rows[r], ' (%a) (%d+)$')
        sums[tag] = sums[tag] + tonumber(value)
        oldest[tag] = oldest[tag] or at
      end
    end
    local checks
    if flow == 'd' then
      checks = {{'deposit', sums.d, oldest.d}}
    else
      checks = {{'buy_in', sums.b, oldest.b}, {'loss', math.max(0, sums.b - sums.c), oldest.b}}
    end
    for _, check in ipairs(checks) do
      local slot = check[1] .. ':' .. name
      local limit = limits[slot]
      if limit then
        local left = math.max(0, limit - check[2])
        if amount > left and (worst_left == nil or left < worst_left) then
          local resets = check[3] and string.format('%.3f', check[3] + seconds) or ''
          worst = string.format('%s %d %d %s', slot, limit, left, resets)
          worst_left = left
        end
      end
    end
  end
  return worst
end

-- count the flow for the limits, forgetting flows past the longest window
local function note_flow(now)
  if flow == '' then
    return
  end
  redis.call('ZREMRANGEBYSCORE', KEYS[5], '-inf', now - LONGEST)
  redis.call('ZADD', KEYS[5], now, id .. ' ' .. flow .. ' ' .. string.format('%d', amount))
end

-- the time now, or nil and why not: a time-out or self-exclusion running (its end, or
-- "forever") or a limit the flow would pass
local DAY = 86400

local function check_limits()
  local now = clock()
  if flow == 'd' or flow == 'b' then
    local held = redis.call('HMGET', KEYS[6], 'excluded_until', 'session_limit', 'session_started')
    local excluded = held[1]
    if excluded and (excluded == 'forever' or tonumber(excluded) > now) then
      refused = excluded
      return nil, 'excluded'
    end
    -- a session's time limit reached: no buy-in until a day after the session began
    local limit, started = tonumber(held[2] or ''), tonumber(held[3] or '')
    if flow == 'b' and limit and started and now < started + DAY and now >= started + limit then
      refused = string.format('%.3f', started + DAY)
      return nil, 'session_limit'
    end
  end
  local over = over_limit(now)
  if over then
    refused = over
    return nil, 'over_limit'
  end
  return now
end

-- an entry: the balance after it appended; its position (1 = the oldest) kept with the id
local function enter(delta, state)
  posted = redis.call('HINCRBY', KEYS[1], 'posted', delta)
  position = string.format('%d',
    redis.call('RPUSH', KEYS[2], ARGV[5] .. string.format('%d', posted) .. '}'))
  redis.call('HSET', KEYS[3], id, state .. ' ' .. fingerprint .. ' ' .. position)
end

local seen = redis.call('HGET', KEYS[3], id)
local seen_state, seen_fingerprint
if seen then
  seen_state, seen_fingerprint, position = string.match(seen, '^(%S+) (%S+) ?(%d*)$')
end
if op == 'post' or op == 'void' then
  if not seen then
    return answer('none')
  end
  if seen_state ~= 'pending' then
    return answer('seen ' .. seen_state)
  end
  local held = cjson.decode(redis.call('HGET', KEYS[4], id))
  amount = tonumber(held['amount'])
  pending = redis.call('HINCRBY', KEYS[1], 'pending', -amount)
  redis.call('HDEL', KEYS[4], id)
  if op == 'post' then
    enter(-amount, 'posted')
  else
    redis.call('HSET', KEYS[3], id, 'voided ' .. fingerprint)
    -- a buy-in that never reached its table spent nothing
    redis.call('ZREM', KEYS[5], id .. ' b ' .. string.format('%d', amount))
  end
  return answer('done')
end

if seen then
  if seen_fingerprint ~= fingerprint then
    return answer('reused')
  end
  return answer('seen ' .. seen_state)
end

if op == 'top_up' then
  if redis.call('HGET', KEYS[1], 'topped_day') == ARGV[6] then
    return answer('none')
  end
  redis.call('HSET', KEYS[1], 'topped_day', ARGV[6])
  local short = amount - (posted - pending)
  if short <= 0 then
    return answer('none')
  end
  ARGV[5] = string.gsub(ARGV[5], '"amount":0,', '"amount":' .. string.format('%d', short) .. ',')
  enter(short, 'credited')
  redis.call('HINCRBY', KEYS[1], 'issued', short)
  return answer('done')
end

if op == 'credit' then
  if posted + amount > tonumber(ARGV[7]) then
    return answer('limit')
  end
  local now, why = check_limits()
  if not now then
    return answer(why)
  end
  enter(amount, 'credited')
  note_flow(now)
  if ARGV[6] == '1' then
    redis.call('HINCRBY', KEYS[1], 'issued', amount)
  end
  return answer('done')
end

if posted - pending < amount then
  return answer('insufficient')
end
if op == 'debit' then
  enter(-amount, 'debited')
  if ARGV[6] == '1' then
    redis.call('HINCRBY', KEYS[1], 'issued', -amount)
  end
  return answer('done')
end
if op == 'reserve' then
  -- a reservation past its time is refused: a sweeper may void its transfer already
  local now, why = check_limits()
  if not now then
    return answer(why)
  end
  if now >= tonumber(ARGV[7]) then
    return answer('expired')
  end
  note_flow(now)
  -- the first buy-in a day after the session began begins a new one
  local started = tonumber(redis.call('HGET', KEYS[6], 'session_started') or '')
  if not started or now >= started + DAY then
    redis.call('HSET', KEYS[6], 'session_started', string.format('%.3f', now))
  end
  pending = redis.call('HINCRBY', KEYS[1], 'pending', amount)
  redis.call('HSET', KEYS[4], id, ARGV[6])
  redis.call('HSET', KEYS[3], id, 'pending ' .. fingerprint)
  return answer('done')
end
return redis.error_reply('unknown wallet op ' .. op)
