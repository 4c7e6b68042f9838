-- needs: ledger_lib
-- Charges the account and writes the task in one step; nothing is written when the charge does not fit.
-- KEYS: account, ledger, ledgerRefs, task
-- ARGV: accountId, amountMicros, reference, at, taskJson, ledger cutoff ('' = keep all)
local result = ledger_post(KEYS[1], KEYS[2], KEYS[3], ARGV[1], 'charge', tonumber(ARGV[2]), ARGV[3], tonumber(ARGV[4]),
  false, tonumber(ARGV[6]))
if result[1] == 'applied' or result[1] == 'duplicate' then
  redis.call('SET', KEYS[4], ARGV[5], 'NX')
  return 'created'
end
return result[1]
