-- Shared by every script that moves money: the loader prepends this file to scripts that declare
-- "-- needs: ledger_lib". A posting is idempotent per (kind, reference); a charge never overdraws. With
-- at_most, a charge the balance cannot cover takes what the balance holds (and records that amount).
local function ledger_post(account_key, ledger_key, refs_key, account_id, kind, amount, reference, at, at_most)
  if redis.call('EXISTS', account_key) == 0 then
    return {'unknown_account'}
  end
  local ref_field = kind .. ':' .. reference
  local previous = redis.call('HGET', refs_key, ref_field)
  if previous then
    return {'duplicate', previous}
  end
  local balance = tonumber(redis.call('HGET', account_key, 'balance') or '0')
  if kind == 'charge' then
    if at_most and balance > 0 and balance < amount then
      amount = balance
    end
    if balance < amount then
      return {'insufficient_balance', tostring(balance)}
    end
    balance = redis.call('HINCRBY', account_key, 'balance', -amount)
  else
    balance = redis.call('HINCRBY', account_key, 'balance', amount)
  end
  local entry = cjson.encode({
    accountId = account_id, kind = kind, amountMicros = amount, reference = reference,
    at = at, balanceAfterMicros = balance
  })
  redis.call('RPUSH', ledger_key, entry)
  redis.call('HSET', refs_key, ref_field, entry)
  return {'applied', entry}
end
