import zlib from 'node:zlib';
import type { TokenUsage } from '../store';
import type { UsageFormat } from './vendors';

/**
 * Token usage read from a response as it passes, from a copy: the bytes the client receives are never touched.
 *
 * - messages: `message_start` carries input (and cache) tokens, each `message_delta` the output so far;
 * - responses: the `response.completed` / `.incomplete` / `.failed` event carries the final `usage`;
 * - generateContent: every chunk may carry `usageMetadata`; the last one counts.
 *
 * `input` is every prompt token as billed (the messages vendor counts cache reads and writes apart from
 * `input_tokens`, so they are added there); `output` includes reasoning/thinking tokens.
 */
export interface UsageReading {
  usage: TokenUsage;
  /** The model the vendor says answered, when the response names it. */
  model?: string;
}

export interface UsageTap {
  write(chunk: Buffer): void;
  /** What was seen: complete at the end of the response, partial when the client went away first. */
  finish(): Promise<UsageReading | null>;
}

type Obj = Record<string, unknown>;
const num = (v: unknown): number =>
  typeof v === 'number' && Number.isFinite(v) && v > 0 ? Math.floor(v) : 0;
const obj = (v: unknown): Obj => (typeof v === 'object' && v !== null ? (v as Obj) : {});
const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);

/** Accumulates one response's usage from the vendor's objects (whole JSON bodies or single stream events). */
class UsageState {
  input = 0;
  output = 0;
  cacheRead = 0;
  cacheWrite = 0;
  model: string | undefined;
  seen = false;

  constructor(readonly format: UsageFormat) {}

  /** Feeds one parsed event or body. */
  take(value: unknown): void {
    const o = obj(value);
    switch (this.format) {
      case 'messages':
        return this.messages(o);
      case 'responses':
        return this.responses(o);
      case 'generateContent':
        return this.generateContent(o);
    }
  }

  private messages(o: Obj): void {
    if (o.type === 'message_start') {
      const message = obj(o.message);
      this.model = str(message.model) ?? this.model;
      this.messagesUsage(obj(message.usage));
    } else if (o.type === 'message_delta' || o.type === 'message') {
      if (o.type === 'message') this.model = str(o.model) ?? this.model;
      this.messagesUsage(obj(o.usage));
    }
  }

  /** Counts in `message_delta` are cumulative, so a later figure replaces an earlier one. */
  private messagesUsage(u: Obj): void {
    if (!Object.keys(u).length) return;
    this.seen = true;
    if ('cache_read_input_tokens' in u) this.cacheRead = num(u.cache_read_input_tokens);
    if ('cache_creation_input_tokens' in u) this.cacheWrite = num(u.cache_creation_input_tokens);
    if ('input_tokens' in u) this.input = num(u.input_tokens) + this.cacheRead + this.cacheWrite;
    if ('output_tokens' in u) this.output = num(u.output_tokens);
  }

  private responses(o: Obj): void {
    // A streamed event wraps the response object; a JSON body is the response object itself.
    const response = typeof o.type === 'string' && o.type.startsWith('response.') ? obj(o.response) : o;
    this.model = str(response.model) ?? this.model;
    const u = obj(response.usage);
    if (!Object.keys(u).length) return;
    this.seen = true;
    this.input = num(u.input_tokens);
    this.output = num(u.output_tokens);
    this.cacheRead = num(obj(u.input_tokens_details).cached_tokens);
  }

  private generateContent(o: Obj): void {
    this.model = str(o.modelVersion) ?? this.model;
    const u = obj(o.usageMetadata);
    if (!Object.keys(u).length) return;
    this.seen = true;
    this.input = num(u.promptTokenCount);
    this.output = num(u.candidatesTokenCount) + num(u.thoughtsTokenCount);
    this.cacheRead = num(u.cachedContentTokenCount);
  }

  reading(): UsageReading | null {
    if (!this.seen) return null;
    const { input, output, cacheRead, cacheWrite, model } = this;
    return { usage: { input, output, cacheRead, cacheWrite }, model };
  }
}

/** Substrings a `data:` line must hold to be worth parsing: most stream events carry no usage. */
const SSE_TRIGGERS: Record<UsageFormat, string[]> = {
  messages: ['"message_start"', '"message_delta"'],
  responses: ['"response.completed"', '"response.incomplete"', '"response.failed"'],
  generateContent: ['"usageMetadata"'],
};

/**
 * Server-sent events. Most events carry no usage, so the raw bytes of each run of complete lines are searched for
 * the format's trigger strings first (a native search) and only a run that holds one is decoded and split into
 * lines; only `data:` lines holding a trigger are parsed. A line ends at a `\n` byte, which never occurs inside a
 * UTF-8 sequence, so a run of complete lines always decodes cleanly.
 */
class SseTap {
  /** The bytes of the line still incomplete at the end of the last chunk. */
  private carry: Buffer | null = null;
  private readonly triggers: string[];
  private readonly triggerBytes: Buffer[];

  constructor(private readonly state: UsageState) {
    this.triggers = SSE_TRIGGERS[state.format];
    this.triggerBytes = this.triggers.map((t) => Buffer.from(t));
  }

  feed(chunk: Buffer): void {
    const bytes = this.carry ? Buffer.concat([this.carry, chunk]) : chunk;
    const end = bytes.lastIndexOf(10) + 1; // just past the last complete line
    const complete = bytes.subarray(0, end);
    if (end > 0 && this.triggerBytes.some((t) => complete.includes(t))) this.lines(complete.toString('utf8'));
    const rest = bytes.length - end;
    // A line this long is no usage event (those are small): drop it rather than grow without bound.
    this.carry = rest === 0 || rest > 1 << 20 ? null : bytes.subarray(end);
  }

  private lines(text: string): void {
    let start = 0;
    for (let nl = text.indexOf('\n'); nl !== -1; nl = text.indexOf('\n', start)) {
      if (text.startsWith('data:', start)) this.data(text.slice(start + 5, nl));
      start = nl + 1;
    }
  }

  private data(line: string): void {
    if (!this.triggers.some((t) => line.includes(t))) return;
    try {
      this.state.take(JSON.parse(line));
    } catch {
      // Not JSON: not ours to judge; the client gets the bytes as they are.
    }
  }
}

/** Usage sits at the end of a JSON body: only this much of the tail is kept to read it from. */
const TAIL_BYTES = 64 << 10;

/** Where each format keeps usage, a field that tells a usage object, and how one is fed back as a body. */
const USAGE: Record<UsageFormat, { key: string; marker: string; asBody: (usage: unknown) => unknown }> = {
  messages: { key: '"usage"', marker: 'output_tokens', asBody: (usage) => ({ type: 'message', usage }) },
  responses: { key: '"usage"', marker: 'output_tokens', asBody: (usage) => ({ usage }) },
  generateContent: {
    key: '"usageMetadata"',
    marker: 'promptTokenCount',
    asBody: (usageMetadata) => ({ usageMetadata }),
  },
};

/** The `{...}` object that starts at `open`, parsed; undefined when it is cut short or not JSON. */
function objectAt(text: string, open: number): unknown {
  let depth = 0;
  let inString = false;
  for (let i = open; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 92 /* \ */) i++;
      else if (c === 34 /* " */) inString = false;
    } else if (c === 34) inString = true;
    else if (c === 123 /* { */) depth++;
    else if (c === 125 /* } */ && --depth === 0) {
      try {
        return JSON.parse(text.slice(open, i + 1));
      } catch {
        return undefined;
      }
    }
  }
  return undefined;
}

/** `: {` right after a key (sticky: matched exactly at lastIndex). */
const COLON_OBJECT = /\s*:\s*\{/y;

/**
 * The last usage object in a JSON text: the last `"usage": {` (or `"usageMetadata": {`) whose object holds the
 * format's counts. A scan from the end, not a parse of the whole body: cheaper, and it also reads a body cut
 * short (client gone) or a Gemini stream array whose last chunk carries the totals.
 */
function lastUsage(text: string, format: UsageFormat): unknown {
  const { key, marker } = USAGE[format];
  for (let at = text.lastIndexOf(key); at !== -1; at = at > 0 ? text.lastIndexOf(key, at - 1) : -1) {
    COLON_OBJECT.lastIndex = at + key.length;
    if (!COLON_OBJECT.test(text)) continue;
    const usage = objectAt(text, COLON_OBJECT.lastIndex - 1);
    if (typeof usage === 'object' && usage !== null && marker in usage) return usage;
  }
  return undefined;
}

/** A JSON body (or Gemini's streamed JSON array): its tail is kept and read once the response is over. */
class JsonTap {
  private chunks: Buffer[] = [];
  private size = 0;

  constructor(private readonly state: UsageState) {}

  feed(chunk: Buffer): void {
    this.chunks.push(chunk);
    this.size += chunk.length;
    while (this.chunks.length > 1 && this.size - this.chunks[0].length >= TAIL_BYTES) {
      this.size -= this.chunks.shift()!.length;
    }
  }

  end(): void {
    const text = (this.chunks.length === 1 ? this.chunks[0] : Buffer.concat(this.chunks)).toString('utf8');
    this.chunks = [];
    const { format } = this.state;
    const usage = lastUsage(text, format);
    if (usage !== undefined) this.state.take(USAGE[format].asBody(usage));
  }
}

/** null: not compressed; undefined: an encoding we cannot read. */
function decompressor(
  encoding: string | undefined,
): zlib.Gunzip | zlib.Inflate | zlib.BrotliDecompress | null | undefined {
  switch (encoding?.trim().toLowerCase()) {
    case undefined:
    case '':
    case 'identity':
      return null;
    case 'gzip':
    case 'x-gzip':
      return zlib.createGunzip();
    case 'deflate':
      return zlib.createInflate();
    case 'br':
      return zlib.createBrotliDecompress();
    default:
      return undefined;
  }
}

/**
 * A tap for one response, or null when it cannot carry usage we can read (an unknown content encoding).
 * A compressed response is read through a decompressor on a copy; the client still gets the compressed bytes.
 */
export function createUsageTap(
  format: UsageFormat,
  contentType: string | undefined,
  contentEncoding: string | undefined,
): UsageTap | null {
  const state = new UsageState(format);
  const sse = contentType?.includes('text/event-stream') ?? false;
  const sink = sse ? new SseTap(state) : new JsonTap(state);
  const finishSink = () => {
    if (sink instanceof JsonTap) sink.end();
    return state.reading();
  };

  const inflate = decompressor(contentEncoding);
  if (inflate === undefined) return null;
  if (inflate === null) {
    return { write: (chunk) => sink.feed(chunk), finish: async () => finishSink() };
  }
  const stream = inflate;
  let broken = false;
  stream.on('data', (chunk: Buffer) => sink.feed(chunk));
  stream.on('error', () => {
    broken = true;
  });
  return {
    write: (chunk) => {
      if (!broken) stream.write(chunk);
    },
    finish: () =>
      new Promise((resolve) => {
        if (broken) return resolve(finishSink());
        stream.once('end', () => resolve(finishSink()));
        stream.once('error', () => resolve(finishSink()));
        // A body cut short never completes the compressed stream: flush what decoded so far.
        stream.flush(() => stream.end());
      }),
  };
}
