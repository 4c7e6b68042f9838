-- needs: token_bucket_lib
-- KEYS: bucket   ARGV: ratePerSec, burst, cost
return take_tokens(KEYS[1], tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3]))
