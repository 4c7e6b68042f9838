import http from 'node:http';
import request from 'supertest';
import { createHarness, fundedKey, type TestHarness } from '../helpers/services';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** An upstream Genway (sandbox) served over real HTTP on loopback, with an account the relay uses. */
async function upstream() {
  const h = createHarness({ overlay: { sandbox: { delayMs: 20 } } });
  const server = http.createServer(h.app);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { key, accountId } = await fundedKey(h.services, 10);
  return {
    h,
    key,
    accountId,
    baseUrl: `http://127.0.0.1:${(server.address() as { port: number }).port}`,
    balance: () => h.services.accounts.balanceUsd(accountId),
    close: async () => {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
      await h.close();
    },
  };
}

async function failingServer(status: number) {
  const server = http.createServer((_req, res) =>
    res
      .writeHead(status, { 'content-type': 'application/json' })
      .end('{"code":503,"message":"down","data":null}'),
  );
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    baseUrl: `http://127.0.0.1:${(server.address() as { port: number }).port}`,
    close: () => new Promise((r) => server.close(r)),
  };
}

const fast = { firstPollMs: 20, pollIntervalMs: 20 };

describe('relay provider', () => {
  let up1: Awaited<ReturnType<typeof upstream>>;
  let up2: Awaited<ReturnType<typeof upstream>>;
  let broken: Awaited<ReturnType<typeof failingServer>>;
  beforeAll(async () => {
    [up1, up2, broken] = await Promise.all([upstream(), upstream(), failingServer(503)]);
  });
  afterAll(async () => {
    await Promise.all([up1.close(), up2.close(), broken.close()]);
  });

  function relay(routes: Record<string, unknown>[]): TestHarness {
    return createHarness({
      overlay: {
        models: [
          { id: 'image-gen', family: 'image-gen', routes },
          { id: 'multimodal-video', family: 'multimodal-video', routes },
        ],
      },
    });
  }
  const route = (id: string, up: { baseUrl: string; key?: string }, extra: Record<string, unknown> = {}) => ({
    id,
    provider: 'relay',
    baseUrl: up.baseUrl,
    apiKey: up.key ?? 'gwk_none',
    ...fast,
    ...extra,
  });

  async function run(h: TestHarness, model: string, input: Record<string, unknown>, provider = 'auto') {
    const { auth, accountId } = await fundedKey(h.services, 10);
    const res = await request(h.app)
      .post(`/api/v1/generateTask/${model}`)
      .set('Authorization', auth)
      .send({ provider, input });
    expect(res.status).toBe(200);
    const { taskId } = res.body.data;
    for (let i = 0; i < 300; i++) {
      const s = await request(h.app)
        .get(`/api/v1/statusTask/${model}?taskId=${taskId}`)
        .set('Authorization', auth);
      if (s.body.data.state === 'success' || s.body.data.state === 'failed') {
        await sleep(30);
        return {
          status: s.body.data,
          task: (await h.services.store.tasks.get(taskId))!,
          balance: await h.services.accounts.balanceUsd(accountId),
        };
      }
      await sleep(15);
    }
    throw new Error('relayed task never finished');
  }

  test('cancel is forwarded: the upstream task is cancelled and refunded there, the relayed one here', async () => {
    const h = relay([route('up1', up1)]);
    try {
      const { auth, accountId } = await fundedKey(h.services, 10);
      const upBefore = await up1.balance();
      const res = await request(h.app)
        .post('/api/v1/generateTask/image-gen')
        .set('Authorization', auth)
        .send({ input: { mode: 'text-to-image', prompt: '[sandbox:delay=60000] slow' } });
      const { taskId } = res.body.data;
      let upstreamTaskId: string | undefined;
      for (let i = 0; i < 300 && !upstreamTaskId; i++) {
        upstreamTaskId = (await h.services.store.tasks.get(taskId))?.route?.upstreamTaskId;
        if (!upstreamTaskId) await sleep(10);
      }
      expect(await up1.balance()).toBeLessThan(upBefore);
      const cancelled = await request(h.app)
        .post(`/api/v1/tasks/${taskId}/cancel`)
        .set('Authorization', auth);
      expect(cancelled.body.data).toMatchObject({ state: 'failed', failCode: 'CANCELLED', cancelled: true });
      expect(await h.services.accounts.balanceUsd(accountId)).toBe(10);
      const there = (await up1.h.services.store.tasks.get(upstreamTaskId!))!;
      expect(there).toMatchObject({ state: 'failed', failCode: 'CANCELLED' });
      expect(await up1.balance()).toBe(upBefore);
    } finally {
      await h.close();
    }
  });

  test('auto fails over from a 5xx route and an unreachable route to a healthy one; the result is the upstream one', async () => {
    const h = relay([
      route('broken', broken),
      route('dead', { baseUrl: 'http://127.0.0.1:9' }),
      route('good', up1),
    ]);
    try {
      const before = await up1.balance();
      const { status, task, balance } = await run(h, 'image-gen', { mode: 'text-to-image', prompt: 'fox' });
      expect(status.state).toBe('success');
      expect(task.route?.id).toBe('good');
      const [url] = JSON.parse(status.resultJson).resultUrls;
      // Genway's own result URL (publicUrl derived from the harness's host and unbound port 0), not the upstream's.
      expect(url).toMatch(/^http:\/\/127\.0\.0\.1:0\/files\/task_/);
      expect(balance).toBeCloseTo(10 - 0.0424, 6);
      expect(await up1.balance()).toBeCloseTo(before - 0.0424, 6);
    } finally {
      await h.close();
    }
  });

  test('value picks the cheapest route, official the official one', async () => {
    const h = relay([
      route('pricey', up1, { costFactor: 3, official: true }),
      route('cheap', up2, { costFactor: 1 }),
    ]);
    try {
      expect(
        (await run(h, 'image-gen', { mode: 'text-to-image', prompt: 'fox' }, 'value')).task.route?.id,
      ).toBe('cheap');
      expect(
        (await run(h, 'image-gen', { mode: 'text-to-image', prompt: 'fox' }, 'official')).task.route?.id,
      ).toBe('pricey');
      expect(
        (await run(h, 'image-gen', { mode: 'text-to-image', prompt: 'fox' }, 'auto')).task.route?.id,
      ).toBe('pricey');
    } finally {
      await h.close();
    }
  });

  test('billing of a smart-duration task is intact through the relay', async () => {
    const h = relay([route('good', up1)]);
    try {
      const { status, balance } = await run(h, 'multimodal-video', {
        mode: 'text-to-video',
        prompt: '[sandbox:output_seconds=9] sea',
        duration: -1,
        resolution: '480p',
      });
      expect(status.billing).toEqual({
        settlementState: 'final',
        inputVideoSeconds: 0,
        outputVideoSeconds: 9,
        totalBillableSeconds: 9,
        unit: 'second',
        rounding: 'round half up to 3 decimal places',
        inputVideoCount: 0,
        outputVideoCount: 1,
      });
      expect(balance).toBeCloseTo(10 - 9 * 0.07, 6);
    } finally {
      await h.close();
    }
  });

  test('an upstream failure is mirrored and refunded; every route down fails the task with the upstream code', async () => {
    const h = relay([route('good', up1)]);
    const down = relay([route('broken', broken)]);
    try {
      const failed = await run(h, 'image-gen', {
        mode: 'text-to-image',
        prompt: '[sandbox:fail=CONTENT_VIOLATION] x',
      });
      expect(failed.status).toMatchObject({ state: 'failed', failCode: 'CONTENT_VIOLATION' });
      expect(failed.balance).toBe(10);
      const none = await run(down, 'image-gen', { mode: 'text-to-image', prompt: 'x' });
      expect(none.status).toMatchObject({
        state: 'failed',
        failCode: 'UPSTREAM_ERROR',
        failMsg: 'route broken: upstream answered 503',
      });
      expect(none.balance).toBe(10);
    } finally {
      await h.close();
      await down.close();
    }
  });
});
