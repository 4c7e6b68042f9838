-- needs: ledger_lib, usage_lib
-- KEYS: account, ledger, ledgerRefs, budgets, then the six rollup hashes (day total, models, keys; month the same)
-- ARGV: accountId, kind, amountMicros, reference, at, atMost ("1": a charge takes what the balance holds),
--       ledger cutoff (entries before it are dropped; '' = keep all), keyId, model, source ('gateway' | 'tasks',
--       '' = no usage attribution), enforce ("1": refuse a charge that would go over a budget), day stamp,
--       month stamp, day rows' time to live (ms)
local rk = {KEYS[5], KEYS[6], KEYS[7], KEYS[8], KEYS[9], KEYS[10]}
local attributed = ARGV[10] ~= ''
local amount = tonumber(ARGV[3])
if attributed and ARGV[11] == '1' and ARGV[2] == 'charge' then
  local over = budget_refusal(KEYS[4], rk, ARGV[8], amount, ARGV[12], ARGV[13], tonumber(ARGV[5]))
  if over then
    return {'over_budget', cjson.encode(over)}
  end
end
local result = ledger_post(KEYS[1], KEYS[2], KEYS[3], ARGV[1], ARGV[2], amount, ARGV[4], tonumber(ARGV[5]),
  ARGV[6] == '1', tonumber(ARGV[7]))
if result[1] == 'applied' and attributed then
  result[3] = usage_after_posting(KEYS[4], rk, result[2], ARGV[8], ARGV[9], ARGV[10], ARGV[1], ARGV[12], ARGV[13],
    tonumber(ARGV[14]))
end
return result
