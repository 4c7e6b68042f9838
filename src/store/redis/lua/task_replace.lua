-- Compare-and-set of a task: writes ARGV[2] only if the stored task's state is one of ARGV[1] (comma-separated).
-- KEYS: task
local current = redis.call('GET', KEYS[1])
if not current then
  return 0
end
local state = cjson.decode(current).state
for allowed in string.gmatch(ARGV[1], '[^,]+') do
  if allowed == state then
    redis.call('SET', KEYS[1], ARGV[2])
    return 1
  end
end
return 0
