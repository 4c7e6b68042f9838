import http from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  contentType,
  responseTranslator,
  translateRequest,
  TranslationError,
  UnreadableAnswer,
  type CallFormat,
  type Op,
  type TargetFormat,
} from '../../../src/gateway/translate';
import { errorBody } from '../../../src/gateway/translate/errors';
import type { FormatMock } from '.';

/** The model every translated call names upstream. */
export const TARGET_MODEL = 'target-model';

/**
 * The translation layer alone between a caller's SDK and a mock upstream of another format, wired the way the
 * gateway wires it (caller paths in, the target's path, key header and framing out), so a real SDK can judge the
 * translated answers and the mock the translated requests. The gateway's own call path is tested apart.
 */
export class TranslatingProxy {
  url = '';
  /** The caller-format bodies the proxy answered with (JSON answers, and each stream's bytes), last first. */
  readonly answered: string[] = [];
  private readonly server: http.Server;

  constructor(private readonly target: FormatMock) {
    this.server = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => void this.handle(req, res, Buffer.concat(chunks)).catch(() => res.destroy()));
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

  private async handle(req: http.IncomingMessage, res: http.ServerResponse, raw: Buffer): Promise<void> {
    const url = new URL(req.url!, 'http://proxy');
    const call = callOf(url.pathname);
    if (!call) {
      res.writeHead(404).end();
      return;
    }
    const body = JSON.parse(raw.toString()) as Record<string, unknown>;
    const stream = call.streamAction ?? body.stream === true;
    const to = this.target.format as TargetFormat;
    let translated;
    try {
      translated = translateRequest(call.from, to, call.op, body, { targetModel: TARGET_MODEL, stream });
    } catch (e) {
      if (!(e instanceof TranslationError)) throw e;
      return this.send(res, 400, 'application/json', JSON.stringify(errorBody(call.from, 400, e.message)));
    }
    const upstream = await fetch(this.target.url + targetPath(to, call.op, translated.stream), {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...KEY_HEADERS[to] },
      body: JSON.stringify(translated.body),
    });
    const translator = responseTranslator(to, call.from, call.op, {
      model: call.model ?? String(body.model),
      stream: translated.stream,
      includeUsage: (body.stream_options as { include_usage?: boolean } | undefined)?.include_usage === true,
      geminiSse: url.searchParams.get('alt') === 'sse',
      memo: translated.memo,
    });
    const bytes = Buffer.from(await upstream.arrayBuffer());
    if (upstream.status >= 400) {
      return this.send(
        res,
        upstream.status,
        'application/json',
        translator.error(upstream.status, bytes).toString(),
      );
    }
    if (!translated.stream) {
      try {
        return this.send(res, 200, 'application/json', JSON.stringify(translator.json(bytes)));
      } catch (e) {
        if (!(e instanceof UnreadableAnswer)) throw e;
        return this.send(res, 502, 'application/json', JSON.stringify(errorBody(call.from, 502, e.message)));
      }
    }
    // Fed in small pieces (split anywhere, inside characters too), written as each comes out.
    res.writeHead(200, {
      'content-type': contentType(call.from, true, url.searchParams.get('alt') === 'sse'),
    });
    const s = translator.stream();
    let all = '';
    for (let i = 0; i < bytes.length; i += 13) {
      const out = s.write(bytes.subarray(i, i + 13));
      all += out.toString();
      if (out.length) res.write(out);
    }
    const tail = s.end();
    all += tail.toString();
    this.answered.unshift(all);
    res.end(tail);
  }

  private send(res: http.ServerResponse, status: number, type: string, text: string): void {
    this.answered.unshift(text);
    res.writeHead(status, { 'content-type': type }).end(text);
  }
}

const KEY_HEADERS: Record<TargetFormat, Record<string, string>> = {
  chat: { authorization: 'Bearer upstream-key' },
  // As the gateway sends it to a translated call (its anthropic upstreams' default version).
  messages: { 'x-api-key': 'upstream-key', 'anthropic-version': '2023-06-01' },
  generate: { 'x-goog-api-key': 'upstream-key' },
};

function targetPath(to: TargetFormat, op: Op, stream: boolean): string {
  if (to === 'chat') return '/v1/chat/completions';
  if (to === 'messages') return op === 'count' ? '/v1/messages/count_tokens' : '/v1/messages';
  const action =
    op === 'count' ? 'countTokens' : stream ? 'streamGenerateContent?alt=sse' : 'generateContent';
  return `/v1beta/models/${TARGET_MODEL}:${action}`;
}

function callOf(
  path: string,
): { from: CallFormat; op: Op; streamAction?: boolean; model?: string } | undefined {
  if (path === '/v1/chat/completions') return { from: 'chat', op: 'create' };
  if (path === '/v1/messages') return { from: 'messages', op: 'create' };
  if (path === '/v1/messages/count_tokens') return { from: 'messages', op: 'count' };
  if (path === '/v1/responses') return { from: 'responses', op: 'create' };
  if (path === '/v1/responses/input_tokens') return { from: 'responses', op: 'count' };
  const m = /^\/v1(?:beta)?\/models\/([^/:]+):(generateContent|streamGenerateContent|countTokens)$/.exec(
    path,
  );
  if (!m) return undefined;
  const action = m[2]!;
  return {
    from: 'generate',
    op: action === 'countTokens' ? 'count' : 'create',
    streamAction: action === 'streamGenerateContent',
    model: decodeURIComponent(m[1]!),
  };
}
