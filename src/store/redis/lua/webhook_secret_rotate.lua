-- Retires the current webhook secret (it keeps signing its batches through the grace period) and makes a new one.
-- KEYS: webhookSecrets hash   ARGV: ciphertext, at
local current = redis.call('HGET', KEYS[1], 'current')
if current then
  local old = cjson.decode(redis.call('HGET', KEYS[1], 'v:' .. current))
  old.retiredAt = tonumber(ARGV[2])
  redis.call('HSET', KEYS[1], 'v:' .. current, cjson.encode(old))
end
local version = redis.call('HINCRBY', KEYS[1], 'max', 1)
local record = cjson.encode({ version = version, ciphertext = ARGV[1], createdAt = tonumber(ARGV[2]) })
redis.call('HSET', KEYS[1], 'v:' .. version, record, 'current', version)
return record
