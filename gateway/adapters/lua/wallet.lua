-- One step of a wallet's ledger, atomically, once per transfer id.
-- KEYS[1] wallet hash (posted, pending, issued, topped_day), KEYS[2] ledger list (JSON
-- entries, oldest first), KEYS[3] transfers hash (id -> "<state> <fingerprint>"),
-- KEYS[4] pending hash (id -> JSON {amount, table, expires})
-- ARGV: op, transfer id, amount, fingerprint, entry head (the entry's JSON up to its
--       balance), then per op: credit/debit "1" to count the amount as issued/redeemed
--       else "0"; reserve the pending JSON; top_up the day; then credit the balance
--       limit, reserve the time (Unix, Redis's clock) after which it is refused
-- ops: credit (to the wallet), debit (from it, never below zero), reserve (pending),
--      post (a pending transfer: debited), void (a pending transfer: released),
--      top_up (credit up to `amount` once a day)
-- Returns {outcome, posted, pending, the entry's position or ""}: outcome "done",
-- "seen <state>" (the id was
-- used already, by the same request), "reused" (by another request), "insufficient",
-- "limit", "expired", "none" (nothing to do).
local op, id, amount, fingerprint = ARGV[1], ARGV[2], tonumber(ARGV[3]), ARGV[4]
local posted = tonumber(redis.call('HGET', KEYS[1], 'posted') or '0')
local pending = tonumber(redis.call('HGET', KEYS[1], 'pending') or '0')

local position = ''

local function answer(outcome)
  return {outcome, string.format('%d', posted), string.format('%d', pending), position}
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
  enter(amount, 'credited')
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
  local now = redis.call('TIME')
  if tonumber(now[1]) + tonumber(now[2]) / 1000000 >= tonumber(ARGV[7]) then
    return answer('expired')
  end
  pending = redis.call('HINCRBY', KEYS[1], 'pending', amount)
  redis.call('HSET', KEYS[4], id, ARGV[6])
  redis.call('HSET', KEYS[3], id, 'pending ' .. fingerprint)
  return answer('done')
end
return redis.error_reply('unknown wallet op ' .. op)
