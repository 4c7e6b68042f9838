import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import https from 'node:https';
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
 * itself (Host, Content-Length of the buffered body, Via); Expect, already answered by this server.
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

export interface ForwardOptions {
  vendor: Vendor;
  /** Path and query as they go upstream (the Gemini-style `key` parameter already removed). */
  path: string;
  body: Buffer | null;
  start: number;
  /** Echoed to the client in X-Request-Id. */
  requestId: string;
  /** Sees every response body chunk, as sent to the client. */
  onResponse?(res: http.IncomingMessage): ((chunk: Buffer) => void) | undefined;
  /** Runs once when the client's response is over (finished or cut). */
  onClose(exchange: Exchange): void;
}

export interface ProxyOptions {
  connectTimeoutMs: number;
  idleTimeoutMs: number;
}

class UpstreamTimeout extends Error {
  constructor(readonly phase: 'connect' | 'idle') {
    super(phase);
  }
}

/**
 * A thin pipe to the vendor: the request body goes up as received (already buffered, so Genway could read
 * `model` from a copy), the response comes back chunk by chunk as it arrives, never re-encoded. Keep-alive
 * pools per vendor; idle (not total) timeout so long streams live; a client that goes away aborts upstream.
 */
export class VendorProxy {
  private readonly httpAgent = new http.Agent({ keepAlive: true, scheduling: 'lifo' });
  private readonly httpsAgent = new https.Agent({ keepAlive: true, scheduling: 'lifo' });

  constructor(private readonly options: ProxyOptions) {}

  /** Headers for the upstream request: the client's, minus credentials and hop-by-hop, plus the vendor key. */
  private upstreamHeaders(req: IncomingMessage, vendor: Vendor, body: Buffer | null): string[] {
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
    if (body) out.push('Content-Length', String(body.length));
    const via = req.headers.via;
    out.push('Via', via ? `${via}, ${VIA_ENTRY}` : VIA_ENTRY);
    return out;
  }

  forward(req: IncomingMessage, res: ServerResponse, options: ForwardOptions): void {
    const { vendor, body } = options;
    const secure = vendor.origin.protocol === 'https:';
    const exchange: Exchange = { start: options.start, sent: 0, complete: false };
    const upstream = (secure ? https : http).request({
      protocol: vendor.origin.protocol,
      host: vendor.origin.hostname,
      port: vendor.origin.port || (secure ? 443 : 80),
      method: req.method,
      path: vendor.basePath + options.path,
      headers: this.upstreamHeaders(req, vendor, body),
      agent: secure ? this.httpsAgent : this.httpAgent,
      setHost: false,
    });
    upstream.setNoDelay(true);
    upstream.setTimeout(this.options.idleTimeoutMs, () => upstream.destroy(new UpstreamTimeout('idle')));
    upstream.once('socket', (socket) => {
      if (!socket.connecting) return;
      const timer = setTimeout(
        () => upstream.destroy(new UpstreamTimeout('connect')),
        this.options.connectTimeoutMs,
      );
      socket.once('connect', () => clearTimeout(timer));
      socket.once('close', () => clearTimeout(timer));
    });

    let closed = false;
    res.once('close', () => {
      closed = true;
      // The client went away (or the response is over): stop the upstream work either way.
      if (!exchange.complete) upstream.destroy();
      options.onClose(exchange);
    });

    upstream.once('error', (err) => {
      if (closed) return;
      if (exchange.headers !== undefined || res.headersSent) {
        res.destroy();
        return;
      }
      const timeout = err instanceof UpstreamTimeout;
      const apiError = timeout
        ? new ApiError(
            'gateway_timeout',
            `Upstream ${vendor.name} did not answer within ${err.phase === 'connect' ? this.options.connectTimeoutMs : this.options.idleTimeoutMs} ms`,
          )
        : new ApiError(
            'bad_gateway',
            `Upstream ${vendor.name} unreachable: ${(err as NodeJS.ErrnoException).code ?? err.message}`,
          );
      vendor.renderError(res, apiError, { 'X-Request-Id': options.requestId });
    });

    upstream.once('response', (incoming) => {
      exchange.headers = performance.now();
      exchange.status = incoming.statusCode ?? 502;
      if (closed) {
        incoming.destroy();
        return;
      }
      this.writeHead(res, incoming, exchange, options.requestId);
      const tap = options.onResponse?.(incoming);
      incoming.on('data', (chunk: Buffer) => {
        tap?.(chunk);
        if (!res.write(chunk)) incoming.pause();
      });
      res.on('drain', () => incoming.resume());
      incoming.once('end', () => {
        exchange.upstreamEnd = performance.now();
        exchange.complete = true;
        res.end();
      });
      // Upstream cut mid-body: the client's stream is cut too, never completed with a made-up end.
      incoming.once('aborted', () => res.destroy());
      incoming.once('error', () => res.destroy());
    });

    exchange.sent = performance.now();
    upstream.end(body ?? undefined);
  }

  /**
   * The vendor's status and headers, minus hop-by-hop ones, plus Genway's own, written in one flat list:
   * nothing was set on `res` before, so Node writes them as given (duplicates such as Set-Cookie kept).
   */
  private writeHead(
    res: ServerResponse,
    incoming: IncomingMessage,
    exchange: Exchange,
    requestId: string,
  ): void {
    const raw = incoming.rawHeaders;
    const listed = connectionTokens(incoming.headers.connection);
    const out: string[] = ['X-Request-Id', requestId];
    for (let i = 0; i < raw.length; i += 2) {
      const lower = raw[i].toLowerCase();
      if (DROP_FROM_RESPONSE.has(lower) || listed?.has(lower)) continue;
      out.push(raw[i], raw[i + 1]);
    }
    const via = incoming.headers.via;
    out.push('Via', via ? `${via}, ${VIA_ENTRY}` : VIA_ENTRY);
    const overheadMs = exchange.sent - exchange.start + (performance.now() - exchange.headers!);
    out.push('X-Genway-Overhead-Ms', overheadMs.toFixed(3));
    res.writeHead(exchange.status!, incoming.statusMessage, out);
    // Streams (no length known up front) get their headers now, before the first event.
    if (!incoming.headers['content-length']) res.flushHeaders();
  }

  close(): void {
    this.httpAgent.destroy();
    this.httpsAgent.destroy();
  }
}
