import fc from 'fast-check';
import { MemoryLogStore } from '../../src/logs/memory';
import { rowOfLine, RowLines } from '../../src/logs/row-line';
import type { RequestLogRow } from '../../src/logs/types';

const DAY = 86_400_000;

const row = (i: number, over: Partial<RequestLogRow> = {}): RequestLogRow => ({
  time: 1_800_000_000_000 + i,
  requestId: `r${i}`,
  accountId: `acct_${i % 3}`,
  keyId: `key_${i % 5}`,
  surface: 'gateway',
  method: 'POST',
  route: '/v1/messages',
  model: i % 2 ? 'claude' : 'gpt',
  upstream: 'anthropic',
  upstreamModel: 'claude-x',
  status: i % 7 === 0 ? 429 : 200,
  errorType: null,
  inputTokens: i,
  outputTokens: 2 * i,
  cachedTokens: 0,
  cacheWriteTokens: 0,
  reasoningTokens: null,
  costMicros: 10 * i,
  latencyMs: 1.5,
  ttfbMs: null,
  userAgent: 'agent/1 ü ✓',
  clientIp: '127.0.0.1',
  taskId: null,
  batchId: null,
  requestBytes: null,
  responseBytes: null,
  ...over,
});

/** A row's line, as the writer writes it into a batch. */
const rowLine = (r: RequestLogRow): string => RowLines.ofRows([r]).line(0);
/** How a line prints a duration (the latency's place, the 19th value; no value before it holds a comma). */
const durationText = (latencyMs: number): string => rowLine(row(1, { latencyMs })).split(',')[18];
/** What JSON.stringify makes of a row's values, NUL escapes dropped, read back. */
const asJson = (r: RequestLogRow): unknown =>
  JSON.parse(JSON.stringify(Object.values(r)).replace(/\\u0000/g, ''));

const store = (requestRows: number) =>
  new MemoryLogStore({
    requestRows,
    auditRows: 10,
    retentionDays: 30,
    auditRetentionDays: 30,
    bodyRetentionDays: 1,
  });

describe('the in-process request ring', () => {
  test('a row reads back exactly as taken, through its line', () => {
    const r = row(4, { errorType: 'rate_limited', ttfbMs: 0.25, taskId: 't', batchId: 'b', requestBytes: 9 });
    expect(rowOfLine(rowLine(r))).toEqual(r);
    // PostgreSQL's text holds no NUL: dropped for both stores alike; an escaped backslash before it stays.
    expect(rowOfLine(rowLine(row(1, { userAgent: 'a\u0000b\\\u0000' }))).userAgent).toBe('ab\\');
  });

  test('a line is the JSON array of the values, for any text and number', () => {
    const text = fc.option(fc.string({ unit: 'binary', maxLength: 12 }));
    // Whole numbers past 2^30 and durations to the µs are printed by Genway's own digits, not V8's.
    const number = fc.option(
      fc.oneof(
        fc.integer(),
        fc.double(),
        fc.maxSafeInteger(),
        fc.integer({ min: -1e9, max: 2 ** 31 }).map((n) => n / 1000),
      ),
    );
    const time = fc.oneof(fc.maxSafeNat(), fc.integer({ min: 1.7e12, max: 1.9e12 }));
    fc.assert(
      fc.property(text, text, number, number, time, (agent, model, tokens, latency, at) => {
        const r = row(1, {
          time: at,
          userAgent: agent,
          model,
          inputTokens: tokens,
          latencyMs: latency ?? 0,
          ttfbMs: latency,
        });
        const line = rowLine(r);
        expect(JSON.parse(line)).toEqual(asJson(r));
      }),
      { numRuns: 500 },
    );
  });

  test('rows written into a reused batch are the JSON arrays of their values, for any text and number', () => {
    // A small pool too, so runs of columns repeat from row to row, whole or with one column changed.
    const text = fc.option(
      fc.oneof(
        fc.string({ unit: 'binary', maxLength: 12 }),
        fc.string({ maxLength: 40 }),
        fc.constantFrom('a', 'b', 'é'),
      ),
    );
    const number = fc.option(
      fc.oneof(
        fc.integer(),
        fc.double(),
        fc.maxSafeInteger(),
        fc.constantFrom(0, -0, 2 ** 30 - 1, 2 ** 30, 2 ** 53 - 1, 2 ** 53, 1e21, 0.1),
        fc.integer({ min: -1e9, max: 2 ** 31 }).map((n) => n / 1000),
      ),
    );
    const time = fc.oneof(fc.maxSafeNat(), fc.integer({ min: 1.7e12, max: 1.9e12 }));
    const anyRow = fc
      .tuple(
        fc.array(text, { minLength: 11, maxLength: 11 }),
        fc.array(number, { minLength: 11, maxLength: 11 }),
        time,
      )
      .map(([t, n, at]) =>
        row(1, {
          time: at,
          requestId: t[0] ?? '',
          accountId: t[1],
          keyId: t[2],
          model: t[3],
          upstream: t[4],
          upstreamModel: t[5],
          errorType: t[6],
          userAgent: t[7],
          clientIp: t[8],
          taskId: t[9],
          batchId: t[10],
          status: n[0] ?? 200,
          inputTokens: n[1],
          outputTokens: n[2],
          cachedTokens: n[3],
          cacheWriteTokens: n[4],
          reasoningTokens: n[5],
          costMicros: n[6] ?? 0,
          latencyMs: n[7] ?? 0,
          ttfbMs: n[8],
          requestBytes: n[9],
          responseBytes: n[10],
        }),
      );
    // One batch for every run, emptied each time, as the writer reuses a sent batch's buffer.
    const direct = new RowLines(16); // grows as it fills
    fc.assert(
      fc.property(fc.array(anyRow, { maxLength: 8 }), (rows) => {
        direct.reset();
        for (const r of rows) direct.pushRow(r);
        expect(direct.jsonb()[0]).toBe(1);
        expect(JSON.parse(direct.json())).toEqual(rows.map(asJson));
        expect(direct.times).toEqual(rows.map((r) => r.time));
        // A reused batch writes each row as a fresh one does (a column's cached bytes are its own, not the buffer's).
        expect(direct.lines()).toEqual(rows.map(rowLine));
      }),
      { numRuns: 1000 },
    );
  });

  test('a duration prints as the number it is', () => {
    for (const [n, text] of [
      [1.05, '1.05'],
      [0.005, '0.005'],
      [12.3, '12.3'],
      [7, '7'],
      [0.12, '0.12'],
      [1.2345, '1.2345'],
    ] as const)
      expect(durationText(n)).toBe(text);
    fc.assert(
      fc.property(
        fc.oneof(
          fc.integer({ min: 0, max: 2 ** 31 }).map((n) => n / 1000),
          fc.double(),
        ),
        (n) => {
          expect(durationText(n)).toBe(Number.isFinite(n) ? JSON.stringify(n) : 'null');
        },
      ),
      { numRuns: 2000 },
    );
  });

  test("a batch of lines is their JSON array in bytes, after jsonb's version byte, whatever they hold and however many", () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.string({ unit: 'binary', maxLength: 40 }), fc.maxSafeNat()), { maxLength: 60 }),
        fc.array(fc.boolean(), { minLength: 60, maxLength: 60 }),
        (values, keep) => {
          const lines = values.map(([text, at]) => JSON.stringify([at, text]).replace(/\\u0000/g, ''));
          const times = values.map(([, at]) => at);
          const batch = new RowLines(16); // grows as it fills
          lines.forEach((line, i) => batch.push(line, times[i]));
          expect(batch.count).toBe(lines.length);
          expect(batch.times).toEqual(times);
          expect(batch.jsonb()[0]).toBe(1);
          expect(batch.jsonb().subarray(1).toString('utf8')).toBe(`[${lines.join(',')}]`);
          expect(batch.json()).toBe(`[${lines.join(',')}]`);
          expect(batch.lines()).toEqual(lines);
          const kept = batch.filter(keep);
          expect(kept.lines()).toEqual(lines.filter((_, i) => keep[i]));
          expect(kept.times).toEqual(times.filter((_, i) => keep[i]));
          expect(RowLines.of(lines, times).json()).toBe(batch.json());
        },
      ),
      { numRuns: 300 },
    );
  });

  test('keeps the newest rows in time order, pages newest first with filters, and finds a row by its id', async () => {
    const s = store(1000);
    // Arrival out of time order: a long call's row comes after later ones.
    for (const i of [1, 2, 4, 3, 5, 0, 6]) s.take(row(i));
    const all = await s.requests({}, 100);
    expect(all.rows.map((r) => r.requestId)).toEqual(['r6', 'r5', 'r4', 'r3', 'r2', 'r1', 'r0']);
    expect(all.next).toBeNull();
    const first = await s.requests({}, 3);
    expect(first.rows.map((r) => r.requestId)).toEqual(['r6', 'r5', 'r4']);
    const second = await s.requests({}, 3, first.next!);
    expect(second.rows.map((r) => r.requestId)).toEqual(['r3', 'r2', 'r1']);
    expect((await s.requests({ accountId: 'acct_1' }, 10)).rows.map((r) => r.requestId)).toEqual([
      'r4',
      'r1',
    ]);
    expect((await s.requests({ keyId: 'key_4' }, 10)).rows.map((r) => r.requestId)).toEqual(['r4']);
    expect((await s.requests({ accountId: 'acct_nobody' }, 10)).rows).toEqual([]);
    expect((await s.requests({ status: [400, 499] }, 10)).rows.map((r) => r.requestId)).toEqual(['r0']);
    expect(
      (await s.requests({ model: 'claude', accountId: 'acct_0' }, 10)).rows.map((r) => r.requestId),
    ).toEqual(['r3']);
    const from = row(2).time;
    const to = row(5).time;
    expect((await s.requests({ from, to }, 10)).rows.map((r) => r.requestId)).toEqual(['r4', 'r3', 'r2']);
    const one = await s.request(all.rows[2].logId);
    expect(one).toEqual({ ...row(4), logId: all.rows[2].logId, bodies: null });
    expect(await s.request('1.999')).toBeNull();
  });

  test('holds at most its capacity, forgetting the oldest, and lets their blocks go', async () => {
    const s = store(1000);
    for (let i = 0; i < 50_000; i++) s.take(row(i, { userAgent: 'x'.repeat(200) }));
    const page = await s.requests({}, 2000);
    expect(page.rows).toHaveLength(1000);
    expect(page.rows[0].requestId).toBe('r49999');
    expect(page.rows[999].requestId).toBe('r49000');
    // 50,000 rows went through blocks of 4096: only those holding the last 1000 rows remain.
    const ring = (s as unknown as { requestRing: { blocks: Map<number, unknown> } }).requestRing;
    expect(ring.blocks.size).toBeLessThanOrEqual(2);
  });

  test('kept bodies go with their row, and retention trims by time', async () => {
    const s = store(10);
    const bodies = {
      time: Date.now(),
      requestId: 'r1',
      accountId: 'acct_1',
      requestBody: '{}',
      responseBody: '{}',
    };
    s.take(row(1), bodies);
    s.take(row(2));
    const [second, first] = (await s.requests({}, 10)).rows;
    expect((await s.request(first.logId))!.bodies).toEqual(bodies);
    expect((await s.request(second.logId))!.bodies).toBeNull();
    await s.maintain(row(2).time + 30 * DAY);
    expect((await s.requests({}, 10)).rows.map((r) => r.requestId)).toEqual(['r2']);
    for (let i = 3; i < 30; i++) s.take(row(i));
    expect((await s.requests({}, 100)).rows).toHaveLength(10);
  });
});
