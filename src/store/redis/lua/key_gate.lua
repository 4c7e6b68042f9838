-- needs: token_bucket_lib
-- One step per request for a key whose record the caller has cached: is it still there and not revoked, and may
-- it spend `cost` tokens? KEYS: key record (keyByHash), bucket   ARGV: ratePerSec, burst, cost
-- Returns {-1} unknown, {-2} revoked, else take_tokens' {allowed, retryAfterMs, remaining}.
if redis.call('EXISTS', KEYS[1]) == 0 then
  return {-1}
end
if redis.call('HEXISTS', KEYS[1], 'revokedAt') == 1 then
  return {-2}
end
return take_tokens(KEYS[2], tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3]))
