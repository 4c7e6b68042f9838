import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { LogWriter } from '../../src/logs/writer';
import { LogSpill } from '../../src/logs/spill';
import { MemoryLogStore } from '../../src/logs/memory';
import type { RequestLogRow } from '../../src/logs/types';
import { createMetrics } from '../../src/observability/metrics';
import { createLogger } from '../../src/observability/logger';
import { settled } from '../helpers/eventually';

const quiet = createLogger({ log: { level: 'silent' } });

const row = (i: number, time = Date.now()): RequestLogRow => ({
  time,
  requestId: `r${i}`,
  accountId: 'acct_1',
  keyId: 'key_1',
  surface: 'gateway',
  method: 'POST',
  route: '/v1/messages',
  model: 'm',
  upstream: 'anthropic',
  upstreamModel: 'm',
  status: 200,
  errorType: null,
  inputTokens: 1,
  outputTokens: 1,
  cachedTokens: 0,
  cacheWriteTokens: 0,
  reasoningTokens: 0,
  costMicros: 0,
  latencyMs: 1,
  ttfbMs: 1,
  userAgent: null,
  clientIp: null,
  taskId: null,
  batchId: null,
  requestBytes: null,
  responseBytes: null,
});

const value = async (
  metrics: ReturnType<typeof createMetrics>,
  name: string,
  labels: Record<string, string>,
) => {
  const metric = (await metrics.registry.getMetricsAsJSON()).find((m) => m.name === name)!;
  const found = (metric.values as { value: number; labels: Record<string, string> }[]).find((v) =>
    Object.entries(labels).every(([k, l]) => v.labels[k] === l),
  );
  return found?.value ?? 0;
};

/** The in-process ring as embedded mode has it: a row the writer takes goes in at once. */
const ringStore = () =>
  new MemoryLogStore({
    requestRows: 1000,
    auditRows: 10,
    retentionDays: 1,
    auditRetentionDays: 1,
    bodyRetentionDays: 1,
  });

/** The in-process ring as a database would be: rows come to it in batches, through the writer's queue. */
function batchingStore(): MemoryLogStore {
  const store = ringStore();
  (store as { take?: unknown }).take = undefined;
  return store;
}

const options = { bufferRows: 100, batchRows: 10, flushMs: 60_000, oldestKept: () => 0 };

describe('the log writer', () => {
  test('a full queue drops rows and counts them; a push never waits, even with the store stuck', async () => {
    const store = batchingStore();
    // The store never answers: every batch handed to it stays in flight.
    store.insertCopy = () => new Promise(() => undefined);
    const metrics = createMetrics();
    const writer = new LogWriter(store, undefined, options, metrics, quiet);
    for (let i = 0; i < 250; i++) writer.pushRequest(row(i));
    // Every push returned (they are plain calls: none awaits the store, which never answers).
    // The first full batch only asked for a flush (on setImmediate, after this loop): 100 wait, 150 were dropped.
    expect(writer.depth.requests).toBe(100);
    expect(
      await value(metrics, 'genway_logs_rows_dropped_total', { table: 'requests', reason: 'overload' }),
    ).toBe(150);
  });

  test('batches are filled again once sent: every row arrives once, as pushed, batch after batch', async () => {
    const store = batchingStore();
    const sent: RequestLogRow[][] = [];
    const batches: unknown[] = [];
    const insert = store.insertCopy.bind(store);
    store.insertCopy = (id, copy, bodies) => {
      sent.push(copy.rows());
      batches.push(copy);
      return insert(id, copy, bodies);
    };
    const writer = new LogWriter(store, undefined, options, createMetrics(), quiet);
    try {
      for (let round = 0; round < 4; round++) {
        for (let i = 0; i < 25; i++) writer.pushRequest(row(round * 100 + i));
        await writer.flush();
      }
      // 25 rows a round: batches of 10, 10 and 5, three buffers reused by the rounds after the first.
      expect(sent.map((b) => b.length)).toEqual(Array.from({ length: 4 }, () => [10, 10, 5]).flat());
      const ids = sent.flat().map((r) => r.requestId);
      expect(ids).toEqual(
        Array.from({ length: 4 }, (_, round) =>
          Array.from({ length: 25 }, (_, i) => `r${round * 100 + i}`),
        ).flat(),
      );
      expect((await store.requests({}, 200)).rows).toHaveLength(100);
      // Twelve batches, six buffers: three new in the first round, then two filled again and one new in each round
      // after it (two are kept spare). Without reuse, twelve.
      expect(new Set(batches).size).toBe(6);
    } finally {
      await writer.close();
    }
  });

  test("gateway calls' rows wait 64 at most, then go together in order; a flush takes them whatever their number", async () => {
    // What the ring holds is what the writer took.
    const store = ringStore();
    const metrics = createMetrics();
    const writer = new LogWriter(store, undefined, options, metrics, quiet);
    const held = async () => (await store.requests({}, 200)).rows.map((r) => r.requestId).reverse();
    const ids = (from: number, to: number) => Array.from({ length: to - from }, (_, i) => `r${from + i}`);
    try {
      for (let i = 0; i < 63; i++) writer.pushCallRow(row(i));
      expect(writer.depth.requests).toBe(63);
      expect(await held()).toEqual([]);
      writer.pushCallRow(row(63));
      expect(await held()).toEqual(ids(0, 64));
      for (let i = 64; i < 69; i++) writer.pushCallRow(row(i));
      expect(await held()).toEqual(ids(0, 64));
      await writer.flush();
      expect(await held()).toEqual(ids(0, 69));
      expect(writer.depth.requests).toBe(0);
      // After the close, a row is dropped and counted at once, not left waiting.
      await writer.close();
      writer.pushCallRow(row(69));
      expect(writer.depth.requests).toBe(0);
      expect(
        await value(metrics, 'genway_logs_rows_dropped_total', { table: 'requests', reason: 'overload' }),
      ).toBe(1);
    } finally {
      await writer.close();
    }
  });

  test('a store that fails sends batches to the spill files, and once the store answers again (a write, or a ping when no row comes) they are replayed once', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'genway-spill-unit-'));
    const store = batchingStore();
    const insert = store.insertCopy.bind(store);
    let down = true;
    store.insertCopy = (id, copy, bodies) =>
      down ? Promise.reject(new Error('ECONNREFUSED')) : insert(id, copy, bodies);
    store.ping = () => (down ? Promise.reject(new Error('ECONNREFUSED')) : Promise.resolve());
    const metrics = createMetrics();
    const writer = new LogWriter(store, new LogSpill(dir, 1 << 20), options, metrics, quiet);
    try {
      for (let i = 0; i < 35; i++) writer.pushRequest(row(i));
      await writer.flush();
      expect(await value(metrics, 'genway_logs_rows_spilled_total', { table: 'requests' })).toBe(35);
      expect(fs.readdirSync(dir)).toHaveLength(1);
      down = false;
      // No new row comes (traffic stopped during the outage): a round of the writer past its retry delay finds the
      // store back. The delay is 250 ms after the first failure, longer when spilling took that long and the store
      // was tried (and failed) again: so rounds until then, not one after a fixed sleep.
      const expected = Array.from({ length: 35 }, (_, i) => `r${i}`).sort();
      const replayed = await settled(
        async () => {
          await writer.flush();
          return (await store.requests({}, 100)).rows.map((r) => r.requestId).sort();
        },
        expected,
        10_000,
      );
      expect(replayed).toEqual(expected);
      expect(await value(metrics, 'genway_logs_rows_replayed_total', { table: 'requests' })).toBe(35);
      expect(fs.readdirSync(dir)).toEqual([]);
    } finally {
      await writer.close();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  test('spill files of earlier versions (rows as objects, rows as value arrays) are replayed as well', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'genway-spill-unit-'));
    const store = batchingStore();
    const objects = {
      id: '00000000-0000-4000-8000-00000000000a',
      kind: 'requests',
      rows: [row(1, 1_800_000_000_001), row(2, 1_800_000_000_002)],
      bodies: [],
    };
    // The version before COPY: each row the array of its values, in the insert's column order.
    const values = {
      id: '00000000-0000-4000-8000-00000000000b',
      kind: 'requests',
      bodies: [],
      values: [row(3, 1_800_000_000_003)].map((r) => Object.values(r)),
    };
    const past = new Date(Date.now() - 60_000);
    for (const [name, batch] of [
      ['spill-gone-1-x-1.jsonl', objects],
      ['spill-gone-1-x-2.jsonl', values],
    ] as const) {
      fs.writeFileSync(path.join(dir, name), `${JSON.stringify(batch)}\n`);
      fs.utimesSync(path.join(dir, name), past, past);
    }
    try {
      const done = await new LogSpill(dir, 1 << 20).replay((batch) =>
        batch.kind === 'requests' ? store.insertCopy(batch.id, batch.copy, batch.bodies) : undefined!,
      );
      expect(done).toEqual({ requests: 3, audit: 0 });
      const page = await store.requests({}, 10);
      expect(page.rows.map(({ logId: _id, ...r }) => r)).toEqual([
        row(3, 1_800_000_000_003),
        row(2, 1_800_000_000_002),
        row(1, 1_800_000_000_001),
      ]);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  test('rows older than the retention are dropped and counted as expired, the rest written', async () => {
    const store = batchingStore();
    const metrics = createMetrics();
    const now = Date.now();
    const writer = new LogWriter(
      store,
      undefined,
      { ...options, oldestKept: () => now - 1000 },
      metrics,
      quiet,
    );
    for (let i = 0; i < 6; i++) writer.pushRequest(row(i, i % 2 ? now - 5000 : now));
    await writer.flush();
    const page = await store.requests({}, 100);
    expect(page.rows.map((r) => r.requestId).sort()).toEqual(['r0', 'r2', 'r4']);
    expect(
      await value(metrics, 'genway_logs_rows_dropped_total', { table: 'requests', reason: 'expired' }),
    ).toBe(3);
    await writer.close();
  });

  test('the spill cap: past logs.spillMaxBytes rows are dropped and counted as spill_full', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'genway-spill-unit-'));
    const store = batchingStore();
    store.insertCopy = () => Promise.reject(new Error('down'));
    const metrics = createMetrics();
    const writer = new LogWriter(store, new LogSpill(dir, 8000), options, metrics, quiet);
    try {
      for (let i = 0; i < 100; i++) writer.pushRequest(row(i));
      await writer.flush();
      const spilled = await value(metrics, 'genway_logs_rows_spilled_total', { table: 'requests' });
      const dropped = await value(metrics, 'genway_logs_rows_dropped_total', {
        table: 'requests',
        reason: 'spill_full',
      });
      expect(spilled).toBeGreaterThan(0);
      expect(spilled + dropped).toBe(100);
      expect(fs.statSync(path.join(dir, fs.readdirSync(dir)[0])).size).toBeLessThanOrEqual(8000);
    } finally {
      await writer.close();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
