import request from 'supertest';
import { createHarness, fundedKey, type TestHarness } from '../helpers/services';

/** image-gen, text-to-image, no quality (billed medium) at 1k: 0.0424 USD. */
const IMAGE_PRICE = 0.0424;
const input = (prompt = 'a red fox') => ({ mode: 'text-to-image', prompt });
const item = (n: number, extra: Record<string, unknown> = {}) => ({
  client_item_id: `c${n}`,
  idempotency_key: `k${n}`,
  input: input(`fox number ${n}`),
  ...extra,
});
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('batches', () => {
  let h: TestHarness;
  let auth: string;
  const batchUrl = '/api/v1/generateTask/image-gen/batches';
  const balance = async () =>
    (await request(h.app).get('/api/v1/apikeys/current-balance').set('Authorization', auth)).body
      .data as number;
  const submit = (body: unknown, key: string | null = 'idem-1') => {
    const req = request(h.app).post(batchUrl).set('Authorization', auth);
    return key === null ? req.send(body as object) : req.set('Idempotency-Key', key).send(body as object);
  };
  const waitForBatch = async (batchId: string, status: string) => {
    for (let i = 0; i < 200; i++) {
      const res = await request(h.app).get(`${batchUrl}/${batchId}`).set('Authorization', auth);
      if (res.body.data?.status === status) return res.body.data;
      await sleep(25);
    }
    throw new Error(`batch ${batchId} never reached ${status}`);
  };

  beforeEach(async () => {
    h = createHarness({ overlay: { sandbox: { delayMs: 50 }, security: { allowPrivateTargets: false } } });
    ({ auth } = await fundedKey(h.services, 10));
  });
  afterEach(() => h.close());

  describe('happy', () => {
    test('a batch is accepted item by item, in request order, with every field of the spec', async () => {
      const before = Date.now();
      const res = await submit({ items: [item(0), item(1), item(2)] });
      expect(res.status).toBe(200);
      expect(res.body.code).toBe(200);
      const data = res.body.data;
      expect(Object.keys(data).sort()).toEqual(
        [
          'batchExpiresAt',
          'batchId',
          'items',
          'model',
          'newlyAcceptedCount',
          'rejectedCount',
          'replayed',
          'reusedCount',
          'status',
        ].sort(),
      );
      expect(data).toMatchObject({
        model: 'image-gen',
        replayed: false,
        newlyAcceptedCount: 3,
        reusedCount: 0,
        rejectedCount: 0,
      });
      expect(data.batchId).toMatch(/^batch_[0-9a-f]{32}$/);
      expect(['queued', 'running']).toContain(data.status);
      expect(
        data.items.map((i: { ordinal: number; clientItemId: string; accepted: boolean }) => [
          i.ordinal,
          i.clientItemId,
          i.accepted,
        ]),
      ).toEqual([
        [0, 'c0', true],
        [1, 'c1', true],
        [2, 'c2', true],
      ]);
      for (const i of data.items) expect(i.taskId).toMatch(/^task_/);
      expect(data.batchExpiresAt).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d$/);
      const expires = Date.parse(`${data.batchExpiresAt}Z`);
      expect(expires).toBeGreaterThanOrEqual(Math.floor((before + 7 * 86_400_000) / 1000) * 1000);
      expect(expires).toBeLessThanOrEqual(Date.now() + 7 * 86_400_000);
      expect(await balance()).toBeCloseTo(10 - 3 * IMAGE_PRICE, 6);

      // accepted task ids work with the single-task status endpoint
      const status = await request(h.app)
        .get(`/api/v1/statusTask/image-gen?taskId=${data.items[1].taskId}`)
        .set('Authorization', auth);
      expect(status.body.data.taskId).toBe(data.items[1].taskId);

      const done = await waitForBatch(data.batchId, 'completed');
      expect(done.replayed).toBe(false);
      for (const i of done.items) {
        expect(i.status).toBe('succeeded');
        expect(i.result.taskId).toBe(i.taskId);
        expect(i.result.state).toBe('success');
        expect(JSON.parse(i.result.resultJson).resultUrls).toHaveLength(1);
      }
    });

    test('a failed item is terminal with failCode; the batch is completed', async () => {
      const res = await submit({
        items: [item(0), { ...item(1), input: input('[sandbox:fail=CONTENT_VIOLATION] fox') }],
      });
      const done = await waitForBatch(res.body.data.batchId, 'completed');
      expect(done.items[1]).toMatchObject({
        status: 'failed',
        result: { state: 'failed', failCode: 'CONTENT_VIOLATION' },
      });
      expect(typeof done.items[1].result.failMsg).toBe('string');
      expect(done.items[0].status).toBe('succeeded');
    });

    test('callback_url is ignored at the root, in an item and inside an item input', async () => {
      const res = await submit({
        callback_url: 'http://127.0.0.1/never',
        items: [
          { ...item(0), callback_url: 'http://127.0.0.1/never' },
          { ...item(1), input: { ...input(), callback_url: 'http://127.0.0.1/never' } },
        ],
      });
      expect(res.status).toBe(200);
      expect(res.body.data.newlyAcceptedCount).toBe(2);
    });
  });

  describe('items that are rejected', () => {
    test('an invalid item is rejected with error code and message, the rest proceed, nothing is charged for it', async () => {
      const res = await submit({
        items: [item(0), { ...item(1), input: { mode: 'text-to-image' } }, item(2)],
      });
      expect(res.status).toBe(200);
      expect(res.body.code).toBe(200);
      const rejected = res.body.data.items[1];
      expect(rejected).toEqual({
        ordinal: 1,
        clientItemId: 'c1',
        taskId: null,
        accepted: false,
        status: 'rejected',
        error: { code: 'invalid_parameter_value', message: expect.stringMatching(/^input\.prompt/) },
      });
      expect(res.body.data).toMatchObject({ newlyAcceptedCount: 2, rejectedCount: 1 });
      expect(await balance()).toBeCloseTo(10 - 2 * IMAGE_PRICE, 6);
    });

    test('a batch in which no item is accepted is completed_with_errors', async () => {
      const res = await submit({ items: [{ ...item(0), input: { mode: 'nope' } }] });
      expect(res.body.data.status).toBe('completed_with_errors');
      expect(res.body.data.rejectedCount).toBe(1);
      const view = await request(h.app)
        .get(`${batchUrl}/${res.body.data.batchId}`)
        .set('Authorization', auth);
      expect(view.body.data.status).toBe('completed_with_errors');
    });

    test('an item the balance cannot cover is rejected, earlier ones are not', async () => {
      const poor = await fundedKey(h.services, IMAGE_PRICE);
      const res = await request(h.app)
        .post(batchUrl)
        .set('Authorization', poor.auth)
        .set('Idempotency-Key', 'poor')
        .send({ items: [item(0), item(1)] });
      expect(res.status).toBe(200);
      const outcomes = res.body.data.items.map((i: { status: string }) => i.status).sort();
      // sandbox tasks run from the moment they are accepted
      expect(outcomes).toEqual(['rejected', 'running']);
      const rejected = res.body.data.items.find((i: { status: string }) => i.status === 'rejected');
      expect(rejected.error.code).toBe('insufficient_balance');
    });
  });

  describe('whole-batch failures create nothing', () => {
    const cases: [string, unknown, string | null, number, RegExp][] = [
      ['missing Idempotency-Key', { items: [item(0)] }, null, 400, /Idempotency-Key header is required/],
      ['empty items', { items: [] }, 'e1', 400, /^body\.items: must hold 1 to 50 items$/],
      [
        '51 items',
        { items: Array.from({ length: 51 }, (_, n) => item(n)) },
        'e2',
        400,
        /^body\.items: must hold 1 to 50 items$/,
      ],
      ['no items', {}, 'e3', 400, /^body\.items: /],
      [
        'missing client_item_id',
        { items: [{ idempotency_key: 'k', input: input() }] },
        'e4',
        400,
        /^items\[0\]\.client_item_id: /,
      ],
      [
        'missing idempotency_key',
        { items: [{ client_item_id: 'c', input: input() }] },
        'e5',
        400,
        /^items\[0\]\.idempotency_key: /,
      ],
      [
        'duplicated client_item_id',
        { items: [item(0), { ...item(1), client_item_id: 'c0' }] },
        'e6',
        400,
        /^items\[1\]\.client_item_id duplicates items\[0\]/,
      ],
      [
        'duplicated idempotency_key',
        { items: [item(0), { ...item(1), idempotency_key: 'k0' }] },
        'e7',
        400,
        /^items\[1\]\.idempotency_key duplicates items\[0\]/,
      ],
      [
        'webhook_url over plain http',
        { items: [item(0)], webhook_url: 'http://example.com/hook' },
        'e8',
        400,
        /^webhook_url must be a public HTTPS address/,
      ],
      [
        'webhook_url on loopback',
        { items: [item(0)], webhook_url: 'https://127.0.0.1/hook' },
        'e9',
        400,
        /^webhook_url must be a public HTTPS address/,
      ],
    ];
    test.each(cases)('%s', async (_name, body, key, status, message) => {
      const res = await submit(body, key);
      expect(res.status).toBe(status);
      expect(res.body).toEqual({ code: status, message: expect.stringMatching(message), data: null });
      expect(await balance()).toBe(10);
      if (key) {
        // the key was not consumed: a valid request with it now succeeds
        const ok = await submit({ items: [item(9)] }, key);
        expect(ok.body.data.replayed).toBe(false);
      }
    });

    test('a body over 5 MiB is refused while reading', async () => {
      const big = { items: [{ ...item(0), input: { ...input(), pad: 'x'.repeat(5 * 1024 * 1024) } }] };
      const res = await submit(big, 'big');
      expect(res.status).toBe(413);
      expect(res.body).toEqual({
        code: 413,
        message: 'Request body exceeds the limit of 5242880 bytes',
        data: null,
      });
      expect(await balance()).toBe(10);
    });
  });

  describe('idempotency', () => {
    test('the same key and items replay the batch: same task ids, nothing charged twice', async () => {
      const first = await submit({ items: [item(0), item(1)] });
      const again = await submit({ items: [item(0), item(1)] });
      expect(again.status).toBe(200);
      expect(again.body.data.replayed).toBe(true);
      expect(again.body.data.batchId).toBe(first.body.data.batchId);
      expect(again.body.data.items.map((i: { taskId: string }) => i.taskId)).toEqual(
        first.body.data.items.map((i: { taskId: string }) => i.taskId),
      );
      expect(await balance()).toBeCloseTo(10 - 2 * IMAGE_PRICE, 6);
      // a direct query is not a replay
      const view = await request(h.app)
        .get(`${batchUrl}/${first.body.data.batchId}`)
        .set('Authorization', auth);
      expect(view.body.data.replayed).toBe(false);
    });

    test('key order inside items does not make a different payload', async () => {
      await submit(
        {
          items: [
            { client_item_id: 'a', idempotency_key: 'b', input: { prompt: 'p', mode: 'text-to-image' } },
          ],
        },
        'order',
      );
      const again = await submit(
        {
          items: [
            { input: { mode: 'text-to-image', prompt: 'p' }, idempotency_key: 'b', client_item_id: 'a' },
          ],
        },
        'order',
      );
      expect(again.body.data.replayed).toBe(true);
    });

    test('the same key with a different payload is 422 and creates nothing', async () => {
      await submit({ items: [item(0)] });
      const res = await submit({ items: [item(0), item(1)] });
      expect(res.status).toBe(422);
      expect(res.body.data).toBeNull();
      expect(await balance()).toBeCloseTo(10 - IMAGE_PRICE, 6);
    });

    test('an item idempotency_key reuses its task across batches', async () => {
      const first = await submit({ items: [item(0)] }, 'batch-a');
      const second = await submit({ items: [{ ...item(0), client_item_id: 'other' }, item(5)] }, 'batch-b');
      expect(second.body.data).toMatchObject({
        replayed: false,
        newlyAcceptedCount: 1,
        reusedCount: 1,
        rejectedCount: 0,
      });
      expect(second.body.data.items[0]).toMatchObject({
        accepted: true,
        taskId: first.body.data.items[0].taskId,
      });
      expect(await balance()).toBeCloseTo(10 - 2 * IMAGE_PRICE, 6);
    });
  });

  describe('security', () => {
    test('another account, another model and an unknown id all get 404', async () => {
      const res = await submit({ items: [item(0)] });
      const id = res.body.data.batchId;
      const other = await fundedKey(h.services, 1);
      const cases = [
        request(h.app).get(`${batchUrl}/${id}`).set('Authorization', other.auth),
        request(h.app).get(`/api/v1/generateTask/first-frame-video/batches/${id}`).set('Authorization', auth),
        request(h.app)
          .get(`${batchUrl}/batch_${'0'.repeat(32)}`)
          .set('Authorization', auth),
      ];
      for (const r of await Promise.all(cases)) {
        expect(r.status).toBe(404);
        expect(r.body.code).toBe(404);
        expect(r.body.data).toBeNull();
      }
    });

    test('another account replaying the same Idempotency-Key gets its own batch', async () => {
      const mine = await submit({ items: [item(0)] });
      const other = await fundedKey(h.services, 1);
      const theirs = await request(h.app)
        .post(batchUrl)
        .set('Authorization', other.auth)
        .set('Idempotency-Key', 'idem-1')
        .send({ items: [item(0)] });
      expect(theirs.body.data.replayed).toBe(false);
      expect(theirs.body.data.batchId).not.toBe(mine.body.data.batchId);
    });

    test('a key without access to the model is 403', async () => {
      const limited = await fundedKey(h.services, 1, { models: ['music'] });
      const res = await request(h.app)
        .post(batchUrl)
        .set('Authorization', limited.auth)
        .set('Idempotency-Key', 'x')
        .send({ items: [item(0)] });
      expect(res.status).toBe(403);
    });
  });
});
