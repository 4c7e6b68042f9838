-- Vendor key cooldowns. KEYS[1]: hash `vendor:keyId` -> until (epoch ms on Redis's own clock, so replicas whose
-- clocks differ agree on how long a key rests). ARGV[1], ARGV[2] (optional): a field and a cooldown in ms to record,
-- unless one that ends later is held. Ended cooldowns are dropped and the hash expires with its last one.
-- Returns {field, remaining ms, ...} of the cooldowns still running.
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
if ARGV[1] then
  local untilMs = now + tonumber(ARGV[2])
  local held = tonumber(redis.call('HGET', KEYS[1], ARGV[1]) or '0')
  if held < untilMs then redis.call('HSET', KEYS[1], ARGV[1], untilMs) end
end
local all = redis.call('HGETALL', KEYS[1])
local out = {}
local last = 0
for i = 1, #all, 2 do
  local untilMs = tonumber(all[i + 1])
  if untilMs <= now then
    if ARGV[1] then redis.call('HDEL', KEYS[1], all[i]) end
  else
    out[#out + 1] = all[i]
    out[#out + 1] = untilMs - now
    if untilMs > last then last = untilMs end
  end
end
if ARGV[1] and last > now then redis.call('PEXPIRE', KEYS[1], last - now) end
return out
