import http from 'node:http';
import type { AddressInfo } from 'node:net';
import zlib from 'node:zlib';
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { trace } from '@opentelemetry/api';
import { ConfigError, loadConfig } from '../../src/config';
import { fundedKey } from '../helpers/services';
import { settled } from '../helpers/eventually';
import { startGateway, type RunningGateway } from '../helpers/gateway';
import { MockVendor } from '../helpers/mock-vendor';

type AttributeValue = string | number | boolean | AttributeValue[] | undefined;
type Attributes = Record<string, AttributeValue>;

/** One span as an OTLP/HTTP JSON export carries it, with its attributes flattened to plain values. */
interface ExportedSpan {
  name: string;
  kind: number;
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  startNs: bigint;
  endNs: bigint;
  status: { code?: number };
  attributes: Attributes;
  events: { name: string; timeNs: bigint }[];
  resource: Attributes;
  scope: string;
}

/** OTLP's AnyValue as a plain value (ints may arrive as JSON numbers or, per the OTLP JSON mapping, strings). */
function plain(value: Record<string, unknown> | undefined): AttributeValue {
  if (!value) return undefined;
  if ('stringValue' in value) return value.stringValue as string;
  if ('intValue' in value) return Number(value.intValue);
  if ('doubleValue' in value) return Number(value.doubleValue);
  if ('boolValue' in value) return value.boolValue as boolean;
  if ('arrayValue' in value)
    return ((value.arrayValue as { values?: Record<string, unknown>[] }).values ?? []).map(plain);
  return undefined;
}

type KeyValue = { key: string; value: Record<string, unknown> };
const attributesOf = (list: KeyValue[] | undefined): Attributes =>
  Object.fromEntries((list ?? []).map((kv) => [kv.key, plain(kv.value)]));

/** A real OTLP/HTTP traces receiver on loopback: POST /v1/traces, JSON (gzip too), every span kept. */
async function startOtlpReceiver() {
  const spans: ExportedSpan[] = [];
  const requests: { path: string; contentType?: string; headers: http.IncomingHttpHeaders }[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      requests.push({ path: req.url!, contentType: req.headers['content-type'], headers: req.headers });
      if (req.method !== 'POST' || req.url !== '/v1/traces') {
        res.writeHead(404).end();
        return;
      }
      let body = Buffer.concat(chunks);
      if (req.headers['content-encoding'] === 'gzip') body = zlib.gunzipSync(body);
      const doc = JSON.parse(body.toString('utf8')) as {
        resourceSpans: {
          resource?: { attributes?: KeyValue[] };
          scopeSpans: {
            scope?: { name?: string };
            spans: {
              name: string;
              kind: number;
              traceId: string;
              spanId: string;
              parentSpanId?: string;
              startTimeUnixNano: string;
              endTimeUnixNano: string;
              status?: { code?: number };
              attributes?: KeyValue[];
              events?: { name: string; timeUnixNano: string }[];
            }[];
          }[];
        }[];
      };
      for (const rs of doc.resourceSpans) {
        const resource = attributesOf(rs.resource?.attributes);
        for (const ss of rs.scopeSpans) {
          for (const s of ss.spans) {
            spans.push({
              name: s.name,
              kind: s.kind,
              traceId: s.traceId,
              spanId: s.spanId,
              parentSpanId: s.parentSpanId || undefined,
              startNs: BigInt(s.startTimeUnixNano),
              endNs: BigInt(s.endTimeUnixNano),
              status: s.status ?? {},
              attributes: attributesOf(s.attributes),
              events: (s.events ?? []).map((e) => ({ name: e.name, timeNs: BigInt(e.timeUnixNano) })),
              resource,
              scope: ss.scope?.name ?? '',
            });
          }
        }
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    spans,
    requests,
    /** The one span of a request (by Genway's request id), once it has been exported. */
    async spanOf(requestId: string): Promise<ExportedSpan> {
      const count = () => spans.filter((s) => s.attributes['genway.request_id'] === requestId).length;
      expect(await settled(count, 1)).toBe(1);
      return spans.find((s) => s.attributes['genway.request_id'] === requestId)!;
    },
    close: async () => {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    },
  };
}

const SPAN_KIND_SERVER = 2;
const SPAN_KIND_CLIENT = 3;
const STATUS_ERROR = 2;
const seconds = (ns: bigint) => Number(ns) / 1e9;

/** What every gateway span of these tests carries (the mock vendor plays every vendor, on loopback). */
function common(vendorUrl: string, route: string) {
  return {
    'http.request.method': 'POST',
    'server.address': '127.0.0.1',
    'server.port': Number(new URL(vendorUrl).port),
    'genway.route': route,
  };
}

describe('traces over OTLP/HTTP (tracing configured)', () => {
  let receiver: Awaited<ReturnType<typeof startOtlpReceiver>>;
  let vendor: MockVendor;
  let gw: RunningGateway;
  let key: string;
  let keyId: string;
  let accountId: string;

  beforeAll(async () => {
    receiver = await startOtlpReceiver();
    vendor = await new MockVendor().start();
    gw = await startGateway(vendor.url, {
      overlay: {
        tracing: {
          otlpEndpoint: `${receiver.url}/v1/traces`,
          serviceName: 'genway-test',
          exportDelayMs: 20,
          headers: { 'x-ingest-token': 'tok-123' },
        },
      },
    });
  });
  afterAll(async () => {
    await gw?.close();
    await vendor?.stop();
    await receiver?.close();
  });
  beforeEach(async () => {
    ({ key, keyId, accountId } = await fundedKey(gw.h.services, 100));
  });

  const openai = (headers: Record<string, string> = {}) =>
    new OpenAI({ baseURL: `${gw.base}/v1`, apiKey: key, maxRetries: 0, defaultHeaders: headers });
  const anthropic = (headers: Record<string, string> = {}) =>
    new Anthropic({ baseURL: gw.base, apiKey: key, maxRetries: 0, defaultHeaders: headers });

  /** Time to first chunk is there, not negative, within the span, and its event sits at the same instant. */
  function expectFirstChunkWithin(span: ExportedSpan): void {
    const ttft = span.attributes['gen_ai.response.time_to_first_chunk'] as number;
    expect(typeof ttft).toBe('number');
    expect(ttft).toBeGreaterThanOrEqual(0);
    expect(ttft).toBeLessThanOrEqual(seconds(span.endNs - span.startNs));
    expect(span.events.map((e) => e.name)).toEqual(['genway.upstream.first_byte']);
    const event = span.events[0].timeNs;
    expect(event >= span.startNs && event <= span.endNs).toBe(true);
    // The attribute is the event's distance from the start (the export rounds to whole nanoseconds).
    expect(Math.abs(seconds(event - span.startNs) - ttft)).toBeLessThan(1e-6);
  }

  test('openai chat, not streamed: one CLIENT span with the gen_ai attributes the vendor reported', async () => {
    const { data, response } = await openai()
      .chat.completions.create({ model: 'gpt-test', messages: [{ role: 'user', content: 'Hi' }] })
      .withResponse();
    expect(data.usage).toEqual({
      prompt_tokens: 20,
      completion_tokens: 6,
      total_tokens: 26,
      prompt_tokens_details: { cached_tokens: 4 },
      completion_tokens_details: { reasoning_tokens: 1 },
    });
    const requestId = response.headers.get('genway-request-id')!;
    const span = await receiver.spanOf(requestId);
    expect(span.name).toBe('chat gpt-test');
    expect(span.kind).toBe(SPAN_KIND_CLIENT);
    expect(span.status.code ?? 0).not.toBe(STATUS_ERROR);
    expect(span.parentSpanId).toBeUndefined();
    const { 'gen_ai.response.time_to_first_chunk': ttft, ...rest } = span.attributes;
    expect(ttft).toEqual(expect.any(Number));
    expect(rest).toEqual({
      ...common(vendor.url, '/v1/chat/completions'),
      'gen_ai.operation.name': 'chat',
      'gen_ai.provider.name': 'openai',
      'gen_ai.system': 'openai',
      'gen_ai.request.model': 'gpt-test',
      // A JSON body's usage is read without its model (a stream's first event names it).
      // The vendor's totals: prompt_tokens includes the cached ones, completion_tokens the reasoning ones.
      'gen_ai.usage.input_tokens': 20,
      'gen_ai.usage.output_tokens': 6,
      'gen_ai.usage.cache_read.input_tokens': 4,
      'gen_ai.usage.cache_creation.input_tokens': 0,
      'gen_ai.usage.reasoning.output_tokens': 1,
      'http.response.status_code': 200,
      'genway.key_id': keyId,
      'genway.account_id': accountId,
      'genway.request_id': requestId,
    });
    expectFirstChunkWithin(span);
    expect(span.resource['service.name']).toBe('genway-test');
    expect(span.scope).toBe('genway');
    // The export went where configured, as OTLP JSON, with the configured headers.
    const exported = receiver.requests.find((r) => r.path === '/v1/traces')!;
    expect(exported.contentType).toBe('application/json');
    expect(exported.headers['x-ingest-token']).toBe('tok-123');
  });

  test('openai chat, streamed: the usage Genway asked for lands on the span; a traceparent is the parent', async () => {
    const traceId = '4bf92f3577b34da6a3ce929d0e0e4736';
    const parentId = '00f067aa0ba902b7';
    const stream = await openai({ traceparent: `00-${traceId}-${parentId}-01` })
      .chat.completions.create({
        model: 'gpt-test',
        stream: true,
        messages: [{ role: 'user', content: 'Hi' }],
      })
      .withResponse();
    let text = '';
    for await (const chunk of stream.data) text += chunk.choices[0]?.delta?.content ?? '';
    expect(text).toBe('Hello there');
    const span = await receiver.spanOf(stream.response.headers.get('genway-request-id')!);
    expect(span.name).toBe('chat gpt-test');
    expect(span.traceId).toBe(traceId);
    expect(span.parentSpanId).toBe(parentId);
    // The client's header goes on to the vendor as sent (Genway does not put its own span there).
    expect(vendor.last().headers.traceparent).toBe(`00-${traceId}-${parentId}-01`);
    expect(span.attributes).toMatchObject({
      'gen_ai.operation.name': 'chat',
      'gen_ai.provider.name': 'openai',
      'gen_ai.request.model': 'gpt-test',
      'gen_ai.response.model': 'gpt-test',
      'gen_ai.usage.input_tokens': 20,
      'gen_ai.usage.output_tokens': 6,
      'gen_ai.usage.cache_read.input_tokens': 4,
      'gen_ai.usage.reasoning.output_tokens': 1,
      'http.response.status_code': 200,
      'genway.key_id': keyId,
    });
    expectFirstChunkWithin(span);
  });

  test('openai embeddings: operation embeddings', async () => {
    const { response } = await openai()
      .embeddings.create({ model: 'embed-test', input: ['a', 'b'] })
      .withResponse();
    const span = await receiver.spanOf(response.headers.get('genway-request-id')!);
    expect(span.name).toBe('embeddings embed-test');
    expect(span.attributes).toMatchObject({
      'gen_ai.operation.name': 'embeddings',
      'gen_ai.request.model': 'embed-test',
      'gen_ai.usage.input_tokens': 6, // 3 per input, as the mock vendor reports
      'gen_ai.usage.output_tokens': 0,
    });
  });

  test('anthropic messages, not streamed: provider anthropic, the vendor’s counts', async () => {
    const { response } = await anthropic()
      .messages.create({ model: 'claude-test', max_tokens: 64, messages: [{ role: 'user', content: 'Hi' }] })
      .withResponse();
    const span = await receiver.spanOf(response.headers.get('genway-request-id')!);
    expect(span.name).toBe('chat claude-test');
    expect(span.kind).toBe(SPAN_KIND_CLIENT);
    const { 'gen_ai.response.time_to_first_chunk': ttft, ...rest } = span.attributes;
    expect(ttft).toEqual(expect.any(Number));
    expect(rest).toEqual({
      ...common(vendor.url, '/v1/messages'),
      'gen_ai.operation.name': 'chat',
      'gen_ai.provider.name': 'anthropic',
      'gen_ai.system': 'anthropic',
      'gen_ai.request.model': 'claude-test',
      'gen_ai.usage.input_tokens': 12,
      'gen_ai.usage.output_tokens': 3,
      'gen_ai.usage.cache_read.input_tokens': 0,
      'gen_ai.usage.cache_creation.input_tokens': 0,
      'gen_ai.usage.reasoning.output_tokens': 0,
      'http.response.status_code': 200,
      'genway.key_id': keyId,
      'genway.account_id': accountId,
      'genway.request_id': response.headers.get('genway-request-id')!,
    });
    expectFirstChunkWithin(span);
  });

  test('anthropic messages, streamed: input tokens include the cache reads (25 + 5), output 7', async () => {
    const traceId = '0af7651916cd43dd8448eb211c80319c';
    const parentId = 'b7ad6b7169203331';
    const { data, response } = await anthropic({ traceparent: `00-${traceId}-${parentId}-01` })
      .messages.create({
        model: 'claude-test',
        max_tokens: 64,
        stream: true,
        messages: [{ role: 'user', content: 'Hi' }],
      })
      .withResponse();
    for await (const event of data) void event;
    const span = await receiver.spanOf(response.headers.get('genway-request-id')!);
    expect(span.name).toBe('chat claude-test');
    expect(span.traceId).toBe(traceId);
    expect(span.parentSpanId).toBe(parentId);
    expect(span.attributes).toMatchObject({
      'gen_ai.provider.name': 'anthropic',
      'gen_ai.request.model': 'claude-test',
      'gen_ai.response.model': 'claude-test',
      'gen_ai.usage.input_tokens': 30,
      'gen_ai.usage.cache_read.input_tokens': 5,
      'gen_ai.usage.cache_creation.input_tokens': 0,
      'gen_ai.usage.output_tokens': 7,
      'http.response.status_code': 200,
    });
    expectFirstChunkWithin(span);
  });

  test('gemini generateContent: operation generate_content, provider gcp.gemini, the model from the path', async () => {
    const res = await fetch(`${gw.base}/v1beta/models/gemini-test:generateContent`, {
      method: 'POST',
      headers: { 'x-goog-api-key': key, 'content-type': 'application/json' },
      body: JSON.stringify({ contents: [{ role: 'user', parts: [{ text: 'Hi' }] }] }),
    });
    expect(res.status).toBe(200);
    await res.arrayBuffer();
    const span = await receiver.spanOf(res.headers.get('genway-request-id')!);
    expect(span.name).toBe('generate_content gemini-test');
    expect(span.attributes).toMatchObject({
      'gen_ai.operation.name': 'generate_content',
      'gen_ai.provider.name': 'gcp.gemini',
      'gen_ai.system': 'gcp.gemini',
      'gen_ai.request.model': 'gemini-test',
      // promptTokenCount 9; candidatesTokenCount 4 plus thoughtsTokenCount 3
      'gen_ai.usage.input_tokens': 9,
      'gen_ai.usage.output_tokens': 7,
      'gen_ai.usage.reasoning.output_tokens': 3,
      'genway.route': '/(v1beta|v1|v1alpha)/(models|tunedModels)/{model}:generateContent',
    });
  });

  test('a traceparent that is not sampled: the call is not recorded', async () => {
    const { response } = await openai({
      traceparent: '00-5bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00',
    })
      .chat.completions.create({ model: 'gpt-test', messages: [{ role: 'user', content: 'Hi' }] })
      .withResponse();
    const requestId = response.headers.get('genway-request-id')!;
    // Its span (if any) has ended once the access line is written; then the flush sends whatever was recorded.
    expect(await settled(() => gw.h.logs.text.includes(requestId), true)).toBe(true);
    await gw.h.services.tracing!.flush();
    expect(receiver.spans.filter((s) => s.attributes['genway.request_id'] === requestId)).toEqual([]);
    expect(receiver.spans.filter((s) => s.traceId === '5bf92f3577b34da6a3ce929d0e0e4736')).toEqual([]);
  });

  test('a vendor 5xx: error status, error.type and the status code', async () => {
    vendor.next((_r, res) =>
      res
        .writeHead(500, { 'content-type': 'application/json' })
        .end(JSON.stringify({ error: { message: 'boom', type: 'server_error' } })),
    );
    const err = await openai()
      .chat.completions.create({ model: 'gpt-test', messages: [{ role: 'user', content: 'Hi' }] })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.InternalServerError);
    const requestId = (err as InstanceType<typeof OpenAI.APIError>).headers?.get('genway-request-id');
    const span = await receiver.spanOf(requestId!);
    expect(span.status.code).toBe(STATUS_ERROR);
    expect(span.attributes).toMatchObject({
      'http.response.status_code': 500,
      'error.type': '500',
      'gen_ai.request.model': 'gpt-test',
    });
    expect(span.attributes['gen_ai.usage.input_tokens']).toBeUndefined();
  });

  test('an unreachable vendor: 502 with error.type upstream_unreachable; a refused key: 401, unauthorized, no error status', async () => {
    const dead = await startGateway('http://127.0.0.1:9', {
      overlay: { tracing: { otlpEndpoint: `${receiver.url}/v1/traces`, exportDelayMs: 20 } },
    });
    try {
      const { key: deadKey } = await fundedKey(dead.h.services, 1);
      const client = new OpenAI({ baseURL: `${dead.base}/v1`, apiKey: deadKey, maxRetries: 0 });
      const err = (await client.chat.completions
        .create({ model: 'gpt-test', messages: [{ role: 'user', content: 'Hi' }] })
        .catch((e: unknown) => e)) as InstanceType<typeof OpenAI.APIError>;
      expect(err.status).toBe(502);
      const span = await receiver.spanOf(err.headers!.get('genway-request-id')!);
      expect(span.status.code).toBe(STATUS_ERROR);
      expect(span.attributes).toMatchObject({
        'http.response.status_code': 502,
        'error.type': 'upstream_unreachable',
        'gen_ai.provider.name': 'openai',
      });
      expect(span.attributes['gen_ai.response.time_to_first_chunk']).toBeUndefined();
    } finally {
      await dead.close();
    }
    const refused = (await new OpenAI({
      baseURL: `${gw.base}/v1`,
      apiKey: 'gwk_wrong',
      maxRetries: 0,
    }).chat.completions
      .create({ model: 'gpt-test', messages: [{ role: 'user', content: 'Hi' }] })
      .catch((e: unknown) => e)) as InstanceType<typeof OpenAI.APIError>;
    expect(refused.status).toBe(401);
    const span = await receiver.spanOf(refused.headers!.get('genway-request-id')!);
    expect(span.name).toBe('chat'); // the model is not read for a caller that is not admitted
    expect(span.status.code ?? 0).not.toBe(STATUS_ERROR);
    expect(span.attributes).toMatchObject({ 'http.response.status_code': 401, 'error.type': 'unauthorized' });
    expect(span.attributes['genway.key_id']).toBeUndefined();
  });

  test('a task submission: a genway.task.submit span with the task, its model and its charge', async () => {
    const traceId = '11111111111111111111111111111111';
    const res = await fetch(`${gw.base}/api/v1/generateTask/image-gen`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${key}`,
        'content-type': 'application/json',
        'x-request-id': 'trace-test-task-1',
        traceparent: `00-${traceId}-2222222222222222-01`,
      },
      body: JSON.stringify({ input: { mode: 'text-to-image', prompt: 'fox' } }),
    });
    expect(res.status).toBe(200);
    const { taskId } = ((await res.json()) as { data: { taskId: string } }).data;
    const detail = await fetch(`${gw.base}/api/v1/tasks/${taskId}`, {
      headers: { authorization: `Bearer ${key}` },
    });
    const { chargeUsd } = ((await detail.json()) as { data: { chargeUsd: number } }).data;
    expect(chargeUsd).toBeGreaterThan(0);
    const span = await receiver.spanOf('trace-test-task-1');
    expect(span.name).toBe('genway.task.submit');
    expect(span.kind).toBe(SPAN_KIND_SERVER);
    expect(span.traceId).toBe(traceId);
    expect(span.attributes).toEqual({
      'genway.task.model': 'image-gen',
      'genway.task_id': taskId,
      'genway.charge_usd': chargeUsd,
      'genway.request_id': 'trace-test-task-1',
      'genway.key_id': keyId,
      'genway.account_id': accountId,
      'http.response.status_code': 200,
    });
  });

  test('no global tracer provider is registered: only Genway’s own spans exist', () => {
    expect(trace.getTracerProvider().getTracer('x').startSpan('y').isRecording()).toBe(false);
  });
});

describe('shutdown', () => {
  test('closing the services exports the spans still waiting for their batch', async () => {
    const receiver = await startOtlpReceiver();
    const vendor = await new MockVendor().start();
    // A batch that would wait ten minutes: only the shutdown's flush can send it.
    const gw = await startGateway(vendor.url, {
      overlay: { tracing: { otlpEndpoint: `${receiver.url}/v1/traces`, exportDelayMs: 600_000 } },
    });
    try {
      const { key } = await fundedKey(gw.h.services, 10);
      const { response } = await new OpenAI({
        baseURL: `${gw.base}/v1`,
        apiKey: key,
        maxRetries: 0,
      }).chat.completions
        .create({ model: 'gpt-test', messages: [{ role: 'user', content: 'Hi' }] })
        .withResponse();
      const requestId = response.headers.get('genway-request-id')!;
      // The response has closed on the server side once the access line is written.
      expect(await settled(() => gw.h.logs.text.includes(requestId), true)).toBe(true);
      expect(receiver.spans).toEqual([]);
      await gw.close();
      expect(receiver.spans.map((s) => [s.name, s.attributes['genway.request_id']])).toEqual([
        ['chat gpt-test', requestId],
      ]);
    } finally {
      await vendor.stop();
      await receiver.close();
    }
  });
});

describe('tracing not configured', () => {
  test('no tracer exists, a call pays for none, and nothing is exported', async () => {
    const receiver = await startOtlpReceiver();
    const vendor = await new MockVendor().start();
    const gw = await startGateway(vendor.url);
    try {
      expect(gw.h.services.config.tracing.otlpEndpoint).toBeUndefined();
      expect(gw.h.services.tracing).toBeUndefined();
      const { key } = await fundedKey(gw.h.services, 10);
      const client = new OpenAI({
        baseURL: `${gw.base}/v1`,
        apiKey: key,
        maxRetries: 0,
        defaultHeaders: { traceparent: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01' },
      });
      const reply = await client.chat.completions.create({
        model: 'gpt-test',
        messages: [{ role: 'user', content: 'Hi' }],
      });
      expect(reply.usage?.prompt_tokens).toBe(20);
      // The default export delay is 5 s: wait past a short one that would have fired, then look.
      await new Promise((r) => setTimeout(r, 200));
      expect(receiver.requests).toEqual([]);
      expect(trace.getTracerProvider().getTracer('x').startSpan('y').isRecording()).toBe(false);
    } finally {
      await gw.close();
      await vendor.stop();
      await receiver.close();
    }
  });
});

describe('tracing config', () => {
  const load = (env: Record<string, string>, overlay?: Record<string, unknown>) =>
    loadConfig({ env: { GENWAY_ADMIN_TOKEN: 'test-admin-token-0123456789', ...env }, overlay });

  test('defaults: off, service genway, every trace sampled', () => {
    expect(load({}).tracing).toEqual({ serviceName: 'genway', sampleRatio: 1, exportDelayMs: 5000 });
  });

  test('OTEL_EXPORTER_OTLP_ENDPOINT gets /v1/traces; the per-signal variable is used as is and wins', () => {
    expect(load({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318/' }).tracing.otlpEndpoint).toBe(
      'http://collector:4318/v1/traces',
    );
    expect(load({ OTEL_EXPORTER_OTLP_ENDPOINT: 'https://otel.example.com/base' }).tracing.otlpEndpoint).toBe(
      'https://otel.example.com/base/v1/traces',
    );
    const both = load({
      OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318',
      OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://traces:9999/custom',
      OTEL_SERVICE_NAME: 'genway-eu',
    }).tracing;
    expect(both.otlpEndpoint).toBe('http://traces:9999/custom');
    expect(both.serviceName).toBe('genway-eu');
  });

  test('OTEL_EXPORTER_OTLP_HEADERS: name=value pairs, values percent-decoded; the per-signal variable wins', () => {
    expect(
      load({ OTEL_EXPORTER_OTLP_HEADERS: 'authorization=Bearer%20abc, x-team = ml' }).tracing.headers,
    ).toEqual({ authorization: 'Bearer abc', 'x-team': 'ml' });
    expect(
      load({ OTEL_EXPORTER_OTLP_HEADERS: 'a=1', OTEL_EXPORTER_OTLP_TRACES_HEADERS: 'b=2' }).tracing.headers,
    ).toEqual({ b: '2' });
  });

  test('bad values stop the start with one line naming the key', () => {
    expect(() => load({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'collector:4318' })).toThrow(ConfigError);
    expect(() => load({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'collector:4318' })).toThrow(
      /^config: tracing\.otlpEndpoint: /,
    );
    expect(() => load({}, { tracing: { sampleRatio: 1.5 } })).toThrow(/^config: tracing\.sampleRatio: /);
    expect(() => load({}, { tracing: { headers: { 'bad header': 'x' } } })).toThrow(
      /^config: tracing\.headers/,
    );
    expect(() => load({}, { tracing: { endpoint: 'http://x' } })).toThrow(
      'config: tracing: unknown key(s) endpoint',
    );
  });
});
