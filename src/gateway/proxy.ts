import type { IncomingMessage, ServerResponse } from 'node:http';
import { PassThrough } from 'node:stream';
import { Agent, type Dispatcher } from 'undici';
import { ApiError } from '../errors';
import type { TryOutcome, VendorKey } from './key-pool';
import type { Upstream } from './upstream';
import { VENDORS } from './vendors';

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
 * Request headers that never reach any vendor: hop-by-hop ones; every header any vendor's SDK may carry the Genway
 * key in (whichever vendor the request goes to); the client's Accept-Encoding (the vendor picks an encoding the
 * client then gets as is); what Genway sets itself (Host, Via); Expect, already answered by this server.
 */
const DROP_FROM_REQUEST = new Set([
  ...HOP_BY_HOP,
  ...VENDORS.flatMap((v) => v.keyHeaders),
  'accept-encoding',
  'host',
  'via',
  'expect',
]);

/** Genway's own request id, beside (never instead of) the vendor's `x-request-id` / `request-id`. */
export const REQUEST_ID_HEADER = 'genway-request-id';

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

/** The client's body as its own stream; a client that breaks off mid-upload ends the pipe with its error. */
function pipeOf(req: IncomingMessage): PassThrough {
  const pipe = new PassThrough();
  req.once('error', (err) => pipe.destroy(err));
  req.once('aborted', () => pipe.destroy(new Error('client aborted the upload')));
  return req.pipe(pipe);
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
  upstream: Upstream;
  /** The vendor key (and origin) of the first try (none when the pool is empty). */
  key: VendorKey | undefined;
  /** The key is the one that made the objects the call names: no other key is tried. */
  pinned?: boolean;
  /** The key whose answer the client gets (called before `onResponse`). */
  onKey?(key: VendorKey): void;
  /** Path and query as they go upstream (a vendor mount's prefix and a `key` parameter already removed). */
  path: string;
  /**
   * The body: already read (Genway read `model` from a copy), the client's own stream (uploads: piped with
   * backpressure, never held in memory), or none.
   */
  body: Buffer | IncomingMessage | null;
  start: number;
  /** Sent to the client in `genway-request-id`. */
  requestId: string;
  /**
   * The vendor's status and headers, before they are written (`headers` may be rewritten); returns what sees every
   * response body chunk, as sent to the client.
   */
  onResponse?(status: number, headers: ResponseHeaders): ((chunk: Buffer) => void) | undefined;
  /** Whether `onResponse` may rewrite the headers it is given (they are then written from the object). */
  rewritesHeaders?: boolean;
  /**
   * Rewrites a successful, uncompressed response body of up to 1 MiB (held whole, then sent with its new length):
   * absolute vendor URLs a client would otherwise follow past Genway. Larger or compressed bodies pass unchanged.
   */
  rewriteBody?(body: Buffer): Buffer;
  /** Changes a successful response's bytes as they pass (after the tap saw them): `end` flushes what it held. */
  transform?: { write(chunk: Buffer): Buffer; end(): Buffer };
  /** The vendor's body is over: the client's response ends once what this returns has settled. */
  beforeEnd?(): Promise<unknown> | undefined;
  /** Runs once when the client's response is over (finished or cut). */
  onClose(exchange: Exchange): void;
}

export interface ProxyOptions {
  connectTimeoutMs: number;
  idleTimeoutMs: number;
}

/** The most of a response body `rewriteBody` holds: object metadata is far smaller. */
const REWRITE_LIMIT = 1 << 20;

function header(raw: Buffer[], name: string): string | undefined {
  for (let i = 0; i < raw.length; i += 2) {
    if (raw[i].toString('latin1').toLowerCase() === name) return raw[i + 1].toString('latin1');
  }
  return undefined;
}

const hasHeader = (raw: Buffer[], name: string) => header(raw, name) !== undefined;

function withoutLength(raw: Buffer[]): Buffer[] {
  const out: Buffer[] = [];
  for (let i = 0; i < raw.length; i += 2) {
    if (raw[i].toString('latin1').toLowerCase() !== 'content-length') out.push(raw[i], raw[i + 1]);
  }
  return out;
}

/** An uncompressed event stream: what a `transform` may change. */
const isPlainEventStream = (raw: Buffer[]) =>
  !hasHeader(raw, 'content-encoding') && (header(raw, 'content-type') ?? '').includes('text/event-stream');

/** undici's core handler callbacks (what its dispatcher calls; see `forward`). */
interface LegacyHandler {
  onConnect(abort: (err?: Error) => void): void;
  onHeaders(status: number, raw: Buffer[], resume: () => void, statusMessage: string): boolean;
  onData(chunk: Buffer): boolean;
  onComplete(trailers: Buffer[] | null): void;
  onError(err: Error): void;
}

/** The client went away: the reason the upstream request is aborted with. */
class ClientGone extends Error {}

/** A try was given up for another key: the reason its upstream request is aborted with. */
class Superseded extends Error {}

const noop = () => undefined;

/** A retryable answer held while the next key is tried: error bodies are small, and one larger is not kept. */
interface HeldAnswer {
  status: number;
  raw: Buffer[];
  statusMessage: string;
  chunks: Buffer[];
  size: number;
  complete: boolean;
}
const HOLD_LIMIT = 64 << 10;

/** Errors before the request reached the vendor: another key or origin may do. */
const CONNECT_ERRORS = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'UND_ERR_CONNECT_TIMEOUT',
]);

const errorCode = (err: Error) =>
  (err as NodeJS.ErrnoException).code || (err.cause as NodeJS.ErrnoException | undefined)?.code || '';

/** What a try that failed before any answer came to: the error code and its outcome for the key's health. */
function errorOutcomeOf(err: Error): { code: string; outcome: TryOutcome } {
  const code = errorCode(err);
  const outcome = CONNECT_ERRORS.has(code) ? 'connect_error' : TIMEOUT_PHASE[code] ? 'timeout' : 'error';
  return { code, outcome };
}

/** 429 and the 5xx that may pass (not 501 Not Implemented or 505) are a key's failures; other 4xx are the call's. */
function outcomeOf(status: number): TryOutcome {
  if (status === 429) return 'rate_limited';
  if (status >= 500) return status === 501 || status === 505 ? 'client_error' : 'server_error';
  return status >= 400 ? 'client_error' : 'ok';
}

/** The vendor's wait advice in ms: `retry-after-ms` (OpenAI's), else `retry-after` in seconds or as an HTTP date. */
export function retryAfterOf(raw: Buffer[]): number | undefined {
  const ms = header(raw, 'retry-after-ms')?.trim();
  if (ms && /^\d+(\.\d+)?$/.test(ms)) return Math.ceil(Number(ms));
  const value = header(raw, 'retry-after')?.trim();
  if (!value) return undefined;
  if (/^\d+(\.\d+)?$/.test(value)) return Math.ceil(Number(value) * 1000);
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, at - Date.now());
}

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

  /**
   * Headers for the upstream request: the client's, minus credentials, hop-by-hop ones and the vendor's own drop
   * list, plus the vendor key and the vendor's defaults the client did not send. A body Genway read goes up with
   * the length undici gives it; a streamed one keeps the client's Content-Length (or goes chunked).
   */
  private upstreamHeaders(
    req: IncomingMessage,
    options: ForwardOptions,
    key: VendorKey | undefined,
  ): string[] {
    const { upstream } = options;
    const raw = req.rawHeaders;
    const listed = connectionTokens(req.headers.connection);
    const drop = upstream.def.dropHeaders;
    const buffered = Buffer.isBuffer(options.body);
    const out: string[] = ['Host', (key ?? upstream).origin.host];
    for (let i = 0; i < raw.length; i += 2) {
      const lower = raw[i].toLowerCase();
      if (DROP_FROM_REQUEST.has(lower) || listed?.has(lower) || drop?.includes(lower)) continue;
      if (buffered && lower === 'content-length') continue;
      out.push(raw[i], raw[i + 1]);
    }
    if (key) out.push(upstream.def.keyTo.header, upstream.def.keyTo.value(key.key));
    for (const [name, value] of upstream.defaults) if (req.headers[name] === undefined) out.push(name, value);
    const via = req.headers.via;
    out.push('Via', via ? `${via}, ${VIA_ENTRY}` : VIA_ENTRY);
    return out;
  }

  /**
   * Starts the exchange. Returns what the caller must run once the client's response closes (finished or cut):
   * the caller owns the one 'close' listener of the response.
   *
   * The handler speaks undici's core callbacks (onConnect, onHeaders, onData, onComplete, onError), which its
   * dispatcher calls directly: the newer controller-style handler is adapted onto these by a wrapper that also
   * parses every header list into an object, which this proxy only needs on the routes that read headers.
   */
  forward(req: IncomingMessage, res: ServerResponse, options: ForwardOptions): () => void {
    const { upstream: vendor, body, requestId } = options;
    const { connectTimeoutMs, idleTimeoutMs } = this.options;
    const exchange: Exchange = { start: options.start, sent: 0, complete: false };
    let abortUpstream: ((err?: Error) => void) | undefined;
    let resumeUpstream: (() => void) | undefined;
    let closed = false;
    let tap: ((chunk: Buffer) => void) | undefined;
    let transform: ForwardOptions['transform'];
    /**
     * A metered response that is not an event stream keeps its latest chunk back until `beforeEnd` has settled:
     * a client reading a length-delimited body has it whole with its last byte, so the charge must be journaled
     * first, or a crash in between serves a call that is never charged. (A stream ends only at `res.end()`.)
     */
    let holdLast = false;
    let last: Buffer | null = null;
    const resume = () => resumeUpstream?.();
    /** A body held for `rewriteBody`: the head waits for it. */
    let held: {
      status: number;
      raw: Buffer[];
      statusMessage: string;
      chunks: Buffer[];
      size: number;
    } | null = null;
    /** Writes a held response: its head, then the rewritten body (or the chunks as they came); the tap sees the vendor's bytes. */
    const writeHeld = (rewritten?: Buffer) => {
      const h = held!;
      held = null;
      const setTap = (t: typeof tap) => (tap = t);
      this.writeHead(
        res,
        h.status,
        h.statusMessage,
        h.raw,
        exchange,
        requestId,
        options,
        setTap,
        rewritten?.length,
      );
      for (const chunk of h.chunks) tap?.(chunk);
      if (rewritten) res.write(rewritten);
      else for (const chunk of h.chunks) res.write(chunk);
    };

    /** The vendor's answer as the client gets it: its head now, then its body. */
    const head = (status: number, raw: Buffer[], resumeFn: () => void, statusMessage: string) => {
      exchange.headers = performance.now();
      exchange.status = status;
      resumeUpstream = resumeFn;
      if (closed) return;
      if (options.transform && status < 300 && isPlainEventStream(raw)) {
        transform = options.transform;
        // The vendor's length no longer holds once bytes are taken out: the client gets it chunked.
        raw = withoutLength(raw);
      }
      if (options.rewriteBody && status < 300 && !hasHeader(raw, 'content-encoding')) {
        held = { status, raw, statusMessage, chunks: [], size: 0 };
        return;
      }
      this.writeHead(res, status, statusMessage, raw, exchange, requestId, options, (t) => (tap = t));
      holdLast = tap !== undefined && options.beforeEnd !== undefined && !isPlainEventStream(raw);
    };
    const data = (chunk: Buffer): boolean => {
      if (closed) return true; // aborted already; what was in flight goes nowhere
      if (held) {
        held.chunks.push(chunk);
        held.size += chunk.length;
        if (held.size > REWRITE_LIMIT) writeHeld(); // too big to be object metadata: passes unchanged
        return true;
      }
      tap?.(chunk);
      if (transform) chunk = transform.write(chunk);
      if (holdLast) {
        const previous = last;
        last = chunk;
        if (!previous) return true;
        chunk = previous;
      }
      if (res.write(chunk)) return true;
      res.once('drain', resume);
      return false;
    };
    const complete = () => {
      exchange.upstreamEnd = performance.now();
      exchange.complete = true;
      if (held && !closed) writeHeld(options.rewriteBody!(Buffer.concat(held.chunks, held.size)));
      if (transform && !closed) res.write(transform.end());
      const waiting = options.beforeEnd?.();
      const end = () => (last ? res.end(last) : res.end());
      if (waiting) void waiting.finally(end);
      else end();
    };
    const failed = (err: Error) => {
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
      vendor.renderError(res, apiError, { [REQUEST_ID_HEADER]: requestId });
    };

    /**
     * Failover (src/gateway/key-pool.ts): a 429, a 5xx or a connect error before any byte reached the client is
     * tried again on the pool's next key, when the body can be sent again (read whole, or none; a piped upload
     * cannot) and the key is not pinned to the objects the call names. Routes whose answers carry the vendor's own
     * URLs (rewritten to Genway's) stay on the first key's origin.
     */
    const pool = vendor.pool;
    const failover = !options.pinned && (body === null || Buffer.isBuffer(body));
    const sameOrigin =
      options.rewriteBody || options.rewritesHeaders ? options.key?.origin.origin : undefined;
    const tried: VendorKey[] = [];
    let retryTimer: NodeJS.Timeout | undefined;
    /** The latest answer that was given up for another key: the client gets it when no later try answers. */
    let given: (HeldAnswer & { key: VendorKey }) | null = null;
    const pass = (answer: HeldAnswer & { key: VendorKey }) => {
      options.onKey?.(answer.key);
      head(answer.status, answer.raw, noop, answer.statusMessage);
      for (const chunk of answer.chunks) data(chunk);
      complete();
    };
    /** The next try, after `wait` ms; a client gone meanwhile ends it all. */
    const retry = (key: VendorKey, wait: number) => {
      abortUpstream = undefined;
      retryTimer = setTimeout(() => {
        retryTimer = undefined;
        if (!closed) attempt(key);
      }, wait);
    };

    /**
     * The one try of a call that cannot fail over (one key, a pinned object, a streamed upload): the same outcome
     * accounting, without the state and closures of a retry that cannot happen.
     */
    const once = (key: VendorKey | undefined) => {
      const handler: LegacyHandler = {
        onConnect: (abort) => {
          abortUpstream = abort;
          if (closed) abort(new ClientGone());
        },
        onHeaders: (status, raw, resumeFn, statusMessage) => {
          if (status < 200) return true; // 1xx: informational, the final answer follows
          if (key) {
            const outcome = outcomeOf(status);
            const failure = outcome === 'rate_limited' || outcome === 'server_error';
            pool.settle(key, outcome, {
              requestId,
              tryNo: 1,
              status,
              retryAfterMs: failure ? retryAfterOf(raw) : undefined,
            });
            options.onKey?.(key);
          }
          head(status, raw, resumeFn, statusMessage);
          return true;
        },
        onData: data,
        onComplete: complete,
        onError: (err) => {
          if (closed || err instanceof ClientGone) return;
          if (key && exchange.headers === undefined && !res.headersSent) {
            const { code, outcome } = errorOutcomeOf(err);
            pool.settle(key, outcome, { requestId, tryNo: 1, code });
          }
          failed(err);
        },
      };
      this.dispatch(req, options, key, handler);
    };

    const attempt = (key: VendorKey | undefined) => {
      if (key) tried.push(key);
      const tryNo = tried.length;
      /** This try was given up for another key: what it still delivers goes nowhere. */
      let over = false;
      /** An answer held while it may still be given up (its body read whole, bounded). */
      let answer: HeldAnswer | null = null;
      let then: { key: VendorKey; wait: number } | undefined;
      /** Another key for this failure, or undefined when the answer (or error) is the one the client gets. */
      const another = (wait: number | undefined, advice?: string): typeof then => {
        if (wait === undefined || !failover || closed || tryNo >= pool.policy.attempts || advice === 'false')
          return undefined;
        const next = pool.next(tried, Date.now() + wait, sameOrigin);
        return next && { key: next, wait };
      };
      const giveUp = () => {
        over = true;
        if (answer?.complete) given = { ...answer, key: key! };
        retry(then!.key, then!.wait);
      };
      const handler: LegacyHandler = {
        onConnect: (abort) => {
          abortUpstream = abort;
          if (closed) abort(new ClientGone());
        },
        onHeaders: (status, raw, resumeFn, statusMessage) => {
          if (status < 200 || over) return true; // 1xx: informational, the final answer follows
          if (key) {
            const outcome = outcomeOf(status);
            const failure = outcome === 'rate_limited' || outcome === 'server_error';
            const retryAfterMs = failure ? retryAfterOf(raw) : undefined;
            const wait = pool.settle(key, outcome, { requestId, tryNo, status, retryAfterMs });
            then = another(wait, failure ? header(raw, 'x-should-retry') : undefined);
            if (then) {
              answer = { status, raw, statusMessage, chunks: [], size: 0, complete: false };
              return true;
            }
            options.onKey?.(key);
          }
          head(status, raw, resumeFn, statusMessage);
          return true;
        },
        onData: (chunk) => {
          if (over) return true;
          if (!answer) return data(chunk);
          answer.size += chunk.length;
          if (answer.size <= HOLD_LIMIT) answer.chunks.push(chunk);
          else {
            // Too big to hold for later: the next key is tried without it.
            abortUpstream?.(new Superseded());
            giveUp();
          }
          return true;
        },
        onComplete: () => {
          if (over) return;
          if (!answer) return complete();
          answer.complete = true;
          giveUp();
        },
        onError: (err) => {
          if (over || err instanceof Superseded || closed || err instanceof ClientGone) return;
          if (answer) return giveUp(); // a given-up answer that broke: the next key goes on without it
          if (key && exchange.headers === undefined && !res.headersSent) {
            const { code, outcome } = errorOutcomeOf(err);
            then = another(pool.settle(key, outcome, { requestId, tryNo, code }));
            if (then) return giveUp();
            if (given) return pass(given);
          }
          failed(err);
        },
      };
      this.dispatch(req, options, key, handler);
    };

    exchange.sent = performance.now();
    if (failover && pool.members.length > 1) attempt(options.key);
    else once(options.key);
    return () => {
      closed = true;
      clearTimeout(retryTimer);
      // The client went away (or the response is over): stop the upstream work either way.
      if (!exchange.complete) abortUpstream?.(new ClientGone());
      options.onClose(exchange);
    };
  }

  /** Sends one try upstream, on `key` (or the vendor's own origin when it has no key). */
  private dispatch(
    req: IncomingMessage,
    options: ForwardOptions,
    key: VendorKey | undefined,
    handler: LegacyHandler,
  ): void {
    const { upstream, body } = options;
    this.agent.dispatch(
      {
        origin: (key ?? upstream).origin.origin,
        method: req.method!,
        path: (key ?? upstream).basePath + options.path,
        headers: this.upstreamHeaders(req, options, key),
        // undici destroys a stream body once sent, and detaches an IncomingMessage from its socket to do so, which
        // leaves the server unable to answer on it: the client's stream goes up through a pipe of its own.
        body: body === null || Buffer.isBuffer(body) ? body : pipeOf(body),
      },
      handler as unknown as Dispatcher.DispatchHandler,
    );
  }

  /**
   * The vendor's status and headers, minus hop-by-hop ones, plus Genway's own, written in one flat list:
   * nothing was set on `res` before, so Node writes them as given (repeated ones such as Set-Cookie kept). The
   * route's `onResponse` sees them as an object first, and may rewrite them.
   */
  private writeHead(
    res: ServerResponse,
    status: number,
    statusMessage: string | undefined,
    raw: Buffer[],
    exchange: Exchange,
    requestId: string,
    options: ForwardOptions,
    setTap: (tap: ((chunk: Buffer) => void) | undefined) => void,
    /** The length of a rewritten body, in place of the vendor's. */
    length?: number,
  ): void {
    let out: string[] = [REQUEST_ID_HEADER, requestId];
    let connection: string | undefined;
    let via: string | undefined;
    let hasLength = false;
    for (let i = 0; i < raw.length; i += 2) {
      const name = raw[i].toString('latin1').toLowerCase();
      const value = raw[i + 1].toString('latin1');
      if (name === 'connection') connection = connection ? `${connection}, ${value}` : value;
      else if (name === 'via') via = via ? `${via}, ${value}` : value;
      else if (name === 'content-length') {
        hasLength = true;
        if (length !== undefined) continue;
      }
      if (!DROP_FROM_RESPONSE.has(name)) out.push(name, value);
    }
    if (length !== undefined) {
      out.push('content-length', String(length));
      hasLength = true;
    }
    if (options.onResponse) {
      const headers: ResponseHeaders = {};
      for (let i = 2; i < out.length; i += 2) {
        const prev = headers[out[i]];
        headers[out[i]] = prev === undefined ? out[i + 1] : [prev].flat().concat(out[i + 1]);
      }
      setTap(options.onResponse(status, headers));
      // A route that rewrites headers (a resumable upload's session URL): the list is rebuilt from the object.
      if (options.rewritesHeaders) {
        out = [REQUEST_ID_HEADER, requestId];
        for (const name in headers) {
          const value = headers[name]!;
          if (typeof value === 'string') out.push(name, value);
          else for (const v of value) out.push(name, v);
        }
      }
    }
    const listed = connectionTokens(connection);
    if (listed) {
      const kept: string[] = [];
      for (let i = 0; i < out.length; i += 2) if (!listed.has(out[i])) kept.push(out[i], out[i + 1]);
      out = kept;
    }
    out.push('Via', via ? `${via}, ${VIA_ENTRY}` : VIA_ENTRY);
    const overheadMs = exchange.sent - exchange.start + (performance.now() - exchange.headers!);
    out.push('X-Genway-Overhead-Ms', overheadMs.toFixed(3));
    res.writeHead(status, statusMessage || undefined, out);
    // Streams (no length known up front) get their headers now, before the first event.
    if (!hasLength) res.flushHeaders();
  }

  close(): Promise<void> {
    return this.agent.close();
  }
}
