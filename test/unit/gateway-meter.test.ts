import { UsageMeter } from '../../src/gateway/meter';
import { createMetrics } from '../../src/observability/metrics';
import { createLogger } from '../../src/observability/logger';
import { MemoryUsageStore } from '../../src/store/memory/usage';
import type { ModelUsage } from '../../src/gateway/store';

/** A memory usage store whose next `failures` writes fail, as a Redis outage would. */
class FlakyUsageStore extends MemoryUsageStore {
  failures = 0;
  writes = 0;
  override async add(keyId: string, model: string, totals: ModelUsage): Promise<void> {
    this.writes++;
    if (this.failures > 0) {
      this.failures--;
      throw new Error('store unavailable');
    }
    await super.add(keyId, model, totals);
  }
}

const call = (input: number, output: number) => ({
  input,
  output,
  cacheRead: 0,
  cacheWrite: 0,
  reasoning: 0,
});

async function tokens(metrics: ReturnType<typeof createMetrics>): Promise<Record<string, number>> {
  const { values } = await metrics.gatewayTokens.get();
  return Object.fromEntries(values.map((v) => [`${v.labels.model}/${v.labels.type}`, v.value]));
}

/** The models the meter may name on /metrics (in Genway: the priced ones). */
const PRICED = new Set(['m', 'o', 'same']);

/** The rollups are the account store's (tested in the store contracts and the usage report tests). */
const noRollup = async () => undefined;
const KEY_1 = { keyId: 'key_1', accountId: 'acct_1' };

describe('UsageMeter', () => {
  const logger = createLogger({ log: { level: 'silent' } } as never);

  test('sums calls per key and model into one store write per flush, and counts tokens once', async () => {
    const store = new FlakyUsageStore();
    const metrics = createMetrics();
    const meter = new UsageMeter(store, noRollup, metrics, logger, 60_000, PRICED);
    for (let i = 0; i < 10; i++) meter.add('anthropic', KEY_1, 'm', call(3, 2));
    meter.add('openai', KEY_1, 'o', call(1, 1));
    expect(await store.get('key_1')).toEqual({}); // nothing written before a flush
    await meter.flush();
    expect(store.writes).toBe(2);
    expect(await store.get('key_1')).toEqual({
      m: { requests: 10, input: 30, output: 20, cacheRead: 0, cacheWrite: 0, reasoning: 0 },
      o: { requests: 1, input: 1, output: 1, cacheRead: 0, cacheWrite: 0, reasoning: 0 },
    });
    expect(await tokens(metrics)).toEqual({ 'm/input': 30, 'm/output': 20, 'o/input': 1, 'o/output': 1 });
    await meter.flush();
    expect(store.writes).toBe(2); // nothing pending: no write
  });

  test('one model name under two vendors: counted per vendor, added up in the key’s record', async () => {
    const store = new FlakyUsageStore();
    const metrics = createMetrics();
    const meter = new UsageMeter(store, noRollup, metrics, logger, 60_000, PRICED);
    meter.add('anthropic', KEY_1, 'same', call(3, 0));
    meter.add('openai', KEY_1, 'same', call(4, 0));
    await meter.flush();
    const { values } = await metrics.gatewayTokens.get();
    expect(values.map((v) => [v.labels.vendor, v.labels.type, v.value])).toEqual([
      ['anthropic', 'input', 3],
      ['openai', 'input', 4],
    ]);
    expect((await store.get('key_1')).same).toEqual({
      requests: 2,
      input: 7,
      output: 0,
      cacheRead: 0,
      cacheWrite: 0,
      reasoning: 0,
    });
  });

  test('flushes on its own after flushMs', async () => {
    const store = new FlakyUsageStore();
    const meter = new UsageMeter(store, noRollup, createMetrics(), logger, 20);
    meter.add('anthropic', KEY_1, 'm', call(1, 1));
    for (let i = 0; i < 100 && store.writes === 0; i++) await new Promise((r) => setTimeout(r, 10));
    expect((await store.get('key_1')).m.requests).toBe(1);
  });

  test('a failed write is put back and written by the next flush, without counting its tokens twice', async () => {
    const store = new FlakyUsageStore();
    const metrics = createMetrics();
    const meter = new UsageMeter(store, noRollup, metrics, logger, 60_000, PRICED);
    store.failures = 1;
    meter.add('anthropic', KEY_1, 'm', call(5, 5));
    await meter.flush();
    expect(await store.get('key_1')).toEqual({});
    meter.add('anthropic', KEY_1, 'm', call(1, 0));
    await meter.close();
    expect(await store.get('key_1')).toEqual({
      m: { requests: 2, input: 6, output: 5, cacheRead: 0, cacheWrite: 0, reasoning: 0 },
    });
    expect(await tokens(metrics)).toEqual({ 'm/input': 6, 'm/output': 5 });
  });

  test('model names clients choose do not become series: unknown names are counted as `other`', async () => {
    const store = new FlakyUsageStore();
    const metrics = createMetrics();
    const meter = new UsageMeter(store, noRollup, metrics, logger, 60_000, PRICED);
    for (let i = 0; i < 500; i++) meter.add('openai', KEY_1, `random-${i}`, call(1, 1));
    meter.add('openai', KEY_1, 'm', call(2, 0));
    await meter.flush();
    expect(await tokens(metrics)).toEqual({ 'other/input': 500, 'other/output': 500, 'm/input': 2 });
    // The key's own record keeps every name the client used.
    expect(Object.keys(await store.get('key_1'))).toHaveLength(501);
  });

  test('calls that alternate keys, models, vendors and days each land in their own sum, before and after a flush', async () => {
    const store = new FlakyUsageStore();
    const metrics = createMetrics();
    const rollups: { keyId: string; model: string; at: number; requests: number }[] = [];
    const meter = new UsageMeter(
      store,
      async (d) => void rollups.push({ keyId: d.keyId, model: d.model, at: d.at, requests: d.counts[0] }),
      metrics,
      logger,
      60_000,
      PRICED,
      { now: () => at },
    );
    const KEY_2 = { keyId: 'key_2', accountId: 'acct_1' };
    let at = Date.UTC(2026, 10, 26, 23, 59, 59);
    for (let i = 0; i < 3; i++) {
      meter.add('anthropic', KEY_1, 'm', call(1, 0));
      meter.add('anthropic', KEY_1, 'o', call(10, 0));
      meter.add('openai', KEY_1, 'm', call(100, 0));
      meter.add('anthropic', KEY_2, 'm', call(1000, 0));
    }
    at = Date.UTC(2026, 10, 27, 0, 0, 1); // the next UTC day: a sum of its own
    meter.add('openai', KEY_1, 'm', call(7, 0)); // the key's latest entry, but of the day before
    await meter.flush();
    expect(await store.get('key_1')).toMatchObject({
      m: { requests: 7, input: 3 + 300 + 7 },
      o: { requests: 3, input: 30 },
    });
    expect(await store.get('key_2')).toMatchObject({ m: { requests: 3, input: 3000 } });
    // The rollups are per day: key_1's m of the 26th (both vendors) and of the 27th apart.
    const m1 = rollups.filter((r) => r.keyId === 'key_1' && r.model === 'm');
    expect(m1.map((r) => [new Date(r.at).toISOString().slice(0, 10), r.requests]).sort()).toEqual([
      ['2026-11-26', 3],
      ['2026-11-26', 3],
      ['2026-11-27', 1],
    ]);
    // After a flush, the same key and model start a new sum (nothing is added to the one written).
    meter.add('openai', KEY_1, 'm', call(5, 0));
    await meter.flush();
    expect((await store.get('key_1')).m).toMatchObject({ requests: 8, input: 315 });
  });
});
