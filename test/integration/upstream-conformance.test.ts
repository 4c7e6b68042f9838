/**
 * One suite for every upstream type (src/gateway/upstreams/): a new type is a module there and an entry in CASES here.
 * Each type is reached through a route by a caller of the format it speaks, against a mock that checks what the real
 * service checks (its credential, its path, its body). The same checks for each: a JSON call and a stream reach it
 * with its credential and answer the caller; its 429 before any byte hands the call to the route's next target; its
 * 400 reaches the caller in the caller's own error shape and status; usage is metered under the route's name.
 */
import {
  DEFAULT_AWS_CREDENTIALS,
  DEFAULT_AZURE_KEYS,
  MOCK_TEXT,
  MockAzureOpenAI,
  MockBedrock,
  MockVertex,
} from '../helpers/cloud-mocks';
import { FormatMock } from '../helpers/format-mocks';
import { startGateway, type RunningGateway } from '../helpers/gateway';
import { MockVendor } from '../helpers/mock-vendor';
import { fundedKey } from '../helpers/services';

type Caller = 'messages' | 'chat' | 'generate';
interface Recorded {
  url: string;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
}
interface Started {
  mock: { url: string; received: Recorded[] };
  stop(): Promise<unknown>;
  /** Its `gateway.upstreams` entry (id `under-test`). */
  entry: Record<string, unknown>;
}
interface UpstreamCase {
  name: string;
  caller: Caller;
  /** The model's name at the upstream. */
  model: string;
  start(): Promise<Started>;
  /** Whether the mock took the request's credential (and it was Genway's upstream credential). */
  verified(mock: Started['mock'], r: Recorded): boolean;
  /** Where the model's name reached the upstream. */
  modelAt(r: Recorded): string | undefined;
  /** A prompt marker making the mock answer `status` in the service's own error shape. */
  fail(status: number): string;
  /** The text of a good answer. */
  text: RegExp;
}

const bodyModel = (r: Recorded) => (JSON.parse(r.body.toString()) as { model?: string }).model;
/** Gemini's and Vertex's `/models/{model}:action`, Bedrock's `/model/{model}/action`. */
const pathModel = (r: Recorded) =>
  (/\/models\/([^/:]+):/.exec(decodeURIComponent(r.url)) ??
    /\/model\/([^/]+)\//.exec(decodeURIComponent(r.url)))?.[1];
const cloud = (m: { received: unknown[] }) => m as unknown as Started['mock'];
const formatMock = (format: 'chat' | 'messages' | 'generate') => new FormatMock(format).start();

const CASES: UpstreamCase[] = [
  {
    name: 'anthropic',
    caller: 'messages',
    model: 'claude-upstream',
    start: async () => {
      const mock = await formatMock('messages');
      return {
        mock,
        stop: () => mock.stop(),
        entry: { type: 'anthropic', baseUrl: mock.url, apiKeys: ['sk-ant-conf'] },
      };
    },
    verified: (_m, r) =>
      r.headers['x-api-key'] === 'sk-ant-conf' && r.headers['anthropic-version'] !== undefined,
    modelAt: bodyModel,
    fail: (status) => `[mock:fail=${status}]`,
    text: /messages mock/,
  },
  {
    name: 'openai',
    caller: 'chat',
    model: 'gpt-upstream',
    start: async () => {
      const mock = await formatMock('chat');
      return {
        mock,
        stop: () => mock.stop(),
        entry: { type: 'openai', baseUrl: mock.url, apiKeys: ['sk-conf'] },
      };
    },
    verified: (_m, r) => r.headers.authorization === 'Bearer sk-conf',
    modelAt: bodyModel,
    fail: (status) => `[mock:fail=${status}]`,
    text: /chat mock/,
  },
  {
    name: 'gemini',
    caller: 'generate',
    model: 'gemini-upstream',
    start: async () => {
      const mock = await formatMock('generate');
      return {
        mock,
        stop: () => mock.stop(),
        entry: { type: 'gemini', baseUrl: mock.url, apiKeys: ['AIza-conf'] },
      };
    },
    verified: (_m, r) => r.headers['x-goog-api-key'] === 'AIza-conf',
    modelAt: pathModel,
    fail: (status) => `[mock:fail=${status}]`,
    text: /generate mock|generateContent mock|mock/,
  },
  {
    name: 'azure-openai',
    caller: 'chat',
    model: 'gpt-deployment',
    start: async () => {
      const mock = await new MockAzureOpenAI().start();
      return {
        mock: cloud(mock),
        stop: () => mock.close(),
        entry: { type: 'azure-openai', baseUrl: mock.url, apiKeys: [DEFAULT_AZURE_KEYS[1]] },
      };
    },
    verified: (_m, r) =>
      (r as unknown as { verified: boolean }).verified && r.headers['api-key'] === DEFAULT_AZURE_KEYS[1],
    modelAt: bodyModel,
    fail: (status) => `[mock:status=${status}]`,
    text: new RegExp(MOCK_TEXT),
  },
  {
    name: 'bedrock',
    caller: 'messages',
    model: 'anthropic.claude-upstream-v1:0',
    start: async () => {
      const mock = await new MockBedrock().start();
      return {
        mock: cloud(mock),
        stop: () => mock.close(),
        entry: { type: 'bedrock', region: 'us-east-1', baseUrl: mock.url, ...DEFAULT_AWS_CREDENTIALS },
      };
    },
    verified: (_m, r) => (r as unknown as { verified: boolean; auth: string }).auth === 'sigv4',
    modelAt: pathModel,
    fail: (status) => `[mock:status=${status}]`,
    text: new RegExp(MOCK_TEXT),
  },
  ...(['messages', 'generate'] as const).map(
    (caller): UpstreamCase => ({
      name: `vertex (${caller === 'messages' ? 'Claude' : 'Gemini'})`,
      caller,
      model: caller === 'messages' ? 'claude-upstream@20250101' : 'gemini-upstream',
      start: async () => {
        const mock = await new MockVertex().start();
        return {
          mock: cloud(mock),
          stop: () => mock.close(),
          entry: {
            type: 'vertex',
            projectId: mock.project,
            region: mock.region,
            baseUrl: mock.url,
            credentials: mock.serviceAccount(),
          },
        };
      },
      verified: (_m, r) => (r as unknown as { auth: string }).auth === 'oauth',
      modelAt: pathModel,
      fail: (status) => `[mock:status=${status}]`,
      text: new RegExp(MOCK_TEXT),
    }),
  ),
];

/** A call in the caller's format, raw: its status, body and (streams) the text it carried. */
async function callAs(
  caller: Caller,
  base: string,
  key: string,
  model: string,
  prompt: string,
  stream: boolean,
): Promise<{ status: number; json?: Record<string, unknown>; text: string }> {
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  let url: string;
  let body: unknown;
  if (caller === 'messages') {
    Object.assign(headers, { 'x-api-key': key, 'anthropic-version': '2023-06-01' });
    url = `${base}/v1/messages`;
    body = {
      model,
      max_tokens: 64,
      messages: [{ role: 'user', content: prompt }],
      ...(stream ? { stream } : {}),
    };
  } else if (caller === 'chat') {
    headers.authorization = `Bearer ${key}`;
    url = `${base}/v1/chat/completions`;
    body = { model, messages: [{ role: 'user', content: prompt }], ...(stream ? { stream } : {}) };
  } else {
    headers['x-goog-api-key'] = key;
    url = `${base}/v1beta/models/${model}:${stream ? 'streamGenerateContent?alt=sse' : 'generateContent'}`;
    body = { contents: [{ role: 'user', parts: [{ text: prompt }] }] };
  }
  const res = await fetch(url, { method: 'POST', headers, body: JSON.stringify(body) });
  const raw = await res.text();
  if (!stream || res.status !== 200) {
    const json = JSON.parse(raw) as Record<string, unknown>;
    return { status: res.status, json, text: textOf(caller, json) };
  }
  let text = '';
  for (const line of raw.split('\n')) {
    if (!line.startsWith('data: ') || line === 'data: [DONE]') continue;
    const event = JSON.parse(line.slice(6)) as Record<string, unknown>;
    text += deltaOf(caller, event);
  }
  return { status: res.status, text };
}

type Json = Record<string, unknown>;
const at = (v: unknown, ...path: (string | number)[]): unknown =>
  path.reduce<unknown>((o, k) => (o && typeof o === 'object' ? (o as Json)[k as string] : undefined), v);

function textOf(caller: Caller, json: Json): string {
  if (caller === 'messages') return String(at(json, 'content', 0, 'text') ?? '');
  if (caller === 'chat') return String(at(json, 'choices', 0, 'message', 'content') ?? '');
  return String(at(json, 'candidates', 0, 'content', 'parts', 0, 'text') ?? '');
}

function deltaOf(caller: Caller, event: Json): string {
  if (caller === 'messages')
    return event.type === 'content_block_delta' ? String(at(event, 'delta', 'text') ?? '') : '';
  if (caller === 'chat') return String(at(event, 'choices', 0, 'delta', 'content') ?? '');
  return String(at(event, 'candidates', 0, 'content', 'parts', 0, 'text') ?? '');
}

/** Each format's error shape, as its SDK reads it. */
function errorShaped(caller: Caller, json: Json | undefined, status: number): void {
  if (caller === 'messages')
    expect(json).toMatchObject({
      type: 'error',
      error: { type: expect.any(String), message: expect.any(String) },
    });
  else if (caller === 'chat') expect(json).toMatchObject({ error: { message: expect.any(String) } });
  else expect(json).toMatchObject({ error: { code: status, message: expect.any(String) } });
}

describe.each(CASES)('upstream type $name', (c) => {
  let started: Started;
  let backup: MockVendor;
  let gw: RunningGateway;
  let key: string;
  let keyId: string;

  beforeAll(async () => {
    started = await c.start();
    backup = await new MockVendor().start();
    gw = await startGateway(backup.url, {
      gateway: {
        failover: { backoffMs: 0, maxBackoffMs: 0 },
        upstreams: [{ id: 'under-test', ...started.entry }],
        routes: [
          { model: 'conformance', targets: [{ upstream: 'under-test', model: c.model }] },
          {
            model: 'conformance-fallback',
            targets: [
              { upstream: 'under-test', model: c.model },
              { upstream: c.caller === 'messages' ? 'anthropic' : c.caller === 'chat' ? 'openai' : 'gemini' },
            ],
          },
        ],
      },
    });
  });
  afterAll(async () => {
    await gw?.close();
    await Promise.all([started?.stop(), backup?.stop()]);
  });
  beforeEach(async () => {
    ({ key, keyId } = await fundedKey(gw.h.services, 10));
  });

  test('a JSON call reaches it with its credential, the model its own, and answers the caller', async () => {
    const before = started.mock.received.length;
    const answer = await callAs(c.caller, gw.base, key, 'conformance', 'Hello there', false);
    expect(answer.status).toBe(200);
    expect(answer.text).toMatch(c.text);
    // (A token grant the call needed first is recorded too.)
    const got = started.mock.received.slice(before).find((r) => !r.url.startsWith('/token'))!;
    expect(c.verified(started.mock, got)).toBe(true);
    expect(c.modelAt(got)).toBe(c.model);
  });

  test('a stream reaches the caller as server-sent events', async () => {
    const answer = await callAs(c.caller, gw.base, key, 'conformance', 'Hello there', true);
    expect(answer.status).toBe(200);
    expect(answer.text).toMatch(c.text);
  });

  test('its 429 before any byte hands the call to the next target', async () => {
    const [own, other] = [started.mock.received.length, backup.received.length];
    const answer = await callAs(c.caller, gw.base, key, 'conformance-fallback', `Hi ${c.fail(429)}`, false);
    expect(answer.status).toBe(200);
    expect(started.mock.received.length - own).toBe(1);
    expect(backup.received.length - other).toBe(1);
  });

  test('its 400 reaches the caller in the caller’s shape and status, and is not retried', async () => {
    const own = started.mock.received.length;
    const answer = await callAs(c.caller, gw.base, key, 'conformance-fallback', `Hi ${c.fail(400)}`, false);
    expect(answer.status).toBe(400);
    errorShaped(c.caller, answer.json, 400);
    expect(started.mock.received.length - own).toBe(1);
  });

  test('usage is metered under the route’s name', async () => {
    await callAs(c.caller, gw.base, key, 'conformance', 'Hello there', false);
    await gw.h.services.gateway.flushUsage();
    const usage = await gw.h.services.store.usage.get(keyId);
    expect(Object.keys(usage)).toEqual(['conformance']);
    expect(usage.conformance.requests).toBe(1);
    expect(usage.conformance.input + usage.conformance.output).toBeGreaterThan(0);
  });
});
