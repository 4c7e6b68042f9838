import zlib from 'node:zlib';
import type { TokenUsage } from './store';
import { UsageAccumulator, type UsageFormat } from './vendor';

/**
 * Token usage read from a response as it passes, from a copy: the bytes the client receives are never touched.
 * The vendor formats (./vendors/*.ts) say where usage sits; this file reads event streams, JSON bodies and JSON
 * lines for them, compressed or not.
 */
export interface UsageReading {
  /** The model the vendor says answered, when the response names it. */
  model?: string;
  usage: TokenUsage;
  /** Calls this reading covers: 1, or the results of a batch for this model. */
  requests: number;
}

export interface UsageTap {
  write(chunk: Buffer): void;
  /**
   * What was seen: complete at the end of the response, partial when the client went away first. At once for a
   * plain body; a compressed one resolves once its decompressor has flushed.
   */
  finish(): UsageReading[] | Promise<UsageReading[]>;
}

type Obj = Record<string, unknown>;

interface Sink {
  feed(chunk: Buffer): void;
  end(): UsageReading[];
}

const single = (acc: UsageAccumulator): UsageReading[] =>
  acc.usage ? [{ model: acc.model, usage: { ...acc.usage }, requests: 1 }] : [];

/**
 * Splits bytes into complete lines and hands over only runs that hold a trigger: most events carry no usage, so
 * the raw bytes are searched first (a native search) and only a run that holds a trigger is decoded. A line ends
 * at a `\n` byte, which never occurs inside a UTF-8 sequence, so a run of complete lines always decodes cleanly.
 */
class LineSplitter {
  /** The bytes of the line still incomplete at the end of the last chunk. */
  private carry: Buffer | null = null;
  private readonly triggerBytes: Buffer[];

  constructor(
    triggers: readonly string[],
    private readonly onLine: (line: string) => void,
  ) {
    this.triggerBytes = triggers.map((t) => Buffer.from(t));
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

  /** The last line when the body ends without a newline. */
  flush(): void {
    if (this.carry && this.triggerBytes.some((t) => this.carry!.includes(t))) {
      this.lines(`${this.carry.toString('utf8')}\n`);
    }
    this.carry = null;
  }

  private lines(text: string): void {
    let start = 0;
    for (let nl = text.indexOf('\n'); nl !== -1; nl = text.indexOf('\n', start)) {
      this.onLine(text.slice(start, nl));
      start = nl + 1;
    }
  }
}

function parsed(text: string): Obj | undefined {
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === 'object' && value !== null ? (value as Obj) : undefined;
  } catch {
    return undefined; // not JSON: not ours to judge; the client gets the bytes as they are
  }
}

/** Server-sent events: each `data:` line holding a trigger is parsed and handed to the format. */
class SseSink implements Sink {
  private readonly acc = new UsageAccumulator();
  private readonly splitter: LineSplitter;

  constructor(private readonly format: UsageFormat) {
    this.splitter = new LineSplitter(format.triggers, (line) => this.line(line));
  }

  private line(line: string): void {
    if (!line.startsWith('data:') || !this.format.triggers.some((t) => line.includes(t))) return;
    const event = parsed(line.slice(5));
    if (event) this.format.event(event, this.acc);
  }

  feed(chunk: Buffer): void {
    this.splitter.feed(chunk);
  }

  end(): UsageReading[] {
    this.splitter.flush();
    return single(this.acc);
  }
}

/** JSON lines (batch results): each line holding a trigger is one result; readings are summed per model. */
class LinesSink implements Sink {
  private readonly byModel = new Map<string, UsageReading>();
  private readonly splitter: LineSplitter;

  constructor(private readonly format: UsageFormat) {
    this.splitter = new LineSplitter(format.triggers, (line) => this.line(line));
  }

  private line(line: string): void {
    const result = parsed(line);
    if (!result) return;
    const acc = new UsageAccumulator();
    this.format.event(result, acc);
    if (!acc.usage) return;
    const model = acc.model ?? 'unknown';
    const reading = this.byModel.get(model);
    if (!reading) {
      this.byModel.set(model, { model, usage: { ...acc.usage }, requests: 1 });
      return;
    }
    reading.requests++;
    for (const k in acc.usage) reading.usage[k as keyof TokenUsage] += acc.usage[k as keyof TokenUsage];
  }

  feed(chunk: Buffer): void {
    this.splitter.feed(chunk);
  }

  end(): UsageReading[] {
    this.splitter.flush();
    return [...this.byModel.values()];
  }
}

/** Usage sits at the end of a JSON body: only this much of the tail is kept to read it from. */
const TAIL_BYTES = 64 << 10;

/**
 * Where the `{...}` object whose `{` is the byte at `open` ends (the index after its `}`), when it is a value of the
 * body's top-level object (or of an element of a top-level array, Gemini's streamed JSON): what follows it closes at
 * most that object, then that array. -1 when it is cut short, or nested deeper: a usage object inside content a model
 * or a client wrote (a tool call's arguments, a tool's schema) is never the bill. It reads UTF-8 bytes: the ones it
 * looks for (quote, backslash, braces, brackets) never occur inside a multi-byte character.
 */
function topLevelObjectEnd(bytes: Buffer, open: number): number {
  let depth = 0;
  let inString = false;
  let end = -1;
  for (let i = open; i < bytes.length; i++) {
    const c = bytes[i];
    if (inString) {
      if (c === 92 /* \ */) i++;
      else if (c === 34 /* " */) inString = false;
    } else if (c === 34) inString = true;
    else if (c === 123 /* { */ || c === 91 /* [ */) depth++;
    else if (c === 125 /* } */ || c === 93 /* ] */) {
      depth--;
      if (depth === 0 && end === -1) end = i + 1;
      else if (depth === -2) {
        // Past the object that holds it: only the end of a top-level array may follow.
        if (c !== 93) return -1;
        for (let j = i + 1; j < bytes.length; j++) if (!isSpace(bytes[j])) return -1;
        return end;
      }
    }
  }
  return end;
}

/** JSON's whitespace: space, line feed, carriage return, tab. */
const isSpace = (c: number) => c === 32 || c === 10 || c === 13 || c === 9;

/** Where the `{` of `: {` right after a key at `from` is, or -1. */
function objectAfterKey(bytes: Buffer, from: number): number {
  let i = from;
  while (i < bytes.length && isSpace(bytes[i])) i++;
  if (bytes[i] !== 58 /* : */) return -1;
  i++;
  while (i < bytes.length && isSpace(bytes[i])) i++;
  return bytes[i] === 123 /* { */ ? i : -1;
}

/** Each format's key, encoded once: a search for a string encodes it on every call. */
const keyBytes = new Map<string, Buffer>();

function bytesOf(key: string): Buffer {
  let bytes = keyBytes.get(key);
  if (!bytes) keyBytes.set(key, (bytes = Buffer.from(key)));
  return bytes;
}

/**
 * The last usage object in a JSON body: the last `"usage": {` (or the format's key) whose object holds the
 * format's marker. A byte search from the end, not a parse of the whole body: cheaper (only the usage object is
 * decoded), and it also reads a body cut short (client gone) or a Gemini stream array whose last chunk carries the
 * totals.
 */
function lastUsage(bytes: Buffer, key: string, marker: string): Obj | undefined {
  const needle = bytesOf(key);
  for (let at = bytes.lastIndexOf(needle); at !== -1; at = at > 0 ? bytes.lastIndexOf(needle, at - 1) : -1) {
    const open = objectAfterKey(bytes, at + needle.length);
    if (open === -1) continue;
    const end = topLevelObjectEnd(bytes, open);
    if (end === -1) continue;
    const usage = parsed(bytes.toString('utf8', open, end));
    if (typeof usage === 'object' && usage !== null && marker in usage) return usage as Obj;
  }
  return undefined;
}

/** The most of a usage object the front reader holds: far more than any vendor's. */
const USAGE_OBJECT_LIMIT = 16 << 10;

/**
 * The last top-level usage object of a JSON body, read front to back as bytes leave JsonSink's tail window: a back
 * end that writes usage ahead of more than the window (vLLM's `prompt_logprobs` after `usage`, a client can make it
 * as long as its prompt) is metered too. Only bodies longer than the window pay for it, per byte that leaves. The
 * key is matched where a top-level key sits: depth 1 of a top-level object, or of an element of a top-level array
 * (Gemini's streamed JSON); one nested deeper, or inside a string, is content. Like the tail search, it matches the
 * key as the vendors write it (no escapes in it).
 */
class FrontUsage {
  private readonly key: Buffer;
  private depth = 0;
  private inString = false;
  /** The last byte was a backslash inside a string (an escape may straddle two chunks). */
  private escaping = false;
  /** The depth a usage key sits at; 0 until the body's first byte, -1 when the body is no object or array. */
  private keyDepth = 0;
  /** Bytes of the key matched by the string being read (-1: it is not the key). */
  private matched = -1;
  /** After the key: waiting for its `:`, then for the `{` of its object, or inside that object. */
  private step: 'scan' | 'colon' | 'open' | 'object' = 'scan';
  /** The usage object's bytes so far; null once it is longer than any usage object. */
  private held: Buffer[] | null = [];
  private heldSize = 0;
  found: Obj | undefined;

  constructor(
    key: string,
    private readonly marker: string,
  ) {
    this.key = Buffer.from(key.slice(1, -1)); // the format's key is quoted
  }

  feed(bytes: Buffer): void {
    let from = this.step === 'object' ? 0 : -1;
    for (let i = 0; i < bytes.length; i++) {
      const c = bytes[i];
      if (this.inString) {
        if (this.escaping) this.escaping = false;
        else if (c === 92 /* \ */) {
          this.escaping = true;
          this.matched = -1;
        } else if (c === 34 /* " */) {
          this.inString = false;
          if (this.matched === this.key.length) this.step = 'colon';
        } else if (this.matched !== -1) {
          const m = this.matched;
          this.matched = m < this.key.length && c === this.key[m] ? m + 1 : -1;
        }
        continue;
      }
      if (isSpace(c)) continue;
      if (this.keyDepth === 0) this.keyDepth = c === 123 /* { */ ? 1 : c === 91 /* [ */ ? 2 : -1;
      if (this.step === 'colon') {
        this.step = c === 58 /* : */ ? 'open' : 'scan';
        if (c === 58) continue;
      } else if (this.step === 'open') {
        this.step = c === 123 ? 'object' : 'scan';
        if (c === 123) from = i;
      }
      if (c === 34) {
        this.inString = true;
        this.matched = this.step === 'scan' && this.depth === this.keyDepth ? 0 : -1;
      } else if (c === 123 || c === 91) this.depth++;
      else if (c === 125 /* } */ || c === 93 /* ] */) {
        this.depth--;
        if (this.step === 'object' && this.depth === this.keyDepth) {
          this.hold(bytes.subarray(from, i + 1));
          this.close();
          from = -1;
        }
      }
    }
    if (this.step === 'object') this.hold(bytes.subarray(from));
  }

  private hold(part: Buffer): void {
    if (!this.held) return;
    this.heldSize += part.length;
    if (this.heldSize > USAGE_OBJECT_LIMIT) this.held = null;
    else this.held.push(part);
  }

  /** The usage object is whole: it is the latest when it holds the marker. */
  private close(): void {
    const text = this.held ? Buffer.concat(this.held).toString('utf8') : '';
    this.held = [];
    this.heldSize = 0;
    this.step = 'scan';
    const usage = parsed(text);
    if (typeof usage === 'object' && usage !== null && this.marker in usage) this.found = usage as Obj;
  }
}

/** A JSON body (or Gemini's streamed JSON array): its tail is kept and read once the response is over. */
class JsonSink implements Sink {
  private chunks: Buffer[] = [];
  private size = 0;
  /** What left the tail window, read as it left (bodies longer than the window only). */
  private front: FrontUsage | undefined;

  constructor(private readonly format: UsageFormat) {}

  feed(chunk: Buffer): void {
    this.chunks.push(chunk);
    this.size += chunk.length;
    while (this.chunks.length > 1 && this.size - this.chunks[0].length >= TAIL_BYTES) {
      const gone = this.chunks.shift()!;
      this.size -= gone.length;
      const body = this.format.body;
      if (body) (this.front ??= new FrontUsage(body.key, body.marker)).feed(gone);
    }
  }

  end(): UsageReading[] {
    const body = this.format.body;
    if (!body) return [];
    const bytes = this.chunks.length === 1 ? this.chunks[0] : Buffer.concat(this.chunks);
    this.chunks = [];
    let usage = lastUsage(bytes, body.key, body.marker);
    if (!usage && this.front) {
      // None in the tail: the last one ahead of it, read through to the end (it may run on into the tail).
      this.front.feed(bytes);
      usage = this.front.found;
    }
    if (!usage) return [];
    const acc = new UsageAccumulator();
    body.read(usage, acc);
    return single(acc);
  }
}

/** A response with no usage to read (Gemini embeddings): the call is counted with no tokens. */
const COUNT_ONLY: Sink = {
  feed: () => undefined,
  end: () => [{ usage: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, reasoning: 0 }, requests: 1 }],
};

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
 * A tap for one successful response, or null when it cannot carry usage we can read (an unknown content encoding).
 * A compressed response is read through a decompressor on a copy; the client still gets the compressed bytes.
 */
export function createUsageTap(
  format: UsageFormat,
  contentType: string | undefined,
  contentEncoding: string | undefined,
): UsageTap | null {
  const sink: Sink = format.countOnly
    ? COUNT_ONLY
    : format.lines
      ? new LinesSink(format)
      : contentType?.includes('text/event-stream')
        ? new SseSink(format)
        : new JsonSink(format);

  const inflate = decompressor(contentEncoding);
  if (inflate === undefined) return null;
  if (inflate === null) return { write: (chunk) => sink.feed(chunk), finish: () => sink.end() };
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
        if (broken) return resolve(sink.end());
        stream.once('end', () => resolve(sink.end()));
        stream.once('error', () => resolve(sink.end()));
        // A body cut short never completes the compressed stream: flush what decoded so far.
        stream.flush(() => stream.end());
      }),
  };
}
