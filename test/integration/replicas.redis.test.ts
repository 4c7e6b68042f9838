import request from 'supertest';
import { ApiError } from '../../src/errors';
import { describeRedis, dropPrefix, uniquePrefix } from '../helpers/redis';
import { createHarness, fundedKey, type TestHarness } from '../helpers/services';

describeRedis('two app instances on one Redis', () => {
  let prefix: string;
  let a: TestHarness;
  let b: TestHarness;
  beforeEach(() => {
    prefix = uniquePrefix('replicas');
    a = createHarness({
      redis: true,
      prefix,
      overlay: { rateLimits: { default: { ratePerSec: 0.01, burst: 6 } } },
    });
    b = createHarness({
      redis: true,
      prefix,
      overlay: { rateLimits: { default: { ratePerSec: 0.01, burst: 6 } } },
    });
  });
  afterEach(async () => {
    await a.close();
    await b.close();
    await dropPrefix(prefix);
  });

  test('50 concurrent charges from two instances at an account that can afford 20: exactly 20 succeed', async () => {
    const { accountId } = await a.services.accounts.createAccount('contended', 20);
    const outcomes = await Promise.allSettled(
      Array.from({ length: 50 }, (_, i) =>
        (i % 2 ? a : b).services.accounts.charge(accountId, 1_000_000, `task:concurrent-${i}`),
      ),
    );
    const ok = outcomes.filter((o) => o.status === 'fulfilled');
    const refused = outcomes.filter((o) => o.status === 'rejected') as PromiseRejectedResult[];
    expect(ok).toHaveLength(20);
    expect(refused).toHaveLength(30);
    for (const r of refused) expect((r.reason as ApiError).status).toBe(402);
    expect(await a.services.accounts.balanceUsd(accountId)).toBe(0);
    expect(await b.services.accounts.ledger(accountId)).toHaveLength(21);
  });

  test('a key created on one instance works on the other, and its rate limit is shared', async () => {
    const { auth } = await fundedKey(a.services, 3);
    const statuses: number[] = [];
    for (let i = 0; i < 8; i++) {
      const res = await request((i % 2 ? a : b).app)
        .get('/api/v1/apikeys/current-balance')
        .set('Authorization', auth);
      statuses.push(res.status);
    }
    expect(statuses).toEqual([200, 200, 200, 200, 200, 200, 429, 429]);
  });

  test('a key revoked through one instance is refused by the other', async () => {
    const { auth, keyId } = await fundedKey(a.services);
    await a.services.accounts.revokeKey(keyId);
    const res = await request(b.app).get('/api/v1/apikeys/current-balance').set('Authorization', auth);
    expect(res.status).toBe(401);
  });

  test('readiness reports the Redis store', async () => {
    expect((await request(a.app).get('/readyz')).body.data).toEqual({ status: 'ready', store: 'redis' });
  });
});
