import { createHash } from 'node:crypto';
import request from 'supertest';
import { ADMIN_TOKEN, createHarness, fundedKey, type TestHarness } from '../helpers/services';

const admin = `Bearer ${ADMIN_TOKEN}`;

describe('task API authentication and balance', () => {
  let h: TestHarness;
  beforeEach(() => {
    h = createHarness();
  });
  afterEach(() => h.close());

  test('a valid key reads its account balance in USD', async () => {
    const { auth } = await fundedKey(h.services, 12.5);
    const res = await request(h.app).get('/api/v1/apikeys/current-balance').set('Authorization', auth);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ code: 200, message: 'success', data: 12.5 });
  });

  test.each([
    ['missing', undefined, 'Missing API key'],
    ['malformed', 'Bearer not-a-genway-key', 'Malformed API key'],
    ['unknown', `Bearer gwk_${'A'.repeat(43)}`, 'Invalid API key'],
    ['scheme-less', `gwk_${'A'.repeat(43)}`, 'Invalid API key'],
    ['non-Bearer', `Basic ${'A'.repeat(20)}`, 'Malformed API key'],
  ])('a %s key is 401 with the envelope', async (_kind, header, message) => {
    const req = request(h.app).get('/api/v1/apikeys/current-balance');
    const res = await (header ? req.set('Authorization', header) : req);
    expect(res.status).toBe(401);
    expect(res.body.code).toBe(401);
    expect(res.body.data).toBeNull();
    expect(res.body.message).toContain(message);
    expect(res.headers['www-authenticate']).toBe('Bearer');
  });

  test('a revoked key is 401', async () => {
    const { auth, keyId } = await fundedKey(h.services);
    await request(h.app).delete(`/admin/v1/keys/${keyId}`).set('Authorization', admin).expect(200);
    const res = await request(h.app).get('/api/v1/apikeys/current-balance').set('Authorization', auth);
    expect(res.status).toBe(401);
    expect(res.body.message).toBe('Invalid API key: this key has been revoked');
  });
});

describe('admin API', () => {
  let h: TestHarness;
  beforeEach(() => {
    h = createHarness();
  });
  afterEach(() => h.close());

  test('account, credit, key, revoke: the whole flow', async () => {
    const created = await request(h.app)
      .post('/admin/v1/accounts')
      .set('Authorization', admin)
      .send({ name: 'Acme', balanceUsd: 10 });
    expect(created.status).toBe(200);
    const { accountId } = created.body.data;
    expect(accountId).toMatch(/^acct_[0-9a-f]{32}$/);

    const credit = await request(h.app)
      .post(`/admin/v1/accounts/${accountId}/credits`)
      .set('Authorization', admin)
      .send({ amountUsd: 2.25, reference: 'invoice-7' });
    expect(credit.body).toEqual({ code: 200, message: 'success', data: { balanceUsd: 12.25 } });
    // the same reference again is applied once
    await request(h.app)
      .post(`/admin/v1/accounts/${accountId}/credits`)
      .set('Authorization', admin)
      .send({ amountUsd: 2.25, reference: 'invoice-7' });

    const keyRes = await request(h.app)
      .post(`/admin/v1/accounts/${accountId}/keys`)
      .set('Authorization', admin)
      .send({ name: 'ci', models: ['image-gen'], rateLimit: { ratePerSec: 5, burst: 10 } });
    expect(keyRes.status).toBe(200);
    expect(keyRes.body.data.key).toMatch(/^gwk_[A-Za-z0-9_-]{43}$/);
    expect(keyRes.body.data.keyId).toMatch(/^key_[0-9a-f]{32}$/);

    const view = await request(h.app).get(`/admin/v1/accounts/${accountId}`).set('Authorization', admin);
    expect(view.body.data).toMatchObject({
      accountId,
      name: 'Acme',
      balanceUsd: 12.25,
      keys: [
        {
          keyId: keyRes.body.data.keyId,
          name: 'ci',
          models: ['image-gen'],
          rateLimit: { ratePerSec: 5, burst: 10 },
          revoked: false,
        },
      ],
    });
    expect(JSON.stringify(view.body)).not.toContain(keyRes.body.data.key);

    const balance = await request(h.app)
      .get('/api/v1/apikeys/current-balance')
      .set('Authorization', `Bearer ${keyRes.body.data.key}`);
    expect(balance.body.data).toBe(12.25);

    const revoked = await request(h.app)
      .delete(`/admin/v1/keys/${keyRes.body.data.keyId}`)
      .set('Authorization', admin);
    expect(revoked.body).toEqual({
      code: 200,
      message: 'success',
      data: { keyId: keyRes.body.data.keyId, revoked: true },
    });
  });

  test('keys are stored only as SHA-256 hashes', async () => {
    const { key, keyId } = await fundedKey(h.services);
    const stored = await h.services.store.accounts.getKey(keyId);
    expect(JSON.stringify(stored)).not.toContain(key);
    expect(stored!.hash).toBe(createHash('sha256').update(key).digest('hex'));
  });

  test('bad admin input names the field and changes nothing', async () => {
    const res = await request(h.app)
      .post('/admin/v1/accounts')
      .set('Authorization', admin)
      .send({ name: 'x', balanceUsd: 'ten' });
    expect(res.status).toBe(400);
    expect(res.body.message).toMatch(/^body\.balanceUsd: /);
    const unknown = await request(h.app)
      .post('/admin/v1/accounts')
      .set('Authorization', admin)
      .send({ name: 'x', colour: 1 });
    expect(unknown.status).toBe(400);
    expect(unknown.body.message).toBe('body: unknown field(s) colour');
    const missing = await request(h.app)
      .post('/admin/v1/accounts/acct_nope/credits')
      .set('Authorization', admin)
      .send({ amountUsd: 1 });
    expect(missing.status).toBe(404);
  });

  test('a wrong admin token is 401; an API key is not an admin token', async () => {
    const { auth } = await fundedKey(h.services);
    expect(
      (await request(h.app).get('/admin/v1/accounts/x').set('Authorization', 'Bearer wrong')).status,
    ).toBe(401);
    expect((await request(h.app).get('/admin/v1/accounts/x').set('Authorization', auth)).status).toBe(401);
    expect((await request(h.app).get('/admin/v1/accounts/x')).status).toBe(401);
    // Only a Bearer carries the admin token; the scheme's case does not matter, as HTTP says.
    expect((await request(h.app).get('/admin/v1/accounts/x').set('Authorization', ADMIN_TOKEN)).status).toBe(
      401,
    );
    expect(
      (await request(h.app).get('/admin/v1/accounts/x').set('Authorization', `bearer ${ADMIN_TOKEN}`)).status,
    ).toBe(404);
  });

  test('without admin.token the admin API answers 404', async () => {
    const bare = createHarness({ overlay: { admin: { token: undefined } } });
    try {
      const res = await request(bare.app)
        .post('/admin/v1/accounts')
        .set('Authorization', admin)
        .send({ name: 'x' });
      expect(res.status).toBe(404);
      expect(res.body).toEqual({ code: 404, message: 'No route for POST /admin/v1/accounts', data: null });
    } finally {
      await bare.close();
    }
  });
});

describe('bad input gets an envelope, never a stack trace or HTML', () => {
  let h: TestHarness;
  beforeEach(() => {
    h = createHarness({ overlay: { server: { bodyLimitBytes: 1024 } } });
  });
  afterEach(() => h.close());

  test('malformed JSON is 400', async () => {
    const res = await request(h.app)
      .post('/admin/v1/accounts')
      .set('Authorization', admin)
      .set('Content-Type', 'application/json')
      .send('{"name": ');
    expect(res.status).toBe(400);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(res.body.message).toMatch(/^Malformed JSON body/);
    expect(res.text).not.toMatch(/at .*\.js|<html/i);
  });

  test('a wrong content type is 400', async () => {
    const res = await request(h.app)
      .post('/admin/v1/accounts')
      .set('Authorization', admin)
      .set('Content-Type', 'text/plain')
      .send('name=x');
    expect(res.status).toBe(400);
    expect(res.body).toEqual({
      code: 400,
      message: 'Content-Type must be application/json (got text/plain)',
      data: null,
    });
  });

  test('an oversized body is 413', async () => {
    const res = await request(h.app)
      .post('/admin/v1/accounts')
      .set('Authorization', admin)
      .send({ name: 'x'.repeat(2000) });
    expect(res.status).toBe(413);
    expect(res.body).toEqual({
      code: 413,
      message: 'Request body exceeds the limit of 1024 bytes',
      data: null,
    });
  });

  test('an unknown route is 404 and an unknown method 405 with Allow', async () => {
    const nf = await request(h.app).get('/nowhere');
    expect(nf.status).toBe(404);
    expect(nf.body).toEqual({ code: 404, message: 'No route for GET /nowhere', data: null });
    const na = await request(h.app).delete('/healthz');
    expect(na.status).toBe(405);
    expect(na.headers.allow).toBe('GET, HEAD');
    expect(na.body.code).toBe(405);
    const { auth } = await fundedKey(h.services);
    const naApi = await request(h.app).post('/api/v1/apikeys/current-balance').set('Authorization', auth);
    expect(naApi.status).toBe(405);
  });
});

describe('rate limits', () => {
  test('429 with Retry-After and the envelope once the burst is spent; the key override wins', async () => {
    const h = createHarness({ overlay: { rateLimits: { default: { ratePerSec: 0.01, burst: 2 } } } });
    try {
      const std = await fundedKey(h.services);
      const roomy = await fundedKey(h.services, 1, { rateLimit: { ratePerSec: 0.01, burst: 4 } });
      const hit = (auth: string) =>
        request(h.app).get('/api/v1/apikeys/current-balance').set('Authorization', auth);
      expect([(await hit(std.auth)).status, (await hit(std.auth)).status]).toEqual([200, 200]);
      const limited = await hit(std.auth);
      expect(limited.status).toBe(429);
      expect(limited.body.code).toBe(429);
      expect(limited.body.data).toBeNull();
      expect(Number(limited.headers['retry-after'])).toBe(100); // one token at 0.01/s
      const roomyStatuses = [];
      for (let i = 0; i < 5; i++) roomyStatuses.push((await hit(roomy.auth)).status);
      expect(roomyStatuses).toEqual([200, 200, 200, 200, 429]);
      const metrics = await request(h.app).get('/metrics');
      expect(metrics.text).toContain('genway_rate_limit_rejections_total{surface="task_api"} 2');
    } finally {
      await h.close();
    }
  });
});

describe('observability', () => {
  test('metrics by route template, method and status, with no key or account ids as labels', async () => {
    const h = createHarness();
    try {
      const { auth, accountId, keyId } = await fundedKey(h.services);
      await request(h.app).get('/api/v1/apikeys/current-balance').set('Authorization', auth);
      await request(h.app).get(`/admin/v1/accounts/${accountId}`).set('Authorization', admin);
      const text = (await request(h.app).get('/metrics')).text;
      expect(text).toContain(
        'genway_http_requests_total{route="/api/v1/apikeys/current-balance",method="GET",status="200"} 1',
      );
      expect(text).toContain(
        'genway_http_requests_total{route="/admin/v1/accounts/:accountId",method="GET",status="200"} 1',
      );
      expect(text).toContain(
        'genway_http_request_duration_seconds_bucket{le="0.005",route="/api/v1/apikeys/current-balance",method="GET",status="200"}',
      );
      expect(text).toContain('process_cpu_user_seconds_total');
      expect(text).not.toContain(accountId);
      expect(text).not.toContain(keyId);
    } finally {
      await h.close();
    }
  });

  test('health and readiness', async () => {
    const h = createHarness();
    try {
      expect((await request(h.app).get('/healthz')).body.data).toEqual({ status: 'ok' });
      expect((await request(h.app).get('/readyz')).body.data).toEqual({ status: 'ready', store: 'memory' });
    } finally {
      await h.close();
    }
  });

  test('logs carry a request id and never an API key or the admin token', async () => {
    const h = createHarness();
    try {
      const { key, auth, accountId } = await fundedKey(h.services);
      const res = await request(h.app)
        .get('/api/v1/apikeys/current-balance')
        .set('Authorization', auth)
        .set('X-Request-Id', 'trace-42');
      expect(res.headers['x-request-id']).toBe('trace-42');
      await request(h.app).get(`/api/v1/apikeys/current-balance?key=${key}`).set('Authorization', auth);
      await request(h.app).post(`/admin/v1/accounts/${accountId}/keys`).set('Authorization', admin).send({});
      await request(h.app).get('/api/v1/apikeys/current-balance').set('Authorization', 'Bearer gwk_wrong');
      expect(h.logs.lines.length).toBeGreaterThanOrEqual(4);
      expect(h.logs.text).toContain('"id":"trace-42"');
      expect(h.logs.text).not.toContain(key);
      expect(h.logs.text).not.toContain(ADMIN_TOKEN);
      expect(h.logs.text).not.toContain('gwk_wrong');
      for (const line of h.logs.lines) expect(() => JSON.parse(line)).not.toThrow();
    } finally {
      await h.close();
    }
  });
});

describe('GET /', () => {
  test('answers JSON pointing to health, readiness, metrics and the model catalog, without a key', async () => {
    const h = createHarness();
    try {
      const res = await request(h.app).get('/');
      expect(res.status).toBe(200);
      expect(res.headers['content-type']).toMatch(/^application\/json/);
      expect(res.body.data).toMatchObject({
        service: 'genway',
        health: '/healthz',
        ready: '/readyz',
        metrics: '/metrics',
        models: '/api/v1/models',
      });
      expect((await request(h.app).get(res.body.data.health)).status).toBe(200);
    } finally {
      await h.close();
    }
  });
});
