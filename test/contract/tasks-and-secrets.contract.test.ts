import type { Store } from '../../src/store';
import type { TaskRecord } from '../../src/tasks/types';
import { accountTag } from '../../src/ids';
import { OPTIONS, storeAdapters } from './stores';

const adapters = storeAdapters();
/** A task id of `accountId`'s, as TaskService makes them (its account's tag first: one Redis Cluster slot). */
const tid = (suffix: string, accountId = 'acct_1') => `task_${accountTag(accountId)}${suffix}`;

function task(overrides: Partial<TaskRecord> = {}): TaskRecord {
  return {
    taskId: tid('1'),
    accountId: 'acct_1',
    keyId: 'key_1',
    model: 'image-gen',
    state: 'pending',
    requestType: 'async',
    provider: 'auto',
    prepared: {
      input: { prompt: 'x' },
      chargeMicros: 300,
      output: { kind: 'image' },
      polling: { firstPollSeconds: 30, intervalSeconds: 10 },
    },
    createTime: 1000,
    ...overrides,
  };
}

/** `acct_1` with 1000 micro-USD. */
async function fundedAccount(store: Store): Promise<void> {
  await store.accounts.createAccount({
    accountId: 'acct_1',
    name: 'a',
    createdAt: 1,
    webhookScheme: 'genway',
  });
  await store.accounts.post({
    accountId: 'acct_1',
    kind: 'credit',
    amountMicros: 1000,
    reference: 'c',
    at: 1,
  });
}

describe.each(adapters.map((a) => [a.name, a] as const))('TaskStore contract (%s)', (_name, adapter) => {
  let store: Store;
  beforeEach(async () => {
    store = adapter.create();
    await fundedAccount(store);
  });
  afterEach(async () => {
    await store.close();
    await adapter.cleanup();
  });

  test('charge and create are one step; a charge that does not fit writes nothing', async () => {
    expect(await store.tasks.createWithCharge(task())).toEqual({ status: 'created' });
    expect(await store.tasks.get(tid('1'))).toEqual(task());
    expect(await store.accounts.balanceMicros('acct_1')).toBe(700);
    expect(
      await store.tasks.createWithCharge(
        task({ taskId: tid('2'), prepared: { ...task().prepared, chargeMicros: 701 } }),
      ),
    ).toEqual({ status: 'insufficient_balance' });
    expect(await store.tasks.get(tid('2'))).toBeNull();
    expect(await store.accounts.balanceMicros('acct_1')).toBe(700);
    expect(
      await store.tasks.createWithCharge(task({ taskId: tid('3', 'acct_nope'), accountId: 'acct_nope' })),
    ).toEqual({ status: 'unknown_account' });
  });

  test('concurrent creations never overdraw', async () => {
    const results = await Promise.all(
      Array.from({ length: 10 }, (_, i) => store.tasks.createWithCharge(task({ taskId: tid(`c${i}`) }))),
    );
    expect(results.filter((r) => r.status === 'created')).toHaveLength(3);
    expect(await store.accounts.balanceMicros('acct_1')).toBe(100);
  });

  test('list: newest first by (createTime, id), paged below a cursor, filtered, time-bounded', async () => {
    const page = (limit: number, extra = {}) => ({ limit, ...extra });
    // Two with the same createTime: the id breaks the tie.
    for (const [i, at] of [
      [1, 100],
      [2, 200],
      [3, 200],
      [4, 300],
    ] as const)
      await store.tasks.createWithCharge(
        task({ taskId: tid(`l${i}`), createTime: at, prepared: { ...task().prepared, chargeMicros: 1 } }),
      );
    const all = await store.tasks.list('acct_1', page(10), () => true);
    expect(all.items.map((t) => t.taskId)).toEqual([tid('l4'), tid('l3'), tid('l2'), tid('l1')]);
    expect(all.next).toBeNull();
    const first = await store.tasks.list('acct_1', page(2), () => true);
    expect(first.items.map((t) => t.taskId)).toEqual([tid('l4'), tid('l3')]);
    const second = await store.tasks.list('acct_1', page(2, { cursor: first.next! }), () => true);
    expect(second.items.map((t) => t.taskId)).toEqual([tid('l2'), tid('l1')]);
    const matched = await store.tasks.list('acct_1', page(10), (t) => t.taskId === tid('l2'));
    expect(matched.items.map((t) => t.taskId)).toEqual([tid('l2')]);
    const window = await store.tasks.list('acct_1', page(10, { after: 100, before: 300 }), () => true);
    expect(window.items.map((t) => t.taskId)).toEqual([tid('l3'), tid('l2')]);
    expect((await store.tasks.list('acct_2', page(10), () => true)).items).toEqual([]);
  });

  test('task events reach a subscriber of that task only, until it unsubscribes', async () => {
    const heard: string[] = [];
    const stop = store.taskEvents.subscribe(tid('e1'), () => heard.push('e1'));
    store.taskEvents.subscribe(tid('e2'), () => heard.push('e2'));
    // Redis: the subscription is live once a publish to it is heard.
    for (let i = 0; i < 200 && !heard.length; i++) {
      await store.taskEvents.publish(tid('e1'));
      await new Promise((r) => setTimeout(r, 10));
    }
    expect(heard[0]).toBe('e1');
    stop();
    const before = heard.length;
    await store.taskEvents.publish(tid('e1'));
    await store.taskEvents.publish(tid('e2'));
    for (let i = 0; i < 200 && !heard.includes('e2'); i++) await new Promise((r) => setTimeout(r, 10));
    expect(heard.slice(before)).toEqual(['e2']);
  });

  test('replace is compare-and-set on the state', async () => {
    await store.tasks.createWithCharge(task());
    expect(await store.tasks.replace(task({ state: 'processing' }), ['pending'])).toBe(true);
    expect(await store.tasks.replace(task({ state: 'processing' }), ['pending'])).toBe(false);
    expect(
      await store.tasks.replace(task({ state: 'success', resultUrls: ['u'] }), ['pending', 'processing']),
    ).toBe(true);
    expect(await store.tasks.replace(task({ state: 'failed' }), ['pending', 'processing'])).toBe(false);
    expect((await store.tasks.get(tid('1')))?.state).toBe('success');
    expect(await store.tasks.replace(task({ taskId: tid('missing') }), ['pending'])).toBe(false);
  });

  test('a finished task is deleted once its retention after completion is over; an unfinished one stays', async () => {
    const short = adapter.create(undefined, { ...OPTIONS, taskRetentionMs: 200 });
    try {
      await fundedAccount(short);
      await short.tasks.createWithCharge(task({ taskId: tid('done') }));
      await short.tasks.createWithCharge(task({ taskId: tid('busy') }));
      const done = task({ taskId: tid('done'), state: 'success', completeTime: 2000, resultUrls: ['u'] });
      expect(await short.tasks.replace(done, ['pending'])).toBe(true);
      expect(await short.tasks.replace(task({ taskId: tid('busy'), state: 'processing' }), ['pending'])).toBe(
        true,
      );
      expect(await short.tasks.get(tid('done'))).toEqual(done); // still within its retention

      await new Promise((r) => setTimeout(r, 300)); // Redis expires by its clock
      // The memory store sweeps as tasks are written, by their own times: a task created after the retention.
      await short.tasks.createWithCharge(task({ taskId: tid('later'), createTime: 2000 + 200 }));
      expect(await short.tasks.get(tid('done'))).toBeNull();
      expect((await short.tasks.get(tid('busy')))?.state).toBe('processing');
      expect((await short.tasks.get(tid('later')))?.state).toBe('pending');
    } finally {
      await short.close();
    }
  });
});

describe.each(adapters.map((a) => [a.name, a] as const))(
  'WebhookSecretStore contract (%s)',
  (_name, adapter) => {
    let store: Store;
    beforeEach(() => {
      store = adapter.create();
    });
    afterEach(async () => {
      await store.close();
      await adapter.cleanup();
    });

    test('current creates version 1 once; rotate retires it; revoke retires all; versions only grow', async () => {
      const s = store.webhookSecrets;
      expect(await s.current('a', 'c1', 10)).toEqual({ version: 1, ciphertext: 'c1', createdAt: 10 });
      expect(await s.current('a', 'ignored', 11)).toEqual({ version: 1, ciphertext: 'c1', createdAt: 10 });
      expect(await s.rotate('a', 'c2', 20)).toEqual({ version: 2, ciphertext: 'c2', createdAt: 20 });
      expect(await s.get('a', 1)).toEqual({ version: 1, ciphertext: 'c1', createdAt: 10, retiredAt: 20 });
      expect(await s.revokedAt('a')).toBeNull();
      expect(await s.revoke('a', 30)).toBe(2);
      expect(await s.get('a', 2)).toEqual({ version: 2, ciphertext: 'c2', createdAt: 20, revokedAt: 30 });
      expect(await s.revokedAt('a')).toBe(30);
      expect((await s.current('a', 'c3', 40)).version).toBe(3);
      expect(await s.get('b', 1)).toBeNull();
    });

    test('two concurrent first uses get the same version 1', async () => {
      const [x, y] = await Promise.all([
        store.webhookSecrets.current('race', 'x', 1),
        store.webhookSecrets.current('race', 'y', 1),
      ]);
      expect(x).toEqual(y);
      expect(x.version).toBe(1);
    });
  },
);

describe.each(adapters.map((a) => [a.name, a] as const))(
  'DeliveryLogStore contract (%s)',
  (_name, adapter) => {
    let store: Store;
    beforeEach(() => {
      store = adapter.create();
    });
    afterEach(async () => {
      await store.close();
      await adapter.cleanup();
    });
    const did = (suffix: string) => `dlv_${accountTag('acct_1')}${suffix}`;
    const attempt = (suffix: string, at: number, status: 'delivered' | 'failed' = 'failed') => ({
      deliveryId: did(suffix),
      eventId: 'evt_1',
      accountId: 'acct_1',
      kind: 'callback' as const,
      url: 'https://example.com/hook',
      taskId: tid('1'),
      attempt: 1,
      at,
      status,
      httpStatus: status === 'failed' ? 503 : 200,
      latencyMs: 12,
      error: status === 'failed' ? 'HTTP 503' : null,
      body: '{"code":200}',
    });

    test('attempts are kept, found by id and listed newest first for their account only', async () => {
      const now = Date.now();
      await store.deliveryLog.record(attempt('a', now), 60_000);
      await store.deliveryLog.record(attempt('b', now + 1, 'delivered'), 60_000);
      expect(await store.deliveryLog.get(did('a'))).toEqual(attempt('a', now));
      const all = await store.deliveryLog.list('acct_1', { limit: 10 }, () => true, now + 2);
      expect(all.items.map((a) => a.deliveryId)).toEqual([did('b'), did('a')]);
      const delivered = await store.deliveryLog.list(
        'acct_1',
        { limit: 10 },
        (a) => a.status === 'delivered',
        now,
      );
      expect(delivered.items.map((a) => a.deliveryId)).toEqual([did('b')]);
      expect((await store.deliveryLog.list('acct_2', { limit: 10 }, () => true, now)).items).toEqual([]);
    });

    test('an attempt is gone once its retention is over', async () => {
      const now = Date.now();
      await store.deliveryLog.record(attempt('old', now), 50);
      await new Promise((r) => setTimeout(r, 80));
      await store.deliveryLog.record(attempt('new', Date.now()), 60_000);
      const listed = await store.deliveryLog.list('acct_1', { limit: 10 }, () => true, Date.now());
      expect(listed.items.map((a) => a.deliveryId)).toEqual([did('new')]);
      expect(await store.deliveryLog.get(did('old'))).toBeNull();
    });
  },
);
