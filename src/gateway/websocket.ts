import http, { STATUS_CODES, type IncomingMessage } from 'node:http';
import https from 'node:https';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import type { AuthContext } from '../accounts/service';
import { ApiError } from '../errors';
import type { Logger } from '../observability/logger';
import {
  CLIENT_SESSION_HEADERS,
  connectionTokens,
  hasOwnVia,
  HOP_BY_HOP,
  keyRefused,
  LINGER_MS,
  REQUEST_ID_HEADER,
  VENDOR_SESSION_HEADERS,
  isVendorQuota,
  VIA_NAME,
} from './proxy';
import type { VendorKey } from './key-pool';
import type { Upstream } from './upstream';
import { AnswerEnd, type UsageReading } from './usage';
import { modelLookalike, snapshotBase, UsageAccumulator, type RouteSpec, type UsageFormat } from './vendor';
import { VENDORS } from './vendors';

/**
 * The WebSocket mode of a vendor route (OpenAI's Responses API over `GET /v1/responses` with `Upgrade: websocket`):
 * the upgrade is proxied with the Genway key swapped for the vendor's, then frames pass both ways unchanged.
 * Genway reads them from a copy: each client message that starts a response is admitted like a request (key still
 * valid, rate limit, allow-list, balance) before it is forwarded, and each completed response is metered.
 * Compression is not negotiated (the client's Sec-WebSocket-Extensions does not travel), so frames can be read.
 */

const OP = { CONTINUATION: 0, TEXT: 1, BINARY: 2, CLOSE: 8 } as const;

/**
 * Headers of the upgrade request that never reach the vendor: the hop-by-hop ones but the two the handshake itself
 * is made of (Connection: Upgrade, Upgrade: websocket), the Genway key wherever it is, what Genway sets itself, and
 * the client's cookies (as on HTTP).
 */
const DROP = new Set([
  ...HOP_BY_HOP.filter((name) => name !== 'connection' && name !== 'upgrade'),
  ...VENDORS.flatMap((v) => v.keyHeaders),
  'host',
  'via',
  'sec-websocket-extensions',
  'accept-encoding',
  ...CLIENT_SESSION_HEADERS,
]);

/**
 * The vendor's hop-by-hop answer headers, and those its Connection names, stay with Genway: a refusal goes on with
 * Genway's own Connection and length, a 101 keeps only Upgrade. So does Genway's vendor session (as on HTTP).
 */
const DROP_FROM_REFUSAL = new Set([...HOP_BY_HOP, ...VENDOR_SESSION_HEADERS]);
const DROP_FROM_101 = new Set([
  ...HOP_BY_HOP.filter((name) => name !== 'upgrade'),
  ...VENDOR_SESSION_HEADERS,
]);

/** The models a client message names, as found, and the path of a field that is `model` in another case. */
export interface AskedModels {
  models: unknown[];
  lookalike: string | undefined;
}

/**
 * The models a client message names: its `model`, and its `response.model` (the event's two shapes), each when
 * present, whatever its type; and a field that is `model` in another case at either level (see modelLookalike).
 */
export function askedModels(event: Record<string, unknown>): AskedModels {
  const models: unknown[] = [];
  if (event.model !== undefined) models.push(event.model);
  let lookalike = modelLookalike(event);
  const response = event.response;
  if (typeof response === 'object' && response !== null && !Array.isArray(response)) {
    const inner = response as Record<string, unknown>;
    if (inner.model !== undefined) models.push(inner.model);
    const found = modelLookalike(inner);
    if (found !== undefined) lookalike ??= `response.${found}`;
  }
  return { models, lookalike };
}

/** The events that end a response of the Responses WebSocket mode: with its usage, or without (a failure). */
const RESPONSE_ENDS = new Set(['response.completed', 'response.incomplete', 'response.failed']);

/** A client message larger than this cannot be checked before it goes on: the connection is closed (1009). */
const MAX_CHECKED_MESSAGE = 16 << 20;

export interface WebSocketProxyOptions {
  req: IncomingMessage;
  socket: Duplex;
  head: Buffer;
  upstream: Upstream;
  route: RouteSpec | undefined;
  path: string;
  query: string;
  requestId: string;
  connectTimeoutMs: number;
  idleTimeoutMs: number;
  logger: Logger;
  /** Admission with the key of the upgrade request: 401 and 429 as for any request. */
  admit(): AuthContext | Promise<AuthContext>;
  /**
   * Allow-list, budget, balance and the objects it names (another account's is a 404) for a message that starts a
   * response; throws the refusal.
   */
  check(auth: AuthContext, asked: AskedModels, message: Record<string, unknown>): Promise<void>;
  /** A response the vendor created on this connection: remembered as the account's, as one made over HTTP is. */
  created(auth: AuthContext, responseId: string): void;
  /** The allow-list alone, for any other message that names a model; throws the refusal. */
  allowed(auth: AuthContext, asked: AskedModels): void;
  /** The vendor key (and origin) this connection uses; no other is tried (see docs/decisions.md). */
  key: VendorKey | undefined;
  onUsage(auth: AuthContext, model: string | undefined, readings: UsageReading[]): void;
}

/** One parsed frame: its header fields, its payload (unmasked) and its exact bytes. */
interface Frame {
  fin: boolean;
  opcode: number;
  payload: Buffer;
  raw: Buffer;
}

/** Splits a byte stream into WebSocket frames (RFC 6455 5.2); masked payloads are unmasked in the copy. */
export class FrameReader {
  private buffered: Buffer = Buffer.alloc(0);

  /** The complete frames the bytes so far hold; the rest waits for more. */
  feed(chunk: Buffer): Frame[] {
    this.buffered = this.buffered.length ? Buffer.concat([this.buffered, chunk]) : chunk;
    const frames: Frame[] = [];
    for (;;) {
      const b = this.buffered;
      if (b.length < 2) break;
      const masked = (b[1] & 0x80) !== 0;
      let length = b[1] & 0x7f;
      let at = 2;
      if (length === 126) {
        if (b.length < 4) break;
        length = b.readUInt16BE(2);
        at = 4;
      } else if (length === 127) {
        if (b.length < 10) break;
        length = Number(b.readBigUInt64BE(2));
        at = 10;
      }
      const maskAt = at;
      if (masked) at += 4;
      if (b.length < at + length) break;
      let payload = b.subarray(at, at + length);
      if (masked) {
        const mask = b.subarray(maskAt, maskAt + 4);
        payload = Buffer.from(payload);
        for (let i = 0; i < payload.length; i++) payload[i] ^= mask[i & 3];
      }
      frames.push({
        fin: (b[0] & 0x80) !== 0,
        opcode: b[0] & 0x0f,
        payload,
        raw: b.subarray(0, at + length),
      });
      this.buffered = b.subarray(at + length);
    }
    return frames;
  }

  /** Bytes of a frame not yet complete. */
  get pending(): number {
    return this.buffered.length;
  }
}

/** One unmasked frame from the server side (Genway speaking to the client). */
export function serverFrame(opcode: number, payload: Buffer): Buffer {
  const len = payload.length;
  const header = len < 126 ? Buffer.alloc(2) : len < 65536 ? Buffer.alloc(4) : Buffer.alloc(10);
  header[0] = 0x80 | opcode;
  if (len < 126) header[1] = len;
  else if (len < 65536) {
    header[1] = 126;
    header.writeUInt16BE(len, 2);
  } else {
    header[1] = 127;
    header.writeBigUInt64BE(BigInt(len), 2);
  }
  return Buffer.concat([header, payload]);
}

/** A close frame (server side) with a code and a short reason. */
function closeFrame(code: number, reason: string): Buffer {
  const text = Buffer.from(reason.slice(0, 120));
  const payload = Buffer.alloc(2 + text.length);
  payload.writeUInt16BE(code, 0);
  text.copy(payload, 2);
  return serverFrame(OP.CLOSE, payload);
}

/** An HTTP answer on a socket that asked to upgrade: Genway's refusal in the vendor's error shape. */
function refuseUpgrade(socket: Duplex, upstream: Upstream, err: ApiError, requestId: string): void {
  const body = JSON.stringify(upstream.def.errorBody(err.status, err.message));
  const headers: Record<string, string> = {
    'Content-Type': 'application/json',
    'Content-Length': String(Buffer.byteLength(body)),
    Connection: 'close',
    [REQUEST_ID_HEADER]: requestId,
    ...err.headers,
  };
  if (err.status === 429) headers['x-should-retry'] = 'true';
  else if (err.status === 401 || err.status === 403) headers['x-should-retry'] = 'false';
  const lines = Object.entries(headers).map(([k, v]) => `${k}: ${v}\r\n`);
  socket.end(`HTTP/1.1 ${err.status} ${STATUS_CODES[err.status] ?? ''}\r\n${lines.join('')}\r\n${body}`);
}

/** The error event a refused message gets (the shape of the vendor's own WebSocket errors). */
function errorEvent(err: ApiError, upstream: Upstream): Buffer {
  const shaped = upstream.def.errorBody(err.status, err.message) as { error?: Record<string, unknown> };
  const event = { type: 'error', status: err.status, error: shaped.error ?? { message: err.message } };
  return serverFrame(OP.TEXT, Buffer.from(JSON.stringify(event)));
}

export function proxyWebSocket(o: WebSocketProxyOptions): void {
  const { socket, upstream, requestId } = o;
  socket.on('error', () => socket.destroy());
  void start(o).catch((err: unknown) => {
    if (socket.destroyed) return;
    const apiError = err instanceof ApiError ? err : new ApiError('internal', 'Internal server error');
    if (apiError.status >= 500) o.logger.error({ err, requestId }, 'gateway upgrade failed');
    refuseUpgrade(socket, upstream, apiError, requestId);
  });
}

async function start(o: WebSocketProxyOptions): Promise<void> {
  const { req, socket, upstream, route } = o;
  if (!route?.upgrade || (req.headers.upgrade ?? '').toLowerCase() !== 'websocket') {
    throw new ApiError('not_found', `No ${upstream.name} WebSocket route for ${req.method} ${o.path}`);
  }
  if (hasOwnVia(req.headers.via)) {
    throw new ApiError('loop_detected', 'This request already passed through Genway (Via)');
  }
  const auth = await o.admit();
  const format = route.usage ? upstream.def.usage[route.usage] : undefined;

  const at = o.key ?? upstream;
  // The client's Connection may name more hop-by-hop headers (RFC 9110 7.6.1): they stay here, and the vendor's
  // Connection says only what the handshake needs.
  const listed = connectionTokens(req.headers.connection);
  const headers: Record<string, string | string[]> = { host: at.origin.host, connection: 'Upgrade' };
  for (let i = 0; i < req.rawHeaders.length; i += 2) {
    const lower = req.rawHeaders[i].toLowerCase();
    if (DROP.has(lower) || lower === 'connection' || (lower !== 'upgrade' && listed?.has(lower))) continue;
    if (upstream.def.dropHeaders?.includes(lower)) continue;
    const prev = headers[lower];
    headers[lower] = prev === undefined ? req.rawHeaders[i + 1] : [prev].flat().concat(req.rawHeaders[i + 1]);
  }
  if (o.key) headers[upstream.def.keyTo.header] = upstream.def.keyTo.value(o.key.key);
  for (const [name, value] of upstream.defaults) headers[name] ??= value;
  headers.via = req.headers.via ? `${req.headers.via}, 1.1 ${VIA_NAME}` : `1.1 ${VIA_NAME}`;

  const client = at.origin.protocol === 'https:' ? https : http;
  const path = at.basePath + o.path + (o.query ? `?${o.query}` : '');
  const up = client.request({
    host: at.origin.hostname,
    port: at.origin.port || undefined,
    method: 'GET',
    path,
    headers,
    timeout: o.connectTimeoutMs,
  });
  up.once('timeout', () =>
    up.destroy(
      new ApiError(
        'gateway_timeout',
        `Upstream ${upstream.name} did not answer within ${o.connectTimeoutMs} ms`,
      ),
    ),
  );
  socket.once('close', () => up.destroy());
  const leftEarly = () => up.destroy();
  socket.once('end', leftEarly);

  await new Promise<void>((resolve, reject) => {
    up.once('error', (err) =>
      reject(
        err instanceof ApiError
          ? err
          : new ApiError(
              'bad_gateway',
              `Upstream ${upstream.name} unreachable: ${(err as NodeJS.ErrnoException).code ?? err.message}`,
            ),
      ),
    );
    // The vendor refused the upgrade: its answer goes to the client as it is, but a 401 to Genway's own key.
    up.once('response', (res) => {
      if (res.statusCode === 401 && o.key) {
        upstream.pool.settle(o.key, 'key_rejected', { requestId: o.requestId, tryNo: 1, status: 401 });
        res.resume();
        reject(keyRefused(upstream.name, o.key));
        return;
      }
      const lines = [
        `HTTP/1.1 ${res.statusCode} ${res.statusMessage ?? ''}\r\n`,
        `${REQUEST_ID_HEADER}: ${o.requestId}\r\n`,
      ];
      const vendorListed = connectionTokens(res.headers.connection);
      for (let i = 0; i < res.rawHeaders.length; i += 2) {
        const lower = res.rawHeaders[i].toLowerCase();
        if (DROP_FROM_REFUSAL.has(lower) || isVendorQuota(lower) || vendorListed?.has(lower)) continue;
        if (lower === 'content-length') continue;
        lines.push(`${res.rawHeaders[i]}: ${res.rawHeaders[i + 1]}\r\n`);
      }
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.once('end', () => {
        const body = Buffer.concat(chunks);
        lines.push(`Content-Length: ${body.length}\r\n`);
        socket.end(Buffer.concat([Buffer.from(`${lines.join('')}Connection: close\r\n\r\n`), body]));
        resolve();
      });
      res.once('error', reject);
    });
    up.once('upgrade', (res, upSocket, upHead) => {
      up.setTimeout(0);
      socket.off('end', leftEarly);
      const lines = [
        `HTTP/1.1 101 ${res.statusMessage || 'Switching Protocols'}\r\n`,
        `${REQUEST_ID_HEADER}: ${o.requestId}\r\n`,
      ];
      const vendorListed = connectionTokens(res.headers.connection);
      for (let i = 0; i < res.rawHeaders.length; i += 2) {
        const lower = res.rawHeaders[i].toLowerCase();
        if (lower === 'sec-websocket-extensions' || DROP_FROM_101.has(lower) || isVendorQuota(lower))
          continue;
        if (lower !== 'upgrade' && vendorListed?.has(lower)) continue;
        lines.push(`${res.rawHeaders[i]}: ${res.rawHeaders[i + 1]}\r\n`);
      }
      lines.push('Connection: Upgrade\r\n');
      socket.write(`${lines.join('')}\r\n`);
      splice(o, auth, format, socket, upSocket, upHead);
      resolve();
    });
    up.end();
  });
}

/** Frames both ways: client messages checked in order before they go on, vendor messages metered as they pass. */
function splice(
  o: WebSocketProxyOptions,
  auth: AuthContext,
  format: UsageFormat | undefined,
  client: Duplex,
  vendor: Duplex,
  vendorHead: Buffer,
): void {
  /**
   * A client that leaves once a response's answer is out (the format's `ending` passed) does not stop the vendor
   * before that response's usage: what would let the vendor go waits for the response's end, LINGER_MS at most.
   */
  let afterUsage: (() => void)[] | null = null;
  let lingering: NodeJS.Timeout | undefined;
  const release = () => {
    clearTimeout(lingering);
    const waiting = afterUsage ?? [];
    afterUsage = null;
    for (const letGo of waiting) letGo();
  };
  const whenMetered = (letGo: () => void) => {
    if (afterUsage) return void afterUsage.push(letGo);
    if (running === undefined || !answer?.out || vendor.destroyed) return letGo();
    afterUsage = [letGo];
    lingering = setTimeout(release, LINGER_MS);
  };
  const gone = () => {
    client.destroy();
    vendor.resume(); // paused for a client that stopped reading: what it left is read for its usage, not held
    whenMetered(() => vendor.destroy());
  };
  /** The response the vendor is running, and the model its turn asked for (taken from `requested` at its start). */
  let running: { asked: string | undefined } | undefined;
  const answer = AnswerEnd.of(format);
  for (const s of [client, vendor] as Socket[]) {
    s.setTimeout(o.idleTimeoutMs, gone);
    s.once('close', gone);
    s.on('error', gone);
  }

  // Vendor to client: unchanged bytes, with backpressure; responses read from a copy as they start and end.
  const fromVendor = new FrameReader();
  /**
   * The models asked by the turns sent on and not answered yet, in order. The vendor runs a connection's turns one
   * at a time and answers each with a response (`response.created`, then its end) or, refusing it, an error event.
   */
  const requested: (string | undefined)[] = [];

  let message: Buffer[] = [];
  let acc = new UsageAccumulator();
  const onVendorFrame = (frame: Frame) => {
    if (!format || (frame.opcode !== OP.TEXT && frame.opcode !== OP.CONTINUATION)) return;
    message.push(frame.payload);
    if (!frame.fin) return;
    const text = Buffer.concat(message).toString('utf8');
    message = [];
    const created = text.includes('"response.created"');
    // An error event while no response runs answers the oldest turn waiting: no response, no usage, ever.
    const refusal = running === undefined && requested.length > 0 && text.includes('"error"');
    if (!created && !refusal && !format.triggers.some((t) => text.includes(t))) return;
    let event: unknown;
    try {
      event = JSON.parse(text);
    } catch {
      return;
    }
    const e = event as { type?: unknown; response?: { id?: unknown } };
    if (e.type === 'error') {
      if (refusal) requested.shift();
      return;
    }
    if (e.type === 'response.created') {
      running = { asked: requested.shift() };
      answer?.reset();
      if (typeof e.response?.id === 'string') o.created(auth, e.response.id);
    }
    format.event(event as Record<string, unknown>, acc);
    if (!acc.usage && !(typeof e.type === 'string' && RESPONSE_ENDS.has(e.type))) return;
    // The turn this response answers: the one it started for, else (a back end that sends no response.created) the
    // oldest waiting. A response that ends without usage (failed) is its turn's too, and charges nothing.
    const asked = running ? running.asked : requested.shift();
    running = undefined;
    if (afterUsage) queueMicrotask(release); // once this response's usage is recorded, below
    const { usage, model: answered } = acc;
    acc = new UsageAccumulator();
    if (!usage) return;
    // The order can still be wrong where an error event answers another message than the oldest turn (one the vendor
    // could not read, sent before it), or a response stops without an end event (a refusal after it is then not
    // taken for one): where the vendor names another model than the one asked (or a snapshot of it), its own name is
    // the one priced, not another turn's.
    const model =
      asked !== undefined && answered !== undefined && answered !== asked && snapshotBase(answered) !== asked
        ? answered
        : asked;
    o.onUsage(auth, model, [{ model: answered, usage, requests: 1 }]);
  };
  const fromVendorBytes = (chunk: Buffer) => {
    if (format) for (const frame of fromVendor.feed(chunk)) onVendorFrame(frame);
    if (running) answer?.feed(chunk);
    if (client.destroyed) return; // gone, while the usage of the response it left is read
    if (!client.write(chunk)) {
      vendor.pause();
      client.once('drain', () => vendor.resume());
    }
  };
  if (vendorHead.length) fromVendorBytes(vendorHead);
  vendor.on('data', fromVendorBytes);

  // Client to vendor: control frames go on at once; a data message waits until it is whole and, when it starts a
  // response, admitted. The client is paused while a check runs, so order is kept.
  const fromClient = new FrameReader();
  let held: Buffer[] = [];
  let heldPayload: Buffer[] = [];
  let heldBytes = 0;
  let heldOpcode: number = OP.TEXT;
  let chain = Promise.resolve();
  const forward = (bytes: Buffer) => {
    if (!vendor.write(bytes)) {
      client.pause();
      vendor.once('drain', () => client.resume());
    }
  };
  const refuse = (err: ApiError, close: boolean) => {
    client.write(errorEvent(err, o.upstream));
    if (close) {
      client.end(closeFrame(1008, err.message));
      vendor.destroy();
    }
  };
  const checkMessage = async (raw: Buffer[], payload: Buffer) => {
    // Every text message is read: JSON escapes decode to the same names and values (`"response\u002ecreate"` is
    // `response.create`), so no test on the raw text can tell which messages start a response or name a model.
    let event: unknown;
    try {
      event = JSON.parse(payload.toString('utf8'));
    } catch {
      return forward(Buffer.concat(raw)); // not JSON: the vendor answers it
    }
    if (typeof event !== 'object' || event === null || Array.isArray(event))
      return forward(Buffer.concat(raw));
    const message = event as Record<string, unknown>;
    const asked = askedModels(message);
    try {
      if (message.type !== 'response.create') {
        // Not a request, but a model named in it may be one a vendor acts on: the allow-list holds for it too.
        if (auth.models && (asked.models.length || asked.lookalike !== undefined)) o.allowed(auth, asked);
        return forward(Buffer.concat(raw));
      }
      // Each response is a request: the key may have been revoked or run out of rate since the upgrade.
      await o.admit();
      await o.check(auth, asked, message);
    } catch (err) {
      const apiError = err instanceof ApiError ? err : new ApiError('internal', 'Internal server error');
      return refuse(apiError, apiError.status === 401);
    }
    const model = asked.models[0];
    requested.push(typeof model === 'string' ? model : undefined);
    forward(Buffer.concat(raw));
  };
  const onClientFrame = (frame: Frame) => {
    if (frame.opcode === OP.CLOSE) {
      chain = chain.then(() => whenMetered(() => forward(frame.raw)));
      return;
    }
    if (frame.opcode > OP.CLOSE) {
      chain = chain.then(() => forward(frame.raw));
      return;
    }
    if (held.length === 0) heldOpcode = frame.opcode;
    held.push(frame.raw);
    heldPayload.push(frame.payload);
    heldBytes += frame.raw.length;
    if (heldBytes > MAX_CHECKED_MESSAGE) {
      client.end(closeFrame(1009, 'Message too big for Genway to check'));
      vendor.destroy();
      return;
    }
    if (!frame.fin) return;
    const raw = held;
    const payload = Buffer.concat(heldPayload);
    held = [];
    heldPayload = [];
    heldBytes = 0;
    if (heldOpcode !== OP.TEXT) {
      chain = chain.then(() => forward(Buffer.concat(raw)));
      return;
    }
    client.pause();
    chain = chain.then(() => checkMessage(raw, payload)).finally(() => client.resume());
  };
  const fromClientBytes = (chunk: Buffer) => {
    for (const frame of fromClient.feed(chunk)) onClientFrame(frame);
  };
  if (o.head.length) fromClientBytes(o.head);
  client.on('data', fromClientBytes);
  // A side that closes its half ends the exchange: what is already on its way is delivered, then both halves close.
  // (The server side allows half-open sockets, so without this a client gone without a close frame would hold its
  // connection, and the vendor's, until the idle timeout.)
  client.once('end', () => {
    void chain.then(() =>
      whenMetered(() => {
        vendor.end();
        client.end();
      }),
    );
  });
  vendor.once('end', () => client.end());
}
