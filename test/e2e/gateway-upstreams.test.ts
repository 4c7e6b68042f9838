import Anthropic from '@anthropic-ai/sdk';
import { AnthropicBedrock } from '@anthropic-ai/bedrock-sdk';
import { AnthropicVertex } from '@anthropic-ai/vertex-sdk';
import { OAuth2Client } from 'google-auth-library';
import OpenAI from 'openai';
// @google/genai's fetch needs undici's global dispatcher inside jest's sandbox (see test/e2e/cloud-mocks.test.ts).
import 'undici';
import type * as GenAI from '@google/genai' with { 'resolution-mode': 'import' };
import {
  DEFAULT_AWS_CREDENTIALS,
  DEFAULT_AZURE_KEYS,
  DEFAULT_BEDROCK_API_KEY,
  MOCK_OUTPUT_TOKENS,
  MOCK_TEXT,
  MockAzureOpenAI,
  MockBedrock,
  MockVertex,
  mockPromptTokens,
} from '../helpers/cloud-mocks';
import { eventually, settled } from '../helpers/eventually';
import { freePort, startGateway, type RunningGateway } from '../helpers/gateway';
import { MESSAGES_STREAM, MockVendor } from '../helpers/mock-vendor';
import { storeModes } from '../helpers/redis';
import { ADMIN_TOKEN, chargedMicros, fundedKey } from '../helpers/services';

// eslint-disable-next-line @typescript-eslint/no-require-imports
const { GoogleGenAI } = require('@google/genai') as typeof GenAI;

const BEDROCK_MODEL = 'anthropic.claude-sonnet-4-5-20250929-v1:0';
const VERTEX_CLAUDE = 'claude-sonnet-4-5@20250929';
const HELLO = [{ role: 'user' as const, content: 'Hello there' }];
/** What the cloud mocks count for HELLO. */
const HELLO_TOKENS = 10;

/** A google-auth-library client holding the Genway key as its token: how Vertex clients are pointed at Genway. */
function genwayToken(key: string): OAuth2Client {
  const client = new OAuth2Client();
  client.setCredentials({ access_token: key, expiry_date: Date.now() + 3_600_000 });
  return client;
}

describe.each(storeModes)('upstreams and routes (%s store)', (_mode, redis) => {
  let bedrock: MockBedrock;
  let vertex: MockVertex;
  let azure: MockAzureOpenAI;
  let vendor: MockVendor;
  let gw: RunningGateway;
  let key: string;
  let accountId: string;
  let keyId: string;

  beforeAll(async () => {
    [bedrock, vertex, azure, vendor] = await Promise.all([
      new MockBedrock().start(),
      new MockVertex().start(),
      new MockAzureOpenAI().start(),
      new MockVendor().start(),
    ]);
    const dead = `http://127.0.0.1:${await freePort()}`;
    gw = await startGateway(vendor.url, {
      redis,
      gateway: {
        failover: { backoffMs: 0, maxBackoffMs: 0 },
        upstreams: [
          {
            id: 'bedrock-east',
            type: 'bedrock',
            region: 'us-east-1',
            baseUrl: bedrock.url,
            ...DEFAULT_AWS_CREDENTIALS,
          },
          {
            id: 'bedrock-key',
            type: 'bedrock',
            region: 'us-east-1',
            baseUrl: bedrock.url,
            apiKey: DEFAULT_BEDROCK_API_KEY,
          },
          {
            id: 'vertex-east',
            type: 'vertex',
            projectId: vertex.project,
            region: vertex.region,
            baseUrl: vertex.url,
            credentials: vertex.serviceAccount(),
          },
          { id: 'azure', type: 'azure-openai', baseUrl: azure.url, apiKeys: [DEFAULT_AZURE_KEYS[0]] },
          { id: 'vllm', type: 'openai', baseUrl: vendor.url },
          { id: 'claude-direct', type: 'anthropic', baseUrl: vendor.url, apiKeys: ['sk-ant-direct'] },
          { id: 'dead', type: 'anthropic', baseUrl: dead, apiKeys: ['sk-ant-dead'] },
        ],
        routes: [
          { model: 'claude-bedrock', targets: [{ upstream: 'bedrock-east', model: BEDROCK_MODEL }] },
          { model: 'claude-bedrock-key', targets: [{ upstream: 'bedrock-key', model: BEDROCK_MODEL }] },
          { model: 'claude-vertex', targets: [{ upstream: 'vertex-east', model: VERTEX_CLAUDE }] },
          { model: 'gemini-vertex', targets: [{ upstream: 'vertex-east', model: 'gemini-2.5-pro' }] },
          { model: 'gpt-azure', targets: [{ upstream: 'azure', model: 'gpt-4o-deploy' }] },
          { model: 'llama', targets: [{ upstream: 'vllm', model: 'meta-llama/Llama-3.1-8B' }] },
          {
            model: 'anthropic.claude-3-haiku',
            targets: [{ upstream: 'claude-direct', model: 'claude-3-haiku' }],
          },
          {
            model: 'claude-fallback',
            targets: [
              { upstream: 'dead' },
              { upstream: 'claude-direct' },
              { upstream: 'bedrock-east', model: BEDROCK_MODEL },
            ],
          },
          {
            model: 'claude-spread',
            strategy: 'weighted',
            targets: [
              { upstream: 'bedrock-east', model: BEDROCK_MODEL, weight: 3 },
              { upstream: 'vertex-east', model: VERTEX_CLAUDE, weight: 1 },
            ],
          },
          { model: 'claude', targets: [{ route: 'claude-fallback' }] },
        ],
        prices: { 'claude-bedrock': { inputPerMTokUsd: 3, outputPerMTokUsd: 15 } },
      },
    });
  });
  afterAll(async () => {
    await gw?.close();
    await Promise.all([bedrock?.close(), vertex?.close(), azure?.close(), vendor?.stop()]);
  });
  beforeEach(async () => {
    ({ key, accountId, keyId } = await fundedKey(gw.h.services, 10));
  });

  const anthropic = () => new Anthropic({ apiKey: key, baseURL: gw.base, maxRetries: 0 });
  const bodyOf = (r: { body: Buffer }) => JSON.parse(r.body.toString()) as Record<string, unknown>;

  describe('a Bedrock upstream (SigV4 with AWS’s signer, its event stream)', () => {
    test('the Anthropic SDK calls a route to Bedrock: the model in the path, the version and betas in the body, usage priced by the route', async () => {
      const before = bedrock.received.length;
      const message = await anthropic().beta.messages.create({
        model: 'claude-bedrock',
        max_tokens: 64,
        messages: HELLO,
        betas: ['context-1m-2025-08-07'],
      });
      expect(message.content).toEqual([{ type: 'text', text: MOCK_TEXT }]);
      expect(message.usage).toMatchObject({ input_tokens: HELLO_TOKENS, output_tokens: MOCK_OUTPUT_TOKENS });
      const got = bedrock.received[before];
      expect(got.path).toBe('/model/anthropic.claude-sonnet-4-5-20250929-v1%3A0/invoke');
      expect(got.verified).toBe(true);
      expect(got.auth).toBe('sigv4');
      expect(got.headers['anthropic-beta']).toBeUndefined();
      expect(got.headers['anthropic-version']).toBeUndefined();
      expect(got.headers['x-api-key']).toBeUndefined();
      expect(bodyOf(got)).toEqual({
        anthropic_version: 'bedrock-2023-05-31',
        anthropic_beta: ['context-1m-2025-08-07'],
        max_tokens: 64,
        messages: HELLO,
      });
      // 10 input tokens at 3 USD/MTok and 9 output at 15: 165 micro-USD, under the route's name.
      expect(await settled(chargedMicros(gw.h.services, accountId), [165])).toEqual([165]);
      await gw.h.services.gateway.flushUsage();
      expect(await gw.h.services.store.usage.get(keyId)).toEqual({
        'claude-bedrock': {
          requests: 1,
          input: HELLO_TOKENS,
          output: MOCK_OUTPUT_TOKENS,
          cacheRead: 0,
          cacheWrite: 0,
          reasoning: 0,
        },
      });
    });

    test('a stream comes back as server-sent events the SDK reads, metered', async () => {
      const before = bedrock.received.length;
      const stream = anthropic().messages.stream({
        model: 'claude-bedrock',
        max_tokens: 64,
        messages: HELLO,
      });
      const texts: string[] = [];
      stream.on('text', (t) => texts.push(t));
      const message = await stream.finalMessage();
      expect(texts.join('')).toBe(MOCK_TEXT);
      expect(message.usage).toMatchObject({ input_tokens: HELLO_TOKENS, output_tokens: MOCK_OUTPUT_TOKENS });
      expect(bedrock.received[before].path).toBe(
        '/model/anthropic.claude-sonnet-4-5-20250929-v1%3A0/invoke-with-response-stream',
      );
      expect(bodyOf(bedrock.received[before])).not.toHaveProperty('stream');
      expect(await settled(chargedMicros(gw.h.services, accountId), [165])).toEqual([165]);
    });

    test('a Bedrock API key goes as a Bearer token', async () => {
      const before = bedrock.received.length;
      await anthropic().messages.create({ model: 'claude-bedrock-key', max_tokens: 8, messages: HELLO });
      expect(bedrock.received[before]).toMatchObject({ verified: true, auth: 'apiKey' });
    });

    test('an answer Genway cannot read (a stream that is no event stream) is a 502 in the caller’s shape, charged nothing', async () => {
      bedrock.next((_req, res) => {
        res.writeHead(200, { 'content-type': 'text/html' });
        res.end('<html>a captive portal</html>');
      });
      const err = await anthropic()
        .messages.stream({ model: 'claude-bedrock', max_tokens: 8, messages: HELLO })
        .finalMessage()
        .catch((e: unknown) => e);
      expect(err).toBeInstanceOf(Anthropic.InternalServerError);
      expect((err as InstanceType<typeof Anthropic.APIError>).status).toBe(502);
      expect((err as InstanceType<typeof Anthropic.APIError>).error).toEqual({
        type: 'error',
        error: { type: 'api_error', message: 'Upstream answered a stream as text/html, not an event stream' },
      });
      expect(await chargedMicros(gw.h.services, accountId)()).toEqual([]);
    });

    test('Bedrock’s error is the caller’s error, in Anthropic’s shape and status', async () => {
      const err = await anthropic()
        .messages.create({
          model: 'claude-bedrock',
          max_tokens: 8,
          messages: [{ role: 'user', content: 'x [mock:status=400]' }],
        })
        .catch((e: unknown) => e);
      expect(err).toBeInstanceOf(Anthropic.BadRequestError);
      const e = err as InstanceType<typeof Anthropic.BadRequestError>;
      expect(e.status).toBe(400);
      expect(e.error).toMatchObject({ type: 'error', error: { type: 'invalid_request_error' } });
      expect(await chargedMicros(gw.h.services, accountId)()).toEqual([]);
    });
  });

  describe('a Vertex upstream (a service account’s token from Google’s auth library)', () => {
    test('Claude through rawPredict and streamRawPredict; concurrent calls share one token grant', async () => {
      const grants = vertex.tokenGrants;
      const before = vertex.received.length;
      const calls = await Promise.all(
        [1, 2, 3, 4].map(() =>
          anthropic().messages.create({ model: 'claude-vertex', max_tokens: 16, messages: HELLO }),
        ),
      );
      for (const m of calls) expect(m.content).toEqual([{ type: 'text', text: MOCK_TEXT }]);
      expect(vertex.tokenGrants - grants).toBeLessThanOrEqual(1);
      const got = vertex.received.slice(before).find((r) => r.path.endsWith(':rawPredict'))!;
      expect(got.path).toBe(
        `/v1/projects/${vertex.project}/locations/${vertex.region}/publishers/anthropic/models/${VERTEX_CLAUDE}:rawPredict`,
      );
      expect(got.auth).toBe('oauth');
      expect(bodyOf(got)).toEqual({
        anthropic_version: 'vertex-2023-10-16',
        max_tokens: 16,
        messages: HELLO,
      });

      const streamed = await anthropic()
        .messages.stream({ model: 'claude-vertex', max_tokens: 16, messages: HELLO })
        .finalMessage();
      expect(streamed.content).toEqual([{ type: 'text', text: MOCK_TEXT }]);
      expect(vertex.last().path).toMatch(/:streamRawPredict$/);
      expect(bodyOf(vertex.last()).stream).toBe(true);
    });

    test('count_tokens goes to count-tokens:rawPredict with the model in the body', async () => {
      const counted = await anthropic().messages.countTokens({ model: 'claude-vertex', messages: HELLO });
      expect(counted.input_tokens).toBe(mockPromptTokens({ messages: HELLO }));
      expect(vertex.last().path).toMatch(/publishers\/anthropic\/models\/count-tokens:rawPredict$/);
      expect(bodyOf(vertex.last()).model).toBe(VERTEX_CLAUDE);
    });

    test('Gemini through generateContent and streamGenerateContent, called with the Gemini SDK', async () => {
      const genai = new GoogleGenAI({ apiKey: key, httpOptions: { baseUrl: gw.base } });
      const answer = await genai.models.generateContent({ model: 'gemini-vertex', contents: 'Hello there' });
      expect(answer.text).toBe(MOCK_TEXT);
      expect(vertex.last().path).toBe(
        `/v1/projects/${vertex.project}/locations/${vertex.region}/publishers/google/models/gemini-2.5-pro:generateContent`,
      );
      let text = '';
      for await (const chunk of await genai.models.generateContentStream({
        model: 'gemini-vertex',
        contents: 'Hello there',
      })) {
        text += chunk.text ?? '';
      }
      expect(text).toBe(MOCK_TEXT);
      expect(vertex.last().url).toMatch(/:streamGenerateContent\?alt=sse$/);
    });
  });

  describe('OpenAI-format upstreams', () => {
    test('Azure OpenAI: the key as api-key at /openai/v1, the deployment as the model; a stream metered without the client asking', async () => {
      const openai = new OpenAI({ apiKey: key, baseURL: `${gw.base}/v1`, maxRetries: 0 });
      const before = azure.received.length;
      const done = await openai.chat.completions.create({ model: 'gpt-azure', messages: HELLO });
      expect(done.choices[0].message.content).toBe(MOCK_TEXT);
      const got = azure.received[before];
      expect(got.path).toBe('/openai/v1/chat/completions');
      expect(got.headers['api-key']).toBe(DEFAULT_AZURE_KEYS[0]);
      expect(got.headers.authorization).toBeUndefined();
      expect(bodyOf(got).model).toBe('gpt-4o-deploy');

      const chunks = [];
      for await (const chunk of await openai.chat.completions.create({
        model: 'gpt-azure',
        messages: HELLO,
        stream: true,
      })) {
        chunks.push(chunk);
      }
      expect(chunks.map((c) => c.choices[0]?.delta?.content ?? '').join('')).toBe(MOCK_TEXT);
      // Asked on the client's behalf, and kept from it.
      expect(chunks.some((c) => c.usage)).toBe(false);
      expect(bodyOf(azure.last()).stream_options).toEqual({ include_usage: true });
      await gw.h.services.gateway.flushUsage();
      const usage = await gw.h.services.store.usage.get(keyId);
      expect(usage['gpt-azure']).toMatchObject({ requests: 2, output: 2 * MOCK_OUTPUT_TOKENS });
    });

    test('the client’s own vendor account never reaches a target, nor a translated call’s own format’s headers', async () => {
      const before = azure.received.length;
      const res = await fetch(`${gw.base}/v1/chat/completions`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${key}`,
          'content-type': 'application/json',
          'openai-organization': 'org-client',
          'openai-project': 'proj-client',
          'x-client-trace': 'kept',
        },
        body: JSON.stringify({ model: 'gpt-azure', messages: HELLO }),
      });
      expect(res.status).toBe(200);
      const got = azure.received[before];
      expect(got.headers['openai-organization']).toBeUndefined();
      expect(got.headers['openai-project']).toBeUndefined();
      expect(got.headers['x-client-trace']).toBe('kept');

      const v = vendor.received.length;
      await anthropic().beta.messages.create({
        model: 'llama',
        max_tokens: 8,
        messages: HELLO,
        betas: ['some-beta'],
      });
      const translated = vendor.received[v];
      expect(translated.url).toBe('/v1/chat/completions');
      expect(Object.keys(translated.headers).filter((h) => h.startsWith('anthropic-'))).toEqual([]);
    });

    test('a compatible server without a key (vLLM): no credential, only the model changed, every other byte as sent', async () => {
      const sent =
        '{"model":"llama",  "messages":[{"role":"user","content":"caf\\u00e9"}],"temperature":0.50}';
      const res = await fetch(`${gw.base}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: sent,
      });
      expect(res.status).toBe(200);
      const got = vendor.last();
      expect(got.url).toBe('/v1/chat/completions');
      expect(got.headers.authorization).toBeUndefined();
      expect(got.body.toString()).toBe(sent.replace('"llama"', '"meta-llama/Llama-3.1-8B"'));
    });
  });

  describe('Claude Code’s Bedrock and Vertex formats, inbound', () => {
    const bedrockClient = () =>
      new AnthropicBedrock({
        baseURL: `${gw.base}/bedrock`,
        awsRegion: 'us-east-1',
        skipAuth: true,
        defaultHeaders: { authorization: `Bearer ${key}` },
        maxRetries: 0,
      });

    test('the Bedrock SDK on a route to Anthropic’s API: the body in Anthropic’s envelope, the stream back in AWS’s event stream', async () => {
      const before = vendor.received.length;
      const message = await bedrockClient().messages.create({
        model: 'anthropic.claude-3-haiku',
        max_tokens: 8,
        messages: HELLO,
      });
      expect(message.content[0]).toMatchObject({ type: 'text' });
      const got = vendor.received[before];
      expect(got.url).toBe('/v1/messages');
      expect(got.headers['x-api-key']).toBe('sk-ant-direct');
      expect(bodyOf(got).model).toBe('claude-3-haiku');
      expect(bodyOf(got)).not.toHaveProperty('anthropic_version');

      vendor.next((_req, res) => {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        res.end(
          MESSAGES_STREAM.map(([event, data]) => `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`).join(
            '',
          ),
        );
      });
      const raw = await fetch(
        `${gw.base}/bedrock/model/anthropic.claude-3-haiku/invoke-with-response-stream`,
        {
          method: 'POST',
          headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
          body: JSON.stringify({ anthropic_version: 'bedrock-2023-05-31', max_tokens: 8, messages: HELLO }),
        },
      );
      expect(raw.headers.get('content-type')).toBe('application/vnd.amazon.eventstream');
      expect(bodyOf(vendor.last())).toMatchObject({ model: 'claude-3-haiku', stream: true });
      expect((await raw.arrayBuffer()).byteLength).toBeGreaterThan(0);

      const streamed = await bedrockClient()
        .messages.stream({ model: 'anthropic.claude-3-haiku', max_tokens: 8, messages: HELLO })
        .finalMessage();
      expect(streamed.content.length).toBeGreaterThan(0);
    });

    test('the Bedrock SDK naming a model no route names: the first Bedrock upstream, the body unchanged', async () => {
      const before = bedrock.received.length;
      const message = await bedrockClient().messages.create({
        model: BEDROCK_MODEL,
        max_tokens: 8,
        messages: HELLO,
      });
      expect(message.content).toEqual([{ type: 'text', text: MOCK_TEXT }]);
      expect(bedrock.received[before].path).toBe('/model/anthropic.claude-sonnet-4-5-20250929-v1%3A0/invoke');
      const streamed = await bedrockClient()
        .messages.stream({ model: BEDROCK_MODEL, max_tokens: 8, messages: HELLO })
        .finalMessage();
      expect(streamed.content).toEqual([{ type: 'text', text: MOCK_TEXT }]);
    });

    test('the Vertex SDK on a route to Bedrock, and naming a model no route names', async () => {
      const client = new AnthropicVertex({
        baseURL: `${gw.base}/vertex/v1`,
        region: 'europe-west1',
        projectId: 'client-project',
        authClient: genwayToken(key),
        maxRetries: 0,
      });
      const viaBedrock = await client.messages.create({
        model: 'claude-bedrock',
        max_tokens: 8,
        messages: HELLO,
      });
      expect(viaBedrock.content).toEqual([{ type: 'text', text: MOCK_TEXT }]);
      expect(bedrock.last().path).toMatch(/\/invoke$/);
      expect(bodyOf(bedrock.last()).anthropic_version).toBe('bedrock-2023-05-31');
      const streamed = await client.messages
        .stream({ model: 'claude-bedrock', max_tokens: 8, messages: HELLO })
        .finalMessage();
      expect(streamed.content).toEqual([{ type: 'text', text: MOCK_TEXT }]);

      const direct = await client.messages.create({ model: VERTEX_CLAUDE, max_tokens: 8, messages: HELLO });
      expect(direct.content).toEqual([{ type: 'text', text: MOCK_TEXT }]);
      // The route's project and region, not the client's.
      expect(vertex.last().path).toBe(
        `/v1/projects/${vertex.project}/locations/${vertex.region}/publishers/anthropic/models/${VERTEX_CLAUDE}:rawPredict`,
      );
    });

    test('the Gemini SDK in Vertex mode', async () => {
      const genai = new GoogleGenAI({
        vertexai: true,
        project: 'client-project',
        location: 'us-central1',
        httpOptions: { baseUrl: `${gw.base}/vertex` },
        googleAuthOptions: { authClient: genwayToken(key) },
      });
      const answer = await genai.models.generateContent({ model: 'gemini-vertex', contents: 'Hello there' });
      expect(answer.text).toBe(MOCK_TEXT);
      expect(vertex.last().path).toMatch(/publishers\/google\/models\/gemini-2\.5-pro:generateContent$/);
    });

    test('a wrong key on the Bedrock format is a 401 in AWS’s shape', async () => {
      const res = await fetch(`${gw.base}/bedrock/model/x/invoke`, {
        method: 'POST',
        headers: { authorization: 'Bearer gwk_nope', 'content-type': 'application/json' },
        body: '{}',
      });
      expect(res.status).toBe(401);
      expect(res.headers.get('x-amzn-errortype')).toMatch(/^UnrecognizedClientException/);
      expect(await res.json()).toEqual({ message: expect.stringMatching(/key/i) });
    });
  });

  describe('fallback and weights', () => {
    test('fallback: a target that cannot be reached, then one answering 429, hand the call on; counted', async () => {
      const [v, b] = [vendor.received.length, bedrock.received.length];
      vendor.next((_req, res) => {
        res.writeHead(429, { 'content-type': 'application/json', 'retry-after': '1' });
        res.end('{"type":"error","error":{"type":"rate_limit_error","message":"slow down"}}');
      });
      const message = await anthropic().messages.create({ model: 'claude', max_tokens: 8, messages: HELLO });
      expect(message.content).toEqual([{ type: 'text', text: MOCK_TEXT }]);
      expect(vendor.received.length - v).toBe(1);
      expect(bedrock.received.length - b).toBe(1);
    });

    test('nothing is retried once the first byte reached the client', async () => {
      const b = bedrock.received.length;
      const stream = anthropic().messages.stream({
        model: 'claude-bedrock',
        max_tokens: 8,
        messages: [{ role: 'user', content: 'x [mock:stream-error=throttlingException]' }],
      });
      await expect(stream.finalMessage()).rejects.toThrow(/throttling/i);
      expect(bedrock.received.length - b).toBe(1);
    });

    test('weighted 3:1 spreads 40 calls 30 and 10', async () => {
      const [b, v] = [
        bedrock.received.length,
        vertex.received.filter((r) => r.path.includes('publishers')).length,
      ];
      for (let i = 0; i < 40; i++)
        await anthropic().messages.create({ model: 'claude-spread', max_tokens: 8, messages: HELLO });
      expect(bedrock.received.length - b).toBe(30);
      expect(vertex.received.filter((r) => r.path.includes('publishers')).length - v).toBe(10);
    });
  });

  describe('keys see routes by name', () => {
    test('GET /v1/models lists the routes a key may call, in each vendor’s shape', async () => {
      const openai = new OpenAI({ apiKey: key, baseURL: `${gw.base}/v1`, maxRetries: 0 });
      const ids = [];
      for await (const m of openai.models.list()) ids.push(m.id);
      expect(ids).toContain('claude-bedrock');
      expect(ids).toContain('gpt-azure');
      const listed = await anthropic().models.list();
      expect(listed.data.map((m) => m.id)).toContain('claude-vertex');

      const { key: narrow } = await fundedKey(gw.h.services, 1, { models: ['claude-bedrock', 'gpt-azure'] });
      const limited = new OpenAI({ apiKey: narrow, baseURL: `${gw.base}/v1`, maxRetries: 0 });
      const only = [];
      for await (const m of limited.models.list()) only.push(m.id);
      expect(only.sort()).toEqual(['claude-bedrock', 'gpt-azure']);
      const refused = await new Anthropic({ apiKey: narrow, baseURL: gw.base, maxRetries: 0 }).messages
        .create({ model: 'claude-vertex', max_tokens: 8, messages: HELLO })
        .catch((e: unknown) => e);
      expect(refused).toBeInstanceOf(Anthropic.PermissionDeniedError);
    });

    test('the request log names the route, the upstream that served it and the model there', async () => {
      const message = await anthropic().messages.create({
        model: 'claude-bedrock',
        max_tokens: 8,
        messages: HELLO,
      });
      expect(message.content).toEqual([{ type: 'text', text: MOCK_TEXT }]);
      let rows: Record<string, unknown>[] = [];
      await eventually(async () => {
        const res = await fetch(`${gw.base}/admin/v1/logs?accountId=${accountId}&model=claude-bedrock`, {
          headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
        });
        rows = ((await res.json()) as { data: { items: Record<string, unknown>[] } }).data.items;
        expect(rows).toHaveLength(1);
      });
      expect(rows[0]).toMatchObject({
        keyId,
        surface: 'gateway',
        model: 'claude-bedrock',
        upstream: 'bedrock-east',
        upstreamModel: BEDROCK_MODEL,
        status: 200,
        inputTokens: HELLO_TOKENS,
        outputTokens: MOCK_OUTPUT_TOKENS,
        costUsd: 0.000165,
      });
    });

    test('metrics name the upstream; no credential appears in a log line', async () => {
      await anthropic().messages.create({ model: 'claude-bedrock', max_tokens: 8, messages: HELLO });
      const metrics = await gw.h.services.metrics.registry.metrics();
      expect(metrics).toMatch(/genway_gateway_upstream_responses_total\{vendor="bedrock-east",code="200"\}/);
      const logs = gw.h.logs.text;
      for (const secret of [
        DEFAULT_AWS_CREDENTIALS.secretAccessKey,
        DEFAULT_AWS_CREDENTIALS.sessionToken!,
        DEFAULT_BEDROCK_API_KEY,
        DEFAULT_AZURE_KEYS[0],
        vertex.serviceAccount().private_key.split('\n')[1],
      ]) {
        expect(logs).not.toContain(secret);
      }
    });
  });
});
