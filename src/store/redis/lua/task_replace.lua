-- Compare-and-set of a task: writes ARGV[2] only if the stored task's state is one of ARGV[1] (comma-separated).
-- A task written in a final state expires ARGV[3] ms later (its retention).
-- KEYS: task
local current = redis.call('GET', KEYS[1])
if not current then
  return 0
end
local state = cjson.decode(current).state
for allowed in string.gmatch(ARGV[1], '[^,]+') do
  if allowed == state then
    local next_state = cjson.decode(ARGV[2]).state
    if next_state == 'success' or next_state == 'failed' then
      redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[3])
    else
      redis.call('SET', KEYS[1], ARGV[2])
    end
    return 1
  end
end
return 0
