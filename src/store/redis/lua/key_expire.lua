-- needs: key_events
-- Brings a key's expiry forward (never later than one it has; a rotation's grace) and tells every replica's key
-- gate through the key-event stream in the same step.
-- KEYS: key record (keyByHash), key events   ARGV: expiresAt, hash, keyId, stream maxlen
-- Returns the key's fields (record, revokedAt, expiresAt, lastUsedAt) after the change, or {} when there is none.
if redis.call('EXISTS', KEYS[1]) == 0 then
  return {}
end
local current = tonumber(redis.call('HGET', KEYS[1], 'expiresAt'))
local wanted = tonumber(ARGV[1])
if current == nil or wanted < current then
  redis.call('HSET', KEYS[1], 'expiresAt', ARGV[1])
  emit_key_event(KEYS[2], ARGV[4], 'expiry', ARGV[2], ARGV[3])
end
return redis.call('HMGET', KEYS[1], 'record', 'revokedAt', 'expiresAt', 'lastUsedAt')
