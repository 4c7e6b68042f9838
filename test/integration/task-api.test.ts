import request from 'supertest';
import { startReceiver } from '../helpers/receiver';
import { redisUrl, uniquePrefix, dropPrefix } from '../helpers/redis';
import { until } from '../helpers/failover-load';
import { createHarness, fundedKey, type TestHarness } from '../helpers/services';

/**
 * The task API past the spec: list, cancel and `Prefer: wait`, in both store modes (Redis when the suite has one).
 */
const modes: [string, boolean][] = [
  ['memory', false],
  ...(redisUrl ? [['redis', true] as [string, boolean]] : []),
];

describe.each(modes)('task API (%s)', (_mode, redis) => {
  let h: TestHarness;
  let auth: string;
  let accountId: string;
  const image = (prompt = 'a fox') => ({ input: { mode: 'text-to-image', prompt } });
  const submit = (body: object, a = auth, headers: Record<string, string> = {}) =>
    request(h.app).post('/api/v1/generateTask/image-gen').set('Authorization', a).set(headers).send(body);
  const list = (query: string, a = auth) =>
    request(h.app).get(`/api/v1/tasks?${query}`).set('Authorization', a);
  const cancel = (taskId: string, a = auth) =>
    request(h.app).post(`/api/v1/tasks/${taskId}/cancel`).set('Authorization', a);
  const status = (taskId: string, headers: Record<string, string> = {}) =>
    request(h.app)
      .get(`/api/v1/statusTask/image-gen?taskId=${taskId}`)
      .set('Authorization', auth)
      .set(headers);
  const balance = async () =>
    (await request(h.app).get('/api/v1/apikeys/current-balance').set('Authorization', auth)).body
      .data as number;

  beforeEach(async () => {
    h = createHarness({
      redis,
      overlay: {
        sandbox: { delayMs: 30 },
        security: { allowPrivateTargets: true },
        rateLimits: { default: { ratePerSec: 10_000, burst: 10_000 } },
      },
    });
    ({ auth, accountId } = await fundedKey(h.services, 100));
  });
  afterEach(() => h.close());

  describe('list', () => {
    test('newest first, paged by an opaque cursor, each task exactly once, only the own account', async () => {
      const ids: string[] = [];
      for (let i = 0; i < 23; i++) ids.push((await submit(image(`fox ${i}`))).body.data.taskId);
      const other = await fundedKey(h.services, 10);
      await submit(image(), other.auth);

      const seen: string[] = [];
      let cursor: string | null = null;
      let pages = 0;
      do {
        const res = await list(`limit=10${cursor ? `&cursor=${cursor}` : ''}`);
        expect(res.status).toBe(200);
        expect(res.body.code).toBe(200);
        seen.push(...res.body.data.items.map((t: { taskId: string }) => t.taskId));
        cursor = res.body.data.nextCursor;
        pages++;
      } while (cursor);
      expect(pages).toBe(3);
      expect(seen).toEqual([...ids].reverse());
      const first = (await list('limit=1')).body.data.items[0];
      expect(first).toMatchObject({
        taskId: ids[22],
        model: 'image-gen',
        requestType: 'async',
        chargeUsd: expect.any(Number),
        createTime: expect.any(Number),
      });
    });

    test('tasks created while a client pages never shift or repeat its later pages', async () => {
      const ids: string[] = [];
      for (let i = 0; i < 6; i++) ids.push((await submit(image())).body.data.taskId);
      const page1 = (await list('limit=3')).body.data;
      for (let i = 0; i < 4; i++) await submit(image());
      const page2 = (await list(`limit=3&cursor=${page1.nextCursor}`)).body.data;
      expect(page2.items.map((t: { taskId: string }) => t.taskId)).toEqual(ids.slice(0, 3).reverse());
    });

    test('filters by model, state, batchId and creation time', async () => {
      const a = (await submit(image())).body.data.taskId;
      const cancelled = (await submit(image('[sandbox:delay=60000] slow'))).body.data.taskId;
      await cancel(cancelled);
      const byState = (await list('state=failed')).body.data.items;
      expect(byState.map((t: { taskId: string }) => t.taskId)).toEqual([cancelled]);
      expect((await list('model=video-other')).body.data.items).toEqual([]);
      expect((await list('model=image-gen')).body.data.items).toHaveLength(2);
      expect((await list('batchId=batch_none')).body.data.items).toEqual([]);
      const aTask = (await list('limit=2')).body.data.items.find((t: { taskId: string }) => t.taskId === a);
      const after = (await list(`createdAfter=${aTask.createTime}`)).body.data.items;
      expect(after.map((t: { taskId: string }) => t.taskId)).not.toContain(a);
      const before = (await list(`createdBefore=${aTask.createTime + 1}`)).body.data.items;
      expect(before.map((t: { taskId: string }) => t.taskId)).toContain(a);
      const iso = new Date(aTask.createTime + 1).toISOString();
      expect(
        (await list(`createdBefore=${iso}`)).body.data.items.map((t: { taskId: string }) => t.taskId),
      ).toContain(a);
    });

    test.each([
      ['limit=0', 'query.limit: must be an integer from 1 to 100'],
      ['limit=101', 'query.limit: must be an integer from 1 to 100'],
      ['limit=ten', 'query.limit: must be an integer from 1 to 100'],
      ['state=done', 'query.state: must be one of pending, processing, success, failed'],
      ['cursor=bm9wZQ', 'query.cursor: not a cursor this list returned'],
      ['createdAfter=yesterday', 'query.createdAfter: must be epoch milliseconds or an ISO 8601 date-time'],
      ['colour=red', 'query: unknown field(s) colour'],
      ['limit=1&limit=2', 'query.limit: must be given once, as a string'],
    ])('%s is a 400 naming the field', async (query, message) => {
      const res = await list(query);
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ code: 400, message, data: null });
    });
  });

  describe('batches', () => {
    const batch = (key: string, n: number, model = 'image-gen') =>
      request(h.app)
        .post(`/api/v1/generateTask/${model}/batches`)
        .set('Authorization', auth)
        .set('Idempotency-Key', key)
        .send({
          items: Array.from({ length: n }, (_, i) => ({
            client_item_id: `item-${i}`,
            idempotency_key: `${key}-${i}`,
            input: { mode: 'text-to-image', prompt: `fox ${i}` },
          })),
        });

    test("GET /batches lists the account's batches newest first with item counts; tasks filter by batchId", async () => {
      const ids: string[] = [];
      for (let i = 0; i < 5; i++) ids.push((await batch(`b${i}`, 2)).body.data.batchId);
      const first = (await request(h.app).get('/api/v1/batches?limit=3').set('Authorization', auth)).body
        .data;
      expect(first.items.map((b: { batchId: string }) => b.batchId)).toEqual(ids.slice(2).reverse());
      expect(first.items[0]).toMatchObject({
        model: 'image-gen',
        itemCount: 2,
        createdAt: expect.any(Number),
      });
      const rest = (
        await request(h.app)
          .get(`/api/v1/batches?limit=3&cursor=${first.nextCursor}`)
          .set('Authorization', auth)
      ).body.data;
      expect(rest.items.map((b: { batchId: string }) => b.batchId)).toEqual(ids.slice(0, 2).reverse());
      expect(rest.nextCursor).toBeNull();
      const items = (await list(`batchId=${ids[1]}`)).body.data.items;
      expect(items.map((t: { clientItemId: string }) => t.clientItemId).sort()).toEqual(['item-0', 'item-1']);
      const other = await fundedKey(h.services, 10);
      expect(
        (await request(h.app).get('/api/v1/batches').set('Authorization', other.auth)).body.data.items,
      ).toEqual([]);
    });

    test('an unknown model is the same 400 for a batch as for a task', async () => {
      const res = await batch('unknown', 1, 'no-such-model');
      const single = await request(h.app)
        .post('/api/v1/generateTask/no-such-model')
        .set('Authorization', auth)
        .send(image());
      expect(res.status).toBe(400);
      expect(res.body).toEqual({
        code: 400,
        message: 'model: unknown model no-such-model (see GET /api/v1/models)',
        data: null,
      });
      expect(single.body).toEqual(res.body);
    });
  });

  describe('cancel', () => {
    test('an active task ends failed CANCELLED, refunded once, its callback sent', async () => {
      const receiver = await startReceiver();
      try {
        const before = await balance();
        const res = await submit({
          ...image('[sandbox:delay=60000] slow'),
          request_type: 'callback',
          callback_url: receiver.url,
        });
        const { taskId } = res.body.data;
        expect(await balance()).toBeLessThan(before);
        const cancelled = await cancel(taskId);
        expect(cancelled.status).toBe(200);
        expect(cancelled.body).toMatchObject({
          code: 200,
          message: 'success',
          data: {
            taskId,
            state: 'failed',
            failCode: 'CANCELLED',
            failMsg: 'Cancelled by the client',
            cancelled: true,
          },
        });
        expect(await balance()).toBe(before);
        const again = await cancel(taskId);
        expect(again.body).toMatchObject({
          code: 200,
          message: 'task is already failed; nothing changed',
          data: { cancelled: false, state: 'failed' },
        });
        await until(async () => receiver.received.length === 1, 10_000, 'the callback');
        const sent = JSON.parse(receiver.received[0].rawBody.toString());
        expect(sent.data).toMatchObject({ taskId, state: 'failed', failCode: 'CANCELLED' });
        const refunds = (await h.services.accounts.ledger(accountId)).filter((e) => e.kind === 'refund');
        expect(refunds.map((e) => e.reference)).toEqual([`task:${taskId}`]);
        expect((await status(taskId)).body.data).toMatchObject({ state: 'failed', failCode: 'CANCELLED' });
      } finally {
        await receiver.close();
      }
    });

    test("a finished task is left as it is; another account's is a 404", async () => {
      const { taskId } = (await submit(image())).body.data;
      await until(async () => (await status(taskId)).body.data.state === 'success', 10_000, 'success');
      const res = await cancel(taskId);
      expect(res.body).toMatchObject({
        message: 'task is already success; nothing changed',
        data: { cancelled: false, state: 'success' },
      });
      const other = await fundedKey(h.services, 10);
      const foreign = await cancel(taskId, other.auth);
      expect(foreign.status).toBe(404);
      expect(foreign.body.code).toBe(404);
      expect((await h.services.accounts.ledger(accountId)).filter((e) => e.kind === 'refund')).toEqual([]);
    });

    test('racing completion: one terminal state and one money movement per task', async () => {
      const before = await balance();
      const ids: string[] = [];
      for (let i = 0; i < 12; i++)
        ids.push((await submit(image(`[sandbox:delay=${20 + i * 5}] race`))).body.data.taskId);
      const outcomes = await Promise.all(
        ids.map((id, i) => new Promise((r) => setTimeout(r, i * 4)).then(() => cancel(id))),
      );
      for (const id of ids)
        await until(
          async () => ['success', 'failed'].includes((await status(id)).body.data.state),
          10_000,
          id,
        );
      const ledger = await h.services.accounts.ledger(accountId);
      let charged = 0;
      for (const [i, id] of ids.entries()) {
        const final = (await status(id)).body.data;
        const refunds = ledger.filter((e) => e.kind === 'refund' && e.reference === `task:${id}`);
        const charge = ledger.find((e) => e.kind === 'charge' && e.reference === `task:${id}`)!;
        if (final.state === 'failed') {
          expect(final.failCode).toBe('CANCELLED');
          expect(outcomes[i].body.data.cancelled).toBe(true);
          expect(refunds.map((e) => e.amountMicros)).toEqual([charge.amountMicros]);
        } else {
          expect(outcomes[i].body.data.cancelled).toBe(false);
          expect(refunds).toEqual([]);
          charged += charge.amountMicros;
        }
      }
      expect(Math.round((before - (await balance())) * 1_000_000)).toBe(charged);
    });
  });

  describe('webhook delivery log', () => {
    const deliveries = (query = '') =>
      request(h.app).get(`/api/v1/webhooks/deliveries?${query}`).set('Authorization', auth);

    test('each attempt is logged with status, latency and error; redeliver sends the same event again', async () => {
      const receiver = await startReceiver((n) => (n === 0 ? 503 : 200));
      try {
        const { taskId } = (
          await submit({ ...image(), request_type: 'callback', callback_url: receiver.url })
        ).body.data;
        // The first attempt fails (503); its retry is a minute away, so the log holds one failed attempt.
        await until(
          async () => (await deliveries()).body.data.items.length === 1,
          10_000,
          'the first attempt',
        );
        const [failed] = (await deliveries()).body.data.items;
        expect(failed).toMatchObject({
          deliveryId: expect.stringMatching(/^dlv_/),
          eventId: receiver.received[0].eventId,
          kind: 'callback',
          url: receiver.url,
          taskId,
          attempt: 1,
          status: 'failed',
          httpStatus: 503,
          error: 'HTTP 503',
          latencyMs: expect.any(Number),
          at: expect.any(Number),
        });
        expect(failed.body).toBeUndefined();

        const again = await request(h.app)
          .post(`/api/v1/webhooks/deliveries/${failed.deliveryId}/redeliver`)
          .set('Authorization', auth);
        expect(again.status).toBe(200);
        expect(again.body.data).toEqual({ deliveryId: failed.deliveryId, eventId: failed.eventId });
        await until(async () => receiver.received.length === 2, 10_000, 'the redelivery');
        expect(receiver.received[1].eventId).toBe(receiver.received[0].eventId);
        expect(receiver.received[1].rawBody.equals(receiver.received[0].rawBody)).toBe(true);
        await until(
          async () => (await deliveries('status=delivered')).body.data.items.length === 1,
          10_000,
          'the redelivery logged',
        );
        expect((await deliveries('status=delivered')).body.data.items[0]).toMatchObject({
          taskId,
          status: 'delivered',
          httpStatus: 200,
          error: null,
          redelivery: true,
        });
        expect((await deliveries(`taskId=${taskId}`)).body.data.items).toHaveLength(2);
        expect((await deliveries('taskId=task_other')).body.data.items).toEqual([]);
        const other = await fundedKey(h.services, 10);
        const foreign = await request(h.app)
          .post(`/api/v1/webhooks/deliveries/${failed.deliveryId}/redeliver`)
          .set('Authorization', other.auth);
        expect(foreign.status).toBe(404);
        expect(
          (await request(h.app).get('/api/v1/webhooks/deliveries').set('Authorization', other.auth)).body.data
            .items,
        ).toEqual([]);
      } finally {
        await receiver.close();
      }
    });

    test('a bad filter is a 400 naming it', async () => {
      const res = await deliveries('status=ok');
      expect(res.status).toBe(400);
      expect(res.body.message).toBe('query.status: must be one of delivered, failed, suppressed');
    });
  });

  describe('Prefer: wait', () => {
    test('submit answers once the task is terminal, with its status record', async () => {
      const started = Date.now();
      const res = await submit(image('[sandbox:delay=300] fox'), auth, { Prefer: 'wait=60' });
      expect(res.status).toBe(200);
      expect(res.headers['preference-applied']).toBe('wait=60');
      expect(res.body.data).toMatchObject({
        taskId: expect.any(String),
        state: 'success',
        resultJson: expect.any(String),
      });
      // Woken by the task's event: far short of the 60 s it would have held.
      expect(Date.now() - started).toBeLessThan(60_000);
    });

    test('status waits for a running task; the wait ends with the task still running when it is longer', async () => {
      const { taskId } = (await submit(image('[sandbox:delay=400] fox'))).body.data;
      const res = await status(taskId, { Prefer: 'respond-async, wait=30' });
      expect(res.body.data.state).toBe('success');
      const slow = (await submit(image('[sandbox:delay=60000] slow'))).body.data.taskId;
      const started = Date.now();
      const held = await status(slow, { Prefer: 'wait=1' });
      expect(held.body.data.state).toBe('processing');
      expect(Date.now() - started).toBeGreaterThanOrEqual(1000);
    });

    test.each(['wait=0', 'wait=61', 'wait=abc', 'wait'])(
      'Prefer: %s is a 400 naming the header',
      async (prefer) => {
        const res = await submit(image(), auth, { Prefer: prefer });
        expect(res.status).toBe(400);
        expect(res.body.message).toMatch(
          /^header Prefer: wait must be a whole number of seconds from 1 to 60/,
        );
        expect((await list('')).body.data.items).toEqual([]);
      },
    );
  });
});

(redisUrl ? describe : describe.skip)('Prefer: wait across replicas', () => {
  test('a wait on a replica without workers is woken by the worker replica finishing the task', async () => {
    const prefix = uniquePrefix('wait');
    const overlay = { sandbox: { delayMs: 30 } };
    const worker = createHarness({ redis: true, prefix, overlay });
    const api = createHarness({ redis: true, prefix, overlay, workers: false });
    try {
      const { auth } = await fundedKey(api.services, 10);
      const started = Date.now();
      const res = await request(api.app)
        .post('/api/v1/generateTask/image-gen')
        .set('Authorization', auth)
        .set('Prefer', 'wait=60')
        .send({ input: { mode: 'text-to-image', prompt: '[sandbox:delay=500] fox' } });
      expect(res.body.data.state).toBe('success');
      expect(Date.now() - started).toBeLessThan(60_000);
    } finally {
      await api.close();
      await worker.close();
      await dropPrefix(prefix);
    }
  });
});
