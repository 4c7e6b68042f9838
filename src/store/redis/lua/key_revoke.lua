-- needs: key_events
-- Revokes a key (idempotent) and, the first time, tells every replica's key gate through the key-event stream, in
-- the same step: no replica can see the revocation in the record and miss the event, or the reverse.
-- KEYS: key record (keyByHash), key events   ARGV: revokedAt, hash, keyId, stream maxlen
-- Returns {record, revokedAt} after the change, or {} when there is no such record.
if redis.call('EXISTS', KEYS[1]) == 0 then
  return {}
end
if redis.call('HSETNX', KEYS[1], 'revokedAt', ARGV[1]) == 1 then
  emit_key_event(KEYS[2], ARGV[4], 'revoked', ARGV[2], ARGV[3])
end
return redis.call('HMGET', KEYS[1], 'record', 'revokedAt', 'expiresAt', 'lastUsedAt')
