/**
 * What a mock upstream answers, decided from what a request asks, the same way for the three formats: each format's
 * module reads its request into an `Ask`, and writes the `Script` as its own JSON answer or stream.
 *
 * Markers in the last user text drive it, as `[sandbox:fail=...]` drives the task sandbox:
 * - `[mock:fail=<status>]`: an error in the vendor's own shape and status;
 * - `[mock:tool]` / `[mock:tool=<name>]`: call the first (or the named) offered tool, arguments shaped by its schema,
 *   or `[mock:args=<a JSON object>]` (a coding CLI's tool given a real file or command);
 * - `[mock:parallel]`: call two tools at once (the first two offered, or the first one twice);
 * - `[mock:cached=<n>]`: report n of the input tokens as read from a cache;
 * - `[mock:stream-fail]`: a stream that breaks off with an error event after its first text;
 * - `[mock:slow=<ms>]`: a stream whose frames are that many milliseconds apart.
 * A required or named tool choice calls a tool without a marker; a turn whose last user message holds tool results
 * answers with their text.
 */

export type Json = Record<string, unknown>;

export interface Ask {
  /** The text of the last user turn (tool results apart). */
  lastUserText: string;
  /** Texts of the tool results in the last user turn. */
  toolResults: string[];
  tools: { name: string; schema: Json }[];
  toolChoice?: 'none' | 'required' | { name: string };
  /** A JSON Schema the answer must follow, or 'json' for JSON without one. */
  schema?: Json | 'json';
  thinking: boolean;
  maxTokens?: number;
  stop?: string[];
  images: number;
  documents: number;
  /** The request body's length, for a plausible input token count. */
  size: number;
}

export interface Script {
  text: string;
  thinking?: string;
  calls: { name: string; args: Json }[];
  stop: 'end' | 'max_tokens' | 'tool_use' | 'stop_sequence';
  stopSequence?: string;
  usage: { input: number; output: number; cacheRead: number; cacheWrite: number; reasoning: number };
  /** Break the stream off with an error after its first text. */
  streamFail?: boolean;
  /** Milliseconds between a stream's frames. */
  frameDelayMs?: number;
}

/** A request the vendor answers with an error (its shape is the format's). */
export class MockError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly type?: string,
  ) {
    super(message);
  }
}

export const THINKING = 'The user wants a short answer; I will give one.';

const words = (s: string): number => (s.trim() ? s.trim().split(/\s+/).length : 0);

export function scriptFor(ask: Ask, format: string): Script {
  const text = ask.lastUserText;
  const fail = /\[mock:fail=(\d{3})\]/.exec(text);
  if (fail) throw new MockError(Number(fail[1]), `mock failure ${fail[1]} requested by the prompt`);
  const cached = Number(/\[mock:cached=(\d+)\]/.exec(text)?.[1] ?? 0);
  const slow = /\[mock:slow=(\d+)\]/.exec(text);
  const calls: Script['calls'] = [];
  let answer = '';
  const named = /\[mock:tool=([\w.-]+)\]/.exec(text)?.[1];
  const wantsTool =
    ask.toolResults.length === 0 &&
    ask.tools.length > 0 &&
    ask.toolChoice !== 'none' &&
    (text.includes('[mock:tool') || text.includes('[mock:parallel]') || ask.toolChoice !== undefined);
  if (ask.toolResults.length) {
    answer = `Tool results: ${ask.toolResults.join(' | ')}`;
  } else if (wantsTool) {
    const choice = typeof ask.toolChoice === 'object' ? ask.toolChoice.name : named;
    const first = ask.tools.find((t) => t.name === choice) ?? ask.tools[0]!;
    const args = /\[mock:args=(\{.*?\})\]/.exec(text)?.[1];
    calls.push({
      name: first.name,
      args: args ? (JSON.parse(args) as Json) : (shaped(first.schema) as Json),
    });
    if (text.includes('[mock:parallel]')) {
      const second = ask.tools.find((t) => t !== first) ?? first;
      calls.push({ name: second.name, args: shaped(second.schema) as Json });
    }
  } else if (ask.schema) {
    answer = JSON.stringify(ask.schema === 'json' ? { ok: true } : shaped(ask.schema));
  } else {
    answer = `Hello from the ${format} mock. You said: ${text
      .replace(/\[mock:[^\]]*\]/g, '')
      .trim()
      .slice(0, 60)}`;
    if (ask.images) answer += ` I see ${ask.images} image${ask.images > 1 ? 's' : ''}.`;
    if (ask.documents) answer += ` I read ${ask.documents} document${ask.documents > 1 ? 's' : ''}.`;
  }
  let stop: Script['stop'] = calls.length ? 'tool_use' : 'end';
  let stopSequence: string | undefined;
  for (const s of ask.stop ?? []) {
    const at = answer.indexOf(s);
    if (s && at !== -1) {
      answer = answer.slice(0, at);
      stop = 'stop_sequence';
      stopSequence = s;
      break;
    }
  }
  if (ask.maxTokens !== undefined && words(answer) > ask.maxTokens) {
    answer = answer.split(/\s+/).slice(0, ask.maxTokens).join(' ');
    stop = 'max_tokens';
  }
  const thinking = ask.thinking ? THINKING : undefined;
  const reasoning = thinking ? words(thinking) : 0;
  const input = Math.max(1, Math.round(ask.size / 4));
  return {
    text: answer,
    ...(thinking ? { thinking } : {}),
    calls,
    stop,
    ...(stopSequence ? { stopSequence } : {}),
    usage: {
      input,
      cacheRead: Math.min(cached, input),
      cacheWrite: 0,
      output: words(answer) + reasoning + calls.length * 5,
      reasoning,
    },
    ...(text.includes('[mock:stream-fail]') ? { streamFail: true } : {}),
    ...(slow ? { frameDelayMs: Number(slow[1]) } : {}),
  };
}

/** A value shaped by a JSON Schema (or Gemini's upper-case variant). */
export function shaped(schema: Json | undefined): unknown {
  if (!schema) return {};
  if (Array.isArray(schema.enum)) return schema.enum[0];
  const type = String(Array.isArray(schema.type) ? schema.type[0] : (schema.type ?? 'object')).toLowerCase();
  switch (type) {
    case 'object': {
      const out: Json = {};
      for (const [k, v] of Object.entries((schema.properties as Record<string, Json>) ?? {}))
        out[k] = shaped(v);
      return out;
    }
    case 'array':
      return [shaped(schema.items as Json)];
    case 'integer':
    case 'number':
      return 42;
    case 'boolean':
      return true;
    default:
      return 'ok';
  }
}

/** Text cut into streaming pieces of a few characters (a UTF-8 character never split: that is the wire's job). */
export function pieces(text: string, size = 7): string[] {
  const out: string[] = [];
  const chars = [...text];
  for (let i = 0; i < chars.length; i += size) out.push(chars.slice(i, i + size).join(''));
  return out;
}
