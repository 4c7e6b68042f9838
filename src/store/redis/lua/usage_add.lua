-- needs: usage_lib
-- Adds counters (the usage meter's flush of one key and model) to the six rollup hashes of one account.
-- KEYS: day total, day models, day keys, month total, month models, month keys
-- ARGV: model, keyId, day rows' time to live (ms), then the counters in ROLLUP_FIELDS order
local deltas = {}
for i = 4, #ARGV do
  deltas[#deltas + 1] = ARGV[i]
end
usage_add(KEYS, ARGV[1], ARGV[2], deltas, tonumber(ARGV[3]))
return 1
