import request from 'supertest';
import { Webhook, WebhookVerificationError } from 'standardwebhooks';
import { verifyGenwayWebhook } from '../../examples/webhook-receiver';
import { redisUrl } from '../helpers/redis';
import { startReceiver, type Received } from '../helpers/receiver';
import { ADMIN_TOKEN, createHarness, type TestHarness } from '../helpers/services';

/**
 * Standard Webhooks mode, checked with the `standardwebhooks` package a receiver would use: the secret it is shown
 * is the one that verifies, every delivery (batch webhook and callback) verifies, and during a rotation grace either
 * secret does. The spec's scheme stays the default.
 */
const modes: [string, boolean][] = [
  ['memory', false],
  ...(redisUrl ? [['redis', true] as [string, boolean]] : []),
];

const standardHeaders = (r: Received) => ({
  'webhook-id': String(r.headers['webhook-id']),
  'webhook-timestamp': String(r.headers['webhook-timestamp']),
  'webhook-signature': String(r.headers['webhook-signature']),
});

describe.each(modes)('Standard Webhooks (%s)', (_mode, redis) => {
  let h: TestHarness;
  const admin = (method: 'get' | 'post' | 'patch', path: string, body?: object) => {
    const req = request(h.app)[method](`/admin/v1${path}`).set('Authorization', `Bearer ${ADMIN_TOKEN}`);
    return body === undefined ? req : req.send(body);
  };
  const account = async (body: object) => {
    const { accountId } = (await admin('post', '/accounts', { name: 'hooks', balanceUsd: 10, ...body })).body
      .data;
    const { key } = (await admin('post', `/accounts/${accountId}/keys`, {})).body.data;
    return { accountId, auth: `Bearer ${key}` };
  };
  const secret = async (auth: string) =>
    (await request(h.app).get('/api/v1/webhooks/secret').set('Authorization', auth)).body.data as {
      version: number;
      secret: string;
    };
  const batch = (auth: string, url: string, n = 0) =>
    request(h.app)
      .post('/api/v1/generateTask/image-gen/batches')
      .set('Authorization', auth)
      .set('Idempotency-Key', `b-${Math.random()}`)
      .send({
        webhook_url: url,
        items: [
          {
            client_item_id: `c${n}`,
            idempotency_key: `k${n}`,
            input: { mode: 'text-to-image', prompt: 'fox' },
          },
        ],
      });

  beforeEach(() => {
    h = createHarness({
      redis,
      overlay: {
        sandbox: { delayMs: 10 },
        security: { allowPrivateTargets: true },
        webhooks: { retryDelaysMs: [100, 100, 100, 100, 100] },
        callbacks: { retryDelaysMs: [100, 100, 100] },
      },
    });
  });
  afterEach(() => h.close());

  test('the scheme is set at creation, shown, changed by PATCH, and checked', async () => {
    const { accountId } = await account({ webhookScheme: 'standard' });
    expect((await admin('get', `/accounts/${accountId}`)).body.data.webhookScheme).toBe('standard');
    const plain = await account({});
    expect((await admin('get', `/accounts/${plain.accountId}`)).body.data.webhookScheme).toBe('genway');

    const patched = await admin('patch', `/accounts/${accountId}`, {
      webhookScheme: 'genway',
      name: 'renamed',
    });
    expect(patched.status).toBe(200);
    expect(patched.body.data).toMatchObject({ accountId, name: 'renamed', webhookScheme: 'genway' });

    const bad = await admin('patch', `/accounts/${accountId}`, { webhookScheme: 'svix' });
    expect(bad.status).toBe(400);
    expect(bad.body).toEqual({
      code: 400,
      message: 'body.webhookScheme: must be one of genway, standard',
      data: null,
    });
    expect((await admin('patch', `/accounts/${accountId}`, {})).body.message).toBe(
      'body: must set at least one of name, webhookScheme, budgetWebhookUrl',
    );
    expect((await admin('patch', `/accounts/${accountId}`, { balanceUsd: 5 })).body.message).toBe(
      'body: unknown field(s) balanceUsd',
    );
    expect((await admin('post', '/accounts', { name: 'x', webhookScheme: 1 })).status).toBe(400);
    const missing = await admin('patch', '/accounts/acct_nope', { webhookScheme: 'standard' });
    expect(missing.status).toBe(404);
    expect((await admin('get', '/accounts/acct_nope')).status).toBe(404);
    // Nothing changed by the refused requests.
    expect((await admin('get', `/accounts/${accountId}`)).body.data.webhookScheme).toBe('genway');
  });

  test('the secret is shown in standard base64 and is the same key in either scheme', async () => {
    const { accountId, auth } = await account({ webhookScheme: 'standard' });
    const standard = await secret(auth);
    expect(standard.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    await admin('patch', `/accounts/${accountId}`, { webhookScheme: 'genway' });
    const genway = await secret(auth);
    expect(genway.secret).toMatch(/^whsec_[A-Za-z0-9_-]{43}$/);
    expect(genway.version).toBe(standard.version);
    expect(Buffer.from(genway.secret.slice(6), 'base64url')).toEqual(
      Buffer.from(standard.secret.slice(6), 'base64'),
    );
    await admin('patch', `/accounts/${accountId}`, { webhookScheme: 'standard' });
    const rotated = (await request(h.app).post('/api/v1/webhooks/secret/rotate').set('Authorization', auth))
      .body.data;
    expect(rotated).toEqual({
      version: standard.version + 1,
      secret: expect.stringMatching(/^whsec_.{43}=$/),
    });
  });

  test('batch webhooks and callbacks verify with the standardwebhooks package, and nothing else does', async () => {
    const { auth } = await account({ webhookScheme: 'standard' });
    const { secret: s } = await secret(auth);
    const receiver = await startReceiver();
    try {
      await batch(auth, receiver.url);
      const submitted = await request(h.app)
        .post('/api/v1/generateTask/image-gen')
        .set('Authorization', auth)
        .send({
          request_type: 'callback',
          callback_url: receiver.url,
          input: { mode: 'text-to-image', prompt: 'owl' },
        });
      expect(submitted.status).toBe(200);
      const got = await receiver.waitFor(2);
      const verifier = new Webhook(s);
      for (const r of got) {
        expect(r.headers['x-genway-signature']).toBeUndefined();
        expect(r.headers['webhook-signature']).toMatch(/^v1,[A-Za-z0-9+/]{43}=$/);
        expect(r.headers['webhook-id']).toMatch(/^evt_[0-9a-f]{32}$/);
        expect(Number(r.headers['webhook-timestamp'])).toBeCloseTo(Date.now() / 1000, -2);
        const body = verifier.verify(r.rawBody.toString(), standardHeaders(r)) as { data: { state: string } };
        expect(body.data.state).toBe('success');
        // A changed byte, or another account's secret, does not verify.
        const tampered = r.rawBody.toString().replace('success', 'failed!');
        expect(() => verifier.verify(tampered, standardHeaders(r))).toThrow(WebhookVerificationError);
        expect(() =>
          new Webhook(`whsec_${Buffer.alloc(32, 7).toString('base64')}`).verify(
            r.rawBody.toString(),
            standardHeaders(r),
          ),
        ).toThrow(WebhookVerificationError);
      }
      expect(got.map((r) => JSON.parse(r.rawBody.toString()).data.taskId)).toContain(
        submitted.body.data.taskId,
      );
    } finally {
      await receiver.close();
    }
  });

  test('during a rotation grace each delivery carries both signatures; either secret verifies', async () => {
    const { auth } = await account({ webhookScheme: 'standard' });
    const v1 = await secret(auth);
    // The first attempt fails, so the old batch's retry is sent after the rotation.
    const receiver = await startReceiver((n) => (n === 0 ? 500 : 200));
    try {
      await batch(auth, receiver.url, 0);
      const [first] = await receiver.waitFor(1);
      expect(first.headers['webhook-signature']).toMatch(/^v1,\S+$/); // one secret: one signature
      const v2 = (await request(h.app).post('/api/v1/webhooks/secret/rotate').set('Authorization', auth)).body
        .data;
      const retry = (await receiver.waitFor(2))[1];
      await batch(auth, receiver.url, 1);
      const fresh = (await receiver.waitFor(3))[2];
      for (const r of [retry, fresh]) {
        expect(String(r.headers['webhook-signature']).split(' ')).toHaveLength(2);
        for (const s of [v1.secret, v2.secret])
          expect(() => new Webhook(s).verify(r.rawBody.toString(), standardHeaders(r))).not.toThrow();
      }
      // The old batch signs with its own secret first; a new one with the new secret first.
      const firstSignature = (r: Received) => String(r.headers['webhook-signature']).split(' ')[0];
      const signAs = (s: string, r: Received) =>
        new Webhook(s).sign(
          String(r.headers['webhook-id']),
          new Date(Number(r.headers['webhook-timestamp']) * 1000),
          r.rawBody.toString(),
        );
      expect(firstSignature(retry)).toBe(signAs(v1.secret, retry));
      expect(firstSignature(fresh)).toBe(signAs(v2.secret, fresh));
    } finally {
      await receiver.close();
    }
  });

  test('a genway account is signed as the spec says, with no standard headers', async () => {
    const { auth } = await account({});
    const { secret: s } = await secret(auth);
    const receiver = await startReceiver();
    try {
      await batch(auth, receiver.url);
      const [r] = await receiver.waitFor(1);
      expect(r.headers['webhook-signature']).toBeUndefined();
      expect(verifyGenwayWebhook({ rawBody: r.rawBody, headers: r.headers, secrets: [s] })).toMatchObject({
        ok: true,
      });
    } finally {
      await receiver.close();
    }
  });
});
