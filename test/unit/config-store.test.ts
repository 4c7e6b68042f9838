import { ConfigError, loadConfig } from '../../src/config';
import { redisTarget } from '../../src/store/redis/connection';

describe('store config: one Redis or Sentinel', () => {
  const base = { REDIS_URL: 'redis://:s3cret@127.0.0.1:6379/2', GENWAY_SECRETS_KEY: 'k'.repeat(16) };

  test('REDIS_URL alone is one Redis', () => {
    expect(redisTarget(loadConfig({ env: base }).store)).toBe('redis://:s3cret@127.0.0.1:6379/2');
  });

  test('REDIS_SENTINELS (comma-separated host:port) and REDIS_SENTINEL_NAME select Sentinel mode', () => {
    const config = loadConfig({
      env: { ...base, REDIS_SENTINELS: '10.0.0.1:26379, 10.0.0.2:26379', REDIS_SENTINEL_NAME: 'genway' },
    });
    expect(redisTarget(config.store)).toEqual({
      url: 'redis://:s3cret@127.0.0.1:6379/2',
      sentinels: ['10.0.0.1:26379', '10.0.0.2:26379'],
      sentinelName: 'genway',
    });
    expect(loadConfig({ env: { ...base, REDIS_SENTINELS: '10.0.0.1:26379' } }).store.sentinelName).toBe(
      'mymaster',
    );
  });

  test('a sentinel that is not host:port stops the start with one line naming the key', () => {
    expect(() => loadConfig({ env: { ...base, REDIS_SENTINELS: '10.0.0.1' } })).toThrow(ConfigError);
    expect(() => loadConfig({ env: { ...base, REDIS_SENTINELS: '10.0.0.1' } })).toThrow(
      /store\.sentinels\.0.*host:port/,
    );
  });
});
