-- needs: ledger_lib, usage_lib
-- Charges the account and writes the task in one step, and indexes it for the account's task list; nothing is
-- written when the charge does not fit the balance or a budget of the key or the account.
-- KEYS: account, ledger, ledgerRefs, task, account's task index, budgets, then the six rollup hashes
-- ARGV: accountId, amountMicros, reference, at, taskJson, ledger cutoff ('' = keep all), index member,
--       index trim bound (members below it are dropped: their tasks expired long ago), keyId, model, day stamp,
--       month stamp, day rows' time to live (ms)
-- Returns {'created', budget events JSON or ''}, {'over_budget', budget JSON}, or {status}.
local rk = {KEYS[7], KEYS[8], KEYS[9], KEYS[10], KEYS[11], KEYS[12]}
local amount = tonumber(ARGV[2])
local over = budget_refusal(KEYS[6], rk, ARGV[9], amount, ARGV[11], ARGV[12], tonumber(ARGV[4]))
if over then
  return {'over_budget', cjson.encode(over)}
end
local result = ledger_post(KEYS[1], KEYS[2], KEYS[3], ARGV[1], 'charge', amount, ARGV[3], tonumber(ARGV[4]),
  false, tonumber(ARGV[6]))
if result[1] == 'applied' or result[1] == 'duplicate' then
  local events = ''
  if result[1] == 'applied' then
    events = usage_after_posting(KEYS[6], rk, result[2], ARGV[9], ARGV[10], 'tasks', ARGV[1], ARGV[11], ARGV[12],
      tonumber(ARGV[13]))
  end
  if redis.call('SET', KEYS[4], ARGV[5], 'NX') then
    redis.call('ZADD', KEYS[5], 0, ARGV[7])
    redis.call('ZREMRANGEBYLEX', KEYS[5], '-', '(' .. ARGV[8])
  end
  return {'created', events}
end
return {result[1]}
