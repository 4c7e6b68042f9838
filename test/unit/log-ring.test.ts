import { MemoryLogStore } from '../../src/logs/memory';
import { logRow as row } from '../helpers/log-rows';

const DAY = 86_400_000;

const store = (requestRows: number) =>
  new MemoryLogStore({
    requestRows,
    auditRows: 10,
    retentionDays: 30,
    auditRetentionDays: 30,
    bodyRetentionDays: 1,
  });

describe('the in-process request ring', () => {
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
