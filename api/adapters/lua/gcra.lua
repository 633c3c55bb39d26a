-- KEYS[1] the bucket; ARGV[1] window in ms, ARGV[2] requests per window
-- returns {allowed (1/0), remaining, retry after ms, reset ms}
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local window = tonumber(ARGV[1])
local interval = window / tonumber(ARGV[2])
local tat = tonumber(redis.call('GET', KEYS[1]) or '0')
if tat < now then
  tat = now
end
local new_tat = tat + interval
if new_tat - window > now then
  return {0, 0, math.ceil(new_tat - window - now), math.ceil(tat - now)}
end
redis.call('SET', KEYS[1], string.format('%.3f', new_tat), 'PX', math.ceil(new_tat - now) + 1)
local remaining = math.floor((now + window - new_tat) / interval)
return {1, remaining, 0, math.ceil(new_tat - now)}
