-- One step per request for a key whose record the caller has cached: is it still there and not revoked, and may
-- it spend `cost` tokens? KEYS: key record (keyByHash), bucket   ARGV: ratePerSec, burst, cost
-- Returns {-1} unknown, {-2} revoked, else take_tokens' {allowed (0|1), retryAfterMs, remaining}.

-- Token bucket on the server's clock (TIME), so every replica shares one notion of time.
local function take_tokens(bucket, rate, burst, cost)
  local t = redis.call('TIME')
  local now = tonumber(t[1]) * 1000 + tonumber(t[2]) / 1000
  local state = redis.call('HMGET', bucket, 'tokens', 'ts')
  local tokens = tonumber(state[1]) or burst
  local ts = tonumber(state[2]) or now
  if now > ts then
    tokens = math.min(burst, tokens + (now - ts) * rate / 1000)
  end
  local allowed = 0
  local retry = 0
  if tokens >= cost then
    tokens = tokens - cost
    allowed = 1
  else
    retry = math.ceil((cost - tokens) * 1000 / rate)
  end
  redis.call('HSET', bucket, 'tokens', tostring(tokens), 'ts', tostring(now))
  redis.call('PEXPIRE', bucket, math.ceil(burst * 1000 / rate) + 1000)
  return {allowed, retry, math.floor(tokens)}
end

if redis.call('EXISTS', KEYS[1]) == 0 then
  return {-1}
end
if redis.call('HEXISTS', KEYS[1], 'revokedAt') == 1 then
  return {-2}
end
return take_tokens(KEYS[2], tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3]))
