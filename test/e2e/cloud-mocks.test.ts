import Anthropic from '@anthropic-ai/sdk';
import { AnthropicBedrock } from '@anthropic-ai/bedrock-sdk';
import { AnthropicVertex } from '@anthropic-ai/vertex-sdk';
import {
  BedrockRuntimeClient,
  CountTokensCommand,
  InvokeModelCommand,
  InvokeModelWithResponseStreamCommand,
  ThrottlingException,
  type BedrockRuntimeClientConfig,
} from '@aws-sdk/client-bedrock-runtime';
import { Hash } from '@smithy/hash-node';
import { SignatureV4 } from '@smithy/signature-v4';
import OpenAI, { AzureOpenAI } from 'openai';
import { generateKeyPairSync } from 'node:crypto';
// @google/genai hands Node's fetch a dispatcher that calls the global Undici dispatcher, which Node keeps on the real
// global object, out of sight of jest's sandbox. Loading undici (a Genway dependency: every test that starts Genway
// loads it) puts a global dispatcher in the sandbox.
import 'undici';
import type * as GenAI from '@google/genai' with { 'resolution-mode': 'import' };
import {
  BEDROCK_LATENCY,
  GEMINI_THOUGHTS_TOKENS,
  MOCK_EMBEDDING,
  MOCK_OUTPUT_TOKENS,
  MOCK_TEXT,
  MOCK_TEXT_DELTAS,
  MOCK_TOOL_OUTPUT_TOKENS,
  MockAzureOpenAI,
  MockBedrock,
  MockVertex,
  mockPromptTokens,
  toolPreamble,
  vertexAuthClient,
  type AwsCredentials,
} from '../helpers/cloud-mocks';

// @google/genai ships ESM types in a "type": "module" package; its CommonJS build is what Node loads here.
// eslint-disable-next-line @typescript-eslint/no-require-imports
const { GoogleGenAI, ApiError: GoogleApiError } = require('@google/genai') as typeof GenAI;

const MODEL = 'anthropic.claude-sonnet-4-5-20250929-v1:0';
const HELLO = [{ role: 'user' as const, content: 'Hello there' }];
/** mockPromptTokens of one user message "Hello there". */
const HELLO_TOKENS = 10;
const WEATHER_TOOL = {
  name: 'get_weather',
  description: 'The weather in a city',
  input_schema: {
    type: 'object' as const,
    properties: { city: { type: 'string' }, unit: { type: 'string', enum: ['celsius', 'fahrenheit'] } },
    required: ['city', 'unit'],
  },
};

const anthropicBody = (extra: Record<string, unknown> = {}, text = 'Hello there') =>
  JSON.stringify({
    anthropic_version: 'bedrock-2023-05-31',
    max_tokens: 64,
    messages: [{ role: 'user', content: text }],
    ...extra,
  });

const decodeEvents = (chunks: Uint8Array[]) =>
  chunks.map(
    (bytes) => JSON.parse(Buffer.from(bytes).toString('utf8')) as { type: string } & Record<string, unknown>,
  );

describe('MockBedrock with the official clients', () => {
  let mock: MockBedrock;
  beforeAll(async () => {
    mock = await new MockBedrock({ region: 'eu-west-1' }).start();
  });
  afterAll(() => mock.close());

  const awsClient = (
    credentials: AwsCredentials = mock.credentials,
    extra: Partial<BedrockRuntimeClientConfig> = {},
  ) =>
    new BedrockRuntimeClient({
      region: 'eu-west-1',
      endpoint: mock.url,
      credentials,
      maxAttempts: 1,
      ...extra,
    });

  describe('@aws-sdk/client-bedrock-runtime (HTTP/2, its default)', () => {
    test('InvokeModel: a signed request verifies and gets the Claude message, Bedrock headers and all', async () => {
      const out = await awsClient().send(
        new InvokeModelCommand({
          modelId: MODEL,
          contentType: 'application/json',
          accept: 'application/json',
          body: anthropicBody(),
        }),
      );
      expect(JSON.parse(Buffer.from(out.body).toString('utf8'))).toEqual({
        id: 'msg_bdrk_01Mock000000000000000001',
        type: 'message',
        role: 'assistant',
        model: MODEL,
        content: [{ type: 'text', text: MOCK_TEXT }],
        stop_reason: 'end_turn',
        stop_sequence: null,
        usage: {
          input_tokens: HELLO_TOKENS,
          cache_creation_input_tokens: 0,
          cache_read_input_tokens: 0,
          output_tokens: MOCK_OUTPUT_TOKENS,
        },
      });
      expect(out.contentType).toBe('application/json');
      expect(out.$metadata.requestId).toMatch(/^00000000-0000-4000-8000-\d{12}$/);
      const req = mock.last();
      expect(req).toMatchObject({ verified: true, auth: 'sigv4', httpVersion: '2.0' });
      // The SDK percent-encodes the model id's colon in the path, and signed that path.
      expect(req.path).toBe('/model/anthropic.claude-sonnet-4-5-20250929-v1%3A0/invoke');
      expect(req.headers['x-amz-security-token']).toBe(mock.credentials.sessionToken);
    });

    test('InvokeModelWithResponseStream: the chunks decode to Anthropic stream events, metrics on message_stop', async () => {
      const out = await awsClient().send(
        new InvokeModelWithResponseStreamCommand({
          modelId: MODEL,
          contentType: 'application/json',
          body: anthropicBody(),
        }),
      );
      const chunks: Uint8Array[] = [];
      for await (const event of out.body!) if (event.chunk?.bytes) chunks.push(event.chunk.bytes);
      const events = decodeEvents(chunks);
      expect(events.map((e) => e.type)).toEqual([
        'message_start',
        'content_block_start',
        ...MOCK_TEXT_DELTAS.map(() => 'content_block_delta'),
        'content_block_stop',
        'message_delta',
        'message_stop',
      ]);
      expect(
        events.filter((e) => e.type === 'content_block_delta').map((e) => (e.delta as { text: string }).text),
      ).toEqual(MOCK_TEXT_DELTAS);
      expect(events[0]).toMatchObject({
        message: { model: MODEL, usage: { input_tokens: HELLO_TOKENS, output_tokens: 1 } },
      });
      expect(events.at(-2)).toEqual({
        type: 'message_delta',
        delta: { stop_reason: 'end_turn', stop_sequence: null },
        usage: { output_tokens: MOCK_OUTPUT_TOKENS },
      });
      expect(events.at(-1)).toEqual({
        type: 'message_stop',
        'amazon-bedrock-invocationMetrics': {
          inputTokenCount: HELLO_TOKENS,
          outputTokenCount: MOCK_OUTPUT_TOKENS,
          ...BEDROCK_LATENCY,
        },
      });
      expect(out.contentType).toBe('application/json');
      expect(mock.last()).toMatchObject({ verified: true, auth: 'sigv4' });
    });

    test('CountTokens: the base64 InvokeModel body is counted', async () => {
      const out = await awsClient().send(
        new CountTokensCommand({
          modelId: MODEL,
          input: { invokeModel: { body: Buffer.from(anthropicBody()) } },
        }),
      );
      expect(out.inputTokens).toBe(HELLO_TOKENS);
      const req = mock.last();
      expect(req).toMatchObject({
        verified: true,
        path: '/model/anthropic.claude-sonnet-4-5-20250929-v1%3A0/count-tokens',
      });
      expect(JSON.parse(req.body.toString())).toEqual({
        input: { invokeModel: { body: Buffer.from(anthropicBody()).toString('base64') } },
      });
    });

    test('a wrong secret key gets InvalidSignatureException 403', async () => {
      const wrong = { ...mock.credentials, secretAccessKey: `${mock.credentials.secretAccessKey}x` };
      const error = await awsClient(wrong)
        .send(
          new InvokeModelCommand({ modelId: MODEL, contentType: 'application/json', body: anthropicBody() }),
        )
        .catch((e: unknown) => e);
      expect(error).toMatchObject({
        name: 'InvalidSignatureException',
        message: expect.stringMatching(
          /^The request signature we calculated does not match the signature you provided/,
        ),
        $metadata: { httpStatusCode: 403 },
      });
      expect(mock.last()).toMatchObject({ verified: false, auth: 'sigv4' });
    });

    test('an unknown access key id, or a missing session token, gets UnrecognizedClientException 403', async () => {
      for (const credentials of [
        { ...mock.credentials, accessKeyId: 'AKIAUNKNOWN000000000' },
        { accessKeyId: mock.credentials.accessKeyId, secretAccessKey: mock.credentials.secretAccessKey },
      ]) {
        const error = await awsClient(credentials)
          .send(
            new InvokeModelCommand({
              modelId: MODEL,
              contentType: 'application/json',
              body: anthropicBody(),
            }),
          )
          .catch((e: unknown) => e);
        expect(error).toMatchObject({
          name: 'UnrecognizedClientException',
          message: 'The security token included in the request is invalid.',
          $metadata: { httpStatusCode: 403 },
        });
      }
    });

    test('one byte of the body changed after signing is caught: 403', async () => {
      const client = awsClient();
      // A deserialize-step middleware runs after signing (finalizeRequest) and just before the request is sent.
      client.middlewareStack.add(
        (next) => async (args) => {
          const request = args.request as { body: Uint8Array | string };
          const bytes = Buffer.from(request.body);
          bytes[bytes.indexOf('Hello')] = 'J'.charCodeAt(0);
          request.body = bytes;
          return next(args);
        },
        { step: 'deserialize', name: 'flipOneByteAfterSigning' },
      );
      const error = await client
        .send(
          new InvokeModelCommand({ modelId: MODEL, contentType: 'application/json', body: anthropicBody() }),
        )
        .catch((e: unknown) => e);
      expect(error).toMatchObject({ name: 'InvalidSignatureException', $metadata: { httpStatusCode: 403 } });
      expect(mock.last().body.toString()).toContain('Jello there');
    });

    test('[mock:status=429] throws ThrottlingException with Bedrock’s message', async () => {
      const error = await awsClient()
        .send(
          new InvokeModelCommand({
            modelId: MODEL,
            contentType: 'application/json',
            body: anthropicBody({}, 'Hello [mock:status=429]'),
          }),
        )
        .catch((e: unknown) => e);
      expect(error).toBeInstanceOf(ThrottlingException);
      expect(error).toMatchObject({
        message: 'Too many requests, please wait before trying again.',
        $metadata: { httpStatusCode: 429 },
      });
      expect(mock.last().verified).toBe(true);
    });

    test('[mock:stream-error=throttlingException] ends the stream with an exception frame the SDK throws', async () => {
      const out = await awsClient().send(
        new InvokeModelWithResponseStreamCommand({
          modelId: MODEL,
          contentType: 'application/json',
          body: anthropicBody({}, 'Hello [mock:stream-error=throttlingException]'),
        }),
      );
      const chunks: Uint8Array[] = [];
      const error = await (async () => {
        for await (const event of out.body!) if (event.chunk?.bytes) chunks.push(event.chunk.bytes);
      })().catch((e: unknown) => e);
      expect(error).toBeInstanceOf(ThrottlingException);
      expect(decodeEvents(chunks).map((e) => e.type)).toEqual([
        'message_start',
        'content_block_start',
        'content_block_delta',
      ]);
    });

    test('a Bedrock API key as the bearer token', async () => {
      const client = new BedrockRuntimeClient({
        region: 'eu-west-1',
        endpoint: mock.url,
        token: { token: mock.apiKey },
        authSchemePreference: ['httpBearerAuth'],
        maxAttempts: 1,
      });
      const out = await client.send(
        new InvokeModelCommand({ modelId: MODEL, contentType: 'application/json', body: anthropicBody() }),
      );
      expect(JSON.parse(Buffer.from(out.body).toString()).content).toEqual([
        { type: 'text', text: MOCK_TEXT },
      ]);
      expect(mock.last()).toMatchObject({ verified: true, auth: 'apiKey' });
      expect(mock.last().headers.authorization).toBe(`Bearer ${mock.apiKey}`);
    });
  });

  test('next(handler) answers the next request that verifies; one refused for its signature leaves it queued', async () => {
    mock.next((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ custom: true }));
    });
    const wrong = { ...mock.credentials, secretAccessKey: 'not-the-secret' };
    const refused = await awsClient(wrong)
      .send(
        new InvokeModelCommand({ modelId: MODEL, contentType: 'application/json', body: anthropicBody() }),
      )
      .catch((e: unknown) => e);
    expect(refused).toMatchObject({ name: 'InvalidSignatureException' });
    const out = await awsClient().send(
      new InvokeModelCommand({ modelId: MODEL, contentType: 'application/json', body: anthropicBody() }),
    );
    expect(JSON.parse(Buffer.from(out.body).toString())).toEqual({ custom: true });
    const after = await awsClient().send(
      new InvokeModelCommand({ modelId: MODEL, contentType: 'application/json', body: anthropicBody() }),
    );
    expect(JSON.parse(Buffer.from(after.body).toString()).content).toEqual([
      { type: 'text', text: MOCK_TEXT },
    ]);
  });

  test('a signature older than 15 minutes has expired', async () => {
    // Signed by AWS's signer as a client would have, 20 minutes ago.
    const signer = new SignatureV4({
      service: 'bedrock',
      region: 'eu-west-1',
      credentials: mock.credentials,
      sha256: Hash.bind(null, 'sha256'),
    });
    const url = new URL(`${mock.url}/model/${encodeURIComponent(MODEL)}/invoke`);
    const body = anthropicBody();
    const signed = await signer.sign(
      {
        method: 'POST',
        protocol: 'http:',
        hostname: url.hostname,
        port: Number(url.port),
        path: url.pathname,
        query: {},
        headers: { host: url.host, 'content-type': 'application/json' },
        body,
      },
      { signingDate: new Date(Date.now() - 20 * 60_000) },
    );
    const res = await fetch(url, { method: 'POST', headers: signed.headers as Record<string, string>, body });
    expect(res.status).toBe(403);
    expect(res.headers.get('x-amzn-errortype')).toBe(
      'InvalidSignatureException:http://internal.amazon.com/coral/com.amazon.coral.service/',
    );
    expect(((await res.json()) as { message: string }).message).toMatch(
      /^Signature expired: \d{8}T\d{6}Z is now earlier than/,
    );
  });

  test('no credentials at all: 403 MissingAuthenticationTokenException', async () => {
    const res = await fetch(`${mock.url}/model/${MODEL}/invoke`, { method: 'POST', body: anthropicBody() });
    expect(res.status).toBe(403);
    expect(res.headers.get('x-amzn-errortype')).toMatch(/^MissingAuthenticationTokenException:/);
    expect(await res.json()).toEqual({ message: 'Missing Authentication Token' });
  });

  describe('@anthropic-ai/bedrock-sdk', () => {
    const signing = () =>
      new AnthropicBedrock({
        baseURL: mock.url,
        awsRegion: 'eu-west-1',
        awsAccessKey: mock.credentials.accessKeyId,
        awsSecretKey: mock.credentials.secretAccessKey,
        awsSessionToken: mock.credentials.sessionToken,
        maxRetries: 0,
      });
    const withKey = (apiKey = mock.apiKey) =>
      new AnthropicBedrock({ baseURL: mock.url, awsRegion: 'eu-west-1', apiKey, maxRetries: 0 });

    test('messages.create, signed: the text and usage', async () => {
      const message = await signing().messages.create({ model: MODEL, max_tokens: 64, messages: HELLO });
      expect(message.content).toEqual([{ type: 'text', text: MOCK_TEXT }]);
      expect(message.usage).toEqual({
        input_tokens: HELLO_TOKENS,
        cache_creation_input_tokens: 0,
        cache_read_input_tokens: 0,
        output_tokens: MOCK_OUTPUT_TOKENS,
      });
      const req = mock.last();
      expect(req).toMatchObject({ verified: true, auth: 'sigv4', httpVersion: '1.1' });
      // This client leaves the colon as it is, and signed that.
      expect(req.path).toBe(`/model/${MODEL}/invoke`);
      // It moves the API version into the body: 2026-10-21, the base SDK's, not bedrock-2023-05-31.
      expect(JSON.parse(req.body.toString())).toEqual({
        max_tokens: 64,
        messages: HELLO,
        anthropic_version: '2026-10-21',
      });
    });

    test('messages.stream(...).finalMessage(), signed, with cache usage', async () => {
      const stream = signing().messages.stream({
        model: MODEL,
        max_tokens: 64,
        messages: [{ role: 'user', content: 'Hello [mock:cache-read=100] [mock:cache-write=20]' }],
      });
      const texts: string[] = [];
      stream.on('text', (text) => texts.push(text));
      const message = await stream.finalMessage();
      expect(texts).toEqual(MOCK_TEXT_DELTAS);
      expect(message.content).toEqual([{ type: 'text', text: MOCK_TEXT }]);
      expect(message.usage).toMatchObject({
        input_tokens: 11,
        cache_read_input_tokens: 100,
        cache_creation_input_tokens: 20,
        output_tokens: MOCK_OUTPUT_TOKENS,
      });
      expect(mock.last()).toMatchObject({
        verified: true,
        path: `/model/${MODEL}/invoke-with-response-stream`,
      });
    });

    test('with a Bedrock API key: create and stream', async () => {
      const message = await withKey().messages.create({ model: MODEL, max_tokens: 64, messages: HELLO });
      expect(message.content).toEqual([{ type: 'text', text: MOCK_TEXT }]);
      expect(mock.last()).toMatchObject({ verified: true, auth: 'apiKey' });
      const streamed = await withKey()
        .messages.stream({ model: MODEL, max_tokens: 64, messages: HELLO })
        .finalMessage();
      expect(streamed.usage).toMatchObject({ input_tokens: HELLO_TOKENS, output_tokens: MOCK_OUTPUT_TOKENS });
      expect(mock.last()).toMatchObject({ verified: true, auth: 'apiKey' });
    });

    test('a wrong API key: 403 PermissionDeniedError', async () => {
      const error = await withKey('ABSKwrong')
        .messages.create({ model: MODEL, max_tokens: 64, messages: HELLO })
        .catch((e: unknown) => e);
      expect(error).toBeInstanceOf(Anthropic.PermissionDeniedError);
      expect(error).toMatchObject({
        status: 403,
        error: { Message: 'Authentication failed: Please make sure your API Key is valid.' },
      });
      expect(mock.last()).toMatchObject({ verified: false, auth: 'apiKey' });
    });

    test('a tool call streams as input_json_delta fragments', async () => {
      const message = await signing()
        .messages.stream({
          model: MODEL,
          max_tokens: 64,
          tools: [WEATHER_TOOL],
          messages: [{ role: 'user', content: 'Weather in Paris? [mock:tool]' }],
        })
        .finalMessage();
      expect(message.content).toEqual([
        { type: 'text', text: toolPreamble('get_weather') },
        {
          type: 'tool_use',
          id: expect.stringMatching(/^toolu_bdrk_01Mock\d{16}$/),
          name: 'get_weather',
          input: { city: 'mock', unit: 'celsius' },
        },
      ]);
      expect(message.stop_reason).toBe('tool_use');
      expect(message.usage.output_tokens).toBe(MOCK_TOOL_OUTPUT_TOKENS);
    });

    test('[mock:stream-error=modelStreamErrorException] fails the stream with that error', async () => {
      const error = await signing()
        .messages.stream({
          model: MODEL,
          max_tokens: 64,
          messages: [{ role: 'user', content: 'Hello [mock:stream-error=modelStreamErrorException]' }],
        })
        .finalMessage()
        .catch((e: unknown) => e);
      expect(error).toBeInstanceOf(Anthropic.APIError);
      expect(error).toMatchObject({
        error: {
          type: 'error',
          error: {
            type: 'modelStreamErrorException',
            message: 'The model produced an error while streaming.',
          },
        },
      });
    });

    test('[mock:status=503] is ServiceUnavailableException, in Bedrock’s shape', async () => {
      const error = await signing()
        .messages.create({
          model: MODEL,
          max_tokens: 64,
          messages: [{ role: 'user', content: 'Hi [mock:status=503]' }],
        })
        .catch((e: unknown) => e);
      expect(error).toBeInstanceOf(Anthropic.InternalServerError);
      expect(error).toMatchObject({
        status: 503,
        error: { message: 'Bedrock is unable to process your request.' },
      });
      expect((error as InstanceType<typeof Anthropic.APIError>).headers?.get('x-amzn-errortype')).toMatch(
        /^ServiceUnavailableException:/,
      );
    });
  });

  test('with a known-model list, another model id is a ValidationException; a bad anthropic_version too', async () => {
    const strict = await new MockBedrock({ models: [MODEL], region: 'eu-west-1' }).start();
    try {
      const client = new BedrockRuntimeClient({
        region: 'eu-west-1',
        endpoint: strict.url,
        credentials: strict.credentials,
        maxAttempts: 1,
      });
      const unknown = await client
        .send(
          new InvokeModelCommand({
            modelId: 'anthropic.claude-v9',
            contentType: 'application/json',
            body: anthropicBody(),
          }),
        )
        .catch((e: unknown) => e);
      expect(unknown).toMatchObject({
        name: 'ValidationException',
        message: 'The provided model identifier is invalid.',
        $metadata: { httpStatusCode: 400 },
      });
      const version = await client
        .send(
          new InvokeModelCommand({
            modelId: MODEL,
            contentType: 'application/json',
            body: anthropicBody({ anthropic_version: 'vertex-2023-10-16' }),
          }),
        )
        .catch((e: unknown) => e);
      expect(version).toMatchObject({ name: 'ValidationException', $metadata: { httpStatusCode: 400 } });
      expect(strict.received.map((r) => r.verified)).toEqual([true, true]);
    } finally {
      await strict.close();
    }
  });
});

describe('MockVertex with the official clients', () => {
  let mock: MockVertex;
  beforeAll(async () => {
    mock = await new MockVertex({ project: 'genway-test', region: 'us-east5' }).start();
  });
  afterAll(() => mock.close());

  const vertex = (authClient = vertexAuthClient(mock.serviceAccount())) =>
    new AnthropicVertex({
      baseURL: `${mock.url}/v1`,
      region: 'us-east5',
      projectId: 'genway-test',
      authClient,
      maxRetries: 0,
    });
  const CLAUDE = 'claude-sonnet-4-5@20250929';

  describe('@anthropic-ai/vertex-sdk with google-auth-library’s JWT client', () => {
    test('messages.create: a JWT-bearer grant at the key’s token_uri, then rawPredict with that token', async () => {
      const grantsBefore = mock.tokenGrants;
      const message = await vertex().messages.create({ model: CLAUDE, max_tokens: 64, messages: HELLO });
      expect(message).toEqual({
        id: expect.stringMatching(/^msg_vrtx_01Mock\d{18}$/),
        type: 'message',
        role: 'assistant',
        model: CLAUDE,
        content: [{ type: 'text', text: MOCK_TEXT }],
        stop_reason: 'end_turn',
        stop_sequence: null,
        usage: {
          input_tokens: HELLO_TOKENS,
          cache_creation_input_tokens: 0,
          cache_read_input_tokens: 0,
          output_tokens: MOCK_OUTPUT_TOKENS,
        },
      });
      expect(mock.tokenGrants).toBe(grantsBefore + 1);
      const [grant, call] = mock.received.slice(-2);
      expect(grant).toMatchObject({ path: '/token', verified: true, auth: 'jwt-bearer' });
      expect(mock.grants.at(-1)!.claims).toMatchObject({
        iss: mock.clientEmail,
        aud: 'https://oauth2.googleapis.com/token',
        scope: 'https://www.googleapis.com/auth/cloud-platform',
      });
      expect(call).toMatchObject({
        path: '/v1/projects/genway-test/locations/us-east5/publishers/anthropic/models/claude-sonnet-4-5@20250929:rawPredict',
        verified: true,
        auth: 'oauth',
      });
      expect(call.headers.authorization).toBe(`Bearer ${mock.grants.at(-1)!.token}`);
      expect(JSON.parse(call.body.toString())).toEqual({
        max_tokens: 64,
        messages: HELLO,
        anthropic_version: '2026-10-21',
      });
    });

    test('messages.stream(...).finalMessage() over streamRawPredict', async () => {
      const texts: string[] = [];
      const stream = vertex().messages.stream({ model: CLAUDE, max_tokens: 64, messages: HELLO });
      stream.on('text', (text) => texts.push(text));
      const message = await stream.finalMessage();
      expect(texts).toEqual(MOCK_TEXT_DELTAS);
      expect(message.usage).toEqual({
        input_tokens: HELLO_TOKENS,
        cache_creation_input_tokens: 0,
        cache_read_input_tokens: 0,
        output_tokens: MOCK_OUTPUT_TOKENS,
      });
      expect(mock.last()).toMatchObject({
        verified: true,
        path: expect.stringMatching(/:streamRawPredict$/),
      });
    });

    test('a tool call, streamed', async () => {
      const message = await vertex()
        .messages.stream({
          model: CLAUDE,
          max_tokens: 64,
          tools: [WEATHER_TOOL],
          tool_choice: { type: 'tool', name: 'get_weather' },
          messages: [{ role: 'user', content: 'Weather in Paris? [mock:tool]' }],
        })
        .finalMessage();
      expect(message.content[1]).toMatchObject({
        type: 'tool_use',
        name: 'get_weather',
        input: { city: 'mock', unit: 'celsius' },
      });
      expect(message.stop_reason).toBe('tool_use');
    });

    test('messages.countTokens over count-tokens:rawPredict', async () => {
      const count = await vertex().messages.countTokens({ model: CLAUDE, messages: HELLO });
      expect(count).toEqual({ input_tokens: HELLO_TOKENS });
      const req = mock.last();
      expect(req).toMatchObject({
        verified: true,
        path: '/v1/projects/genway-test/locations/us-east5/publishers/anthropic/models/count-tokens:rawPredict',
      });
      expect(JSON.parse(req.body.toString())).toMatchObject({ model: CLAUDE });
    });

    test('[mock:status=429] is RESOURCE_EXHAUSTED in Google’s shape; [mock:status=529] overloaded_error in Anthropic’s', async () => {
      const limited = await vertex()
        .messages.create({
          model: CLAUDE,
          max_tokens: 64,
          messages: [{ role: 'user', content: 'Hi [mock:status=429]' }],
        })
        .catch((e: unknown) => e);
      expect(limited).toBeInstanceOf(Anthropic.RateLimitError);
      expect(limited).toMatchObject({
        status: 429,
        error: { error: { code: 429, status: 'RESOURCE_EXHAUSTED' } },
      });
      const overloaded = await vertex()
        .messages.create({
          model: CLAUDE,
          max_tokens: 64,
          messages: [{ role: 'user', content: 'Hi [mock:status=529]' }],
        })
        .catch((e: unknown) => e);
      expect(overloaded).toMatchObject({
        status: 529,
        error: { type: 'error', error: { type: 'overloaded_error' } },
      });
    });

    test('[mock:stream-error=overloaded_error] ends the SSE stream with an error event', async () => {
      const error = await vertex()
        .messages.stream({
          model: CLAUDE,
          max_tokens: 64,
          messages: [{ role: 'user', content: 'Hi [mock:stream-error=overloaded_error]' }],
        })
        .finalMessage()
        .catch((e: unknown) => e);
      expect(error).toBeInstanceOf(Anthropic.APIError);
      expect(error).toMatchObject({
        error: { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } },
      });
    });

    test('a key whose private key is not the service account’s: invalid_grant, no token, no API call', async () => {
      const forged = {
        ...mock.serviceAccount(),
        private_key: generateKeyPairSync('rsa', { modulusLength: 2048 })
          .privateKey.export({ type: 'pkcs8', format: 'pem' })
          .toString(),
      };
      const before = mock.received.length;
      const grantsBefore = mock.tokenGrants;
      const error = await vertex(vertexAuthClient(forged))
        .messages.create({ model: CLAUDE, max_tokens: 64, messages: HELLO })
        .catch((e: unknown) => e);
      expect(error).toBeInstanceOf(Anthropic.APIConnectionError);
      expect((error as Error & { cause: Error }).cause.message).toBe('invalid_grant: Invalid JWT Signature.');
      expect(mock.tokenGrants).toBe(grantsBefore);
      expect(mock.received.slice(before).map((r) => [r.path, r.verified, r.authError])).toEqual([
        ['/token', false, 'Invalid JWT Signature.'],
      ]);
    });

    test('another project in the path: 404 NOT_FOUND', async () => {
      const other = new AnthropicVertex({
        baseURL: `${mock.url}/v1`,
        region: 'us-east5',
        projectId: 'someone-else',
        authClient: vertexAuthClient(mock.serviceAccount()),
        maxRetries: 0,
      });
      const error = await other.messages
        .create({ model: CLAUDE, max_tokens: 64, messages: HELLO })
        .catch((e: unknown) => e);
      expect(error).toBeInstanceOf(Anthropic.NotFoundError);
      expect(error).toMatchObject({ error: { error: { code: 404, status: 'NOT_FOUND' } } });
    });
  });

  test('an API call without a token, or with one it did not issue: 401 UNAUTHENTICATED', async () => {
    const url = `${mock.url}/v1/projects/genway-test/locations/us-east5/publishers/anthropic/models/${CLAUDE}:rawPredict`;
    for (const headers of [{}, { authorization: 'Bearer ya29.c.not-issued-here' }] as Record<
      string,
      string
    >[]) {
      const res = await fetch(url, { method: 'POST', headers, body: '{}' });
      expect(res.status).toBe(401);
      expect(await res.json()).toEqual({
        error: {
          code: 401,
          message: expect.stringMatching(/authentication credential/),
          status: 'UNAUTHENTICATED',
        },
      });
    }
  });

  describe('token refresh', () => {
    let short: MockVertex;
    beforeAll(async () => {
      short = await new MockVertex({ expiresIn: 1 }).start();
    });
    afterAll(() => short.close());
    const client = (authClient: ReturnType<typeof vertexAuthClient>) =>
      new AnthropicVertex({
        baseURL: `${short.url}/v1`,
        region: short.region,
        projectId: short.project,
        authClient,
        maxRetries: 0,
      });

    test('two calls further apart than the token’s life make two grants; the old token is refused', async () => {
      const vertexClient = client(
        vertexAuthClient(short.serviceAccount(), { eagerRefreshThresholdMillis: 0 }),
      );
      await vertexClient.messages.create({ model: CLAUDE, max_tokens: 8, messages: HELLO });
      expect(short.tokenGrants).toBe(1);
      const first = short.grants[0].token;
      await new Promise((resolve) => setTimeout(resolve, 1200));
      await vertexClient.messages.create({ model: CLAUDE, max_tokens: 8, messages: HELLO });
      expect(short.tokenGrants).toBe(2);
      expect(short.received.filter((r) => r.auth === 'oauth').map((r) => r.verified)).toEqual([true, true]);
      const res = await fetch(
        `${short.url}/v1/projects/${short.project}/locations/${short.region}/publishers/anthropic/models/x:rawPredict`,
        {
          method: 'POST',
          headers: { authorization: `Bearer ${first}` },
          body: '{}',
        },
      );
      expect(res.status).toBe(401);
    });

    test('concurrent calls with a fresh client share one grant', async () => {
      const before = short.tokenGrants;
      short.expiresIn = 3600;
      const vertexClient = client(vertexAuthClient(short.serviceAccount()));
      const messages = await Promise.all(
        [1, 2, 3].map(() => vertexClient.messages.create({ model: CLAUDE, max_tokens: 8, messages: HELLO })),
      );
      expect(messages.map((m) => m.content)).toEqual(
        [1, 2, 3].map(() => [{ type: 'text', text: MOCK_TEXT }]),
      );
      expect(short.tokenGrants).toBe(before + 1);
    });
  });

  describe('@google/genai in Vertex mode', () => {
    const genai = () =>
      new GoogleGenAI({
        vertexai: true,
        project: 'genway-test',
        location: 'us-east5',
        httpOptions: { baseUrl: mock.url },
        googleAuthOptions: { authClient: vertexAuthClient(mock.serviceAccount()) },
      });
    const usage = (prompt: number, candidates: number) => ({
      promptTokenCount: prompt,
      candidatesTokenCount: candidates,
      totalTokenCount: prompt + candidates + GEMINI_THOUGHTS_TOKENS,
      thoughtsTokenCount: GEMINI_THOUGHTS_TOKENS,
      trafficType: 'ON_DEMAND',
      promptTokensDetails: [{ modality: 'TEXT', tokenCount: prompt }],
      candidatesTokensDetails: [{ modality: 'TEXT', tokenCount: candidates }],
    });

    test('generateContent', async () => {
      const response = await genai().models.generateContent({
        model: 'gemini-2.5-flash',
        contents: 'Hello there',
      });
      expect(response.text).toBe(MOCK_TEXT);
      expect(response.usageMetadata).toEqual(usage(HELLO_TOKENS, MOCK_OUTPUT_TOKENS));
      expect(response.modelVersion).toBe('gemini-2.5-flash');
      expect(mock.last()).toMatchObject({
        verified: true,
        auth: 'oauth',
        path: '/v1beta1/projects/genway-test/locations/us-east5/publishers/google/models/gemini-2.5-flash:generateContent',
      });
    });

    test('generateContentStream: SSE chunks, usage in the last', async () => {
      const stream = await genai().models.generateContentStream({
        model: 'gemini-2.5-flash',
        contents: 'Hello there',
      });
      const chunks: GenAI.GenerateContentResponse[] = [];
      for await (const chunk of stream) chunks.push(chunk);
      expect(chunks.map((c) => c.text)).toEqual(MOCK_TEXT_DELTAS);
      expect(chunks.at(-1)!.usageMetadata).toEqual(usage(HELLO_TOKENS, MOCK_OUTPUT_TOKENS));
      expect(chunks.at(-1)!.candidates![0].finishReason).toBe('STOP');
      expect(mock.last()).toMatchObject({
        verified: true,
        url: expect.stringMatching(/:streamGenerateContent\?alt=sse$/),
      });
    });

    test('countTokens', async () => {
      const count = await genai().models.countTokens({ model: 'gemini-2.5-flash', contents: 'Hello there' });
      expect(count.totalTokens).toBe(HELLO_TOKENS);
      expect(mock.last()).toMatchObject({ verified: true, path: expect.stringMatching(/:countTokens$/) });
    });

    test('a function call when tools are offered and the prompt asks, cached tokens counted', async () => {
      const response = await genai().models.generateContent({
        model: 'gemini-2.5-flash',
        contents: 'Weather in Paris? [mock:tool] [mock:cache-read=50]',
        config: {
          tools: [
            {
              functionDeclarations: [
                {
                  name: 'get_weather',
                  parametersJsonSchema: WEATHER_TOOL.input_schema,
                },
              ],
            },
          ],
        },
      });
      expect(response.functionCalls).toEqual([
        { name: 'get_weather', args: { city: 'mock', unit: 'celsius' } },
      ]);
      const prompt =
        mockPromptTokens({
          contents: [{ parts: [{ text: 'Weather in Paris? [mock:tool] [mock:cache-read=50]' }] }],
        }) + 50;
      expect(response.usageMetadata).toMatchObject({
        promptTokenCount: prompt,
        cachedContentTokenCount: 50,
        candidatesTokenCount: MOCK_TOOL_OUTPUT_TOKENS,
      });
    });

    test('[mock:stream-error=INTERNAL] fails the stream after its first chunk', async () => {
      const stream = await genai().models.generateContentStream({
        model: 'gemini-2.5-flash',
        contents: 'Hi [mock:stream-error=INTERNAL]',
      });
      const texts: (string | undefined)[] = [];
      const error = await (async () => {
        for await (const chunk of stream) texts.push(chunk.text);
      })().catch((e: unknown) => e);
      expect(texts).toEqual([MOCK_TEXT_DELTAS[0]]);
      expect(error).toBeInstanceOf(GoogleApiError);
      expect(error).toMatchObject({
        status: 500,
        message: expect.stringContaining('Internal error encountered.'),
      });
    });

    test('[mock:status=429] throws the SDK’s ApiError 429', async () => {
      const error = await genai()
        .models.generateContent({ model: 'gemini-2.5-flash', contents: 'Hi [mock:status=429]' })
        .catch((e: unknown) => e);
      expect(error).toBeInstanceOf(GoogleApiError);
      expect(error).toMatchObject({ status: 429, message: expect.stringContaining('RESOURCE_EXHAUSTED') });
    });
  });
});

describe('MockAzureOpenAI with the openai SDK', () => {
  let mock: MockAzureOpenAI;
  beforeAll(async () => {
    mock = await new MockAzureOpenAI({
      deployments: { 'gpt-4o-prod': 'gpt-4o-2024-11-20', 'embed-small': 'text-embedding-3-small' },
    }).start();
  });
  afterAll(() => mock.close());

  // Azure's v1 API takes the plain OpenAI client: the key as Authorization: Bearer ...
  const bearer = (apiKey = mock.apiKey) =>
    new OpenAI({ baseURL: `${mock.url}/openai/v1`, apiKey, maxRetries: 0 });
  // ... or as api-key, with no Authorization header at all.
  const apiKeyHeader = () =>
    new OpenAI({
      baseURL: `${mock.url}/openai/v1`,
      apiKey: 'unused',
      defaultHeaders: { 'api-key': mock.apiKeys[1], Authorization: null },
      maxRetries: 0,
    });

  test('chat.completions.create: JSON, model named as Azure names it', async () => {
    const completion = await bearer().chat.completions.create({ model: 'gpt-4o-prod', messages: HELLO });
    expect(completion.choices[0].message.content).toBe(MOCK_TEXT);
    expect(completion.model).toBe('gpt-4o-2024-11-20');
    expect(completion.usage).toMatchObject({
      prompt_tokens: HELLO_TOKENS,
      completion_tokens: MOCK_OUTPUT_TOKENS,
      total_tokens: HELLO_TOKENS + MOCK_OUTPUT_TOKENS,
    });
    expect(mock.last()).toMatchObject({
      verified: true,
      auth: 'bearer',
      path: '/openai/v1/chat/completions',
    });
  });

  test('with the key as api-key and no Authorization', async () => {
    const completion = await apiKeyHeader().chat.completions.create({
      model: 'gpt-4o-prod',
      messages: HELLO,
    });
    expect(completion.choices[0].message.content).toBe(MOCK_TEXT);
    expect(mock.last()).toMatchObject({ verified: true, auth: 'api-key' });
    expect(mock.last().headers.authorization).toBeUndefined();
  });

  test('a streamed chat completion with include_usage', async () => {
    const stream = await bearer().chat.completions.create({
      model: 'gpt-4o-prod',
      messages: HELLO,
      stream: true,
      stream_options: { include_usage: true },
    });
    const texts: string[] = [];
    let usage: OpenAI.CompletionUsage | null | undefined;
    for await (const chunk of stream) {
      texts.push(...chunk.choices.map((c) => c.delta.content ?? ''));
      if (chunk.usage) usage = chunk.usage;
    }
    expect(texts.join('')).toBe(MOCK_TEXT);
    expect(usage).toMatchObject({ prompt_tokens: HELLO_TOKENS, completion_tokens: MOCK_OUTPUT_TOKENS });
  });

  test('[mock:stream-error=server_error] fails a chat stream with an error chunk', async () => {
    const stream = await bearer().chat.completions.create({
      model: 'gpt-4o-prod',
      messages: [{ role: 'user', content: 'Hi [mock:stream-error=server_error]' }],
      stream: true,
    });
    const error = await (async () => {
      for await (const chunk of stream) void chunk;
    })().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OpenAI.APIError);
    expect(error).toMatchObject({
      type: 'server_error',
      message: expect.stringContaining('The server had an error'),
    });
  });

  test('a tool call', async () => {
    const completion = await bearer().chat.completions.create({
      model: 'gpt-4o-prod',
      messages: [{ role: 'user', content: 'Weather in Paris? [mock:tool]' }],
      tools: [{ type: 'function', function: { name: 'get_weather', parameters: WEATHER_TOOL.input_schema } }],
    });
    expect(completion.choices[0].finish_reason).toBe('tool_calls');
    const call = completion.choices[0].message.tool_calls![0] as OpenAI.ChatCompletionMessageFunctionToolCall;
    expect(call.function).toEqual({ name: 'get_weather', arguments: '{"city":"mock","unit":"celsius"}' });
  });

  test('responses.create, JSON and streamed', async () => {
    const response = await bearer().responses.create({ model: 'gpt-4o-prod', input: 'Hello there' });
    expect(response.output_text).toBe(MOCK_TEXT);
    expect(response.usage).toMatchObject({ input_tokens: HELLO_TOKENS, output_tokens: MOCK_OUTPUT_TOKENS });
    const stream = await bearer().responses.create({
      model: 'gpt-4o-prod',
      input: 'Hello there',
      stream: true,
    });
    const deltas: string[] = [];
    let completed: OpenAI.Responses.Response | undefined;
    for await (const event of stream) {
      if (event.type === 'response.output_text.delta') deltas.push(event.delta);
      if (event.type === 'response.completed') completed = event.response;
    }
    expect(deltas).toEqual(MOCK_TEXT_DELTAS);
    expect(completed?.usage).toMatchObject({
      input_tokens: HELLO_TOKENS,
      total_tokens: HELLO_TOKENS + MOCK_OUTPUT_TOKENS,
    });
    expect(mock.last()).toMatchObject({ verified: true, path: '/openai/v1/responses' });
  });

  test('AzureOpenAI sends its key as api-key (Responses, which it does not route by deployment)', async () => {
    const azure = new AzureOpenAI({
      baseURL: `${mock.url}/openai/v1`,
      apiKey: mock.apiKey,
      apiVersion: 'preview',
      maxRetries: 0,
    });
    const response = await azure.responses.create({ model: 'gpt-4o-prod', input: 'Hello there' });
    expect(response.output_text).toBe(MOCK_TEXT);
    expect(mock.last()).toMatchObject({
      verified: true,
      auth: 'api-key',
      url: '/openai/v1/responses?api-version=preview',
    });
  });

  test('embeddings, base64 as the SDK asks', async () => {
    const result = await bearer().embeddings.create({
      model: 'embed-small',
      input: ['Hello there', 'and again'],
    });
    expect(result.data.map((d) => d.embedding)).toEqual([MOCK_EMBEDDING, MOCK_EMBEDDING]);
    expect(result.usage).toEqual({ prompt_tokens: 12, total_tokens: 12 });
    expect(result.model).toBe('text-embedding-3-small');
  });

  test('a wrong key: 401 with Azure’s message', async () => {
    const error = await bearer('0000wrong')
      .chat.completions.create({ model: 'gpt-4o-prod', messages: HELLO })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OpenAI.AuthenticationError);
    expect(error).toMatchObject({
      status: 401,
      code: '401',
      message: expect.stringContaining('Access denied due to invalid subscription key or wrong API endpoint'),
    });
    expect(mock.last()).toMatchObject({ verified: false, auth: 'bearer' });
  });

  test('[mock:status=429] and an unknown deployment', async () => {
    const limited = await bearer()
      .chat.completions.create({
        model: 'gpt-4o-prod',
        messages: [{ role: 'user', content: 'Hi [mock:status=429]' }],
      })
      .catch((e: unknown) => e);
    expect(limited).toBeInstanceOf(OpenAI.RateLimitError);
    expect(limited).toMatchObject({ status: 429, code: '429' });
    expect((limited as InstanceType<typeof OpenAI.APIError>).headers?.get('retry-after')).toBe('1');
    const missing = await bearer()
      .chat.completions.create({ model: 'gpt-5-nowhere', messages: HELLO })
      .catch((e: unknown) => e);
    expect(missing).toBeInstanceOf(OpenAI.NotFoundError);
    expect(missing).toMatchObject({ code: 'DeploymentNotFound' });
  });
});
