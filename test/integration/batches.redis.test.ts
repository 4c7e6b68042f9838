import request from 'supertest';
import { describeRedis, dropPrefix, uniquePrefix } from '../helpers/redis';
import { createHarness, fundedKey, type TestHarness } from '../helpers/services';

const IMAGE_PRICE = 0.0424;
const items = [0, 1, 2].map((n) => ({
  client_item_id: `c${n}`,
  idempotency_key: `k${n}`,
  input: { mode: 'text-to-image', prompt: `fox ${n}` },
}));

describeRedis('batch idempotency across two replicas on one Redis', () => {
  let prefix: string;
  let a: TestHarness;
  let b: TestHarness;
  beforeEach(() => {
    prefix = uniquePrefix('batches');
    a = createHarness({ redis: true, prefix, overlay: { sandbox: { delayMs: 60_000 } } });
    b = createHarness({ redis: true, prefix, overlay: { sandbox: { delayMs: 60_000 } } });
  });
  afterEach(async () => {
    await a.close();
    await b.close();
    await dropPrefix(prefix);
  });

  test('two concurrent identical requests on two replicas create one batch and charge once', async () => {
    const { auth } = await fundedKey(a.services, 10);
    const send = (h: TestHarness) =>
      request(h.app)
        .post('/api/v1/generateTask/image-gen/batches')
        .set('Authorization', auth)
        .set('Idempotency-Key', 'together')
        .send({ items });
    const responses = await Promise.all([send(a), send(b), send(a), send(b)]);
    const created = responses.filter((r) => r.status === 200 && r.body.data.replayed === false);
    const replays = responses.filter((r) => r.status === 200 && r.body.data.replayed === true);
    const conflicts = responses.filter((r) => r.status === 409);
    expect(created).toHaveLength(1);
    expect(replays.length + conflicts.length).toBe(3);
    for (const r of replays) expect(r.body.data.batchId).toBe(created[0].body.data.batchId);
    for (const r of conflicts) expect(r.body).toEqual({ code: 409, message: expect.any(String), data: null });
    const balance = await request(b.app).get('/api/v1/apikeys/current-balance').set('Authorization', auth);
    expect(balance.body.data).toBeCloseTo(10 - 3 * IMAGE_PRICE, 6);
  });

  test('while the first request with a key is in flight on one replica, the other answers 409', async () => {
    const { auth, accountId } = await fundedKey(a.services, 10);
    // the first request has claimed the key and not finished
    await a.services.store.batches.claim(accountId, 'slow', 60_000, Date.now());
    const res = await request(b.app)
      .post('/api/v1/generateTask/image-gen/batches')
      .set('Authorization', auth)
      .set('Idempotency-Key', 'slow')
      .send({ items });
    expect(res.status).toBe(409);
    expect(res.body.data).toBeNull();
  });

  test('a batch accepted on one replica is visible on the other, and its item keys are shared', async () => {
    const { auth } = await fundedKey(a.services, 10);
    const first = await request(a.app)
      .post('/api/v1/generateTask/image-gen/batches')
      .set('Authorization', auth)
      .set('Idempotency-Key', 'one')
      .send({ items });
    const view = await request(b.app)
      .get(`/api/v1/generateTask/image-gen/batches/${first.body.data.batchId}`)
      .set('Authorization', auth);
    expect(view.body.data.items.map((i: { taskId: string }) => i.taskId)).toEqual(
      first.body.data.items.map((i: { taskId: string }) => i.taskId),
    );
    const reuse = await request(b.app)
      .post('/api/v1/generateTask/image-gen/batches')
      .set('Authorization', auth)
      .set('Idempotency-Key', 'two')
      .send({ items });
    expect(reuse.body.data).toMatchObject({ newlyAcceptedCount: 0, reusedCount: 3 });
  });
});
