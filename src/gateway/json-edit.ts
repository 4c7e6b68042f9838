/**
 * Edits of a JSON object's top-level members that keep every other byte as sent: a routed call changes only what
 * its target's API requires (the model's name, an envelope's fields), and the rest of the body goes up byte for
 * byte, whitespace, key order, number spellings and escapes included.
 */

/** One top-level member: its key as JSON.parse reads it, and where it sits in the text. */
interface Member {
  key: string;
  /** The key's opening quote. */
  from: number;
  /** The value's first character. */
  value: number;
  /** Just past the value's last character. */
  to: number;
}

export interface JsonEdits {
  /** Members set to these values (JSON.stringify'd): replaced where present (every time a key repeats), else added. */
  set?: Readonly<Record<string, unknown>>;
  /** Members taken out (every occurrence). */
  remove?: readonly string[];
}

const isSpace = (c: number) => c === 32 || c === 10 || c === 13 || c === 9;

/** The end of the string starting at `at` (its opening quote): just past its closing quote. */
function stringEnd(text: string, at: number): number {
  for (let i = at + 1; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 92 /* \ */) i++;
    else if (c === 34 /* " */) return i + 1;
  }
  throw new SyntaxError('unterminated string');
}

/** Just past the value starting at `at`. */
function valueEnd(text: string, at: number): number {
  const c = text.charCodeAt(at);
  if (c === 34) return stringEnd(text, at);
  if (c === 123 /* { */ || c === 91 /* [ */) {
    let depth = 0;
    for (let i = at; i < text.length; i++) {
      const d = text.charCodeAt(i);
      if (d === 34) i = stringEnd(text, i) - 1;
      else if (d === 123 || d === 91) depth++;
      else if (d === 125 /* } */ || d === 93 /* ] */) {
        if (--depth === 0) return i + 1;
      }
    }
    throw new SyntaxError('unterminated value');
  }
  let i = at;
  while (i < text.length) {
    const d = text.charCodeAt(i);
    if (d === 44 || d === 125 || d === 93 || isSpace(d)) break;
    i++;
  }
  if (i === at) throw new SyntaxError('missing value');
  return i;
}

function skipSpace(text: string, at: number): number {
  while (at < text.length && isSpace(text.charCodeAt(at))) at++;
  return at;
}

/** The top-level members of a JSON object text (which JSON.parse has accepted). */
function membersOf(text: string): { open: number; members: Member[] } {
  let i = skipSpace(text, text.charCodeAt(0) === 0xfeff ? 1 : 0);
  if (text.charCodeAt(i) !== 123) throw new SyntaxError('not an object');
  const open = i;
  const members: Member[] = [];
  i = skipSpace(text, i + 1);
  if (text.charCodeAt(i) === 125) return { open, members };
  for (;;) {
    const from = i;
    const keyEnd = stringEnd(text, from);
    // Most keys hold no escape: their characters are the key.
    const raw = text.slice(from + 1, keyEnd - 1);
    const key = raw.includes('\\') ? (JSON.parse(text.slice(from, keyEnd)) as string) : raw;
    i = skipSpace(text, keyEnd);
    if (text.charCodeAt(i) !== 58 /* : */) throw new SyntaxError('expected :');
    const value = skipSpace(text, i + 1);
    const to = valueEnd(text, value);
    members.push({ key, from, value, to });
    i = skipSpace(text, to);
    const c = text.charCodeAt(i);
    if (c === 125) return { open, members };
    if (c !== 44) throw new SyntaxError('expected , or }');
    i = skipSpace(text, i + 1);
  }
}

/**
 * `text` (a JSON object) with `edits` made to its top-level members and nothing else changed. Members added go first,
 * right after the opening brace.
 */
export function editJson(text: string, edits: JsonEdits): string {
  const set = edits.set ?? {};
  const remove = new Set(edits.remove ?? []);
  const { open, members } = membersOf(text);
  const removed = members.map((m) => remove.has(m.key) && !(m.key in set));
  // Spans to cut (a removed member with the separator after it, or before it when it is the last one left).
  const cuts: [number, number][] = [];
  const replaced: [number, number, string][] = [];
  const present = new Set<string>();
  for (let i = 0; i < members.length; i++) {
    const m = members[i];
    if (removed[i]) {
      if (i + 1 < members.length) cuts.push([m.from, members[i + 1].from]);
      else {
        let k = i - 1;
        while (k >= 0 && removed[k]) k--;
        cuts.push([k >= 0 ? members[k].to : m.from, m.to]);
      }
    } else if (m.key in set) {
      present.add(m.key);
      replaced.push([m.value, m.to, JSON.stringify(set[m.key])]);
    }
  }
  const added = Object.keys(set)
    .filter((k) => !present.has(k) && set[k] !== undefined)
    .map((k) => `${JSON.stringify(k)}:${JSON.stringify(set[k])}`);
  const kept = removed.some((r) => !r);
  const changes: [number, number, string][] = [
    ...cuts.map(([a, b]): [number, number, string] => [a, b, '']),
    ...replaced,
  ].sort((a, b) => a[0] - b[0]);
  let out = text.slice(0, open + 1);
  if (added.length) out += added.join(',') + (kept ? ',' : '');
  let at = open + 1;
  for (const [from, to, replacement] of changes) {
    if (to <= at) continue; // inside a span already cut
    out += text.slice(at, Math.max(at, from)) + replacement;
    at = to;
  }
  return out + text.slice(at);
}
