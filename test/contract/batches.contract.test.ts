import type { BatchRecord } from '../../src/batches/types';
import type { Store } from '../../src/store';
import { accountTag } from '../../src/ids';
import { storeAdapters } from './stores';

const adapters = storeAdapters();
/** A batch id of acct_1's, as BatchService makes them (its account's tag first: one Redis Cluster slot). */
const bid = (suffix: string) => `batch_${accountTag('acct_1')}${suffix}`;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function batch(overrides: Partial<BatchRecord> = {}): BatchRecord {
  const now = Date.now();
  return {
    batchId: bid('1'),
    accountId: 'acct_1',
    model: 'image-gen',
    idempotencyKey: 'idem-1',
    payloadHash: 'abc',
    createdAt: now,
    expiresAt: now + 60_000,
    items: [{ ordinal: 0, clientItemId: 'a', taskId: 'task_1', outcome: 'accepted' }],
    ...overrides,
  };
}

describe.each(adapters.map((a) => [a.name, a] as const))('BatchStore contract (%s)', (_name, adapter) => {
  let store: Store;
  beforeEach(() => {
    store = adapter.create();
  });
  afterEach(async () => {
    await store.close();
    await adapter.cleanup();
  });

  test('the first claim wins; a second while in flight is told so; after save it finds the batch', async () => {
    const now = Date.now();
    expect(await store.batches.claim('acct_1', 'idem-1', 60_000, now)).toEqual({ status: 'claimed' });
    expect(await store.batches.claim('acct_1', 'idem-1', 60_000, now)).toEqual({ status: 'in_flight' });
    await store.batches.save(batch(), now);
    expect(await store.batches.claim('acct_1', 'idem-1', 60_000, now)).toEqual({
      status: 'exists',
      batch: batch({ createdAt: expect.any(Number), expiresAt: expect.any(Number) }),
    });
    expect(await store.batches.get(bid('1'), now)).toMatchObject({
      batchId: bid('1'),
      items: [{ taskId: 'task_1' }],
    });
  });

  test('idempotency keys are per account', async () => {
    const now = Date.now();
    expect((await store.batches.claim('acct_1', 'k', 60_000, now)).status).toBe('claimed');
    expect((await store.batches.claim('acct_2', 'k', 60_000, now)).status).toBe('claimed');
  });

  test('concurrent claims of one key: exactly one is claimed', async () => {
    const now = Date.now();
    const results = await Promise.all(
      Array.from({ length: 10 }, () => store.batches.claim('acct_1', 'race', 60_000, now)),
    );
    expect(results.filter((r) => r.status === 'claimed')).toHaveLength(1);
    expect(results.filter((r) => r.status === 'in_flight')).toHaveLength(9);
  });

  test('a released claim can be claimed again; a lapsed claim too', async () => {
    expect((await store.batches.claim('acct_1', 'rel', 60_000, Date.now())).status).toBe('claimed');
    await store.batches.release('acct_1', 'rel');
    expect((await store.batches.claim('acct_1', 'rel', 50, Date.now())).status).toBe('claimed');
    await sleep(80);
    expect((await store.batches.claim('acct_1', 'rel', 50, Date.now())).status).toBe('claimed');
  });

  test('release never drops a saved batch', async () => {
    const now = Date.now();
    await store.batches.claim('acct_1', 'idem-1', 60_000, now);
    await store.batches.save(batch(), now);
    await store.batches.release('acct_1', 'idem-1');
    expect((await store.batches.claim('acct_1', 'idem-1', 60_000, now)).status).toBe('exists');
  });

  test("list: the account's live batches newest first, paged, filtered; expired ones leave it", async () => {
    const now = Date.now();
    for (const i of [1, 2, 3])
      await store.batches.save(
        batch({ batchId: bid(`l${i}`), idempotencyKey: `k${i}`, createdAt: now + i }),
        now,
      );
    await store.batches.save(
      batch({ batchId: bid('gone'), idempotencyKey: 'kg', createdAt: now, expiresAt: now + 50 }),
      now,
    );
    await sleep(80);
    const later = Date.now();
    const first = await store.batches.list('acct_1', { limit: 2 }, () => true, later);
    expect(first.items.map((b) => b.batchId)).toEqual([bid('l3'), bid('l2')]);
    const rest = await store.batches.list('acct_1', { limit: 2, cursor: first.next! }, () => true, later);
    expect(rest.items.map((b) => b.batchId)).toEqual([bid('l1')]);
    expect(rest.next).toBeNull();
    const one = await store.batches.list('acct_1', { limit: 5 }, (b) => b.batchId === bid('l2'), later);
    expect(one.items.map((b) => b.batchId)).toEqual([bid('l2')]);
  });

  test('a batch is gone after it expires', async () => {
    const now = Date.now();
    // A whole second of life: a loaded CI machine can take more than 60 ms between save and get.
    await store.batches.save(batch({ batchId: bid('short'), expiresAt: now + 1000 }), now);
    expect(await store.batches.get(bid('short'), now)).not.toBeNull();
    await sleep(1100);
    expect(await store.batches.get(bid('short'), Date.now())).toBeNull();
  });

  test('item keys bind once per account and can be released only by their task', async () => {
    const now = Date.now();
    const exp = now + 60_000;
    expect(await store.batches.claimItemKey('acct_1', 'item-a', 'task_1', exp, now)).toEqual({
      status: 'claimed',
    });
    expect(await store.batches.claimItemKey('acct_1', 'item-a', 'task_2', exp, now)).toEqual({
      status: 'exists',
      taskId: 'task_1',
    });
    expect(await store.batches.claimItemKey('acct_2', 'item-a', 'task_3', exp, now)).toEqual({
      status: 'claimed',
    });
    expect(await store.batches.findItemKey('acct_1', 'item-a', now)).toBe('task_1');
    await store.batches.releaseItemKey('acct_1', 'item-a', 'task_2');
    expect(await store.batches.findItemKey('acct_1', 'item-a', now)).toBe('task_1');
    await store.batches.releaseItemKey('acct_1', 'item-a', 'task_1');
    expect(await store.batches.findItemKey('acct_1', 'item-a', now)).toBeNull();
  });
});
