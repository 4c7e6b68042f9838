import type { IncomingMessage, ServerResponse } from 'node:http';
import { brotliDecompressSync, gunzipSync, inflateSync } from 'node:zlib';
import type { Logger } from '../observability/logger';
import type { Caller } from './request-log';
import type { RequestBodies, RequestLogRow } from './types';

export type BodyMode = 'off' | 'metadata' | 'full';
export const BODY_MODES = ['off', 'metadata', 'full'] as const;

/** Where a body mode is set: `account:<accountId>` or `key:<keyId>`. */
export type BodyScope = `account:${string}` | `key:${string}`;

/** The store of the per-account and per-key modes (the log store's, so every replica reads the same). */
export interface BodySettingsStore {
  bodySettings(): Promise<Map<string, BodyMode>>;
  setBodySetting(scope: string, mode: BodyMode | null): Promise<void>;
}

/** What is always redacted before a body is stored: emails, bearer tokens, Genway keys and vendor keys. */
const BUILT_IN = [
  /[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\.[A-Za-z]{2,}/g,
  /\bBearer\s+[A-Za-z0-9._~+/=-]+/gi,
  /\bgwk_[A-Za-z0-9_-]{8,}/g,
  /\bsk-[A-Za-z0-9_-]{8,}/g,
  /\bAIza[0-9A-Za-z_-]{8,}/g,
  /\bwhsec_[A-Za-z0-9+/=_-]{8,}/g,
  /"(?:api_?key|password|secret|token|authorization)"\s*:\s*"[^"]*"/gi,
];
const REDACTED = '[redacted]';

/** A body's text with every secret-looking run replaced (the built-in patterns, then the configured ones). */
export function redact(text: string, extra: readonly RegExp[]): string {
  let out = text;
  for (const pattern of BUILT_IN) out = out.replace(pattern, REDACTED);
  for (const pattern of extra) out = out.replace(pattern, REDACTED);
  return out;
}

/** Collects one call's bodies while it runs; `finish` sizes the row and returns the redacted pair to keep. */
export interface BodyCapture {
  finish(row: RequestLogRow): RequestBodies | undefined;
}

/** How often each replica reads the modes the others set. */
const REFRESH_MS = 5000;

/**
 * Which calls keep their bodies: `logs.bodies` for everyone, unless the admin set a mode on the call's account or
 * key (the key's wins). `off` costs a call two map lookups; `metadata` counts the bytes of the response as they are
 * written; `full` keeps up to `logs.bodyMaxBytes` of each, decoded and redacted after the call, kept
 * `logs.bodyRetentionDays`.
 */
export class BodyModes {
  private modes = new Map<string, BodyMode>();
  private readonly timer: NodeJS.Timeout | undefined;
  private readonly patterns: RegExp[];

  constructor(
    private readonly fallback: BodyMode,
    private readonly maxBytes: number,
    redactPatterns: readonly string[],
    private readonly store: BodySettingsStore,
    private readonly logger: Logger,
  ) {
    this.patterns = redactPatterns.map((p) => new RegExp(p, 'g'));
    this.timer = setInterval(() => void this.refresh(), REFRESH_MS);
    this.timer.unref();
  }

  async refresh(): Promise<void> {
    try {
      this.modes = await this.store.bodySettings();
    } catch (err) {
      this.logger.warn({ err }, 'reading the body-logging modes failed; keeping the last ones');
    }
  }

  modeFor(caller: Caller): BodyMode {
    if (this.modes.size === 0) return this.fallback;
    return (
      this.modes.get(`key:${caller.keyId}`) ?? this.modes.get(`account:${caller.accountId}`) ?? this.fallback
    );
  }

  /** The modes set on accounts and keys (the admin's view). */
  settings(): Promise<Map<string, BodyMode>> {
    return this.store.bodySettings();
  }

  async set(scope: BodyScope, mode: BodyMode | null): Promise<void> {
    await this.store.setBodySetting(scope, mode);
    if (mode === null) this.modes.delete(scope);
    else this.modes.set(scope, mode);
  }

  close(): void {
    clearInterval(this.timer);
  }

  /** Starts keeping one call's bodies: the request's as read, the response's as written. */
  capture(
    mode: 'metadata' | 'full',
    req: IncomingMessage,
    body: Buffer | null,
    res: ServerResponse,
  ): BodyCapture {
    const max = this.maxBytes;
    const full = mode === 'full';
    const declared = Number(req.headers['content-length']);
    const requestBytes = body ? body.length : Number.isFinite(declared) ? declared : null;
    const chunks: Buffer[] = [];
    let kept = 0;
    let responseBytes = 0;
    const take = (chunk: unknown, encoding?: unknown) => {
      if (chunk === undefined || chunk === null || typeof chunk === 'function') return;
      const bytes =
        typeof chunk === 'string'
          ? Buffer.from(chunk, typeof encoding === 'string' ? (encoding as BufferEncoding) : 'utf8')
          : Buffer.isBuffer(chunk)
            ? chunk
            : Buffer.from(chunk as Uint8Array);
      responseBytes += bytes.length;
      if (full && kept < max) {
        const part = bytes.subarray(0, max - kept);
        chunks.push(Buffer.from(part));
        kept += part.length;
      }
    };
    // This response only: its write and end pass through a counter (a copy of the first bytes in `full`).
    const write = res.write;
    const end = res.end;
    res.write = function (this: ServerResponse, chunk: unknown, ...rest: unknown[]) {
      take(chunk, rest[0]);
      return (write as (...args: unknown[]) => boolean).call(this, chunk, ...rest);
    } as typeof res.write;
    res.end = function (this: ServerResponse, chunk?: unknown, ...rest: unknown[]) {
      take(chunk, rest[0]);
      return (end as (...args: unknown[]) => ServerResponse).call(this, chunk, ...rest);
    } as typeof res.end;
    const patterns = this.patterns;
    return {
      finish(row) {
        row.requestBytes = requestBytes;
        row.responseBytes = responseBytes;
        if (!full) return undefined;
        const encoding = String(res.getHeader('content-encoding') ?? '').toLowerCase();
        const response = decoded(Buffer.concat(chunks), encoding, max);
        return {
          time: row.time,
          requestId: row.requestId,
          accountId: row.accountId,
          requestBody: body ? redact(body.subarray(0, max).toString('utf8'), patterns) : null,
          responseBody: response === null ? null : redact(response, patterns),
        };
      },
    };
  }
}

/** A kept response body as text: decompressed when it was sent compressed (bounded), null when it cannot be read. */
function decoded(bytes: Buffer, encoding: string, max: number): string | null {
  if (bytes.length === 0) return '';
  try {
    const options = { maxOutputLength: max, finishFlush: 2 /* Z_SYNC_FLUSH: a cut body still inflates */ };
    if (encoding === 'gzip') return gunzipSync(bytes, options).toString('utf8');
    if (encoding === 'deflate') return inflateSync(bytes, options).toString('utf8');
    if (encoding === 'br') return brotliDecompressSync(bytes, { maxOutputLength: max }).toString('utf8');
    return encoding && encoding !== 'identity' ? null : bytes.toString('utf8');
  } catch {
    return null;
  }
}
