/**
 * A byte string searched for in streamed bytes by its rarest byte. Node's Buffer search skips ahead with memchr on a
 * needle's first byte, so a marker such as `"message_` that starts with a quote stops at every quote of a JSON
 * stream (every few bytes) and costs a pass of about 30 µs per 64 KiB; searched from its rarest byte on, the same
 * marker costs about 1 µs. Rarity is read once per format (on its first stream), off what its streams are mostly: the
 * frame it sends by the thousand (a text delta, a chunk) and the prose inside (the format's `frame`), or, for a
 * format that does not say, JSON in general. Searches go forward only: Node searches backward without the memchr skip.
 */

const PROSE =
  'Streams carry prose more than anything else: sentences, code, lists and numbers, written a few words at a time. ';

/** A frame of a format that names none: JSON in server-sent events. */
const ANY_FRAME = 'data: {"id":"x","type":"x","index":0,"delta":{"text":"x"},"usage":null}\n\n';

/**
 * Byte counts of a stream of the format: its frame weighed as it streams, about eight bytes of a delta's frame to
 * one of the text it carries.
 */
function frequency(frame: string, times: number): Uint32Array {
  const counts = new Uint32Array(256);
  for (const byte of Buffer.from(frame.repeat(times) + PROSE)) counts[byte]++;
  return counts;
}

const ANY_FORMAT = frequency(ANY_FRAME, 8);

export class Marker {
  readonly bytes: Buffer;
  /** The needle searched: the marker from its rarest byte on. */
  private readonly tail: Buffer;
  /** Where the needle starts in the marker (the bytes before it are compared where the needle is found). */
  private readonly anchor: number;

  /** `frame`: what the format streams by the thousand (one text delta), when known. */
  constructor(text: string, frame?: string) {
    this.bytes = Buffer.from(text);
    const counts = frame === undefined ? ANY_FORMAT : frequency(frame, 8);
    let anchor = 0;
    for (let i = 1; i < this.bytes.length; i++)
      if (counts[this.bytes[i]] < counts[this.bytes[anchor]]) anchor = i;
    this.anchor = anchor;
    this.tail = this.bytes.subarray(anchor);
  }

  private startsAt(buf: Buffer, at: number): boolean {
    for (let k = 0; k < this.anchor; k++) if (buf[at + k] !== this.bytes[k]) return false;
    return true;
  }

  /** Where the marker first starts in `buf` at or after `from`, or -1. */
  indexIn(buf: Buffer, from = 0): number {
    const anchor = this.anchor;
    for (let i = buf.indexOf(this.tail, from + anchor); i !== -1; i = buf.indexOf(this.tail, i + 1))
      if (this.startsAt(buf, i - anchor)) return i - anchor;
    return -1;
  }

  /** Where the marker last starts in `buf`, or -1 (found going forward: markers are few, and forward is fast). */
  lastIndexIn(buf: Buffer): number {
    let last = -1;
    for (let at = this.indexIn(buf); at !== -1; at = this.indexIn(buf, at + 1)) last = at;
    return last;
  }
}
