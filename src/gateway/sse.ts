import { StringDecoder } from 'node:string_decoder';

/** One server-sent event: its `event:` name (if any) and its `data:` lines joined. */
export interface SseEvent {
  event: string | undefined;
  data: string;
}

/** The longest event held while its end has not come: past it the stream is not one Genway can read. */
const EVENT_LIMIT = 16 << 20;

/**
 * Splits a server-sent-event stream into events as its bytes arrive (split anywhere, even inside a UTF-8 character),
 * holding only the event not yet ended. Comments and `id:`/`retry:` fields are skipped.
 */
export class SseReader {
  private readonly decoder = new StringDecoder('utf8');
  private carry = '';

  /** The events `chunk` ends. */
  push(chunk: Buffer): SseEvent[] {
    const text = this.carry + this.decoder.write(chunk);
    const out: SseEvent[] = [];
    let start = 0;
    for (;;) {
      const end = blankLine(text, start);
      if (end === -1) break;
      const event = parse(text.slice(start, end));
      if (event) out.push(event);
      start = nextStart(text, end);
    }
    this.carry = text.slice(start);
    if (this.carry.length > EVENT_LIMIT)
      throw new Error(`an event stream event longer than ${EVENT_LIMIT} bytes`);
    return out;
  }

  /** The last event, when the stream ended without the blank line after it. */
  end(): SseEvent[] {
    const rest = this.carry + this.decoder.end();
    this.carry = '';
    const event = rest.trim() ? parse(rest) : undefined;
    return event ? [event] : [];
  }
}

/** Where the event starting at `from` ends (its last line's end), or -1 when its blank line has not come. */
function blankLine(text: string, from: number): number {
  for (let i = text.indexOf('\n', from); i !== -1; i = text.indexOf('\n', i + 1)) {
    const next = text.charCodeAt(i + 1);
    if (next === 10) return i;
    if (next === 13 && text.charCodeAt(i + 2) === 10) return i;
  }
  return -1;
}

/** Past the blank line after the event ending at `end`. */
function nextStart(text: string, end: number): number {
  let i = end + 1;
  if (text.charCodeAt(i) === 13) i++;
  return i + 1;
}

function parse(block: string): SseEvent | undefined {
  let event: string | undefined;
  let data: string | undefined;
  for (const raw of block.split('\n')) {
    const line = raw.endsWith('\r') ? raw.slice(0, -1) : raw;
    if (line === '' || line.startsWith(':')) continue;
    const colon = line.indexOf(':');
    const field = colon === -1 ? line : line.slice(0, colon);
    let value = colon === -1 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    if (field === 'event') event = value;
    else if (field === 'data') data = data === undefined ? value : `${data}\n${value}`;
  }
  return data === undefined && event === undefined ? undefined : { event, data: data ?? '' };
}

/** One event as the messages format frames it: `event: {type}` then its data on one line. */
export function sseEvent(event: string | undefined, data: string): string {
  return `${event !== undefined ? `event: ${event}\n` : ''}data: ${data.includes('\n') ? data.split('\n').join('\ndata: ') : data}\n\n`;
}
