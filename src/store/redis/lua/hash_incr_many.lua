-- Adds each (field, increment) pair of ARGV to the hash KEYS[1]: one round trip for a whole usage record.
for i = 1, #ARGV, 2 do
  redis.call('HINCRBY', KEYS[1], ARGV[i], ARGV[i + 1])
end
return 1
