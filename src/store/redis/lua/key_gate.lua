-- The key gate for a key whose record the caller has cached: is it still there and not revoked, and may it take
-- tokens from the key's bucket? Run per request (want = cost), or for a lease: up to `want` tokens that the
-- caller's replica then spends locally (src/store/redis/key-gate.ts).
-- KEYS: key record (keyByHash), bucket   ARGV: ratePerSec, burst, cost, want?, returned?
--   cost      tokens needed now: with fewer in the bucket nothing is taken (0 for a lease taken ahead of need)
--   want      tokens to take (>= cost, default cost); fewer, down to cost, when the bucket holds fewer
--   returned  unspent tokens of the caller's lapsed lease, put back first (the bucket never exceeds burst)
-- Returns {-1} unknown, {-2} revoked, {-3} expired, else {allowed (0|1), retryAfterMs, remaining, granted,
-- expiresAt}: allowed when `cost` tokens were there; retryAfterMs, when fewer than `want` were granted, the time
-- until max(cost, 1) more are; remaining the whole tokens left; granted (a string: cost may be fractional) the
-- tokens taken, 0 when refused; expiresAt the key's expiry ('' = none), so a lease is not spent past it.

-- Token bucket on the server's clock (TIME), so every replica shares one notion of time.
local function take_tokens(bucket, rate, burst, cost, want, returned)
  local t = redis.call('TIME')
  local now = tonumber(t[1]) * 1000 + tonumber(t[2]) / 1000
  local state = redis.call('HMGET', bucket, 'tokens', 'ts')
  local tokens = tonumber(state[1]) or burst
  local ts = tonumber(state[2]) or now
  if now > ts then
    tokens = math.min(burst, tokens + (now - ts) * rate / 1000)
  end
  tokens = math.min(burst, tokens + returned)
  local allowed = 0
  local granted = 0
  if tokens >= cost then
    allowed = 1
    granted = math.max(cost, math.min(want, math.floor(tokens)))
    tokens = tokens - granted
  end
  local retry = 0
  if granted < want then
    retry = math.max(0, math.ceil((math.max(cost, 1) - tokens) * 1000 / rate))
  end
  -- Written exactly (TIME has microseconds; %.17g keeps every bit of the tokens): tostring's 14 digits round the
  -- time to 0.1 ms, and at thousands of calls a second the rounding, credited on every refill, minted tokens. The
  -- clock never goes back here: a refill is only ever counted from the latest time written.
  redis.call('HSET', bucket, 'tokens', string.format('%.17g', tokens), 'ts', string.format('%.3f', math.max(now, ts)))
  redis.call('PEXPIRE', bucket, math.ceil(burst * 1000 / rate) + 1000)
  return {allowed, retry, math.floor(tokens), tostring(granted)}
end

if redis.call('EXISTS', KEYS[1]) == 0 then
  return {-1}
end
if redis.call('HEXISTS', KEYS[1], 'revokedAt') == 1 then
  return {-2}
end
local expires = redis.call('HGET', KEYS[1], 'expiresAt')
if expires then
  local t = redis.call('TIME')
  if tonumber(t[1]) * 1000 + tonumber(t[2]) / 1000 >= tonumber(expires) then
    return {-3}
  end
end
local cost = tonumber(ARGV[3])
local reply = take_tokens(KEYS[2], tonumber(ARGV[1]), tonumber(ARGV[2]), cost, tonumber(ARGV[4]) or cost,
  tonumber(ARGV[5]) or 0)
reply[5] = expires or ''
return reply
