-- Records when a key was last used (to the minute, written off the request path). Only an existing key's record
-- gets the field: a key deleted meanwhile is not brought back as a stub.
-- KEYS: key record (keyByHash)   ARGV: lastUsedAt (epoch ms)
if redis.call('EXISTS', KEYS[1]) == 1 then
  redis.call('HSET', KEYS[1], 'lastUsedAt', ARGV[1])
end
return 1
