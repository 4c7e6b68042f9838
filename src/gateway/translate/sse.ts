/** Server-sent events, read incrementally from bytes split anywhere, and written one event at a time. */

export interface SseEvent {
  /** The `event:` field, when the stream names its events (the messages format does). */
  event?: string;
  data: string;
}

const LF = 10;
const CR = 13;

/**
 * Reads SSE from chunks split at any byte (inside a UTF-8 character too): a line is decoded once, when its end has
 * arrived, and an event is handed on at the blank line that ends it. Lines end in LF or CRLF.
 */
export class SseReader {
  private held: Buffer[] = [];
  private event: string | undefined;
  private data: string[] = [];

  push(chunk: Buffer): SseEvent[] {
    const out: SseEvent[] = [];
    let start = 0;
    let end = chunk.indexOf(LF);
    while (end !== -1) {
      let line: Buffer = chunk.subarray(start, end);
      if (this.held.length) {
        line = Buffer.concat([...this.held, line]);
        this.held = [];
      }
      this.line(line, out);
      start = end + 1;
      end = chunk.indexOf(LF, start);
    }
    if (start < chunk.length) this.held.push(chunk.subarray(start));
    return out;
  }

  /** The stream ended: an event left without its blank line still counts. */
  end(): SseEvent[] {
    const out: SseEvent[] = [];
    if (this.held.length) this.line(Buffer.concat(this.held), out);
    this.held = [];
    this.dispatch(out);
    return out;
  }

  private line(bytes: Buffer, out: SseEvent[]): void {
    let length = bytes.length;
    if (length && bytes[length - 1] === CR) length--;
    if (length === 0) return this.dispatch(out);
    const text = bytes.toString('utf8', 0, length);
    if (text.charCodeAt(0) === 58 /* ':' comment */) return;
    const colon = text.indexOf(':');
    const field = colon === -1 ? text : text.slice(0, colon);
    let value = colon === -1 ? '' : text.slice(colon + 1);
    if (value.charCodeAt(0) === 32) value = value.slice(1);
    if (field === 'data') this.data.push(value);
    else if (field === 'event') this.event = value;
  }

  private dispatch(out: SseEvent[]): void {
    if (this.data.length) {
      out.push({ event: this.event, data: this.data.length === 1 ? this.data[0]! : this.data.join('\n') });
    }
    this.data = [];
    this.event = undefined;
  }
}

/** One SSE event with a JSON body (and a name, when the format names its events). */
export const sse = (event: string | undefined, data: unknown): string =>
  `${event ? `event: ${event}\n` : ''}data: ${JSON.stringify(data)}\n\n`;

/** Parses an event's JSON, or undefined when it is not JSON. */
export function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
