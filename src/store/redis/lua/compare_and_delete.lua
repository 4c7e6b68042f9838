-- Deletes KEYS[1] only if it still holds ARGV[1] (releasing a claim without clobbering a newer owner).
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('DEL', KEYS[1])
end
return 0
