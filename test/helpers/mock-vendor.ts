import http from 'node:http';
import type { AddressInfo } from 'node:net';

/** What the mock vendor received: exactly, bytes included. */
export interface Received {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
  rawHeaders: string[];
  body: Buffer;
  /** Resolves when the client side of this exchange closed (Genway aborted or finished). */
  closed: Promise<void>;
}

export type MockHandler = (req: Received, res: http.ServerResponse) => unknown;

/**
 * A vendor API on loopback (node:http) that records every request and answers through per-path handlers
 * (default: the canned answers below). Stands in for the three vendors in gateway tests and benchmarks.
 */
export class MockVendor {
  readonly received: Received[] = [];
  private readonly server: http.Server;
  private handlers: MockHandler[] = [];
  url = '';

  constructor(private readonly fallback: MockHandler = defaultAnswer) {
    this.server = http.createServer({ noDelay: true }, (req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const received: Received = {
          method: req.method!,
          url: req.url!,
          headers: req.headers,
          rawHeaders: req.rawHeaders,
          body: Buffer.concat(chunks),
          closed: new Promise((resolve) => res.once('close', () => resolve())),
        };
        this.received.push(received);
        const handler = this.handlers.shift() ?? this.fallback;
        void Promise.resolve()
          .then(() => handler(received, res))
          .catch(() => res.destroy());
      });
    });
  }

  async start(): Promise<this> {
    await new Promise<void>((r) => this.server.listen(0, '127.0.0.1', r));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this;
  }

  /** The next request is answered by `handler` (queued, one per request). */
  next(handler: MockHandler): void {
    this.handlers.push(handler);
  }

  last(): Received {
    const r = this.received[this.received.length - 1];
    if (!r) throw new Error('the mock vendor received nothing');
    return r;
  }

  async stop(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise((r) => this.server.close(r));
  }
}

export const sse = (events: [string | null, unknown][]): string =>
  events
    .map(([event, data]) => `${event ? `event: ${event}\n` : ''}data: ${JSON.stringify(data)}\n\n`)
    .join('');

/** A streamed messages-format answer: "Hello there", 25 input (+5 cache read), 7 output tokens. */
export const MESSAGES_STREAM: [string, unknown][] = [
  [
    'message_start',
    {
      type: 'message_start',
      message: {
        id: 'msg_1',
        type: 'message',
        role: 'assistant',
        model: 'claude-test',
        content: [],
        stop_reason: null,
        stop_sequence: null,
        usage: {
          input_tokens: 25,
          cache_read_input_tokens: 5,
          cache_creation_input_tokens: 0,
          output_tokens: 1,
        },
      },
    },
  ],
  [
    'content_block_start',
    { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } },
  ],
  ['ping', { type: 'ping' }],
  [
    'content_block_delta',
    { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'Hello' } },
  ],
  [
    'content_block_delta',
    { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: ' there' } },
  ],
  ['content_block_stop', { type: 'content_block_stop', index: 0 }],
  [
    'message_delta',
    {
      type: 'message_delta',
      delta: { stop_reason: 'end_turn', stop_sequence: null },
      usage: { output_tokens: 7 },
    },
  ],
  ['message_stop', { type: 'message_stop' }],
];

export const MESSAGE_JSON = {
  id: 'msg_2',
  type: 'message',
  role: 'assistant',
  model: 'claude-test',
  content: [{ type: 'text', text: 'Hi \u2028 "quoted" ✓' }],
  stop_reason: 'end_turn',
  stop_sequence: null,
  usage: { input_tokens: 12, output_tokens: 3 },
};

const responseObject = (status: string, usage: unknown) => ({
  id: 'resp_1',
  object: 'response',
  created_at: 1700000000,
  status,
  model: 'gpt-test',
  output: [
    {
      type: 'message',
      id: 'msg_1',
      status: 'completed',
      role: 'assistant',
      content: [{ type: 'output_text', text: 'Hello there', annotations: [] }],
    },
  ],
  usage,
});

export const RESPONSES_USAGE = {
  input_tokens: 40,
  input_tokens_details: { cached_tokens: 8 },
  output_tokens: 11,
  output_tokens_details: { reasoning_tokens: 2 },
  total_tokens: 51,
};

export const RESPONSE_JSON = responseObject('completed', RESPONSES_USAGE);

export const RESPONSES_STREAM: [string, unknown][] = [
  [
    'response.created',
    { type: 'response.created', sequence_number: 0, response: responseObject('in_progress', null) },
  ],
  [
    'response.output_text.delta',
    {
      type: 'response.output_text.delta',
      sequence_number: 1,
      item_id: 'msg_1',
      output_index: 0,
      content_index: 0,
      delta: 'Hello',
    },
  ],
  [
    'response.output_text.delta',
    {
      type: 'response.output_text.delta',
      sequence_number: 2,
      item_id: 'msg_1',
      output_index: 0,
      content_index: 0,
      delta: ' there',
    },
  ],
  ['response.completed', { type: 'response.completed', sequence_number: 3, response: RESPONSE_JSON }],
];

const candidate = (text: string, finishReason?: string) => ({
  content: { role: 'model', parts: [{ text }] },
  ...(finishReason ? { finishReason } : {}),
  index: 0,
});

export const GENERATE_JSON = {
  candidates: [candidate('Hello there', 'STOP')],
  usageMetadata: { promptTokenCount: 9, candidatesTokenCount: 4, thoughtsTokenCount: 3, totalTokenCount: 16 },
  modelVersion: 'gemini-test',
};

export const GENERATE_STREAM: unknown[] = [
  {
    candidates: [candidate('Hello')],
    usageMetadata: { promptTokenCount: 9, totalTokenCount: 9 },
    modelVersion: 'gemini-test',
  },
  {
    candidates: [candidate(' there', 'STOP')],
    usageMetadata: { promptTokenCount: 9, candidatesTokenCount: 5, totalTokenCount: 14 },
    modelVersion: 'gemini-test',
  },
];

/** A chat completion: "Hello there", 20 prompt tokens (4 cached), 6 completion tokens (1 reasoning). */
export const CHAT_USAGE = {
  prompt_tokens: 20,
  completion_tokens: 6,
  total_tokens: 26,
  prompt_tokens_details: { cached_tokens: 4 },
  completion_tokens_details: { reasoning_tokens: 1 },
};

export const CHAT_JSON = {
  id: 'chatcmpl-mock',
  object: 'chat.completion',
  created: 1700000000,
  model: 'gpt-test',
  choices: [
    {
      index: 0,
      message: { role: 'assistant', content: 'Hello there', refusal: null },
      finish_reason: 'stop',
    },
  ],
  usage: CHAT_USAGE,
};

/**
 * A streamed chat completion as OpenAI sends it: with `include_usage`, every chunk carries `"usage":null` and a
 * last chunk with no choices carries the usage.
 */
export function chatStream(includeUsage: boolean): string {
  const chunk = (choices: unknown[]) => ({
    id: 'chatcmpl-mock',
    object: 'chat.completion.chunk',
    created: 1700000000,
    model: 'gpt-test',
    choices,
    ...(includeUsage ? { usage: null } : {}),
  });
  const events: unknown[] = [
    chunk([{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }]),
    chunk([{ index: 0, delta: { content: 'Hello' }, finish_reason: null }]),
    chunk([{ index: 0, delta: { content: ' there' }, finish_reason: null }]),
    chunk([{ index: 0, delta: {}, finish_reason: 'stop' }]),
  ];
  if (includeUsage) events.push({ ...chunk([]), usage: CHAT_USAGE });
  return `${events.map((e) => `data: ${JSON.stringify(e)}\n\n`).join('')}data: [DONE]\n\n`;
}

/** An embedding of `dims` numbers, the same for every input (the tests check it arrives as sent). */
export const EMBEDDING = [0.25, -0.5, 0.125];
/** OpenAI reports 3 prompt tokens per input in these answers. */
export const EMBEDDING_TOKENS_PER_INPUT = 3;

function embeddingsAnswer(parsed: { input?: unknown; model?: string; encoding_format?: string }): unknown {
  const inputs = Array.isArray(parsed.input) ? parsed.input.length : 1;
  const tokens = inputs * EMBEDDING_TOKENS_PER_INPUT;
  // As OpenAI does: base64 of little-endian float32 when asked (the openai SDK asks, and decodes it).
  const embedding =
    parsed.encoding_format === 'base64'
      ? Buffer.from(new Float32Array(EMBEDDING).buffer).toString('base64')
      : EMBEDDING;
  return {
    object: 'list',
    data: Array.from({ length: inputs }, (_, index) => ({
      object: 'embedding',
      index,
      embedding,
    })),
    model: parsed.model,
    usage: { prompt_tokens: tokens, total_tokens: tokens },
  };
}

function json(res: http.ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

function stream(res: http.ServerResponse, text: string): void {
  res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache' });
  res.end(text);
}

/** Canned vendor answers by path; streaming when the body (or `alt=sse`) asks for it. */
export const defaultAnswer: MockHandler = (req, res) => {
  const path = req.url.split('?')[0];
  const parsed = (() => {
    try {
      // A body that is JSON but not an object (null, a number) reads as an empty request, as a vendor would refuse it.
      return (Object(JSON.parse(req.body.toString())) ?? {}) as {
        input?: unknown;
        model?: string;
        encoding_format?: string;
        requests?: unknown[];
        stream?: boolean;
        stream_options?: { include_usage?: boolean };
      };
    } catch {
      return {};
    }
  })();
  const wantsStream = parsed.stream === true;
  if (path === '/v1/chat/completions') {
    return wantsStream
      ? stream(res, chatStream(parsed.stream_options?.include_usage === true))
      : json(res, 200, CHAT_JSON);
  }
  if (path === '/v1/messages') {
    return wantsStream ? stream(res, sse(MESSAGES_STREAM)) : json(res, 200, MESSAGE_JSON);
  }
  if (path === '/v1/messages/count_tokens') return json(res, 200, { input_tokens: 12 });
  if (path === '/v1/responses') {
    return wantsStream ? stream(res, sse(RESPONSES_STREAM)) : json(res, 200, RESPONSE_JSON);
  }
  if (/^\/v1\/responses\/[^/]+$/.test(path)) return json(res, 200, RESPONSE_JSON);
  if (path.endsWith(':generateContent')) return json(res, 200, GENERATE_JSON);
  if (path.endsWith(':streamGenerateContent')) {
    if (req.url.includes('alt=sse')) return stream(res, sse(GENERATE_STREAM.map((c) => [null, c])));
    return json(res, 200, GENERATE_STREAM);
  }
  if (path === '/v1/embeddings') return json(res, 200, embeddingsAnswer(parsed));
  if (path.endsWith(':embedContent')) return json(res, 200, { embedding: { values: EMBEDDING } });
  if (path.endsWith(':batchEmbedContents'))
    return json(res, 200, { embeddings: (parsed.requests ?? []).map(() => ({ values: EMBEDDING })) });
  if (path.endsWith(':countTokens')) return json(res, 200, { totalTokens: 9 });
  if (path === '/v1/models')
    return json(res, 200, { data: [{ id: 'model-a', object: 'model' }], object: 'list' });
  if (path === '/v1beta/models') return json(res, 200, { models: [{ name: 'models/gemini-test' }] });
  json(res, 404, { error: { message: `mock: no ${req.method} ${path}` } });
};
