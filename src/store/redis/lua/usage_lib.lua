-- Usage rollups and budgets, shared by the scripts that post money (ledger_post, task_create) and the meter's
-- flushes (usage_add): the loader prepends this file to scripts that declare "-- needs: usage_lib".
-- A rollup row is one hash field holding the packed counters of src/accounts/usage.ts ROLLUP_FIELDS. The six rollup
-- hashes of a write come as one table, rk = {day total, day models, day keys, month total, month models, month keys}.
-- Budgets live in one hash per account: 'account' or 'key:<keyId>' -> 'period,limitMicros,softPercent,startsAt,endsAt'
-- (the last two for a fixed window), 'fired:<scope>' -> '<stamp>:<level>', the highest level already raised in that
-- period (1 soft, 2 hard), and for a window 'spent:<scope>' -> micro-USD posted inside it.
local USAGE_WIDTH = 9

local function usage_row(hash, field)
  local v = {}
  for i = 1, USAGE_WIDTH do
    v[i] = 0
  end
  local packed = redis.call('HGET', hash, field)
  if packed then
    local i = 1
    for n in string.gmatch(packed, '[^,]+') do
      v[i] = tonumber(n) or 0
      i = i + 1
    end
  end
  return v
end

local function usage_bump(hash, field, deltas)
  local v = usage_row(hash, field)
  local out = {}
  for i = 1, USAGE_WIDTH do
    out[i] = string.format('%.0f', v[i] + (tonumber(deltas[i]) or 0))
  end
  redis.call('HSET', hash, field, table.concat(out, ','))
end

local function usage_add(rk, model, key_id, deltas, day_ttl)
  for g = 0, 3, 3 do
    usage_bump(rk[g + 1], 't', deltas)
    usage_bump(rk[g + 2], model, deltas)
    usage_bump(rk[g + 3], key_id, deltas)
  end
  if day_ttl and day_ttl > 0 then
    for i = 1, 3 do
      redis.call('PEXPIRE', rk[i], day_ttl)
    end
  end
end

-- The budgets a posting of key_id counts against: {scope, spec} pairs.
local function budget_specs(budgets_key, key_id)
  local out = {}
  local specs = redis.call('HMGET', budgets_key, 'account', 'key:' .. key_id)
  if specs[1] then
    out[#out + 1] = {'account', specs[1]}
  end
  if specs[2] then
    out[#out + 1] = {'key:' .. key_id, specs[2]}
  end
  return out
end

local function split_spec(spec)
  local out = {}
  for field in string.gmatch(spec .. ',', '([^,]*),') do
    out[#out + 1] = field
  end
  return out
end

-- A budget's state at `at`: its spec, the period it is in and what was spent in it. `active` is false for a window
-- `at` is outside of (it then neither refuses nor raises anything).
local function budget_state(budgets_key, rk, scope, spec, day_stamp, month_stamp, at)
  local f = split_spec(spec)
  local period, limit, soft = f[1], tonumber(f[2]), f[3]
  local soft_percent = cjson.null
  if soft and soft ~= '' then
    soft_percent = tonumber(soft)
  end
  local st = {scope = scope, period = period, limitMicros = limit, softPercent = soft_percent, active = true}
  if period == 'window' then
    st.startsAt = tonumber(f[4])
    st.endsAt = tonumber(f[5])
    st.stamp = f[4]
    st.spentMicros = tonumber(redis.call('HGET', budgets_key, 'spent:' .. scope) or '0')
    st.active = at >= st.startsAt and at < st.endsAt
    return st
  end
  local daily = period == 'day'
  local base = daily and 0 or 3
  local row
  if scope == 'account' then
    row = usage_row(rk[base + 1], 't')
  else
    row = usage_row(rk[base + 3], string.sub(scope, 5))
  end
  st.stamp = daily and day_stamp or month_stamp
  st.spentMicros = row[7] + row[9]
  return st
end

local function budget_level(st)
  if st.spentMicros >= st.limitMicros then
    return 2
  end
  if st.softPercent ~= cjson.null and st.spentMicros * 100 >= st.limitMicros * st.softPercent then
    return 1
  end
  return 0
end

-- The first budget a charge of `amount` would take over its limit, or nil.
local function budget_refusal(budgets_key, rk, key_id, amount, day_stamp, month_stamp, at)
  for _, b in ipairs(budget_specs(budgets_key, key_id)) do
    local st = budget_state(budgets_key, rk, b[1], b[2], day_stamp, month_stamp, at)
    if st.active and st.spentMicros + amount > st.limitMicros then
      return st
    end
  end
  return nil
end

-- Budgets that reached a level not yet raised in their period (each is then marked raised): a level's event once
-- per budget and period, the soft one too when a posting jumps past both.
local function budget_events(budgets_key, rk, key_id, account_id, day_stamp, month_stamp, at)
  local events = {}
  for _, b in ipairs(budget_specs(budgets_key, key_id)) do
    local st = budget_state(budgets_key, rk, b[1], b[2], day_stamp, month_stamp, at)
    local level = 0
    if st.active then
      level = budget_level(st)
    end
    if level > 0 then
      local fired = redis.call('HGET', budgets_key, 'fired:' .. b[1]) or ''
      local fired_stamp, fired_level = string.match(fired, '^(.*):(%d+)$')
      local raised = fired_stamp == st.stamp and tonumber(fired_level) or 0
      if raised < level then
        redis.call('HSET', budgets_key, 'fired:' .. b[1], st.stamp .. ':' .. level)
        st.accountId = account_id
        -- A posting that jumps past both levels raises the soft one too, first (each still once per period).
        if level == 2 and raised == 0 and st.softPercent ~= cjson.null then
          local soft = {}
          for k, v in pairs(st) do
            soft[k] = v
          end
          soft.level = 'soft'
          events[#events + 1] = soft
        end
        st.level = level == 2 and 'hard' or 'soft'
        events[#events + 1] = st
      end
    end
  end
  return events
end

-- A posting's rollup row: spend (and a task's request) on the source's columns; a refund takes spend back.
local function posting_deltas(source, kind, amount)
  local d = {0, 0, 0, 0, 0, 0, 0, 0, 0}
  local signed = amount
  if kind == 'refund' then
    signed = -amount
  end
  if source == 'gateway' then
    d[7] = signed
  else
    d[9] = signed
    if kind == 'charge' then
      d[8] = 1
    end
  end
  return d
end

-- After a posting was applied: its rollup rows, then the budget events it raised (a JSON array, or '').
local function usage_after_posting(budgets_key, rk, entry_json, key_id, model, source, account_id, day_stamp,
                                   month_stamp, day_ttl)
  local entry = cjson.decode(entry_json)
  if entry.kind == 'credit' then
    return ''
  end
  local deltas = posting_deltas(source, entry.kind, entry.amountMicros)
  usage_add(rk, model, key_id, deltas, day_ttl)
  -- A fixed window counts what is posted inside it.
  for _, b in ipairs(budget_specs(budgets_key, key_id)) do
    local f = split_spec(b[2])
    if f[1] == 'window' and entry.at >= tonumber(f[4]) and entry.at < tonumber(f[5]) then
      redis.call('HINCRBY', budgets_key, 'spent:' .. b[1], deltas[7] + deltas[9])
    end
  end
  local events = budget_events(budgets_key, rk, key_id, account_id, day_stamp, month_stamp, entry.at)
  if #events == 0 then
    return ''
  end
  return cjson.encode(events)
end
