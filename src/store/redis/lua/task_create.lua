-- needs: ledger_lib
-- Charges the account and writes the task in one step, and indexes it for the account's task list; nothing is
-- written when the charge does not fit.
-- KEYS: account, ledger, ledgerRefs, task, account's task index
-- ARGV: accountId, amountMicros, reference, at, taskJson, ledger cutoff ('' = keep all), index member,
--       index trim bound (members below it are dropped: their tasks expired long ago)
local result = ledger_post(KEYS[1], KEYS[2], KEYS[3], ARGV[1], 'charge', tonumber(ARGV[2]), ARGV[3], tonumber(ARGV[4]),
  false, tonumber(ARGV[6]))
if result[1] == 'applied' or result[1] == 'duplicate' then
  if redis.call('SET', KEYS[4], ARGV[5], 'NX') then
    redis.call('ZADD', KEYS[5], 0, ARGV[7])
    redis.call('ZREMRANGEBYLEX', KEYS[5], '-', '(' .. ARGV[8])
  end
  return 'created'
end
return result[1]
