-- Shared by every script that changes a key in a way a replica's key gate must hear of (revoked today; expiry,
-- rotation and budgets next): the loader prepends this file to scripts that declare "-- needs: key_events".
-- A replica that reads an event drops whatever it holds locally for the key's hash (src/store/redis/key-events.ts).
-- `seq` numbers the events 1, 2, 3, ... so that a reader who finds a gap (the stream trimmed past its position, or
-- deleted and begun again) knows it missed some and drops everything it holds instead.
local function emit_key_event(stream, maxlen, kind, hash, key_id)
  local seq = 1
  local last = redis.call('XREVRANGE', stream, '+', '-', 'COUNT', 1)[1]
  if last then
    local fields = last[2]
    for i = 1, #fields, 2 do
      if fields[i] == 'seq' then
        seq = (tonumber(fields[i + 1]) or 0) + 1
      end
    end
  end
  return redis.call('XADD', stream, 'MAXLEN', '~', maxlen, '*',
    'seq', seq, 'type', kind, 'hash', hash, 'keyId', key_id)
end
