-- needs: usage_lib
-- The account's budgets with what was spent in each one's current period.
-- KEYS: budgets, then the six rollup hashes of now   ARGV: day stamp, month stamp, now (ms)
-- Returns a JSON array of budget states ('[]' when there are none).
local rk = {KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6], KEYS[7]}
local all = redis.call('HGETALL', KEYS[1])
local out = {}
for i = 1, #all, 2 do
  local field = all[i]
  if field == 'account' or string.sub(field, 1, 4) == 'key:' then
    out[#out + 1] = budget_state(KEYS[1], rk, field, all[i + 1], ARGV[1], ARGV[2], tonumber(ARGV[3]))
  end
end
if #out == 0 then
  return '[]'
end
return cjson.encode(out)
