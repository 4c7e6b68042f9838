import type { IncomingMessage, ServerResponse } from 'node:http';
import { PassThrough } from 'node:stream';
import { Agent, type Dispatcher } from 'undici';
import { ApiError } from '../errors';
import type { TryOutcome, VendorKey } from './key-pool';
import type { Upstream } from './upstream';
import type { UpstreamRequest } from './upstreams/types';
import { INBOUND } from './vendors';

/**
 * A fixed set of lower-case header names, asked about every header of every call. A `Set` hashes each name it is
 * asked about, and the parser's names are new strings on every request: this compares only the names of the same
 * length, most often none.
 */
export class HeaderNameSet {
  private readonly byLength: (string[] | undefined)[] = [];

  constructor(names: Iterable<string>) {
    for (const name of new Set(names)) (this.byLength[name.length] ??= []).push(name);
  }

  has(name: string): boolean {
    const same = this.byLength[name.length];
    if (same === undefined) return false;
    for (let i = 0; i < same.length; i++) if (same[i] === name) return true;
    return false;
  }
}

/** Hop-by-hop headers (RFC 9110 7.6.1): they describe one connection and never cross a proxy. */
export const HOP_BY_HOP = [
  'connection',
  'keep-alive',
  'proxy-connection',
  'proxy-authenticate',
  'proxy-authorization',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
];

/** The client's session with Genway: its cookies are for Genway's origin (the console's), never a vendor's. */
export const CLIENT_SESSION_HEADERS = ['cookie'];

/**
 * Genway's session with the vendor, in the vendor's answer: the account Genway's vendor key belongs to (OpenAI's
 * organization and project, Anthropic's organization id), and the cookies the vendor or its CDN sets (Cloudflare's
 * `__cf_bm`), bound to Genway's connection, which a client must not hold or send to another vendor path.
 */
export const VENDOR_SESSION_HEADERS = [
  'openai-organization',
  'openai-project',
  'anthropic-organization-id',
  'set-cookie',
];

/**
 * Request headers that never reach any vendor: hop-by-hop ones; every header any vendor's SDK may carry the Genway
 * key in (whichever vendor the request goes to); the client's Accept-Encoding (the vendor picks an encoding the
 * client then gets as is); what Genway sets itself (Host, Via); Expect, already answered by this server; the
 * client's cookies.
 */
const DROP_FROM_REQUEST = new HeaderNameSet([
  ...HOP_BY_HOP,
  ...INBOUND.flatMap((v) => v.keyHeaders),
  'accept-encoding',
  'host',
  'via',
  'expect',
  ...CLIENT_SESSION_HEADERS,
]);

/**
 * The vendor's quota of Genway's vendor key (OpenAI's `x-ratelimit-*`, Anthropic's `anthropic-ratelimit-*` and
 * `anthropic-priority-*`): the organisation's limits and what every account together has left of them, which one
 * account must not watch (it would see the others' traffic), and which describe whichever of Genway's keys served,
 * not the client's own limits. Dropped from answers; `retry-after` (on a 429) still passes.
 */
export function isVendorQuota(name: string): boolean {
  return (
    (name.charCodeAt(0) === 120 && name.startsWith('x-ratelimit-')) ||
    (name.charCodeAt(0) === 97 &&
      (name.startsWith('anthropic-ratelimit-') || name.startsWith('anthropic-priority-')))
  );
}

/** What asks for part of an answer: dropped when it must be read whole (`ForwardOptions.whole`). */
const PARTIAL = new HeaderNameSet(['range', 'if-range']);

/** Genway's own request id, beside (never instead of) the vendor's `x-request-id` / `request-id`. */
export const REQUEST_ID_HEADER = 'genway-request-id';

/** Response headers that never reach a client: hop-by-hop ones, Via (Genway adds its own), Genway's vendor session. */
const DROP_FROM_RESPONSE = new HeaderNameSet([...HOP_BY_HOP, 'via', ...VENDOR_SESSION_HEADERS]);

/** Genway's received-by pseudonym in `Via`; a request that already carries it has come round in a loop. */
export const VIA_NAME = 'genway';
const VIA_ENTRY = `1.1 ${VIA_NAME}`;

export function hasOwnVia(via: string | undefined): boolean {
  if (!via) return false;
  return via.split(',').some((entry) => entry.trim().split(/\s+/)[1]?.toLowerCase() === VIA_NAME);
}

/** Header names listed in `Connection` are hop-by-hop for this message too. */
export function connectionTokens(value: string | string[] | undefined): Set<string> | null {
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
   * The vendor's status and head, before they are written; returns what sees every response body chunk, as sent to
   * the client. `headers` only when `rewritesHeaders`: the headers as they will be written, which it may rewrite.
   */
  onResponse?(
    status: number,
    head: ResponseHead,
    headers: ResponseHeaders | undefined,
  ): ((chunk: Buffer) => void) | undefined;
  /** Whether `onResponse` rewrites the headers (they are then given to it as an object, and written from it). */
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
  /**
   * The answer is billed only when read whole (batch results): the client's Range and If-Range go no further (a
   * slice would be read unbilled), and a client that leaves mid-body does not stop the read: the rest of a metered
   * answer goes through the tap, to no one, and `onClose` runs when it is over.
   */
  whole?: boolean;
  /**
   * Whether a metered stream's answer is out and only its usage is to come: a client that leaves then does not stop
   * the vendor; the rest is read through the tap for up to LINGER_MS, then `onClose` runs.
   */
  lingers?(): boolean;
  /** Runs once when the client's response is over (finished or cut). */
  onClose(exchange: Exchange): void;
  /** A routed call (`gateway.routes`): its targets, tried in order, each answer adapted for the caller. */
  route?: RoutedForward;
  /** Genway's own errors in the caller's shape (default: the upstream's, which is the caller's on passthrough). */
  renderError?(res: ServerResponse, err: ApiError, headers: Record<string, string>): void;
}

/** One target of a routed call: an upstream, and the request it is sent (built when the target is first tried). */
export interface RoutedTarget {
  readonly upstream: Upstream;
  request(): UpstreamRequest;
  /** Client headers that never go to this target (a translated call's own format's headers). */
  drops?(name: string): boolean;
}

/**
 * A routed call's way through the proxy: its targets in the order they are tried (each target's key pool within it);
 * a 429, a 5xx, a refused key or a connect error before any byte reached the client hands the call to the next.
 */
export interface RoutedForward {
  readonly targets: readonly RoutedTarget[];
  /** The answer `target` gave is the client's: how its bytes are adapted for the caller (none: as they come). */
  adapt(target: RoutedTarget, status: number, head: ResponseHead): Adaptation | undefined;
  /** The target (and key) whose answer the client gets, or that the last try went to. */
  served(target: RoutedTarget, key: VendorKey | undefined): void;
}

/** How a routed answer reaches the caller: framing, format and error shape changed as it passes. */
export interface Adaptation {
  /** The caller's Content-Type, replacing the upstream's. */
  contentType?: string;
  /** The upstream's framing undone (AWS's event stream into server-sent events): the tap reads what this returns. */
  deframe?(chunk: Buffer): Buffer;
  /** Reads the (deframed) answer for its usage. */
  tap?(chunk: Buffer): void;
  /** Changes the (deframed, tapped) bytes as they pass, event by event; `end` flushes what it held. */
  transform?: { write(chunk: Buffer): Buffer; end(): Buffer };
  /**
   * Rewrites the whole answer (held, up to ROUTED_HOLD_LIMIT), sent with its new length: a JSON answer in another
   * format or an error in another shape. Throws an ApiError (an answer it cannot read): the client gets that instead.
   */
  whole?(body: Buffer): Buffer;
  /** The answer streams to the client (never held back by a chunk for the charge). */
  streams: boolean;
}

/** The most of a routed answer held to be rewritten whole: past it the call fails (502), never passes unread. */
const ROUTED_HOLD_LIMIT = 64 << 20;

export interface ProxyOptions {
  connectTimeoutMs: number;
  idleTimeoutMs: number;
}

/**
 * Milliseconds with three decimals, as `toFixed(3)` writes a non-negative time (which V8 runs as a runtime call, the
 * dearest line of a response head): integer arithmetic and small-integer strings.
 */
export function millis(ms: number): string {
  const micros = Math.round(ms * 1000);
  const whole = Math.floor(micros / 1000);
  const frac = micros - whole * 1000;
  return `${whole}.${frac < 10 ? '00' : frac < 100 ? '0' : ''}${frac}`;
}

/**
 * How long the rest of a stream is read after its client left once its answer was out (`lingers`): its usage comes
 * within milliseconds of the answer's end; a stream still going after this long is stopped.
 */
export const LINGER_MS = 5000;

/** The most of a response body `rewriteBody` holds: object metadata is far smaller. */
const REWRITE_LIMIT = 1 << 20;

/**
 * How much of an answer may wait on the client's socket before the vendor is paused. node:http corks a response's
 * writes until the next tick, so a 64 KiB read written to it always says "past the 16 KiB mark" even when the kernel
 * takes it whole a moment later. Pausing undici there cost each read of a long stream a copy (what it had read is
 * put back on its socket and read again joined to the next), a drain listener and a tick. Two reads may wait: a client
 * that does not keep up still holds the vendor back, at this much memory per call.
 */
const CLIENT_BACKLOG = 128 << 10;

function header(raw: Buffer[], name: string): string | undefined {
  for (let i = 0; i < raw.length; i += 2) {
    if (raw[i].toString('latin1').toLowerCase() === name) return raw[i + 1].toString('latin1');
  }
  return undefined;
}

/** What a route reads of a vendor's response head: the first Content-Type and Content-Encoding. */
export interface ResponseHead {
  readonly contentType: string | undefined;
  readonly contentEncoding: string | undefined;
}

/** A vendor's response head, read once per response: its headers as strings, names in lower case. */
interface VendorHead extends ResponseHead {
  /** name, value, name, value, ... in the vendor's order. */
  readonly list: string[];
}

function readHead(raw: Buffer[]): VendorHead {
  const list = new Array<string>(raw.length);
  let contentType: string | undefined;
  let contentEncoding: string | undefined;
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i].toString('latin1').toLowerCase();
    const value = raw[i + 1].toString('latin1');
    list[i] = name;
    list[i + 1] = value;
    if (name === 'content-type') contentType ??= value;
    else if (name === 'content-encoding') contentEncoding ??= value;
  }
  return { list, contentType, contentEncoding };
}

/** An uncompressed event stream: what a `transform` may change, and what is never held back. */
const isPlainEventStream = (head: VendorHead) =>
  head.contentEncoding === undefined && (head.contentType ?? '').includes('text/event-stream');

/** undici's core handler callbacks (what its dispatcher calls; see `forward`). */
interface LegacyHandler {
  onConnect(abort: (err?: Error) => void): void;
  onHeaders(status: number, raw: Buffer[], resume: () => void, statusMessage: string): boolean;
  onData(chunk: Buffer): boolean;
  onComplete(trailers: Buffer[] | null): void;
  onError(err: Error): void;
}

/**
 * What the client gets when the vendor answered 401 to Genway's own vendor key (the key named by its id only). Not to
 * be retried: every key was tried, and the SDKs' retries (Claude Code's ten) would only put off the message.
 */
export function keyRefused(vendor: string, key: VendorKey): ApiError {
  return new ApiError(
    'bad_gateway',
    `Upstream ${vendor} refused Genway's vendor key ${key.id} (HTTP 401); the operator must replace it`,
    { 'x-should-retry': 'false' },
  );
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
  'GENWAY_UPSTREAM_AUTH',
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

/**
 * 429 and the 5xx that may pass (not 501 Not Implemented or 505) are a key's failures, and so is a 401 (the vendor
 * refused Genway's own key); other 4xx are the call's. Asked only of a try that carried a configured vendor key.
 */
function outcomeOf(status: number): TryOutcome {
  if (status === 429) return 'rate_limited';
  if (status === 401) return 'key_rejected';
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
/**
 * Headers for the upstream request: the client's, minus credentials, hop-by-hop ones and the vendor's own drop
 * list, plus the vendor key and the vendor's defaults the client did not send. A body Genway read goes up with the
 * length undici gives it; a streamed one keeps the client's Content-Length (or goes chunked).
 */
function upstreamHeaders(
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
    if (options.whole && PARTIAL.has(lower)) continue;
    if (buffered && lower === 'content-length') continue;
    out.push(raw[i], raw[i + 1]);
  }
  if (key) out.push(upstream.def.keyTo.header, upstream.def.keyTo.value(key.key));
  const defaults = upstream.defaults;
  for (let i = 0; i < defaults.length; i++) {
    const [name, value] = defaults[i];
    if (req.headers[name] === undefined) out.push(name, value);
  }
  const via = req.headers.via;
  out.push('Via', via ? `${via}, ${VIA_ENTRY}` : VIA_ENTRY);
  return out;
}

/**
 * Headers for a routed try: the client's, minus credentials, hop-by-hop ones, what the target's request sets or moves
 * (into its body) and what the route drops; plus the target's own, a JSON type when the client named none, Host and
 * Via. The target's auth is added to these, over exactly these (a SigV4 signature covers them).
 */
function routedHeaders(
  req: IncomingMessage,
  request: UpstreamRequest,
  host: string,
  drop: ((name: string) => boolean) | undefined,
): [string, string][] {
  const raw = req.rawHeaders;
  const listed = connectionTokens(req.headers.connection);
  const own = new Set(request.headers.map(([name]) => name));
  const moved = request.drop;
  const out: [string, string][] = [['host', host]];
  let typed = own.has('content-type');
  for (let i = 0; i < raw.length; i += 2) {
    const lower = raw[i].toLowerCase();
    if (DROP_FROM_REQUEST.has(lower) || listed?.has(lower) || lower === 'content-length') continue;
    if (own.has(lower) || moved?.includes(lower) || ROUTED_DROPS.has(lower) || drop?.(lower)) continue;
    if (lower === 'content-type') typed = true;
    out.push([lower, raw[i + 1]]);
  }
  for (const [name, value] of request.headers) out.push([name, value]);
  if (!typed) out.push(['content-type', 'application/json']);
  const via = req.headers.via;
  out.push(['via', via ? `${via}, ${VIA_ENTRY}` : VIA_ENTRY]);
  return out;
}

/** Client headers no routed call passes: they name the client's own vendor account (its OpenAI organization). */
const ROUTED_DROPS = new HeaderNameSet(INBOUND.flatMap((v) => v.dropHeaders ?? []));

/** An error that kept a routed try from being sent (a token grant, a signature): as a connect error, another target may do. */
class UpstreamAuthError extends Error {
  readonly code = 'GENWAY_UPSTREAM_AUTH';
}

/** A response held whole for `rewriteBody`: its head waits for it. */
interface HeldBody {
  status: number;
  head: VendorHead;
  /** Null when a transform changes the bytes (no length holds), else undefined (the vendor's). */
  length: null | undefined;
  statusMessage: string;
  chunks: Buffer[];
  size: number;
  /** A routed answer's rewrite (Adaptation.whole): it must be read whole, or not at all. */
  rewrite?(body: Buffer): Buffer;
}

/**
 * One call through the proxy, from the first try to the client's response closing: one object per call, its
 * steps on the prototype (no closures per call). It is undici's handler of a call that cannot fail over; a call
 * that can gets a `Failover` and one `Try` per key instead, which hand the answer they keep to this object.
 */
class Forwarding implements LegacyHandler {
  readonly exchange: Exchange;
  closed = false;
  abortUpstream: ((err?: Error) => void) | undefined;
  private resumeUpstream: (() => void) | undefined;
  private onDrain: (() => void) | undefined;
  private tap: ((chunk: Buffer) => void) | undefined;
  private transform: ForwardOptions['transform'];
  /**
   * A metered response that is not an event stream keeps its latest chunk back until `beforeEnd` has settled:
   * a client reading a length-delimited body has it whole with its last byte, so the charge must be journaled
   * first, or a crash in between serves a call that is never charged. (A stream ends only at `res.end()`.)
   */
  private holdLast = false;
  private last: Buffer | null = null;
  private held: HeldBody | null = null;
  /** The vendor refused Genway's key and the client has Genway's error: what the vendor still sends goes nowhere. */
  private refused = false;
  /** The client left an answer billed only whole, or a stream whose usage is to come: the rest is read for the tap. */
  private draining = false;
  private lingering: NodeJS.Timeout | undefined;
  failover: Failover | undefined;
  /** A routed call's target of the current try (the one whose answer is the client's, once it answers). */
  target: RoutedTarget | undefined;
  /** A routed answer's framing undone before the tap (Adaptation.deframe). */
  private deframe: ((chunk: Buffer) => Buffer) | undefined;
  /** A routed answer's Content-Type for the caller. */
  private contentType: string | undefined;

  constructor(
    readonly agent: Agent,
    private readonly timeouts: ProxyOptions,
    readonly req: IncomingMessage,
    private readonly res: ServerResponse,
    readonly options: ForwardOptions,
  ) {
    this.exchange = { start: options.start, sent: 0, complete: false };
  }

  /** The upstream a try goes to: its target's, or the call's own. */
  upstreamOf(target: RoutedTarget | undefined): Upstream {
    return target ? target.upstream : this.options.upstream;
  }

  /** Sends one try upstream, on `key` (or the vendor's own origin when it has no key), to `target` on a routed call. */
  dispatch(key: VendorKey | undefined, handler: LegacyHandler, target?: RoutedTarget): void {
    if (target) return this.dispatchRouted(target, key, handler);
    const { options, req } = this;
    const { upstream, body } = options;
    this.agent.dispatch(
      {
        origin: (key ?? upstream).origin.origin,
        method: req.method!,
        path: (key ?? upstream).basePath + options.path,
        headers: upstreamHeaders(req, options, key),
        // undici destroys a stream body once sent, and detaches an IncomingMessage from its socket to do so, which
        // leaves the server unable to answer on it: the client's stream goes up through a pipe of its own.
        body: body === null || Buffer.isBuffer(body) ? body : pipeOf(body),
      },
      handler as unknown as Dispatcher.DispatchHandler,
    );
  }

  /**
   * A routed try: the target's request (built once per target), the client's headers around it, then the target's
   * auth over exactly what goes (a signature, or a token shared by concurrent calls), then the request.
   */
  private dispatchRouted(target: RoutedTarget, key: VendorKey | undefined, handler: LegacyHandler): void {
    this.target = target;
    const { upstream } = target;
    const at = key ?? upstream;
    let request: UpstreamRequest;
    try {
      request = target.request();
    } catch (err) {
      handler.onError(err as Error);
      return;
    }
    const url = new URL(at.basePath + request.path, at.origin);
    const headers = routedHeaders(this.req, request, at.origin.host, target.drops);
    const send = (auth: readonly (readonly [string, string])[]) => {
      if (this.closed) return handler.onError(new ClientGone());
      const flat: string[] = [];
      for (const [name, value] of headers) flat.push(name, value);
      for (const [name, value] of auth) flat.push(name, value);
      this.agent.dispatch(
        {
          origin: at.origin.origin,
          method: this.req.method!,
          path: url.pathname + url.search,
          headers: flat,
          body: request.body,
        },
        handler as unknown as Dispatcher.DispatchHandler,
      );
    };
    if (!key) return send([]);
    let auth: ReturnType<Upstream['calls']['authorize']>;
    try {
      auth = upstream.calls.authorize({ method: this.req.method!, url, headers, body: request.body }, key);
    } catch (err) {
      handler.onError(new UpstreamAuthError(`credentials failed: ${(err as Error).message}`));
      return;
    }
    if (Array.isArray(auth)) return send(auth);
    (auth as Promise<(readonly [string, string])[]>).then(send, (err: unknown) =>
      handler.onError(new UpstreamAuthError(`credentials failed: ${(err as Error).message}`)),
    );
  }

  // undici's handler of the one try of a call that cannot fail over (one key, a pinned object, a streamed upload).

  onConnect(abort: (err?: Error) => void): void {
    this.abortUpstream = abort;
    if (this.closed) abort(new ClientGone());
  }

  onHeaders(status: number, raw: Buffer[], resume: () => void, statusMessage: string): boolean {
    if (status < 200) return true; // 1xx: informational, the final answer follows
    const key = this.options.key;
    if (key) {
      const outcome = outcomeOf(status);
      const failure = outcome === 'rate_limited' || outcome === 'server_error';
      this.upstreamOf(this.target).pool.settle(key, outcome, {
        requestId: this.options.requestId,
        tryNo: 1,
        status,
        retryAfterMs: failure ? retryAfterOf(raw) : undefined,
      });
      if (outcome === 'key_rejected') {
        this.refuseKey(key);
        return true;
      }
      this.options.onKey?.(key);
    }
    if (this.target) this.options.route!.served(this.target, key);
    this.head(status, raw, resume, statusMessage);
    return true;
  }

  onData(chunk: Buffer): boolean {
    return this.refused || this.data(chunk);
  }

  onComplete(): void {
    if (!this.refused) this.complete();
  }

  onError(err: Error): void {
    if (this.closed) return this.drained();
    if (this.refused || err instanceof ClientGone) return;
    const key = this.options.key;
    if (key && !this.answered) {
      const { code, outcome } = errorOutcomeOf(err);
      this.upstreamOf(this.target).pool.settle(key, outcome, {
        requestId: this.options.requestId,
        tryNo: 1,
        code,
      });
    }
    if (this.target) this.options.route!.served(this.target, key);
    this.failed(err);
  }

  /** The vendor's answer as the client gets it: its head now, then its body. */
  head(status: number, raw: Buffer[], resume: () => void, statusMessage: string): void {
    const { exchange, options } = this;
    exchange.headers = performance.now();
    exchange.status = status;
    this.resumeUpstream = resume;
    if (this.closed) return;
    const head = readHead(raw);
    if (this.target) return this.routedHead(this.target, status, statusMessage, head);
    // The vendor's length no longer holds once bytes are taken out: the client gets it chunked.
    let length: null | undefined;
    if (options.transform && status < 300 && isPlainEventStream(head)) {
      this.transform = options.transform;
      length = null;
    }
    if (options.rewriteBody && status < 300 && head.contentEncoding === undefined) {
      this.held = { status, head, length, statusMessage, chunks: [], size: 0 };
      return;
    }
    this.writeHead(status, statusMessage, head, length);
    this.holdLast = this.tap !== undefined && options.beforeEnd !== undefined && !isPlainEventStream(head);
  }

  /** A routed answer's head: adapted for the caller (framing, format, error shape), or passed as it came. */
  private routedHead(target: RoutedTarget, status: number, statusMessage: string, head: VendorHead): void {
    const { options } = this;
    let adaptation: Adaptation | undefined;
    try {
      adaptation = options.route!.adapt(target, status, head);
    } catch (err) {
      return this.refuseAnswer(err);
    }
    if (!adaptation) {
      this.writeHead(status, statusMessage, head, undefined);
      return;
    }
    this.deframe = adaptation.deframe;
    this.tap = adaptation.tap;
    this.contentType = adaptation.contentType;
    if (adaptation.whole) {
      this.held = {
        status,
        head,
        length: undefined,
        statusMessage,
        chunks: [],
        size: 0,
        rewrite: adaptation.whole,
      };
      return;
    }
    let length: null | undefined;
    if (adaptation.transform || adaptation.deframe) {
      this.transform = adaptation.transform;
      length = null;
    }
    this.writeHead(status, statusMessage, head, length);
    this.holdLast = this.tap !== undefined && options.beforeEnd !== undefined && !adaptation.streams;
  }

  /** A routed answer Genway cannot give the caller (one it cannot read): Genway's error instead, charged nothing. */
  private refuseAnswer(err: unknown): void {
    this.refused = true;
    this.tap = undefined;
    this.held = null;
    this.abortUpstream?.(new ClientGone());
    const apiError =
      err instanceof ApiError
        ? err
        : new ApiError('bad_gateway', `Upstream answer unreadable: ${(err as Error).message}`);
    this.renderError(apiError);
  }

  private renderError(err: ApiError): void {
    const { options } = this;
    const headers = { [REQUEST_ID_HEADER]: options.requestId };
    if (options.renderError) options.renderError(this.res, err, headers);
    else options.upstream.renderError(this.res, err, headers);
  }

  data(chunk: Buffer): boolean {
    // undici hands over an empty piece where a paused answer resumes (once per pause of a long stream): written, it
    // is a write call of its own on the client's socket (node:http frames only a non-empty chunk), for nothing.
    if (chunk.length === 0) return true;
    if (this.closed) {
      if (this.draining) this.drain(chunk);
      return true; // what was in flight goes nowhere
    }
    const held = this.held;
    if (held) {
      held.chunks.push(chunk);
      held.size += chunk.length;
      if (held.rewrite) {
        if (held.size > ROUTED_HOLD_LIMIT) {
          this.refuseAnswer(
            new ApiError('bad_gateway', `Upstream answer larger than ${ROUTED_HOLD_LIMIT} bytes to rewrite`),
          );
        }
      } else if (held.size > REWRITE_LIMIT) this.writeHeld(); // too big to be object metadata: passes unchanged
      return true;
    }
    if (this.deframe) {
      try {
        chunk = this.deframe(chunk);
      } catch (err) {
        // The stream is the client's already: cut, never completed with a made-up end.
        this.abortUpstream?.(new ClientGone());
        this.res.destroy(err as Error);
        return true;
      }
    }
    this.tap?.(chunk);
    if (this.transform) chunk = this.transform.write(chunk);
    if (this.holdLast) {
      const previous = this.last;
      this.last = chunk;
      if (!previous) return true;
      chunk = previous;
    }
    const res = this.res;
    if (res.write(chunk) || res.writableLength <= CLIENT_BACKLOG) return true;
    res.once('drain', (this.onDrain ??= () => this.resumeUpstream?.()));
    return false;
  }

  /** Reads a chunk its client left for the usage it carries (deframed first, on a routed call). */
  private drain(chunk: Buffer): void {
    try {
      this.tap?.(this.deframe ? this.deframe(chunk) : chunk);
    } catch {
      this.tap = undefined; // unreadable from here: billed for what was read
    }
  }

  complete(): void {
    const { exchange, options, res } = this;
    exchange.upstreamEnd = performance.now();
    exchange.complete = true;
    if (this.draining) return this.drained();
    const held = this.held;
    if (held?.rewrite && !this.closed) return this.completeRewritten(held, held.rewrite);
    if (held && !this.closed) this.writeHeld(options.rewriteBody!(Buffer.concat(held.chunks, held.size)));
    if (this.transform && !this.closed) res.write(this.transform.end());
    const waiting = options.beforeEnd?.();
    if (waiting) void waiting.finally(() => this.end());
    else this.end();
  }

  private end(): void {
    if (this.last) this.res.end(this.last);
    else this.res.end();
  }

  /**
   * A routed answer held whole is rewritten for the caller (or refused when it cannot be read): the tap reads the
   * upstream's bytes, and the rewritten body goes last, after `beforeEnd`, as a metered body's last chunk does.
   */
  private completeRewritten(held: HeldBody, rewrite: (body: Buffer) => Buffer): void {
    this.held = null;
    const body = Buffer.concat(held.chunks, held.size);
    let rewritten: Buffer;
    try {
      rewritten = rewrite(body);
    } catch (err) {
      return this.refuseAnswer(err);
    }
    this.tap?.(body);
    this.writeHead(held.status, held.statusMessage, held.head, rewritten.length);
    this.last = rewritten.length ? rewritten : null;
    const waiting = this.options.beforeEnd?.();
    if (waiting) void waiting.finally(() => this.end());
    else this.end();
  }

  /** Upstream unreachable or cut: Genway's own error in the vendor's shape, or a cut client stream. */
  failed(err: Error): void {
    const { res, options } = this;
    // Upstream cut or silent mid-body: the client's stream is cut too, never completed with a made-up end.
    if (this.answered) {
      res.destroy();
      return;
    }
    const vendor = this.upstreamOf(this.target);
    const code = (err as NodeJS.ErrnoException).code ?? '';
    const phase = TIMEOUT_PHASE[code];
    const apiError = phase
      ? new ApiError(
          'gateway_timeout',
          `Upstream ${vendor.name} did not answer within ${phase === 'connect' ? this.timeouts.connectTimeoutMs : this.timeouts.idleTimeoutMs} ms`,
        )
      : new ApiError(
          'bad_gateway',
          err instanceof UpstreamAuthError
            ? `Upstream ${vendor.name}: ${err.message}`
            : `Upstream ${vendor.name} unreachable: ${(err.cause as NodeJS.ErrnoException | undefined)?.code ?? (code || err.message)}`,
        );
    if (options.renderError) options.renderError(res, apiError, { [REQUEST_ID_HEADER]: options.requestId });
    else vendor.renderError(res, apiError, { [REQUEST_ID_HEADER]: options.requestId });
  }

  /**
   * The vendor answered 401 to Genway's own vendor key, and no other key is left: the client gets Genway's 502 in the
   * vendor's shape. The vendor's 401 would tell the client its own key is wrong (an SDK then stops, a CLI asks to log
   * in again), and OpenAI's names the last characters of Genway's key.
   */
  refuseKey(key: VendorKey): void {
    this.refused = true;
    this.exchange.status = 401;
    this.exchange.headers ??= performance.now();
    this.renderError(keyRefused(this.upstreamOf(this.target).name, key));
  }

  /** Whether the client has had any of an answer: a try is then the one the client gets, whatever comes of it. */
  get answered(): boolean {
    return this.exchange.headers !== undefined || this.res.headersSent;
  }

  /** The client's response is over (finished or cut): stop the upstream work either way. */
  close(): void {
    this.closed = true;
    if (this.failover) clearTimeout(this.failover.timer);
    if (!this.exchange.complete) {
      // Left mid-body, read on for the bill: an answer billed only whole to its end (or its break), a stream whose
      // answer is out for its usage, a few seconds at most.
      const { options } = this;
      if (this.tap && !this.refused && (options.whole || options.lingers?.())) {
        this.draining = true;
        if (!options.whole) this.lingering = setTimeout(() => this.stopDraining(), LINGER_MS);
        // Paused for a client that stopped reading: nothing is written to it now, so nothing holds the vendor back.
        this.resumeUpstream?.();
        return;
      }
      this.abortUpstream?.(new ClientGone());
    }
    this.options.onClose(this.exchange);
  }

  /** The rest of an answer the client left is read (or broke off): the call is over now. */
  drained(): void {
    if (!this.draining) return;
    this.draining = false;
    clearTimeout(this.lingering);
    this.options.onClose(this.exchange);
  }

  /** A stream read on past its client for too long: stopped, and billed for what was read. */
  private stopDraining(): void {
    this.abortUpstream?.(new ClientGone());
    this.drained();
  }

  /** Writes a held response: its head, then the rewritten body (or the chunks as they came); the tap sees the vendor's bytes. */
  private writeHeld(rewritten?: Buffer): void {
    const h = this.held!;
    this.held = null;
    this.writeHead(h.status, h.statusMessage, h.head, rewritten ? rewritten.length : h.length);
    for (const chunk of h.chunks) this.tap?.(chunk);
    if (rewritten) this.res.write(rewritten);
    else for (const chunk of h.chunks) this.res.write(chunk);
  }

  /**
   * The vendor's status and headers, minus hop-by-hop ones, plus Genway's own, written in one flat list:
   * nothing was set on `res` before, so Node writes them as given (repeated ones such as Link kept). The
   * route's `onResponse` sees them as an object first, and may rewrite them. `length`: the vendor's (undefined),
   * none (null: the body is changed as it passes), or that of a rewritten body.
   */
  private writeHead(
    status: number,
    statusMessage: string | undefined,
    head: VendorHead,
    length: number | null | undefined,
  ): void {
    const { options, exchange, res } = this;
    const { requestId } = options;
    const list = head.list;
    let out: string[] = [REQUEST_ID_HEADER, requestId];
    let connection: string | undefined;
    let via: string | undefined;
    let hasLength = false;
    for (let i = 0; i < list.length; i += 2) {
      const name = list[i];
      const value = list[i + 1];
      if (name === 'connection') connection = connection ? `${connection}, ${value}` : value;
      else if (name === 'via') via = via ? `${via}, ${value}` : value;
      else if (name === 'content-length') {
        if (length !== undefined) continue;
        hasLength = true;
      } else if (name === 'content-type' && this.contentType !== undefined) continue;
      if (!DROP_FROM_RESPONSE.has(name) && !isVendorQuota(name)) out.push(name, value);
    }
    if (typeof length === 'number') {
      out.push('content-length', String(length));
      hasLength = true;
    }
    if (this.contentType !== undefined) out.push('content-type', this.contentType);
    if (options.onResponse) {
      // A route that rewrites headers (a resumable upload's session URL) gets them as an object, and the list is
      // rebuilt from it; any other reads only the head (no object per response on the metered routes).
      let headers: ResponseHeaders | undefined;
      if (options.rewritesHeaders) {
        headers = {};
        for (let i = 2; i < out.length; i += 2) {
          const prev = headers[out[i]];
          headers[out[i]] = prev === undefined ? out[i + 1] : [prev].flat().concat(out[i + 1]);
        }
      }
      this.tap = options.onResponse(status, head, headers);
      if (headers) {
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
    out.push('X-Genway-Overhead-Ms', millis(overheadMs));
    res.writeHead(status, statusMessage || undefined, out);
    // Streams (no length known up front) get their headers now, before the first event.
    if (!hasLength) res.flushHeaders();
  }
}

/**
 * Failover (src/gateway/key-pool.ts): a 429, a 5xx or a connect error before any byte reached the client is tried
 * again on the pool's next key, when the body can be sent again (read whole, or none; a piped upload cannot) and the
 * key is not pinned to the objects the call names. Routes whose answers carry the vendor's own URLs (rewritten to
 * Genway's) stay on the first key's origin. A routed call, once a target's keys are spent (or it has none), goes on to
 * its next target; a refused key (401) does too. Built only for a call that can fail over.
 */
class Failover {
  readonly tried: VendorKey[] = [];
  timer: NodeJS.Timeout | undefined;
  /** The latest answer that was given up for another key: the client gets it when no later try answers. */
  given: (HeldAnswer & { key: VendorKey | undefined; target: RoutedTarget | undefined }) | null = null;
  private readonly sameOrigin: string | undefined;
  /** Tries on the current target (a routed call's), the first included. */
  private triesHere = 0;

  constructor(readonly call: Forwarding) {
    const { options } = call;
    this.sameOrigin = options.rewriteBody || options.rewritesHeaders ? options.key?.origin.origin : undefined;
  }

  attempt(key: VendorKey | undefined, target?: RoutedTarget): void {
    if (key) this.tried.push(key);
    this.triesHere++;
    this.call.dispatch(key, new Try(this, key, this.tried.length, target), target);
  }

  /**
   * The next try after a failure (on `target`, a routed call's), or undefined when the answer (or error) is the one
   * the client gets. `wait`: the pool's advice for another key (undefined: none is worth it).
   */
  another(
    target: RoutedTarget | undefined,
    tryNo: number,
    wait: number | undefined,
    advice?: string,
  ): { key: VendorKey | undefined; target: RoutedTarget | undefined; wait: number } | undefined {
    const { call } = this;
    if (wait === undefined || call.closed || advice === 'false') return undefined;
    const pool = call.upstreamOf(target).pool;
    const attempts = pool.policy.attempts;
    if (target ? this.triesHere < attempts : tryNo < attempts) {
      const next = pool.next(this.tried, Date.now() + wait, this.sameOrigin);
      if (next) return { key: next, target, wait };
    }
    const targets = call.options.route?.targets;
    if (!target || !targets) return undefined;
    const following = targets[targets.indexOf(target) + 1];
    if (!following) return undefined;
    return { key: following.upstream.pool.first(), target: following, wait: 0 };
  }

  /** The next try, after `wait` ms; a client gone meanwhile ends it all. */
  retry(
    then: { key: VendorKey | undefined; target: RoutedTarget | undefined; wait: number },
    from: RoutedTarget | undefined,
  ): void {
    this.call.abortUpstream = undefined;
    if (then.target !== from) this.triesHere = 0;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      if (!this.call.closed) this.attempt(then.key, then.target);
    }, then.wait);
  }

  /** Gives the client an answer that was held: it came from `answer.key` (of `answer.target`). */
  pass(answer: HeldAnswer & { key: VendorKey | undefined; target: RoutedTarget | undefined }): void {
    const call = this.call;
    call.target = answer.target;
    if (answer.key) call.options.onKey?.(answer.key);
    if (answer.target) call.options.route!.served(answer.target, answer.key);
    call.head(answer.status, answer.raw, noop, answer.statusMessage);
    for (const chunk of answer.chunks) call.data(chunk);
    call.complete();
  }
}

/** Whether a try's outcome hands a routed call to its next target even without a key of its own to settle. */
const routedFailure = (outcome: TryOutcome) =>
  outcome === 'rate_limited' || outcome === 'server_error' || outcome === 'key_rejected';

/** One try of a call that can fail over, on one key (of one target, on a routed call): undici's handler for it. */
class Try implements LegacyHandler {
  /** This try was given up for another key: what it still delivers goes nowhere. */
  private over = false;
  /** An answer held while it may still be given up (its body read whole, bounded). */
  private answer: HeldAnswer | null = null;
  private then: { key: VendorKey | undefined; target: RoutedTarget | undefined; wait: number } | undefined;
  /** The vendor refused this try's key (401): its answer is never the client's. */
  private rejected = false;

  constructor(
    private readonly failover: Failover,
    private readonly key: VendorKey | undefined,
    private readonly tryNo: number,
    private readonly target?: RoutedTarget,
  ) {}

  onConnect(abort: (err?: Error) => void): void {
    const call = this.failover.call;
    call.abortUpstream = abort;
    if (call.closed) abort(new ClientGone());
  }

  onHeaders(status: number, raw: Buffer[], resume: () => void, statusMessage: string): boolean {
    if (status < 200 || this.over) return true; // 1xx: informational, the final answer follows
    const { call } = this.failover;
    const key = this.key;
    const target = this.target;
    if (key || target) {
      const outcome = outcomeOf(status);
      const failure = outcome === 'rate_limited' || outcome === 'server_error';
      const retryAfterMs = failure ? retryAfterOf(raw) : undefined;
      const { requestId } = call.options;
      const wait = key
        ? call
            .upstreamOf(target)
            .pool.settle(key, outcome, { requestId, tryNo: this.tryNo, status, retryAfterMs })
        : routedFailure(outcome)
          ? 0
          : undefined;
      this.then = this.failover.another(
        target,
        this.tryNo,
        wait,
        failure ? header(raw, 'x-should-retry') : undefined,
      );
      this.rejected = key !== undefined && outcome === 'key_rejected';
      if (this.then) {
        this.answer = { status, raw, statusMessage, chunks: [], size: 0, complete: false };
        return true;
      }
      if (this.rejected) {
        // No key left: an earlier key's answer that was given up (a 429, a 5xx), else Genway's own error.
        this.over = true;
        if (this.failover.given) this.failover.pass(this.failover.given);
        else {
          call.target = target;
          call.refuseKey(key!);
        }
        return true;
      }
      if (key) call.options.onKey?.(key);
      if (target) call.options.route!.served(target, key);
    }
    call.target = target;
    call.head(status, raw, resume, statusMessage);
    return true;
  }

  onData(chunk: Buffer): boolean {
    if (this.over) return true;
    const answer = this.answer;
    if (!answer) return this.failover.call.data(chunk);
    answer.size += chunk.length;
    if (answer.size <= HOLD_LIMIT) answer.chunks.push(chunk);
    else {
      // Too big to hold for later: the next key is tried without it.
      this.failover.call.abortUpstream?.(new Superseded());
      this.giveUp();
    }
    return true;
  }

  onComplete(): void {
    if (this.over) return;
    if (!this.answer) return this.failover.call.complete();
    this.answer.complete = true;
    this.giveUp();
  }

  onError(err: Error): void {
    const { failover } = this;
    const { call } = failover;
    if (call.closed && !this.over) return call.drained();
    if (this.over || err instanceof Superseded || call.closed || err instanceof ClientGone) return;
    if (this.answer) return this.giveUp(); // a given-up answer that broke: the next key goes on without it
    const key = this.key;
    const target = this.target;
    if ((key || target) && !call.answered) {
      const { code, outcome } = errorOutcomeOf(err);
      const { requestId } = call.options;
      const wait = key
        ? call.upstreamOf(target).pool.settle(key, outcome, { requestId, tryNo: this.tryNo, code })
        : outcome === 'connect_error'
          ? 0
          : undefined;
      this.then = failover.another(target, this.tryNo, wait);
      if (this.then) return this.giveUp();
      if (failover.given) return failover.pass(failover.given);
    }
    call.target = target;
    if (target) call.options.route!.served(target, key);
    call.failed(err);
  }

  private giveUp(): void {
    this.over = true;
    if (this.answer?.complete && !this.rejected)
      this.failover.given = { ...this.answer, key: this.key, target: this.target };
    this.failover.retry(this.then!, this.target);
  }
}

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
   * Starts the exchange. Returns what the caller must close once the client's response closes (finished or cut):
   * the caller owns the one 'close' listener of the response.
   *
   * The handlers speak undici's core callbacks (onConnect, onHeaders, onData, onComplete, onError), which its
   * dispatcher calls directly: the newer controller-style handler is adapted onto these by a wrapper that also
   * parses every header list into an object, which this proxy only needs on the routes that read headers.
   */
  forward(req: IncomingMessage, res: ServerResponse, options: ForwardOptions): { close(): void } {
    const call = new Forwarding(this.agent, this.options, req, res, options);
    const { body, route } = options;
    const failover = !options.pinned && (body === null || Buffer.isBuffer(body));
    call.exchange.sent = performance.now();
    const target = route?.targets[0];
    if (failover && (options.upstream.pool.members.length > 1 || (route && route.targets.length > 1))) {
      call.failover = new Failover(call);
      call.failover.attempt(options.key, target);
    } else call.dispatch(options.key, call, target);
    return call;
  }

  close(): Promise<void> {
    return this.agent.close();
  }
}
