-- Changes fields of an existing account; never creates one (a PATCH of an unknown account is a 404, not a stub).
-- KEYS: account hash   ARGV: field, value, field, value ...
-- Returns {name, createdAt, webhookScheme} after the change, or {} when there is no such account.
if redis.call('EXISTS', KEYS[1]) == 0 then
  return {}
end
if #ARGV > 0 then
  redis.call('HSET', KEYS[1], unpack(ARGV))
end
return redis.call('HMGET', KEYS[1], 'name', 'createdAt', 'webhookScheme')
