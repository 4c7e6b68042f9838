import type { IncomingMessage, ServerResponse } from 'node:http';
import { Agent, type Dispatcher } from 'undici';
import { ApiError } from '../errors';
import type { Vendor } from './vendors';

/** Hop-by-hop headers (RFC 9110 7.6.1): they describe one connection and never cross a proxy. */
const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'proxy-authenticate',
  'proxy-authorization',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
]);

/**
 * Request headers that never reach the vendor: hop-by-hop ones; every header an SDK may carry the Genway key
 * in; the client's Accept-Encoding (the vendor picks an encoding the client then gets as is); what Genway sets
 * itself (Host, Via) or the client library does (Content-Length of the buffered body); Expect, already answered
 * by this server.
 */
const DROP_FROM_REQUEST = new Set([
  ...HOP_BY_HOP,
  'authorization',
  'x-api-key',
  'x-goog-api-key',
  'accept-encoding',
  'host',
  'content-length',
  'via',
  'expect',
]);

const DROP_FROM_RESPONSE = new Set([...HOP_BY_HOP, 'via']);

/** Genway's received-by pseudonym in `Via`; a request that already carries it has come round in a loop. */
export const VIA_NAME = 'genway';
const VIA_ENTRY = `1.1 ${VIA_NAME}`;

export function hasOwnVia(via: string | undefined): boolean {
  if (!via) return false;
  return via.split(',').some((entry) => entry.trim().split(/\s+/)[1]?.toLowerCase() === VIA_NAME);
}

/** Header names listed in `Connection` are hop-by-hop for this message too. */
function connectionTokens(value: string | string[] | undefined): Set<string> | null {
  // The common values name no extra header: skip the split on every keep-alive request.
  if (!value || value === 'keep-alive' || value === 'close') return null;
  return new Set(
    [value]
      .flat()
      .join(',')
      .split(',')
      .map((t) => t.trim().toLowerCase()),
  );
}

/** Timestamps (performance.now()) of one proxied exchange, for the metrics and the overhead header. */
export interface Exchange {
  start: number;
  sent: number;
  headers?: number;
  upstreamEnd?: number;
  status?: number;
  /** True when the upstream body arrived whole. */
  complete: boolean;
}

/** Response headers as the client library parsed them: lower-case names, repeated ones as arrays. */
export type ResponseHeaders = Record<string, string | string[] | undefined>;

export interface ForwardOptions {
  vendor: Vendor;
  /** Path and query as they go upstream (the Gemini-style `key` parameter already removed). */
  path: string;
  body: Buffer | null;
  start: number;
  /** Echoed to the client in X-Request-Id. */
  requestId: string;
  /** Sees every response body chunk, as sent to the client. */
  onResponse?(status: number, headers: ResponseHeaders): ((chunk: Buffer) => void) | undefined;
  /** Runs once when the client's response is over (finished or cut). */
  onClose(exchange: Exchange): void;
}

export interface ProxyOptions {
  connectTimeoutMs: number;
  idleTimeoutMs: number;
}

/** The client went away: the reason the upstream request is aborted with. */
class ClientGone extends Error {}

const TIMEOUT_PHASE: Record<string, 'connect' | 'idle' | undefined> = {
  UND_ERR_CONNECT_TIMEOUT: 'connect',
  UND_ERR_HEADERS_TIMEOUT: 'idle',
  UND_ERR_BODY_TIMEOUT: 'idle',
};

/**
 * A thin pipe to the vendor over undici's dispatcher (its lowest-level API: no body stream objects, no header
 * objects beyond one parse): the request body goes up as received (already buffered, so Genway could read `model`
 * from a copy), the response comes back chunk by chunk as it arrives, never re-encoded. Keep-alive pools per
 * vendor origin; idle (not total) timeouts, before the headers and between body chunks, so long streams live; a
 * client that goes away aborts the upstream request. Upstream TCP has Nagle off (undici's default).
 */
export class VendorProxy {
  private readonly agent: Agent;

  constructor(private readonly options: ProxyOptions) {
    this.agent = new Agent({
      connect: { timeout: options.connectTimeoutMs },
      headersTimeout: options.idleTimeoutMs,
      bodyTimeout: options.idleTimeoutMs,
      keepAliveTimeout: 30_000,
    });
  }

  /** Headers for the upstream request: the client's, minus credentials and hop-by-hop, plus the vendor key. */
  private upstreamHeaders(req: IncomingMessage, vendor: Vendor): string[] {
    const raw = req.rawHeaders;
    const listed = connectionTokens(req.headers.connection);
    const out: string[] = ['Host', vendor.origin.host];
    let hasVersion = false;
    for (let i = 0; i < raw.length; i += 2) {
      const lower = raw[i].toLowerCase();
      if (DROP_FROM_REQUEST.has(lower) || listed?.has(lower)) continue;
      if (lower === 'anthropic-version') hasVersion = true;
      out.push(raw[i], raw[i + 1]);
    }
    const key = vendor.nextKey();
    if (key) out.push(vendor.keyHeader, vendor.keyHeaderValue(key));
    if (vendor.defaultVersion && !hasVersion) {
      out.push('anthropic-version', vendor.defaultVersion);
    }
    const via = req.headers.via;
    out.push('Via', via ? `${via}, ${VIA_ENTRY}` : VIA_ENTRY);
    return out;
  }

  forward(req: IncomingMessage, res: ServerResponse, options: ForwardOptions): void {
    const { vendor, body, requestId } = options;
    const { connectTimeoutMs, idleTimeoutMs } = this.options;
    const exchange: Exchange = { start: options.start, sent: 0, complete: false };
    let controller: Dispatcher.DispatchController | undefined;
    let closed = false;
    let tap: ((chunk: Buffer) => void) | undefined;

    res.once('close', () => {
      closed = true;
      // The client went away (or the response is over): stop the upstream work either way.
      if (!exchange.complete) controller?.abort(new ClientGone());
      options.onClose(exchange);
    });
    res.on('drain', () => controller?.resume());

    exchange.sent = performance.now();
    this.agent.dispatch(
      {
        origin: vendor.origin.origin,
        method: req.method!,
        path: vendor.basePath + options.path,
        headers: this.upstreamHeaders(req, vendor),
        body,
      },
      {
        onRequestStart: (c) => {
          controller = c;
          if (closed) c.abort(new ClientGone());
        },
        onResponseStart: (_c, status, headers, statusMessage) => {
          if (status < 200) return; // 1xx: informational, the final answer follows
          exchange.headers = performance.now();
          exchange.status = status;
          if (closed) return;
          this.writeHead(res, status, statusMessage, headers as ResponseHeaders, exchange, requestId);
          tap = options.onResponse?.(status, headers as ResponseHeaders);
        },
        onResponseData: (c, chunk) => {
          if (closed) return; // aborted already; what was in flight goes nowhere
          tap?.(chunk);
          if (!res.write(chunk)) c.pause();
        },
        onResponseEnd: () => {
          exchange.upstreamEnd = performance.now();
          exchange.complete = true;
          res.end();
        },
        onResponseError: (_c, err) => {
          if (closed || err instanceof ClientGone) return;
          // Upstream cut or silent mid-body: the client's stream is cut too, never completed with a made-up end.
          if (exchange.headers !== undefined || res.headersSent) {
            res.destroy();
            return;
          }
          const code = (err as NodeJS.ErrnoException).code ?? '';
          const phase = TIMEOUT_PHASE[code];
          const apiError = phase
            ? new ApiError(
                'gateway_timeout',
                `Upstream ${vendor.name} did not answer within ${phase === 'connect' ? connectTimeoutMs : idleTimeoutMs} ms`,
              )
            : new ApiError(
                'bad_gateway',
                `Upstream ${vendor.name} unreachable: ${(err.cause as NodeJS.ErrnoException | undefined)?.code ?? (code || err.message)}`,
              );
          vendor.renderError(res, apiError, { 'X-Request-Id': requestId });
        },
      },
    );
  }

  /**
   * The vendor's status and headers, minus hop-by-hop ones, plus Genway's own, written in one flat list:
   * nothing was set on `res` before, so Node writes them as given (repeated ones such as Set-Cookie kept).
   */
  private writeHead(
    res: ServerResponse,
    status: number,
    statusMessage: string | undefined,
    headers: ResponseHeaders,
    exchange: Exchange,
    requestId: string,
  ): void {
    const listed = connectionTokens(headers.connection);
    const out: string[] = ['X-Request-Id', requestId];
    for (const name in headers) {
      if (DROP_FROM_RESPONSE.has(name) || listed?.has(name)) continue;
      const value = headers[name]!;
      if (typeof value === 'string') out.push(name, value);
      else for (const v of value) out.push(name, v);
    }
    const via = headers.via;
    out.push('Via', via ? `${String(via)}, ${VIA_ENTRY}` : VIA_ENTRY);
    const overheadMs = exchange.sent - exchange.start + (performance.now() - exchange.headers!);
    out.push('X-Genway-Overhead-Ms', overheadMs.toFixed(3));
    res.writeHead(status, statusMessage || undefined, out);
    // Streams (no length known up front) get their headers now, before the first event.
    if (headers['content-length'] === undefined) res.flushHeaders();
  }

  close(): Promise<void> {
    return this.agent.close();
  }
}
