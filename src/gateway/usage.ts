import zlib from 'node:zlib';
import { JsonRecords } from './json-records';
import { Marker } from './marker';
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
  /** Whether the stream's answer is out and only its usage is to come (the format's `ending`). */
  ending(): boolean;
}

type Obj = Record<string, unknown>;

interface Sink {
  feed(chunk: Buffer): void;
  end(): UsageReading[];
  /** See UsageTap.ending. */
  ending?(): boolean;
}

const single = (acc: UsageAccumulator): UsageReading[] =>
  acc.usage ? [{ model: acc.model, usage: { ...acc.usage }, requests: 1 }] : [];

/** A line too long to hold, read as it passes (see JsonRecords). */
interface LongLine {
  feed(bytes: Buffer): void;
  end(): void;
}

interface FormatMarkers {
  triggers: Marker[];
  ends: Marker[];
  resumes: Marker[];
}

/** Each format's markers, made once (on its first stream) for every stream after it. */
const MARKERS = new WeakMap<UsageFormat, FormatMarkers>();

function markersOf(format: UsageFormat): FormatMarkers {
  let found = MARKERS.get(format);
  if (!found) {
    const marker = (m: string) => new Marker(m, format.frame);
    found = {
      triggers: format.triggers.map(marker),
      ends: (format.ending ?? []).map(marker),
      resumes: (format.resuming ?? []).map(marker),
    };
    MARKERS.set(format, found);
  }
  return found;
}

/** Lines are held whole up to this length; a longer one is read as it passes, or skipped. */
const LINE_LIMIT = 64 << 10;

/**
 * Splits bytes into complete lines and hands over only runs that hold a trigger: most events carry no usage, so
 * the raw bytes are searched first (a native search) and only a run that holds a trigger is decoded. A line ends
 * at a `\n` byte, which never occurs inside a UTF-8 sequence, so a run of complete lines always decodes cleanly.
 * A line that grows past LINE_LIMIT across chunks is not held: it goes to `onLong` as it passes (holding it would
 * copy it again with each chunk), which reads it or returns null to skip it.
 */
class LineSplitter {
  /** The bytes of the line still incomplete at the end of the last chunk. */
  private carry: Buffer | null = null;
  /** The long line being passed on (null: skipped to its end); undefined when none is. */
  private long: LongLine | null | undefined;
  private readonly markers: Marker[];

  constructor(
    format: UsageFormat,
    private readonly onLine: (line: string) => void,
    private readonly onLong?: (head: Buffer) => LongLine | null,
  ) {
    this.markers = markersOf(format).triggers;
  }

  feed(chunk: Buffer): void {
    let next = chunk;
    if (this.long !== undefined) {
      const nl = next.indexOf(10);
      this.long?.feed(nl === -1 ? next : next.subarray(0, nl));
      if (nl === -1) return;
      this.long?.end();
      this.long = undefined;
      next = next.subarray(nl + 1);
    }
    if (this.carry) {
      // The line carried over ends in this chunk (or goes on): only it is put together, not the whole chunk.
      const nl = next.indexOf(10);
      const line = Buffer.concat([this.carry, nl === -1 ? next : next.subarray(0, nl + 1)]);
      this.carry = null;
      if (nl === -1) {
        if (line.length > LINE_LIMIT) this.long = this.onLong?.(line) ?? null;
        else this.carry = line;
        return;
      }
      this.complete(line);
      next = next.subarray(nl + 1);
    }
    const end = next.lastIndexOf(10) + 1; // just past the last complete line
    if (end > 0) this.complete(next.subarray(0, end));
    this.hold(next.subarray(end));
  }

  /** Complete lines: decoded and handed over when they hold a trigger. */
  private complete(bytes: Buffer): void {
    if (this.markers.some((m) => m.indexIn(bytes) !== -1)) this.lines(bytes.toString('utf8'));
  }

  /** The start of a line the next chunk goes on with: copied (the chunk is not held), or passed on when too long. */
  private hold(rest: Buffer): void {
    if (rest.length > LINE_LIMIT) this.long = this.onLong?.(rest) ?? null;
    else if (rest.length) this.carry = Buffer.from(rest);
  }

  /** The last line when the body ends without a newline. */
  flush(): void {
    if (this.long !== undefined) this.long?.end();
    this.long = undefined;
    if (this.carry && this.markers.some((m) => m.indexIn(this.carry!) !== -1)) {
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

const DATA = Buffer.from('data:');
/** Longer than any format's marker: what of a chunk's end is kept to find one cut between two chunks. */
const EDGE = 32;

/**
 * Whether a stream's answer is out: one of the format's `ending` markers has passed and no `resuming` one after it
 * (a content block or output item that starts after one stopped). Read from the raw bytes as they pass: the last
 * marker of either kind in a chunk, or across the seam with the one before, decides.
 */
export class AnswerEnd {
  private readonly ends: Marker[];
  private readonly resumes: Marker[];
  /** The stream's last bytes (up to EDGE), copied: a chunk is not held past its turn. */
  private readonly edge = Buffer.alloc(EDGE);
  private edgeLength = 0;
  /** Where a seam is put together: the last chunk's edge and the next chunk's first bytes (no allocation a chunk). */
  private readonly seamBytes = Buffer.alloc(2 * EDGE);
  out = false;

  private constructor(format: UsageFormat) {
    ({ ends: this.ends, resumes: this.resumes } = markersOf(format));
  }

  /** A reader for the format's markers, or undefined when it has none. */
  static of(format: UsageFormat | undefined): AnswerEnd | undefined {
    return format?.ending?.length ? new AnswerEnd(format) : undefined;
  }

  feed(chunk: Buffer): void {
    const shift = this.edgeLength;
    let seam: Buffer | null = null;
    if (shift > 0) {
      this.edge.copy(this.seamBytes, 0, 0, shift);
      seam = this.seamBytes.subarray(0, shift + chunk.copy(this.seamBytes, shift, 0, EDGE));
    }
    const end = AnswerEnd.last(this.ends, chunk, seam, shift);
    const resume = AnswerEnd.last(this.resumes, chunk, seam, shift);
    if (end !== -Infinity || resume !== -Infinity) this.out = end > resume;
    // The stream's last bytes, however small its pieces.
    if (chunk.length >= EDGE) {
      chunk.copy(this.edge, 0, chunk.length - EDGE);
      this.edgeLength = EDGE;
    } else {
      const keep = Math.min(shift, EDGE - chunk.length);
      this.edge.copyWithin(0, shift - keep, shift);
      chunk.copy(this.edge, keep);
      this.edgeLength = keep + chunk.length;
    }
  }

  /** Where the last of `markers` starts in `chunk` (negative: in the seam, before it), -Infinity if none is there. */
  private static last(markers: Marker[], chunk: Buffer, seam: Buffer | null, shift: number): number {
    let at = -Infinity;
    for (const m of markers) {
      const i = m.lastIndexIn(chunk);
      if (i !== -1) at = Math.max(at, i);
      else if (seam) {
        const j = m.lastIndexIn(seam);
        if (j !== -1) at = Math.max(at, j - shift);
      }
    }
    return at;
  }

  /** A new answer starts (the next response on a WebSocket). */
  reset(): void {
    this.out = false;
    this.edgeLength = 0;
  }
}

/** A record reader for one JSON value per line (`[]`: each top-level value is a record), when the format says. */
const lineReader = (format: UsageFormat, onRecord: (record: Obj) => void) =>
  format.reads ? new JsonRecords({ at: [[]], keep: format.reads }, onRecord) : undefined;

/** Server-sent events: each `data:` line holding a trigger is parsed and handed to the format. */
class SseSink implements Sink {
  private readonly acc = new UsageAccumulator();
  private readonly splitter: LineSplitter;
  private readonly answer: AnswerEnd | undefined;

  constructor(private readonly format: UsageFormat) {
    const reader = lineReader(format, (event) => format.event(event, this.acc));
    this.answer = AnswerEnd.of(format);
    this.splitter = new LineSplitter(
      format,
      (line) => this.line(line),
      // An event too long to hold (a streamed image, base64 and all) is read in passing.
      reader &&
        ((head) => {
          if (!head.subarray(0, DATA.length).equals(DATA)) return null;
          reader.reset();
          reader.feed(head.subarray(DATA.length));
          return { feed: (bytes) => reader.feed(bytes), end: () => reader.flush() };
        }),
    );
  }

  private line(line: string): void {
    if (!line.startsWith('data:') || !this.format.triggers.some((t) => line.includes(t))) return;
    const event = parsed(line.slice(5));
    if (event) this.format.event(event, this.acc);
  }

  feed(chunk: Buffer): void {
    this.splitter.feed(chunk);
    this.answer?.feed(chunk);
  }

  ending(): boolean {
    return this.answer?.out ?? false;
  }

  end(): UsageReading[] {
    this.splitter.flush();
    return single(this.acc);
  }
}

/** Batch results read so far: summed per model. */
class Results {
  private readonly byModel = new Map<string | undefined, UsageReading>();
  /** How many results carried usage. */
  count = 0;

  constructor(private readonly format: UsageFormat) {}

  add(result: Obj): void {
    const acc = new UsageAccumulator();
    this.format.event(result, acc);
    if (!acc.usage) return;
    this.count++;
    const reading = this.byModel.get(acc.model);
    if (!reading) {
      this.byModel.set(acc.model, { model: acc.model, usage: { ...acc.usage }, requests: 1 });
      return;
    }
    reading.requests++;
    addUsage(reading.usage, acc.usage);
  }

  readings(): UsageReading[] {
    return [...this.byModel.values()];
  }
}

/** Adds one result's counts into a running sum (batch results of one model). */
function addUsage(sum: TokenUsage, more: TokenUsage): void {
  sum.input += more.input;
  sum.output += more.output;
  sum.cacheRead += more.cacheRead;
  sum.cacheWrite += more.cacheWrite;
  sum.reasoning += more.reasoning;
  if (more.cacheWrite1h) sum.cacheWrite1h = (sum.cacheWrite1h ?? 0) + more.cacheWrite1h;
  if (more.tools) {
    const tools = (sum.tools = { ...sum.tools });
    for (const tool in more.tools) tools[tool] = (tools[tool] ?? 0) + more.tools[tool];
  }
}

/** JSON lines (batch results): each line holding a trigger is one result; readings are summed per model. */
class LinesSink implements Sink {
  private readonly results: Results;
  private readonly splitter: LineSplitter;

  constructor(format: UsageFormat) {
    const results = (this.results = new Results(format));
    const reader = lineReader(format, (result) => results.add(result));
    this.splitter = new LineSplitter(
      format,
      (line) => {
        const result = parsed(line);
        if (result) results.add(result);
      },
      // A result too long to hold (logprobs) is read in passing; one cut short counts for nothing.
      reader &&
        ((head) => {
          reader.reset();
          reader.feed(head);
          return { feed: (bytes) => reader.feed(bytes), end: () => reader.reset() };
        }),
    );
  }

  feed(chunk: Buffer): void {
    this.splitter.feed(chunk);
  }

  end(): UsageReading[] {
    this.splitter.flush();
    return this.results.readings();
  }
}

/**
 * One JSON document of results (Gemini's inline batch results), read in passing: each object at one of the format's
 * `results` paths is a result. Of several paths, the one with the most results counts: a vendor that repeats its
 * results in two places is billed for them once.
 */
class ResultsSink implements Sink {
  private readonly found: Results[];
  private readonly reader: JsonRecords;

  constructor(format: UsageFormat) {
    const paths = format.results ?? [];
    const found = (this.found = paths.map(() => new Results(format)));
    this.reader = new JsonRecords({ at: paths, keep: format.reads ?? [] }, (result, at) =>
      found[at].add(result),
    );
  }

  feed(chunk: Buffer): void {
    this.reader.feed(chunk);
  }

  end(): UsageReading[] {
    const most = this.found.reduce((a, b) => (b.count > a.count ? b : a), this.found[0]);
    return most ? most.readings() : [];
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

/** The last string value under `key` (quoted) in a JSON body's bytes, when short: a name, not content. */
function lastString(bytes: Buffer, key: string): string | undefined {
  const at = bytes.lastIndexOf(bytesOf(key));
  if (at === -1) return undefined;
  const match = /^\s*:\s*"([A-Za-z0-9_.-]{1,64})"/.exec(
    bytes.toString('latin1', at + key.length, at + key.length + 80),
  );
  return match?.[1];
}

/**
 * A format's `whole` reading of a JSON body: two readers in passing over the same bytes, one for the top-level
 * object's values, one for each element at the items' path (JsonRecords holds one record at a time), so the body is
 * never held.
 */
class WholeReader {
  private top: Obj = {};
  private readonly items: Obj[] = [];
  private readonly topReader: JsonRecords;
  private readonly itemReader: JsonRecords;

  constructor(private readonly spec: NonNullable<UsageFormat['whole']>) {
    // Several (a stream's array of chunks): a later one's values replace an earlier one's (running totals).
    this.topReader = new JsonRecords(spec.top, (record) => {
      this.top = { ...this.top, ...record };
    });
    // Kept items are small (their type): a body of millions of them is one no vendor sends, and is capped.
    this.itemReader = new JsonRecords(spec.items, (record) => {
      if (this.items.length < MAX_ITEMS) this.items.push(record);
    });
  }

  feed(chunk: Buffer): void {
    this.topReader.feed(chunk);
    this.itemReader.feed(chunk);
  }

  end(): UsageAccumulator {
    this.topReader.flush();
    this.itemReader.flush();
    const acc = new UsageAccumulator();
    this.spec.read(this.top, this.items, acc);
    return acc;
  }
}

/** The most items a `whole` reading keeps. */
const MAX_ITEMS = 10_000;

/** A JSON body (or Gemini's streamed JSON array): its tail is kept and read once the response is over. */
class JsonSink implements Sink {
  private chunks: Buffer[] = [];
  private size = 0;
  /**
   * What left the tail window, read as it left (bodies longer than the window only): the usage of the top-level
   * object, or of each element of a top-level array (Gemini's streamed JSON), the last one holding the marker. A
   * back end that writes usage ahead of more than the window (vLLM's `prompt_logprobs` after `usage`, as long as the
   * prompt) is metered too.
   */
  private front: JsonRecords | undefined;
  private found: Obj | undefined;
  private readonly whole: WholeReader | undefined;

  constructor(private readonly format: UsageFormat) {
    if (format.whole) this.whole = new WholeReader(format.whole);
  }

  feed(chunk: Buffer): void {
    this.chunks.push(chunk);
    this.size += chunk.length;
    this.whole?.feed(chunk);
    while (this.chunks.length > 1 && this.size - this.chunks[0].length >= TAIL_BYTES) {
      const gone = this.chunks.shift()!;
      this.size -= gone.length;
      this.frontReader()?.feed(gone);
    }
  }

  private frontReader(): JsonRecords | undefined {
    const body = this.format.body;
    if (!body || this.front) return this.front;
    const key = body.key.slice(1, -1); // the format's key is quoted
    this.front = new JsonRecords({ at: [[], ['*']], keep: [[key]] }, (record) => {
      const usage = record[key];
      if (typeof usage === 'object' && usage !== null && body.marker in usage) this.found = usage as Obj;
    });
    return this.front;
  }

  end(): UsageReading[] {
    const body = this.format.body;
    if (!body) return [];
    const bytes = this.chunks.length === 1 ? this.chunks[0] : Buffer.concat(this.chunks);
    this.chunks = [];
    const whole = this.whole?.end();
    if (whole?.usage) return single(whole);
    let usage = lastUsage(bytes, body.key, body.marker);
    if (!usage && this.front) {
      // None in the tail: the last one ahead of it, read through to the end (it may run on into the tail).
      this.front.feed(bytes);
      this.front.flush(); // a body cut short: its top-level object never closed
      usage = this.found;
    }
    if (!usage) return [];
    const acc = new UsageAccumulator();
    body.read(usage, acc);
    const tier = body.tier && lastString(bytes, body.tier);
    if (tier) acc.set({ tier });
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
    : format.results
      ? new ResultsSink(format)
      : format.lines
        ? new LinesSink(format)
        : contentType?.includes('text/event-stream')
          ? new SseSink(format)
          : new JsonSink(format);

  const inflate = decompressor(contentEncoding);
  if (inflate === undefined) return null;
  const ending = () => sink.ending?.() ?? false;
  if (inflate === null) return { write: (chunk) => sink.feed(chunk), finish: () => sink.end(), ending };
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
    ending,
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
