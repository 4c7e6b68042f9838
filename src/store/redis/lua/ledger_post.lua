-- needs: ledger_lib
-- KEYS: account, ledger, ledgerRefs
-- ARGV: accountId, kind, amountMicros, reference, at, atMost ("1": a charge takes what the balance holds),
--       ledger cutoff (entries before it are dropped; '' = keep all)
return ledger_post(KEYS[1], KEYS[2], KEYS[3], ARGV[1], ARGV[2], tonumber(ARGV[3]), ARGV[4], tonumber(ARGV[5]),
  ARGV[6] == '1', tonumber(ARGV[7]))
