import { spawn } from 'node:child_process';
import path from 'node:path';
import { ChatAnthropic } from '@langchain/anthropic';
import { ChatOpenAI, OpenAIEmbeddings } from '@langchain/openai';
import type { ModelUsage } from '../../src/gateway/store';
import { emptyUsage } from '../../src/gateway/store';
import { settled } from '../helpers/eventually';
import { useGateway, VENDOR_KEYS, type GatewaySetup } from '../helpers/gateway';
import { EMBEDDING, type Received } from '../helpers/mock-vendor';
import { fundedKey } from '../helpers/services';

/**
 * The frameworks users build on, pointed at Genway by base URL and key only, Genway pointed at the recording mock
 * vendor: the AI SDK (`ai` with @ai-sdk/openai `.chat` and responses, @ai-sdk/anthropic, @ai-sdk/google) and
 * LangChain JS (ChatOpenAI over chat completions and over responses, ChatAnthropic, OpenAIEmbeddings). Each case
 * asserts what the framework returned, what reached the vendor (its path, the vendor key, never the Genway key) and
 * what Genway metered on the key.
 */

const usage = (input: number, output: number, more: Partial<ModelUsage> = {}): ModelUsage => ({
  ...emptyUsage(),
  requests: 1,
  input,
  output,
  ...more,
});

/** What Genway meters for each canned answer of the mock vendor (cached and reasoning tokens apart). */
const METERED = {
  chat: usage(16, 5, { cacheRead: 4, reasoning: 1 }),
  responses: usage(32, 9, { cacheRead: 8, reasoning: 2 }),
  messages: usage(12, 3),
  messagesStream: usage(25, 7, { cacheRead: 5 }),
  generate: usage(9, 4, { reasoning: 3 }),
  generateStream: usage(9, 5),
};

/** The vendor key header each vendor gets, and the value it must carry. */
const VENDOR_KEY = {
  openai: ['authorization', `Bearer ${VENDOR_KEYS.openai[0]}`],
  anthropic: ['x-api-key', VENDOR_KEYS.anthropic],
  gemini: ['x-goog-api-key', VENDOR_KEYS.gemini[0]],
} as const;

function expectVendorKeyOnly(r: Received, vendorName: keyof typeof VENDOR_KEY, genwayKey: string): void {
  const [header, value] = VENDOR_KEY[vendorName];
  if (Array.isArray(value)) expect(value).toContain(r.headers[header]);
  else expect(r.headers[header]).toBe(value);
  expect(r.rawHeaders.join('\n')).not.toContain(genwayKey);
  expect(r.url).not.toContain(genwayKey);
}

// ---------------------------------------------------------------------------------------------------------------
// The AI SDK: ESM only, so it runs in a real Node process (test/e2e/clients/ai-sdk.mjs), each scenario with a key
// of its own and an `x-scenario` header that passes through Genway to the vendor.

interface AiSdkCase {
  vendor: keyof typeof VENDOR_KEY;
  /** The path (and query) the vendor must see. */
  url: string;
  result: unknown;
  metered: Record<string, ModelUsage>;
}

const AI_SDK: Record<string, AiSdkCase> = {
  'openai.chat generateText': {
    vendor: 'openai',
    url: '/v1/chat/completions',
    result: { text: 'Hello there', usage: { inputTokens: 20, outputTokens: 6, totalTokens: 26 } },
    metered: { 'gpt-test': METERED.chat },
  },
  'openai.chat streamText': {
    vendor: 'openai',
    url: '/v1/chat/completions',
    result: {
      parts: ['Hello', ' there'],
      text: 'Hello there',
      usage: { inputTokens: 20, outputTokens: 6, totalTokens: 26 },
    },
    metered: { 'gpt-test': METERED.chat },
  },
  'openai responses generateText': {
    vendor: 'openai',
    url: '/v1/responses',
    result: { text: 'Hello there', usage: { inputTokens: 40, outputTokens: 11, totalTokens: 51 } },
    metered: { 'gpt-test': METERED.responses },
  },
  'openai responses streamText': {
    vendor: 'openai',
    url: '/v1/responses',
    // The mock's stream has no output_item events, from which the SDK assembles `text`: the deltas are what count.
    result: {
      parts: ['Hello', ' there'],
      text: '',
      usage: { inputTokens: 40, outputTokens: 11, totalTokens: 51 },
    },
    metered: { 'gpt-test': METERED.responses },
  },
  'anthropic generateText': {
    vendor: 'anthropic',
    url: '/v1/messages',
    result: { text: 'Hi \u2028 "quoted" ✓', usage: { inputTokens: 12, outputTokens: 3, totalTokens: 15 } },
    metered: { 'claude-test': METERED.messages },
  },
  'anthropic streamText': {
    vendor: 'anthropic',
    url: '/v1/messages',
    result: {
      parts: ['Hello', ' there'],
      text: 'Hello there',
      usage: { inputTokens: 30, outputTokens: 7, totalTokens: 37 },
    },
    metered: { 'claude-test': METERED.messagesStream },
  },
  'google generateText': {
    vendor: 'gemini',
    url: '/v1beta/models/gemini-test:generateContent',
    result: { text: 'Hello there', usage: { inputTokens: 9, outputTokens: 7, totalTokens: 16 } },
    metered: { 'gemini-test': METERED.generate },
  },
  'google streamText': {
    vendor: 'gemini',
    url: '/v1beta/models/gemini-test:streamGenerateContent?alt=sse',
    result: {
      parts: ['Hello', ' there'],
      text: 'Hello there',
      usage: { inputTokens: 9, outputTokens: 5, totalTokens: 14 },
    },
    metered: { 'gemini-test': METERED.generateStream },
  },
  'openai embed': {
    vendor: 'openai',
    url: '/v1/embeddings',
    result: { embedding: EMBEDDING, usage: { tokens: 3 } },
    metered: { 'embed-test': usage(3, 0) },
  },
  'google embed': {
    vendor: 'gemini',
    url: '/v1beta/models/embed-test:embedContent',
    result: { embedding: EMBEDDING },
    // Gemini's embed answers carry no usage: the call is counted, with no tokens.
    metered: { 'embed-test': usage(0, 0) },
  },
  'google embedMany': {
    vendor: 'gemini',
    url: '/v1beta/models/embed-test:batchEmbedContents',
    result: { embeddings: [EMBEDDING, EMBEDDING] },
    metered: { 'embed-test': usage(0, 0) },
  },
};

/** Genway's 401 reaches each provider as an APICallError with the status, not retried. */
const AI_SDK_REFUSALS: Record<string, string> = {
  'openai.chat with a wrong key':
    'Malformed API key: a Genway key starts with gwk_ (sent in Authorization: Bearer)',
  'anthropic with a wrong key':
    'Malformed API key: a Genway key starts with gwk_ (sent in x-api-key or Authorization: Bearer)',
  'google with a wrong key':
    'Malformed API key: a Genway key starts with gwk_ (sent in x-goog-api-key, Authorization: Bearer or ?key=)',
};

interface AiSdkOutcome {
  name: string;
  result?: unknown;
  error?: { name: string; statusCode?: number; message: string };
}

function runAiSdk(base: string, keys: Record<string, string>): Promise<Map<string, AiSdkOutcome>> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [path.join(__dirname, 'clients', 'ai-sdk.mjs')], {
      env: {
        PATH: process.env.PATH,
        GENWAY_BASE: base,
        GENWAY_KEYS: JSON.stringify(keys),
        AI_SDK_LOG_WARNINGS: 'false',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
    child.once('error', reject);
    child.once('close', (code) => {
      clearTimeout(timer);
      if (code !== 0) return reject(new Error(`ai-sdk.mjs exited ${code}: ${stderr}`));
      const outcomes = stdout
        .split('\n')
        .filter(Boolean)
        .map((line) => JSON.parse(line) as AiSdkOutcome);
      resolve(new Map(outcomes.map((o) => [o.name, o])));
    });
  });
}

describe('LLM gateway with the AI SDK and LangChain JS', () => {
  let s: GatewaySetup;
  useGateway({}, 100, (setup) => (s = setup));

  describe('the AI SDK (ai, @ai-sdk/openai, @ai-sdk/anthropic, @ai-sdk/google)', () => {
    const keys: Record<string, { key: string; keyId: string }> = {};
    let ran: Promise<Map<string, AiSdkOutcome>> | undefined;
    /** Every scenario in one run of the SDK (its start-up is a second), on the first test that needs it. */
    const outcomes = () =>
      (ran ??= (async () => {
        for (const name of [...Object.keys(AI_SDK), ...Object.keys(AI_SDK_REFUSALS)])
          keys[name] = await fundedKey(s.gw.h.services, 100);
        const plain = Object.fromEntries(Object.entries(keys).map(([name, k]) => [name, k.key]));
        return runAiSdk(s.gw.base, plain);
      })());

    const seenFor = (name: string) => s.vendor.received.filter((r) => r.headers['x-scenario'] === name);

    test.each(Object.entries(AI_SDK).map(([name, c]) => ({ name, ...c })))(
      '$name: the result as the vendor answered, the vendor key swapped in, usage metered exactly',
      async ({ name, vendor, url, result, metered }) => {
        expect((await outcomes()).get(name)).toEqual({ name, result });
        const seen = seenFor(name);
        expect(seen.map((r) => `${r.method} ${r.url}`)).toEqual([`POST ${url}`]);
        expectVendorKeyOnly(seen[0], vendor, keys[name].key);
        const usageOf = () => s.gw.h.services.store.usage.get(keys[name].keyId);
        expect(await settled(usageOf, metered)).toEqual(metered);
      },
    );

    test.each(Object.entries(AI_SDK_REFUSALS).map(([name, message]) => ({ name, message })))(
      '$name: an APICallError with status 401 and Genway’s message, nothing forwarded',
      async ({ name, message }) => {
        expect((await outcomes()).get(name)).toEqual({
          name,
          error: { name: 'AI_APICallError', statusCode: 401, message },
        });
        expect(seenFor(name)).toEqual([]);
      },
    );
  });

  describe('LangChain JS (@langchain/openai, @langchain/anthropic)', () => {
    const openaiConfig = () => ({
      model: 'gpt-test',
      apiKey: s.key,
      configuration: { baseURL: `${s.gw.base}/v1` },
      maxRetries: 0,
    });
    const metered = async (expected: Record<string, ModelUsage>) =>
      expect(await settled(() => s.gw.h.services.store.usage.get(s.keyId), expected)).toEqual(expected);
    const CHAT_USAGE_METADATA = {
      input_tokens: 20,
      output_tokens: 6,
      total_tokens: 26,
      input_token_details: { cache_read: 4 },
      output_token_details: { reasoning: 1 },
    };

    test('ChatOpenAI (chat completions, its default): invoke returns the answer and its usage', async () => {
      const message = await new ChatOpenAI(openaiConfig()).invoke('Hi');
      expect(message.content).toBe('Hello there');
      expect(message.usage_metadata).toEqual(CHAT_USAGE_METADATA);
      expect(s.vendor.last().url).toBe('/v1/chat/completions');
      expectVendorKeyOnly(s.vendor.last(), 'openai', s.key);
      await metered({ 'gpt-test': METERED.chat });
    });

    test('ChatOpenAI stream: chunks in order, the usage chunk it asked for included', async () => {
      let text = '';
      let last: unknown;
      for await (const chunk of await new ChatOpenAI(openaiConfig()).stream('Hi')) {
        text += String(chunk.content);
        if (chunk.usage_metadata) last = chunk.usage_metadata;
      }
      expect(text).toBe('Hello there');
      expect(last).toEqual(CHAT_USAGE_METADATA);
      const sent = JSON.parse(s.vendor.last().body.toString()) as { stream_options?: unknown };
      expect(sent.stream_options).toEqual({ include_usage: true });
      await metered({ 'gpt-test': METERED.chat });
    });

    test('ChatOpenAI with useResponsesApi: invoke and stream over /v1/responses', async () => {
      const model = new ChatOpenAI({ ...openaiConfig(), useResponsesApi: true });
      const message = await model.invoke('Hi');
      expect(message.content).toEqual([{ type: 'text', text: 'Hello there', annotations: [] }]);
      expect(message.usage_metadata).toEqual({
        input_tokens: 40,
        output_tokens: 11,
        total_tokens: 51,
        input_token_details: { cache_read: 8 },
        output_token_details: { reasoning: 2 },
      });
      const deltas: string[] = [];
      for await (const chunk of await model.stream('Hi')) {
        for (const part of chunk.content as { type: string; text?: string }[])
          if (part.text) deltas.push(part.text);
      }
      expect(deltas).toEqual(['Hello', ' there']);
      expect(s.vendor.received.slice(-2).map((r) => r.url)).toEqual(['/v1/responses', '/v1/responses']);
      await metered({
        'gpt-test': { ...METERED.responses, requests: 2, input: 64, output: 18, cacheRead: 16, reasoning: 4 },
      });
    });

    test('ChatAnthropic: invoke and stream over /v1/messages, the key in x-api-key swapped', async () => {
      const model = new ChatAnthropic({
        model: 'claude-test',
        apiKey: s.key,
        anthropicApiUrl: s.gw.base,
        maxRetries: 0,
      });
      const message = await model.invoke('Hi');
      expect(message.content).toBe('Hi \u2028 "quoted" ✓');
      expect(message.usage_metadata).toMatchObject({ input_tokens: 12, output_tokens: 3, total_tokens: 15 });
      expectVendorKeyOnly(s.vendor.last(), 'anthropic', s.key);
      let text = '';
      for await (const chunk of await model.stream('Hi')) text += String(chunk.content);
      expect(text).toBe('Hello there');
      await metered({
        'claude-test': usage(37, 10, { requests: 2, cacheRead: 5 }),
      });
    });

    test('OpenAIEmbeddings: embedQuery and embedDocuments, prompt tokens metered', async () => {
      const embeddings = new OpenAIEmbeddings({ ...openaiConfig(), model: 'embed-test' });
      expect(await embeddings.embedQuery('Hi')).toEqual(EMBEDDING);
      expect(await embeddings.embedDocuments(['a', 'b'])).toEqual([EMBEDDING, EMBEDDING]);
      const sent = s.vendor.received
        .slice(-2)
        .map((r) => JSON.parse(r.body.toString()) as { input: unknown });
      expect(sent.map((b) => b.input)).toEqual(['Hi', ['a', 'b']]);
      expectVendorKeyOnly(s.vendor.last(), 'openai', s.key);
      await metered({ 'embed-test': usage(9, 0, { requests: 2 }) });
    });

    test('a wrong key: LangChain raises its AuthenticationError with Genway’s 401', async () => {
      const before = s.vendor.received.length;
      const failure = await new ChatOpenAI({ ...openaiConfig(), apiKey: 'gwk_not-a-key' }).invoke('Hi').then(
        () => ({ constructor: { name: 'none' }, status: 200, message: 'resolved' }),
        (err: unknown) => err as { constructor: { name: string }; status: number; message: string },
      );
      expect([failure.constructor.name, failure.status]).toEqual(['AuthenticationError', 401]);
      expect(failure.message).toContain('Malformed API key');
      expect(s.vendor.received.length).toBe(before);
    });
  });
});
