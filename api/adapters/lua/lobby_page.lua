-- KEYS[1] a lobby shard (sorted set of members "<sort>.<ante>.<free>.<table id>",
-- every score 0, so ordered by their text)
-- ARGV: the member to start after ("": the first), the page's size, the lowest and
--       highest ante, the fewest free seats, the most members to walk
-- Returns {members that pass, the last member walked ("" for none), 1 if the shard
-- has nothing after it else 0}.
local limit = tonumber(ARGV[2])
local low, high = tonumber(ARGV[3]), tonumber(ARGV[4])
local free = tonumber(ARGV[5])
local budget = tonumber(ARGV[6])
local start = ARGV[1] == '' and '-' or '(' .. ARGV[1]
local found, last, walked = {}, ARGV[1], 0
local chunk = math.max(limit * 2, 64)
while walked < budget do
  local rows = redis.call('ZRANGEBYLEX', KEYS[1], start, '+', 'LIMIT', 0, chunk)
  for _, member in ipairs(rows) do
    walked = walked + 1
    last = member
    local ante = tonumber(string.sub(member, 5, 11))
    local seats = tonumber(string.sub(member, 13, 14))
    if ante >= low and ante <= high and seats >= free then
      found[#found + 1] = member
      if #found >= limit then
        return {found, last, 0}
      end
    end
    if walked >= budget then
      return {found, last, 0}
    end
  end
  if #rows < chunk then
    return {found, last, 1}
  end
  start = '(' .. last
end
return {found, last, 0}
