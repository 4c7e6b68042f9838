-- The account's current webhook secret, created (version max + 1) when there is none.
-- KEYS: webhookSecrets hash   ARGV: ciphertext, at
local current = redis.call('HGET', KEYS[1], 'current')
if current then
  return redis.call('HGET', KEYS[1], 'v:' .. current)
end
local version = redis.call('HINCRBY', KEYS[1], 'max', 1)
local record = cjson.encode({ version = version, ciphertext = ARGV[1], createdAt = tonumber(ARGV[2]) })
redis.call('HSET', KEYS[1], 'v:' .. version, record, 'current', version)
return record
