import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { chatAsk, chatError, chatJson, chatStream } from './chat';
import {
  generateArray,
  generateAsk,
  generateChunks,
  generateError,
  generateJson,
  generateSse,
} from './generate';
import { messagesAsk, messagesError, messagesJson, messagesStream } from './messages';
import { MockError, scriptFor, type Ask, type Json, type Script } from './script';

export { shaped, scriptFor, THINKING, type Ask, type Script } from './script';
export { chatAsk, chatJson, chatStream } from './chat';
export { messagesAsk, messagesJson, messagesStream, SIGNATURE } from './messages';
export {
  generateAsk,
  generateChunks,
  generateJson,
  generateSse,
  generateArray,
  THOUGHT_SIGNATURE,
} from './generate';

export type Format = 'chat' | 'messages' | 'generate';

/** What a mock upstream received. */
export interface Seen {
  /** When (performance.now()). */
  at: number;
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
  /** The body as JSON (undefined when it is not). */
  json: Json | undefined;
  /** The usage of the generation it answered (JSON or a stream). */
  usage?: Script['usage'];
  /** Whether that usage reached the caller whole: the JSON answer, or a stream to its end that reports usage. */
  reported?: boolean;
  /** A stream the caller (Genway) stopped reading before its end: the connection was closed. */
  cut?: boolean;
}

export interface FormatMockOptions {
  /** Milliseconds between a stream's frames (default: none, each frame its own write). */
  frameDelayMs?: number;
}

/**
 * A mock upstream of one format on loopback (node:http, port 0): OpenAI chat completions (`/v1/chat/completions`),
 * Anthropic messages (`/v1/messages`, `/v1/messages/count_tokens`) or Gemini (`/v1beta/models/{m}:generateContent`,
 * `:streamGenerateContent` with or without `alt=sse`, `:countTokens`). It checks requests as the vendor does (a
 * translation that writes a body the vendor would refuse fails here), answers as the vendor does (script.ts decides
 * what, from the request and its markers) and records what it received.
 */
export class FormatMock {
  readonly received: Seen[] = [];
  url = '';
  private readonly server: http.Server;

  constructor(
    readonly format: Format,
    private readonly options: FormatMockOptions = {},
  ) {
    this.server = http.createServer({ noDelay: true }, (req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const body = Buffer.concat(chunks);
        let json: Json | undefined;
        try {
          json = JSON.parse(body.toString()) as Json;
        } catch {
          json = undefined;
        }
        const seen: Seen = {
          at: performance.now(),
          method: req.method!,
          url: req.url!,
          headers: req.headers,
          body,
          json,
        };
        this.received.push(seen);
        void this.answer(req, res, json, body.length, seen).catch(() => res.destroy());
      });
    });
  }

  async start(): Promise<this> {
    await new Promise<void>((r) => this.server.listen(0, '127.0.0.1', r));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this;
  }

  async stop(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise((r) => this.server.close(r));
  }

  last(): Seen {
    const seen = this.received[this.received.length - 1];
    if (!seen) throw new Error(`the ${this.format} mock received nothing`);
    return seen;
  }

  private async answer(
    req: http.IncomingMessage,
    res: http.ServerResponse,
    body: Json | undefined,
    size: number,
    seen: Seen,
  ) {
    const url = new URL(req.url!, 'http://mock');
    const route = this.route(req.method!, url.pathname);
    if (!route) return this.fail(res, new MockError(404, `no route ${req.method} ${url.pathname}`));
    try {
      this.authorize(req, url);
      if (!body || typeof body !== 'object' || Array.isArray(body))
        throw new MockError(400, 'the body is not a JSON object');
      if (this.format === 'chat') return await this.chat(res, body, size, seen);
      if (this.format === 'messages') return await this.messages(req, res, body, size, route.count, seen);
      return await this.generate(res, body, size, route, url, seen);
    } catch (e) {
      if (e instanceof MockError) return this.fail(res, e);
      throw e;
    }
  }

  private route(
    method: string,
    path: string,
  ): { count: boolean; model?: string; action?: string } | undefined {
    if (method !== 'POST') return undefined;
    if (this.format === 'chat') return path === '/v1/chat/completions' ? { count: false } : undefined;
    if (this.format === 'messages') {
      if (path === '/v1/messages') return { count: false };
      return path === '/v1/messages/count_tokens' ? { count: true } : undefined;
    }
    const m = /^\/v1(?:beta)?\/models\/([^/:]+):(generateContent|streamGenerateContent|countTokens)$/.exec(
      path,
    );
    return m ? { count: m[2] === 'countTokens', model: decodeURIComponent(m[1]!), action: m[2]! } : undefined;
  }

  /** Each vendor's key header, as its SDK sends it; none is the vendor's own error. */
  private authorize(req: http.IncomingMessage, url: URL): void {
    const h = req.headers;
    if (this.format === 'chat' && !String(h.authorization ?? '').startsWith('Bearer ')) {
      throw new MockError(
        401,
        "You didn't provide an API key. You need to provide your API key in an Authorization header using Bearer auth.",
      );
    }
    if (this.format === 'messages') {
      if (!h['x-api-key'] && !String(h.authorization ?? '').startsWith('Bearer '))
        throw new MockError(401, 'x-api-key header is required');
      if (!h['anthropic-version']) throw new MockError(400, 'anthropic-version: header is required');
    }
    if (this.format === 'generate' && !h['x-goog-api-key'] && !url.searchParams.get('key')) {
      throw new MockError(
        403,
        "Method doesn't allow unregistered callers (callers without established identity). Please use API Key or other form of API consumer identity to call this API.",
      );
    }
  }

  private async chat(res: http.ServerResponse, body: Json, size: number, seen: Seen) {
    const script = scriptFor(chatAsk(body, size), 'chat');
    const model = String(body.model);
    if (body.stream !== true) return this.json(res, chatJson(script, model), 200, seen, script);
    const usage = (body.stream_options as Json | undefined)?.include_usage === true;
    await this.frames(res, chatStream(script, model, usage), 'text/event-stream', seen, script, usage);
  }

  private async messages(
    req: http.IncomingMessage,
    res: http.ServerResponse,
    body: Json,
    size: number,
    count: boolean,
    seen: Seen,
  ) {
    const ask = messagesAsk(body, size, String(req.headers['anthropic-version']), count);
    if (count) return this.json(res, { input_tokens: Math.max(1, Math.round(size / 4)) });
    const script = scriptFor(ask, 'messages');
    const model = String(body.model);
    if (body.stream !== true) return this.json(res, messagesJson(script, model), 200, seen, script);
    await this.frames(res, messagesStream(script, model), 'text/event-stream', seen, script);
  }

  private async generate(
    res: http.ServerResponse,
    body: Json,
    size: number,
    route: { count: boolean; model?: string; action?: string },
    url: URL,
    seen: Seen,
  ) {
    const model = route.model!;
    if (route.count) {
      const request = (body.generateContentRequest as Json | undefined) ?? body;
      if (body.generateContentRequest && !String(request.model ?? '').startsWith('models/')) {
        throw new MockError(400, '* CountTokensRequest.generate_content_request.model: model is required');
      }
      const { model: _model, ...rest } = request;
      generateAsk(rest, size);
      const total = Math.max(1, Math.round(size / 4));
      return this.json(res, {
        totalTokens: total,
        promptTokensDetails: [{ modality: 'TEXT', tokenCount: total }],
      });
    }
    const script: Script = scriptFor(generateAsk(body, size) as Ask, 'generate');
    if (route.action === 'generateContent')
      return this.json(res, generateJson(script, model), 200, seen, script);
    const chunks = generateChunks(script, model);
    if (url.searchParams.get('alt') === 'sse')
      return this.frames(res, generateSse(chunks), 'text/event-stream', seen, script);
    await this.frames(res, generateArray(chunks), 'application/json', seen, script);
  }

  private fail(res: http.ServerResponse, e: MockError): void {
    const body =
      this.format === 'chat'
        ? chatError(e.status, e.message)
        : this.format === 'messages'
          ? messagesError(e.status, e.message)
          : generateError(e.status, e.message);
    this.json(res, body, e.status);
  }

  private json(res: http.ServerResponse, body: unknown, status = 200, seen?: Seen, script?: Script): void {
    if (seen && script) Object.assign(seen, { usage: script.usage, reported: true });
    const text = JSON.stringify(body);
    res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
    res.end(text);
  }

  /**
   * A stream's frames, one write each; the script's usage is recorded, as reported once the last frame is written (when
   * the stream reports it). `[mock:slow=<ms>]` in the prompt (or the mock's frameDelayMs) spaces the frames.
   */
  private async frames(
    res: http.ServerResponse,
    frames: string[],
    contentType: string,
    seen?: Seen,
    script?: Script,
    reportsUsage = true,
  ): Promise<void> {
    res.writeHead(200, { 'content-type': contentType, 'cache-control': 'no-cache' });
    const delay = script?.frameDelayMs ?? this.options.frameDelayMs;
    if (seen && script) Object.assign(seen, { usage: script.usage, reported: false });
    for (const frame of frames) {
      if (res.destroyed) {
        if (seen) seen.cut = true;
        return;
      }
      res.write(frame);
      await new Promise((r) => (delay ? setTimeout(r, delay) : setImmediate(r)));
    }
    if (seen && reportsUsage && !script?.streamFail) seen.reported = true;
    res.end();
  }
}
