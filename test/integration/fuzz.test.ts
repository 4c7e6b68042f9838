import fc from 'fast-check';
import request from 'supertest';
import { ADMIN_TOKEN, createHarness, fundedKey, type TestHarness } from '../helpers/services';
import { describeRedis } from '../helpers/redis';
import { useGateway } from '../helpers/gateway';

/**
 * Property-based fuzzing of every JSON entry point (fast-check, a bounded number of runs, seeded so a failure
 * replays): whatever a client sends, Genway answers a 4xx in the route's own shape or a success, never a 5xx, and a
 * refused request changes nothing (no task, no charge, no half-written batch).
 */
const RUNS = Number(process.env.GENWAY_FUZZ_RUNS ?? 150);
const SEED = Number(process.env.GENWAY_FUZZ_SEED ?? 20261125);
const CLIENT_ERRORS = [400, 402, 404, 405, 409, 413, 415, 422];
const UNLIMITED = { rateLimits: { default: { ratePerSec: 1_000_000, burst: 1_000_000 } } };

/** Text a JSON parser accepts and Redis, Lua or a vendor may not: lone surrogates, NULs, controls, long runs. */
const hostileText = fc.oneof(
  { weight: 6, arbitrary: fc.string({ unit: 'grapheme', maxLength: 24 }) },
  { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 24 }) },
  {
    weight: 2,
    arbitrary: fc.constantFrom(
      '\ud800',
      'a\udfffb',
      '\u0000',
      '\u202e',
      'x'.repeat(5000),
      '',
      ' ',
      '-1.0',
      '1e309',
    ),
  },
);
/** Any JSON value, strings hostile. */
const anyJson = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: 'small' },
    hostileText,
    fc.double(),
    fc.integer(),
    fc.boolean(),
    fc.constant(null),
    fc.array(tie('value'), { maxLength: 4 }),
    fc.dictionary(hostileText, tie('value'), { maxKeys: 4 }),
  ),
})).value;
/** Mostly `valid` (so the deep rules run), sometimes anything. */
const validOr = <T, U>(valid: fc.Arbitrary<T>, hostile: fc.Arbitrary<U>) =>
  fc.oneof({ weight: 4, arbitrary: valid }, { weight: 1, arbitrary: hostile });
const maybe = <T>(arb: fc.Arbitrary<T>) => fc.option(arb, { nil: undefined });
/** A valid image-gen input, then (half the time) one field set to anything or one unknown field added. */
const validInput = fc
  .record({
    mode: fc.constantFrom('text-to-image', 'image-to-image'),
    prompt: fc.string({ unit: 'grapheme', minLength: 1, maxLength: 40 }),
    image_urls: fc.array(fc.webUrl({ validSchemes: ['https'] }), { minLength: 1, maxLength: 3 }),
    aspect_ratio: maybe(fc.constantFrom('auto', '1:1', '16:9', '9:16')),
    resolution: maybe(fc.constantFrom('1k', '2k', '4k')),
    quality: maybe(fc.constantFrom('low', 'medium', 'high')),
  })
  .map(({ image_urls, ...r }) => ({
    ...Object.fromEntries(Object.entries(r).filter(([, v]) => v !== undefined)),
    ...(r.mode === 'image-to-image' ? { image_urls } : {}),
  }));
const taskInput = fc.oneof(
  { weight: 1, arbitrary: validInput },
  {
    weight: 1,
    arbitrary: fc
      .tuple(
        validInput,
        fc.constantFrom(
          'mode',
          'prompt',
          'image_urls',
          'aspect_ratio',
          'resolution',
          'quality',
          'size',
          'extra',
        ),
        anyJson,
      )
      .map(([input, field, value]) => ({ ...input, [field]: value })),
  },
  { weight: 1, arbitrary: anyJson },
);
const taskBody = fc
  .record({
    request_type: maybe(validOr(fc.constant('async'), hostileText)),
    provider: maybe(validOr(fc.constantFrom('auto', 'value', 'official'), hostileText)),
    input: taskInput,
  })
  .map((r) => Object.fromEntries(Object.entries(r).filter(([, v]) => v !== undefined)));
/** Raw request bodies: JSON text with duplicate or escaped keys, deep nesting, and not-JSON. */
const rawBody = fc.oneof(
  fc.string({ unit: 'binary', maxLength: 64 }),
  anyJson.map((v) => JSON.stringify(v)),
  fc.constantFrom(
    '{"input":{"mode":"text-to-image","prompt":"x","prompt":"y"}}',
    '{"input":{"mode":"text-to-image","pr\\u006fmpt":"x"}}',
    '{"input":{"mode":"text-to-image","prompt":"\\ud800"}}',
    `{"input":${'['.repeat(10_000)}${']'.repeat(10_000)}}`,
    '{"input":',
    '\u0000',
  ),
);

function expectClientErrorOrSuccess(res: request.Response, where: string): void {
  if (res.status !== 200 && !CLIENT_ERRORS.includes(res.status)) {
    throw new Error(`${where}: HTTP ${res.status} ${res.text.slice(0, 300)}`);
  }
  expect(res.headers['content-type']).toMatch(/^application\/json/);
  expect(res.body.code).toBe(res.status);
  expect(typeof res.body.message).toBe('string');
}

function taskApiProperties(redis: boolean) {
  let h: TestHarness;
  let auth: string;
  const runs = redis ? Math.ceil(RUNS / 3) : RUNS;
  const balance = async () =>
    (await request(h.app).get('/api/v1/apikeys/current-balance').set('Authorization', auth)).body
      .data as number;
  beforeAll(async () => {
    h = createHarness({ redis, workers: false, overlay: UNLIMITED });
    ({ auth } = await fundedKey(h.services, 1_000_000));
  });
  afterAll(async () => {
    await h?.close();
  });

  test('task submit: any body is a success or an envelope 4xx, and a refused one charges nothing', async () => {
    await fc.assert(
      fc.asyncProperty(taskBody, async (body) => {
        const before = await balance();
        const res = await request(h.app)
          .post('/api/v1/generateTask/image-gen')
          .set('Authorization', auth)
          .set('Content-Type', 'application/json')
          .send(JSON.stringify(body));
        expectClientErrorOrSuccess(res, 'submit');
        if (res.status !== 200) expect(await balance()).toBe(before);
        else {
          const status = await request(h.app)
            .get(`/api/v1/statusTask/image-gen?taskId=${res.body.data.taskId}`)
            .set('Authorization', auth);
          expect(status.status).toBe(200);
        }
      }),
      { numRuns: runs, seed: SEED },
    );
  });

  test('task submit: raw bodies (duplicate and escaped keys, deep nesting, not JSON) never reach a 5xx', async () => {
    await fc.assert(
      fc.asyncProperty(rawBody, async (text) => {
        const before = await balance();
        const res = await request(h.app)
          .post('/api/v1/generateTask/image-gen')
          .set('Authorization', auth)
          .set('Content-Type', 'application/json')
          .send(text);
        expectClientErrorOrSuccess(res, 'raw submit');
        if (res.status !== 200) expect(await balance()).toBe(before);
      }),
      { numRuns: runs, seed: SEED },
    );
  });

  test('batch submit: any items are a success with per-item verdicts or a 4xx that writes nothing', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.record({
          items: validOr(
            fc.array(
              fc.record({
                client_item_id: validOr(fc.uuid(), hostileText),
                idempotency_key: validOr(fc.uuid(), hostileText),
                input: taskInput,
              }),
              { minLength: 1, maxLength: 6 },
            ),
            anyJson,
          ),
          webhook_url: maybe(validOr(fc.constant('https://example.com/hook'), hostileText)),
        }),
        validOr(fc.uuid(), fc.string({ unit: 'grapheme-ascii', maxLength: 300 })),
        async (body, idempotencyKey) => {
          const before = await balance();
          const res = await request(h.app)
            .post('/api/v1/generateTask/image-gen/batches')
            .set('Authorization', auth)
            .set('Idempotency-Key', idempotencyKey)
            .set('Content-Type', 'application/json')
            .send(JSON.stringify(body));
          expectClientErrorOrSuccess(res, 'batch');
          if (res.status !== 200) expect(await balance()).toBe(before);
          else
            for (const item of res.body.data.items) {
              if (item.accepted) expect(typeof item.taskId).toBe('string');
              else
                expect([item.taskId, item.status, typeof item.error.message]).toEqual([
                  null,
                  'rejected',
                  'string',
                ]);
            }
        },
      ),
      { numRuns: runs, seed: SEED },
    );
  });

  test('admin API: account, credit and key bodies are a success or a 4xx', async () => {
    const admin = `Bearer ${ADMIN_TOKEN}`;
    const { accountId } = await h.services.accounts.createAccount('fuzz', 0);
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(
          '/admin/v1/accounts',
          `/admin/v1/accounts/${accountId}/credits`,
          `/admin/v1/accounts/${accountId}/keys`,
        ),
        fc.oneof(
          anyJson,
          fc.record(
            {
              name: hostileText,
              balanceUsd: anyJson,
              amountUsd: anyJson,
              reference: hostileText,
              models: anyJson,
            },
            { requiredKeys: [] },
          ),
        ),
        async (path, body) => {
          const res = await request(h.app)
            .post(path)
            .set('Authorization', admin)
            .set('Content-Type', 'application/json')
            .send(JSON.stringify(body));
          expectClientErrorOrSuccess(res, path);
        },
      ),
      { numRuns: runs, seed: SEED },
    );
  });
}

describe('fuzzing the task and admin APIs (embedded)', () => taskApiProperties(false));
describeRedis('fuzzing the task and admin APIs (Redis)', () => taskApiProperties(true));

describe('fuzzing the gateway bodies it reads (embedded)', () => {
  let base = '';
  let key = '';
  let vendorCalls = () => 0;
  useGateway({ overlay: UNLIMITED }, 100, (s) => {
    base = s.gw.base;
    key = s.key;
    vendorCalls = () => s.vendor.received.length;
  });

  test.each([
    ['/v1/messages', 'x-api-key', 'error'],
    ['/v1/chat/completions', 'authorization', 'error'],
    ['/v1/responses', 'authorization', 'error'],
    ['/v1beta/models/gemini-x:generateContent', 'x-goog-api-key', 'error'],
  ])(
    '%s: any body is forwarded or refused in the vendor shape, never a 5xx of Genway',
    async (path, header) => {
      await fc.assert(
        fc.asyncProperty(
          fc.oneof(
            rawBody,
            fc
              .record(
                { model: fc.oneof(hostileText, anyJson), stream: anyJson, messages: anyJson, input: anyJson },
                { requiredKeys: [] },
              )
              .map((v) => JSON.stringify(v)),
          ),
          async (text) => {
            const before = vendorCalls();
            const res = await fetch(`${base}${path}`, {
              method: 'POST',
              headers: {
                [header]: header === 'authorization' ? `Bearer ${key}` : key,
                'content-type': 'application/json',
              },
              body: text,
            });
            const answer = await res.text();
            const forwarded = vendorCalls() > before;
            // Forwarded: the mock vendor's answer, whatever it is. Refused by Genway: a 4xx in the vendor's shape.
            if (!forwarded) {
              if (!CLIENT_ERRORS.includes(res.status))
                throw new Error(`${path}: HTTP ${res.status} ${answer.slice(0, 300)}`);
              expect(JSON.parse(answer)).toHaveProperty('error');
            }
          },
        ),
        { numRuns: RUNS, seed: SEED },
      );
    },
  );
});
