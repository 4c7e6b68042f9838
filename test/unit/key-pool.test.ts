import { loadConfig } from '../../src/config';
import { KeyPool, poolMembers, keyFingerprint } from '../../src/gateway/key-pool';
import { retryAfterOf } from '../../src/gateway/proxy';

const POLICY = {
  attempts: 3,
  backoffMs: 10,
  maxBackoffMs: 1000,
  cooldownMs: 30_000,
  failuresToCooldown: 2,
  refreshMs: 500,
};
const BASE = 'https://api.example.test';
const vendor = (extra: Record<string, unknown> = {}) =>
  loadConfig({ env: {}, overlay: { gateway: { openai: { baseUrl: BASE, apiKeys: [], ...extra } } } }).gateway
    .openai;
const raw = (headers: Record<string, string>) =>
  Object.entries(headers).flatMap(([k, v]) => [Buffer.from(k), Buffer.from(v)]);
const detail = { requestId: 'req_1', tryNo: 1 };

describe('pool members', () => {
  test('ids: configured, else derived from the key; fallbacks inherit the keys under their own ids', () => {
    const members = poolMembers(
      vendor({
        apiKeys: ['sk-one'],
        keys: [{ id: 'two', key: 'sk-two', weight: 2 }],
        fallbacks: [{ baseUrl: 'https://eu.example.test/v1/' }],
      }),
    );
    expect(members.map((m) => [m.id, m.weight, m.base])).toEqual([
      [expect.stringMatching(/^k-[0-9a-f]{12}$/), 1, BASE],
      ['two', 2, BASE],
      [expect.stringMatching(/^k-[0-9a-f]{12}@fallback1$/), 0, 'https://eu.example.test/v1'],
      ['two@fallback1', 0, 'https://eu.example.test/v1'],
    ]);
    // Objects remembered before pools had fallbacks name their key by the same fingerprint.
    expect(members[0].fingerprint).toBe(keyFingerprint('sk-one'));
    expect(members[2].fingerprint).not.toBe(members[0].fingerprint);
    expect(JSON.stringify(members.map((m) => [m.id, m.fingerprint]))).not.toContain('sk-');
  });

  test('the old shape (baseUrl and apiKeys) still loads', () => {
    expect(poolMembers(vendor({ apiKeys: ['a', 'b'] })).map((m) => m.weight)).toEqual([1, 1]);
  });

  test('a configured id names one key only', () => {
    expect(() =>
      vendor({
        keys: [{ id: 'same', key: 'k1' }],
        fallbacks: [{ baseUrl: 'https://eu.example.test', keys: [{ id: 'same', key: 'k2' }] }],
      }),
    ).toThrow('config: gateway.openai.keys: vendor key ids must differ');
  });
});

describe('KeyPool', () => {
  const pool = (extra: Record<string, unknown>) => new KeyPool('openai', vendor(extra), POLICY);

  test('smooth weighted round robin; standby keys only when no weighted key is left', () => {
    const p = pool({
      keys: [
        { id: 'a', key: 'ka', weight: 2 },
        { id: 'b', key: 'kb', weight: 1 },
      ],
      fallbacks: [{ baseUrl: 'https://backup.example.test', keys: [{ id: 's', key: 'ks' }] }],
    });
    expect(Array.from({ length: 6 }, () => p.first()!.id)).toEqual(['a', 'b', 'a', 'a', 'b', 'a']);
    const [a, b] = p.members;
    expect(p.next([a], Date.now())!.id).toBe('b');
    expect(p.next([a, b], Date.now())!.id).toBe('s');
    expect(p.next(p.members, Date.now())).toBeUndefined();
  });

  test('a 429 cools its key for retry-after; above the cap the next key goes at once', () => {
    const p = pool({
      keys: [
        { id: 'a', key: 'ka' },
        { id: 'b', key: 'kb' },
      ],
    });
    const [a] = p.members;
    expect(p.settle(a, 'rate_limited', { ...detail, retryAfterMs: 5000 })).toBe(0);
    expect(Array.from({ length: 3 }, () => p.first()!.id)).toEqual(['b', 'b', 'b']);
    // Cooling keys are not picked for a retry starting before the cooldown ends; after it, they are.
    expect(p.next([], Date.now() + 1000)!.id).toBe('b');
    expect(p.next([p.members[1]], Date.now() + 6000)!.id).toBe('a');
  });

  test('a short retry-after is waited out; without one the wait is the backoff', () => {
    const p = pool({
      keys: [
        { id: 'a', key: 'ka' },
        { id: 'b', key: 'kb' },
      ],
    });
    const [a, b] = p.members;
    expect(p.settle(a, 'rate_limited', { ...detail, retryAfterMs: 400 })).toBe(400);
    const wait = p.settle(b, 'server_error', { ...detail, tryNo: 2 })!;
    expect(wait).toBeGreaterThanOrEqual(10);
    expect(wait).toBeLessThanOrEqual(20);
  });

  test('5xx cool a key only after failuresToCooldown in a row; a success resets the count', () => {
    const p = pool({ keys: [{ id: 'a', key: 'ka' }] });
    const [a] = p.members;
    p.settle(a, 'server_error', detail);
    p.settle(a, 'ok', detail);
    p.settle(a, 'server_error', detail);
    expect(p.next([], Date.now())).toBe(a);
    p.settle(a, 'server_error', detail);
    expect(p.next([], Date.now())).toBeUndefined();
    // Every key cooling: a new request still goes to the key back first.
    expect(p.first()).toBe(a);
  });

  test('a connect error cools every key of that origin; timeouts and cuts are not retried', () => {
    const p = pool({
      keys: [
        { id: 'a', key: 'ka' },
        { id: 'b', key: 'kb' },
      ],
      fallbacks: [{ baseUrl: 'https://backup.example.test' }],
    });
    const [a] = p.members;
    expect(p.settle(a, 'connect_error', detail)).toBeGreaterThanOrEqual(0);
    expect(p.first()!.id).toBe('a@fallback1');
    expect(p.settle(p.members[2], 'timeout', detail)).toBeUndefined();
    expect(p.settle(p.members[2], 'error', detail)).toBeUndefined();
  });

  test('cooldowns from other replicas are taken in by key id', () => {
    const p = pool({
      keys: [
        { id: 'a', key: 'ka' },
        { id: 'b', key: 'kb' },
      ],
    });
    p.adopt('a', Date.now() + 10_000);
    p.adopt('unknown', Date.now() + 10_000);
    expect([p.first()!.id, p.first()!.id]).toEqual(['b', 'b']);
  });
});

describe('retry-after', () => {
  test('seconds, milliseconds (retry-after-ms wins), an HTTP date, or nothing usable', () => {
    expect(retryAfterOf(raw({ 'Retry-After': '7' }))).toBe(7000);
    expect(retryAfterOf(raw({ 'retry-after': '7', 'retry-after-ms': '250' }))).toBe(250);
    const inTen = new Date(Date.now() + 10_000).toUTCString();
    const ms = retryAfterOf(raw({ 'retry-after': inTen }))!;
    expect(ms).toBeGreaterThan(8000);
    expect(ms).toBeLessThanOrEqual(10_000);
    expect(retryAfterOf(raw({ 'retry-after': new Date(0).toUTCString() }))).toBe(0);
    expect(retryAfterOf(raw({ 'retry-after': 'soon' }))).toBeUndefined();
    expect(retryAfterOf(raw({}))).toBeUndefined();
  });
});
