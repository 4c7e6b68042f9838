-- Shared by every script that moves money: the loader prepends this file to scripts that declare
-- "-- needs: ledger_lib". A posting is idempotent per (kind, reference); a charge never overdraws. With
-- at_most, a charge the balance cannot cover takes what the balance holds (and records that amount).
-- Drops entries posted before cutoff from the front of the ledger (it is in posting order), their references with
-- them; a few per posting, so a backlog drains over the next postings without a long script.
local function ledger_trim(ledger_key, refs_key, cutoff)
  if not cutoff then
    return
  end
  for _ = 1, 8 do
    local first = redis.call('LINDEX', ledger_key, 0)
    if not first then
      return
    end
    local old = cjson.decode(first)
    if old.at >= cutoff then
      return
    end
    redis.call('LPOP', ledger_key)
    redis.call('HDEL', refs_key, old.kind .. ':' .. old.reference)
  end
end

local function ledger_post(account_key, ledger_key, refs_key, account_id, kind, amount, reference, at, at_most, cutoff)
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
  ledger_trim(ledger_key, refs_key, cutoff)
  return {'applied', entry}
end
