-- Revokes every webhook secret version of the account; returns the highest version so far.
-- KEYS: webhookSecrets hash   ARGV: at
local max = tonumber(redis.call('HGET', KEYS[1], 'max') or '0')
for v = 1, max do
  local json = redis.call('HGET', KEYS[1], 'v:' .. v)
  if json then
    local record = cjson.decode(json)
    if not record.revokedAt then
      record.revokedAt = tonumber(ARGV[1])
      redis.call('HSET', KEYS[1], 'v:' .. v, cjson.encode(record))
    end
  end
end
redis.call('HDEL', KEYS[1], 'current')
redis.call('HSET', KEYS[1], 'revokedAt', ARGV[1])
return max
