/** A key path into JSON: object keys, and `*` for every element of an array. */
export type JsonPath = readonly string[];

type Obj = Record<string, unknown>;

/** A value kept longer than this is no count or name Genway reads: it is dropped, not held. */
const VALUE_LIMIT = 16 << 10;
/** A key longer than this is no key of a path. */
const KEY_LIMIT = 1 << 10;

/** One step of the paths: where a value sits decides whether it is a record, kept, looked into, or skipped. */
interface PathNode {
  keys?: Map<string, PathNode>;
  any?: PathNode;
  /** A record starts at an object here: the index of its `at` path. */
  record?: number;
  /** A value here is kept, at this path within its record. */
  keep?: JsonPath;
}

/** An open array or object on a path: off-path ones are only counted (`depth` of a skipped value). */
interface Frame {
  node: PathNode;
  obj: boolean;
  state: number;
  /** Where the value after the current key sits (objects). */
  next: PathNode | undefined;
}

// Frame states.
const EXPECT_KEY = 0;
const AFTER_KEY = 1;
const EXPECT_VALUE = 2;
const AFTER_VALUE = 3;
const EXPECT_FIRST = 4; // an array's first element, or its `]`

// What the bytes at hand are.
const TOKENS = 0; // between the values of an on-path container
const KEY = 1; // an object's key
const VALUE = 2; // a value skipped, or kept

const isSpace = (c: number) => c === 32 || c === 10 || c === 13 || c === 9;

function build(at: readonly JsonPath[], keep: readonly JsonPath[]): PathNode {
  const root: PathNode = {};
  const step = (node: PathNode, name: string): PathNode => {
    if (name === '*') return (node.any ??= {});
    const keys = (node.keys ??= new Map());
    let child = keys.get(name);
    if (!child) keys.set(name, (child = {}));
    return child;
  };
  at.forEach((path, index) => {
    const record = path.reduce(step, root);
    record.record = index;
    for (const k of keep) k.reduce(step, record).keep = k;
  });
  return root;
}

/** Sets `value` at `path` in `target`, making the objects on the way. */
function place(target: Obj, path: JsonPath, value: unknown): void {
  let at = target;
  for (let i = 0; i < path.length - 1; i++) {
    const next = at[path[i]];
    at = (typeof next === 'object' && next !== null ? next : (at[path[i]] = {})) as Obj;
  }
  at[path[path.length - 1]] = value;
}

/**
 * Reads chosen values out of a stream of JSON in passing, in constant memory whatever its length: each object at one
 * of the `at` paths (`[]`: each top-level value, as in JSON lines; `*`: each element of an array) is a record, handed
 * over when it closes as a sparse copy holding only its values at the `keep` paths (each up to 16 KiB). Everything
 * else is skipped as it passes, a string by a native search for its closing quote. So a batch result with a long
 * logprobs list, or a streamed image's completed event (megabytes of base64), is read for its usage without being
 * held. It never throws: malformed bytes yield fewer records, never an error or a growing buffer. Keys match as
 * written or decoded (`"us\u0061ge"` is `usage`).
 */
export class JsonRecords {
  private readonly root: PathNode;
  private frames: Frame[] = [];
  private mode = TOKENS;
  /** The byte after the last one read was escaped (a string's backslash ended the last chunk). */
  private escaped = false;
  // The key being read.
  private keyParts: Buffer[] | null = null;
  private keyLength = 0;
  // The value being skipped or kept.
  private depth = 0;
  private inString = false;
  private scalar = false;
  private started = false;
  private leaf: JsonPath | undefined;
  private held: Buffer[] | null = null;
  private heldSize = 0;
  // The record open, and how many frames deep it started.
  private record: Obj | null = null;
  private recordAt = 0;
  private recordDepth = 0;

  constructor(
    spec: { at: readonly JsonPath[]; keep: readonly JsonPath[] },
    private readonly onRecord: (record: Obj, at: number) => void,
  ) {
    this.root = build(spec.at, spec.keep);
  }

  feed(bytes: Buffer): void {
    let i = 0;
    while (i < bytes.length) {
      if (this.mode === KEY) i = this.readKey(bytes, i);
      else if (this.mode === VALUE) i = this.readValue(bytes, i);
      else i = this.token(bytes, i);
    }
  }

  /** Hands over the record still open, as read so far (a body cut short): its values that were whole. */
  flush(): void {
    const record = this.record;
    this.reset();
    if (record) this.onRecord(record, this.recordAt);
  }

  /** Starts over (a new line of JSON lines after one cut short): nothing read so far is handed over. */
  reset(): void {
    this.frames = [];
    this.mode = TOKENS;
    this.escaped = false;
    this.keyParts = null;
    this.endValue();
    this.record = null;
  }

  /** From `from`, inside a string: the index of its closing quote, or -1 when it runs past the chunk. */
  private closingQuote(b: Buffer, from: number): number {
    let start = from;
    for (;;) {
      const q = b.indexOf(34, start);
      const end = q === -1 ? b.length : q;
      let k = end - 1;
      while (k >= start && b[k] === 92) k--;
      let run = end - 1 - k;
      if (k < start && this.escaped) run++; // the run goes back to the escape the last chunk ended in
      if (q === -1) {
        this.escaped = run % 2 === 1;
        return -1;
      }
      this.escaped = false;
      if (run % 2 === 0) return q;
      start = q + 1; // an escaped quote: the string goes on
    }
  }

  private token(b: Buffer, from: number): number {
    for (let i = from; i < b.length; i++) {
      const c = b[i];
      if (isSpace(c)) continue;
      const f = this.frames.at(-1);
      if (!f) {
        // Between top-level values: a stray delimiter (malformed bytes) starts none.
        if (c === 44 || c === 58 || c === 93 || c === 125) continue;
        return this.startValue(b, i, this.root);
      }
      switch (f.state) {
        case EXPECT_KEY:
          if (c === 34) {
            this.mode = KEY;
            this.keyParts = f.node.keys ? [] : null; // no key of a path here: none is read
            this.keyLength = 0;
            return i + 1;
          }
          if (c === 125) this.pop();
          break;
        case AFTER_KEY:
          if (c === 58) f.state = EXPECT_VALUE;
          break;
        case EXPECT_FIRST:
          if (c === 93) {
            this.pop();
            break;
          }
          f.state = AFTER_VALUE;
          return this.startValue(b, i, f.node.any);
        case EXPECT_VALUE:
          f.state = AFTER_VALUE;
          return this.startValue(b, i, f.obj ? f.next : f.node.any);
        default: // AFTER_VALUE
          if (c === 44) f.state = f.obj ? EXPECT_KEY : EXPECT_VALUE;
          else if (c === 125 || c === 93) this.pop();
      }
    }
    return b.length;
  }

  private pop(): void {
    this.frames.pop();
    if (this.record && this.frames.length < this.recordDepth) {
      const record = this.record;
      this.record = null;
      this.onRecord(record, this.recordAt);
    }
  }

  /** A value begins at `i`, sitting at `node` (undefined: off every path). */
  private startValue(b: Buffer, i: number, node: PathNode | undefined): number {
    const c = b[i];
    if (node && !node.keep && (c === 123 || c === 91)) {
      const obj = c === 123;
      this.frames.push({ node, obj, state: obj ? EXPECT_KEY : EXPECT_FIRST, next: undefined });
      if (obj && node.record !== undefined && !this.record) {
        this.record = {};
        this.recordAt = node.record;
        this.recordDepth = this.frames.length;
      }
      return i + 1;
    }
    this.mode = VALUE;
    this.leaf = this.record ? node?.keep : undefined;
    this.held = this.leaf ? [] : null;
    this.heldSize = 0;
    this.started = false;
    return i;
  }

  private readKey(b: Buffer, from: number): number {
    const q = this.closingQuote(b, from);
    const end = q === -1 ? b.length : q;
    if (this.keyParts) {
      this.keyLength += end - from;
      if (this.keyLength > KEY_LIMIT) this.keyParts = null;
      else this.keyParts.push(b.subarray(from, end));
    }
    if (q === -1) return b.length;
    const f = this.frames.at(-1)!;
    f.state = AFTER_KEY;
    f.next = undefined;
    if (this.keyParts) {
      let key = Buffer.concat(this.keyParts).toString('utf8');
      if (key.includes('\\')) key = decoded(key) ?? '';
      f.next = f.node.keys!.get(key);
    }
    this.keyParts = null;
    this.mode = TOKENS;
    return q + 1;
  }

  private readValue(b: Buffer, from: number): number {
    let i = from;
    if (!this.started) {
      this.started = true;
      const c = b[i];
      if (c === 34) this.inString = true;
      else if (c === 123 || c === 91) this.depth = 1;
      else this.scalar = true;
      if (!this.scalar) i++;
    }
    while (i < b.length) {
      if (this.inString) {
        const q = this.closingQuote(b, i);
        if (q === -1) break;
        this.inString = false;
        i = q + 1;
        if (this.depth === 0) return this.valueDone(b, from, i);
        continue;
      }
      const c = b[i];
      if (this.scalar) {
        if (c === 44 || c === 125 || c === 93 || isSpace(c)) return this.valueDone(b, from, i);
      } else if (c === 34) this.inString = true;
      else if (c === 123 || c === 91) this.depth++;
      else if ((c === 125 || c === 93) && --this.depth === 0) return this.valueDone(b, from, i + 1);
      i++;
    }
    this.hold(b.subarray(from));
    return b.length;
  }

  private hold(part: Buffer): void {
    if (!this.held) return;
    this.heldSize += part.length;
    if (this.heldSize > VALUE_LIMIT) this.held = null;
    else this.held.push(part);
  }

  private valueDone(b: Buffer, from: number, end: number): number {
    this.hold(b.subarray(from, end));
    if (this.leaf && this.held && this.record) {
      const value = parsed(Buffer.concat(this.held).toString('utf8'));
      if (value !== undefined) place(this.record, this.leaf, value);
    }
    this.endValue();
    this.mode = TOKENS;
    return end;
  }

  private endValue(): void {
    this.depth = 0;
    this.inString = false;
    this.scalar = false;
    this.started = false;
    this.leaf = undefined;
    this.held = null;
    this.heldSize = 0;
  }
}

function parsed(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** A key's text with its escapes decoded; undefined when they are not JSON's. */
function decoded(raw: string): string | undefined {
  const value = parsed(`"${raw}"`);
  return typeof value === 'string' ? value : undefined;
}
