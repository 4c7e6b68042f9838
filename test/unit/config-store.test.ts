import { ConfigError, loadConfig } from '../../src/config';
import { accountTag, idTag, newAccountId } from '../../src/ids';
import { redisKeys } from '../../src/store/keys';
import { isClusterTarget, redisTarget } from '../../src/store/redis/connection';

describe('store config: one Redis, Sentinel or Cluster', () => {
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

  test('REDIS_CLUSTER_NODES selects Cluster mode, whose keys carry hash tags', () => {
    const config = loadConfig({ env: { ...base, REDIS_CLUSTER_NODES: '10.0.0.1:6379,10.0.0.2:6379' } });
    const target = redisTarget(config.store);
    expect(target).toEqual({
      url: 'redis://:s3cret@127.0.0.1:6379/2',
      clusterNodes: ['10.0.0.1:6379', '10.0.0.2:6379'],
    });
    expect(isClusterTarget(target)).toBe(true);
    expect(isClusterTarget(redisTarget(loadConfig({ env: base }).store))).toBe(false);
  });

  test('sentinels and cluster nodes together stop the start', () => {
    expect(() =>
      loadConfig({
        env: { ...base, REDIS_SENTINELS: '10.0.0.1:26379', REDIS_CLUSTER_NODES: '10.0.0.1:6379' },
      }),
    ).toThrow(/store\.clusterNodes.*not both/);
  });
});

describe('Redis key layout', () => {
  const accountId = 'acct_3f9c0123456789abcdef0123456789ab';

  test('one Redis keeps the names Genway has always used', () => {
    const k = redisKeys('genway');
    expect(k.account(accountId)).toBe(`genway:account:${accountId}`);
    expect(k.task('task_3f9c00')).toBe('genway:task:task_3f9c00');
    expect(k.keyEvents).toBe('genway:key-events');
    expect(k.bullPrefix).toBe('genway:bull');
  });

  test("in a cluster an account's keys, tasks and batches share the account's tag; API keys share {keys}", () => {
    const k = redisKeys('genway', true);
    const taskId = newAccountId('task', accountId);
    const batchId = newAccountId('batch', accountId);
    expect(taskId).toMatch(/^task_3f9c[0-9a-f]{28}$/);
    expect(batchId).toMatch(/^batch_3f9c[0-9a-f]{28}$/);
    for (const key of [
      k.account(accountId),
      k.ledger(accountId),
      k.ledgerRefs(accountId),
      k.webhookSecrets(accountId),
      k.batchIdempotencyKey(accountId, 'h'),
      k.itemIdempotencyKey(accountId, 'h'),
      k.task(taskId),
      k.batch(batchId),
    ])
      expect(key).toMatch(/^genway:\{3f9c\}:/);
    for (const key of [
      k.keyByHash('h'),
      k.keyHashOf('key_1'),
      k.accountKeys(accountId),
      k.rateLimit('b'),
      k.keyEvents,
    ])
      expect(key).toMatch(/^genway:\{keys\}:/);
    expect(k.bullPrefix).toBe('{genway:bull}');
    // An account id of another form still gets a 4-hex tag, and its task ids carry it.
    expect(accountTag('legacy-account')).toMatch(/^[0-9a-f]{4}$/);
    expect(idTag(newAccountId('task', 'legacy-account'))).toBe(accountTag('legacy-account'));
  });
});

describe('server.publicUrl', () => {
  test.each([
    [{}, 'http://127.0.0.1:8080'],
    [{ PORT: '9090' }, 'http://127.0.0.1:9090'],
    [{ HOST: '0.0.0.0', PORT: '3000' }, 'http://127.0.0.1:3000'],
    [{ HOST: '::', PORT: '3000' }, 'http://[::1]:3000'],
    [{ HOST: '10.1.2.3' }, 'http://10.1.2.3:8080'],
    [{ PORT: '9090', GENWAY_PUBLIC_URL: 'https://genway.example.com' }, 'https://genway.example.com'],
  ])('%j gives %s', (env, expected) => {
    expect(loadConfig({ env }).server.publicUrl).toBe(expected);
  });
});
