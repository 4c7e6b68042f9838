-- Sets (or with '' removes) one budget of an account. A new spec may cross its thresholds afresh (the raised
-- levels are forgotten); a window's spend is kept only while the window is the same one.
-- KEYS: budgets   ARGV: scope ('account' | 'key:<keyId>'), packed budget or ''
local function window_of(spec)
  if not spec then
    return ''
  end
  local _, _, _, starts, ends = string.match(spec, '^([^,]*),([^,]*),([^,]*),([^,]*),([^,]*)$')
  return (starts or '') .. '-' .. (ends or '')
end
local old = redis.call('HGET', KEYS[1], ARGV[1])
redis.call('HDEL', KEYS[1], 'fired:' .. ARGV[1])
if ARGV[2] == '' or window_of(old) ~= window_of(ARGV[2]) then
  redis.call('HDEL', KEYS[1], 'spent:' .. ARGV[1])
end
if ARGV[2] == '' then
  redis.call('HDEL', KEYS[1], ARGV[1])
else
  redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
end
return 1
