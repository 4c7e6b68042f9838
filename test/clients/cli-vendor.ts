import { createHash } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import { FrameReader, serverFrame } from '../../src/gateway/websocket';

/** The phrase every answer carries, so a CLI's printed output can be checked. */
export const PHRASE = 'pong from the mock vendor';

/** Token counts of every answer, so Genway's metering can be checked exactly. */
export const USAGE = {
  messages: { input: 11, output: 4 },
  responses: { input: 20, cached: 6, output: 5, reasoning: 2 },
  gemini: { prompt: 30, output: 6, thoughts: 3 },
};

export interface Seen {
  at: number;
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
  body: string;
  /** WebSocket messages of an upgraded connection. */
  messages?: string[];
}

type Json = Record<string, unknown>;

/** A value shaped by a (Gemini-style, upper- or lower-case) JSON schema: what a CLI's structured requests want. */
function shaped(schema: Json | undefined): unknown {
  const type = String(schema?.type ?? 'object').toLowerCase();
  if (Array.isArray(schema?.enum)) return schema.enum[0];
  switch (type) {
    case 'object': {
      const out: Json = {};
      for (const [k, v] of Object.entries((schema?.properties as Record<string, Json>) ?? {}))
        out[k] = shaped(v);
      return out;
    }
    case 'array':
      return [];
    case 'integer':
    case 'number':
      return 50;
    case 'boolean':
      return false;
    default:
      return 'ok';
  }
}

/**
 * The three vendors' APIs as the coding CLIs use them, on loopback: Anthropic messages (JSON and SSE) and
 * count_tokens, OpenAI responses (SSE, and the WebSocket mode Codex uses with `supports_websockets`), Gemini
 * generateContent (schema-shaped JSON when asked for it: Gemini CLI routes with it) and streamGenerateContent.
 * Records every request.
 */
export class CliVendor {
  readonly seen: Seen[] = [];
  private readonly sockets = new Set<Duplex>();
  /** Vendor keys answered with Anthropic's 401, as a key revoked at the vendor is. */
  readonly refusedKeys = new Set<string>();
  private readonly server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString();
      this.seen.push({
        at: performance.now(),
        method: req.method!,
        url: req.url!,
        headers: req.headers,
        body,
      });
      if (this.refusedKeys.has(String(req.headers['x-api-key']))) {
        return json(res, 401, {
          type: 'error',
          error: { type: 'authentication_error', message: 'invalid x-api-key' },
        });
      }
      let parsed: Json = {};
      try {
        parsed = JSON.parse(body) as Json;
      } catch {
        // not JSON: answered by path alone
      }
      this.answer(req.url!, parsed, res);
    });
  });
  url = '';

  async start(): Promise<this> {
    this.server.on('upgrade', (req: http.IncomingMessage, socket: Duplex) => this.upgrade(req, socket));
    await new Promise<void>((r) => this.server.listen(0, '127.0.0.1', r));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this;
  }

  private answer(url: string, body: Json, res: http.ServerResponse): void {
    const path = url.split('?')[0];
    if (path === '/v1/messages') return this.messages(body, res);
    if (path === '/v1/messages/count_tokens') return json(res, 200, { input_tokens: USAGE.messages.input });
    if (path === '/v1/responses')
      return sse(
        res,
        responseEvents(String(body.model)).map((e): [string, unknown] => [String(e.type), e]),
      );
    const gemini = /^\/(v1beta|v1|v1alpha)\/models\/([^/:]+):(\w+)$/.exec(path);
    if (gemini) return this.gemini(gemini[2], gemini[3], url, body, res);
    json(res, 404, { error: { message: `mock: no ${path}` } });
  }

  private messages(body: Json, res: http.ServerResponse): void {
    const model = String(body.model);
    const { input, output } = USAGE.messages;
    if (body.stream !== true) {
      return json(res, 200, {
        id: 'msg_cli',
        type: 'message',
        role: 'assistant',
        model,
        content: [{ type: 'text', text: PHRASE }],
        stop_reason: 'end_turn',
        stop_sequence: null,
        usage: { input_tokens: input, output_tokens: output },
      });
    }
    sse(res, [
      [
        'message_start',
        {
          type: 'message_start',
          message: {
            id: 'msg_cli',
            type: 'message',
            role: 'assistant',
            model,
            content: [],
            stop_reason: null,
            stop_sequence: null,
            usage: { input_tokens: input, output_tokens: 1 },
          },
        },
      ],
      [
        'content_block_start',
        { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } },
      ],
      [
        'content_block_delta',
        { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: PHRASE } },
      ],
      ['content_block_stop', { type: 'content_block_stop', index: 0 }],
      [
        'message_delta',
        {
          type: 'message_delta',
          delta: { stop_reason: 'end_turn', stop_sequence: null },
          usage: { output_tokens: output },
        },
      ],
      ['message_stop', { type: 'message_stop' }],
    ]);
  }

  private gemini(model: string, action: string, url: string, body: Json, res: http.ServerResponse): void {
    if (action === 'countTokens') return json(res, 200, { totalTokens: USAGE.gemini.prompt });
    const config = (body.generationConfig ?? {}) as Json;
    const schema = (config.responseJsonSchema ?? config.responseSchema) as Json | undefined;
    const text = schema ? JSON.stringify(shaped(schema)) : PHRASE;
    const chunk = {
      candidates: [{ content: { role: 'model', parts: [{ text }] }, finishReason: 'STOP', index: 0 }],
      usageMetadata: {
        promptTokenCount: USAGE.gemini.prompt,
        candidatesTokenCount: USAGE.gemini.output,
        thoughtsTokenCount: USAGE.gemini.thoughts,
        totalTokenCount: USAGE.gemini.prompt + USAGE.gemini.output + USAGE.gemini.thoughts,
      },
      modelVersion: model,
    };
    if (action === 'streamGenerateContent') {
      return url.includes('alt=sse') ? sse(res, [[null, chunk]]) : json(res, 200, [chunk]);
    }
    json(res, 200, chunk);
  }

  /** The Responses WebSocket mode: each `response.create` is answered with a streamed response's events. */
  private upgrade(req: http.IncomingMessage, socket: Duplex): void {
    const seen: Seen = {
      at: performance.now(),
      method: 'GET',
      url: req.url!,
      headers: req.headers,
      body: '',
      messages: [],
    };
    this.seen.push(seen);
    this.sockets.add(socket);
    socket.on('close', () => this.sockets.delete(socket));
    socket.on('error', () => socket.destroy());
    const accept = createHash('sha1')
      .update(`${req.headers['sec-websocket-key']}258EAFA5-E914-47DA-95CA-C5AB0DC85B11`)
      .digest('base64');
    socket.write(
      `HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: ${accept}\r\n\r\n`,
    );
    const reader = new FrameReader();
    socket.on('data', (chunk: Buffer) => {
      for (const frame of reader.feed(chunk)) {
        if (frame.opcode === 8) return void socket.end(serverFrame(8, frame.payload));
        if (frame.opcode === 9) socket.write(serverFrame(10, frame.payload));
        if (frame.opcode !== 1) continue;
        const text = frame.payload.toString();
        seen.messages!.push(text);
        const message = JSON.parse(text) as Json;
        if (message.type !== 'response.create') continue;
        for (const event of responseEvents(String(message.model))) {
          socket.write(serverFrame(1, Buffer.from(JSON.stringify(event))));
        }
      }
    });
  }

  async stop(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    this.server.closeAllConnections();
    await new Promise((r) => this.server.close(r));
  }
}

function responseEvents(model: string): Json[] {
  const { input, cached, output, reasoning } = USAGE.responses;
  const item = {
    id: 'msg_cli',
    type: 'message',
    status: 'completed',
    role: 'assistant',
    content: [{ type: 'output_text', text: PHRASE, annotations: [] }],
  };
  const response = (status: string, out: unknown[], usage: unknown) => ({
    id: 'resp_cli',
    object: 'response',
    created_at: 1700000000,
    status,
    model,
    output: out,
    usage,
  });
  const usage = {
    input_tokens: input,
    input_tokens_details: { cached_tokens: cached },
    output_tokens: output,
    output_tokens_details: { reasoning_tokens: reasoning },
    total_tokens: input + output,
  };
  const part = { item_id: 'msg_cli', output_index: 0, content_index: 0 };
  return [
    { type: 'response.created', sequence_number: 0, response: response('in_progress', [], null) },
    {
      type: 'response.output_item.added',
      sequence_number: 1,
      output_index: 0,
      item: { ...item, status: 'in_progress', content: [] },
    },
    {
      type: 'response.content_part.added',
      sequence_number: 2,
      ...part,
      part: { type: 'output_text', text: '', annotations: [] },
    },
    { type: 'response.output_text.delta', sequence_number: 3, ...part, delta: PHRASE },
    { type: 'response.output_text.done', sequence_number: 4, ...part, text: PHRASE },
    {
      type: 'response.content_part.done',
      sequence_number: 5,
      ...part,
      part: { type: 'output_text', text: PHRASE, annotations: [] },
    },
    { type: 'response.output_item.done', sequence_number: 6, output_index: 0, item },
    { type: 'response.completed', sequence_number: 7, response: response('completed', [item], usage) },
  ];
}

function json(res: http.ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

function sse(res: http.ServerResponse, events: [string | null, unknown][]): void {
  res.writeHead(200, { 'content-type': 'text/event-stream' });
  for (const [event, data] of events)
    res.write(`${event ? `event: ${event}\n` : ''}data: ${JSON.stringify(data)}\n\n`);
  res.end();
}
