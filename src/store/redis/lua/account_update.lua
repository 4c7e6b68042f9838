-- Changes fields of an existing account; never creates one (a PATCH of an unknown account is a 404, not a stub).
-- KEYS: account hash   ARGV: field, value, field, value ...
-- Returns {name, createdAt, webhookScheme, budgetWebhookUrl} after the change, or {} when there is no such account.
-- An empty value removes the field.
if redis.call('EXISTS', KEYS[1]) == 0 then
  return {}
end
for i = 1, #ARGV, 2 do
  if ARGV[i + 1] == '' then
    redis.call('HDEL', KEYS[1], ARGV[i])
  else
    redis.call('HSET', KEYS[1], ARGV[i], ARGV[i + 1])
  end
end
return redis.call('HMGET', KEYS[1], 'name', 'createdAt', 'webhookScheme', 'budgetWebhookUrl')
