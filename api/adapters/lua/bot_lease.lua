-- A computer player's lease (api/adapters/bots.py): KEYS[1] the lease, ARGV[1] "renew"
-- or "release", ARGV[2] the runner's token, ARGV[3] the lease's new length (ms).
-- Only the runner holding the lease may renew or end it; 1 if it did, 0 if not.
if redis.call("GET", KEYS[1]) ~= ARGV[2] then
  return 0
end
if ARGV[1] == "renew" then
  return redis.call("PEXPIRE", KEYS[1], ARGV[3])
end
return redis.call("DEL", KEYS[1])
