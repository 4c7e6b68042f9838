import type { Answer, Count, Event } from './ir';
import type { Obj } from './shared';
import type { SseEvent } from './sse';

/** How each format's answers are read (target formats) and written (caller formats), JSON and streams. */

/** A 2xx answer of the target that cannot be read as its format's answer: the gateway answers it as a 502. */
export class UnreadableAnswer extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UnreadableAnswer';
  }
}

/** Reads one target format's answers into the intermediate form. */
export interface AnswerReader {
  json(body: Obj): Answer;
  count(body: Obj): Count;
  /** A fresh reader for one stream's events (it keeps the stream's state). */
  stream(): EventReader;
}

export interface EventReader {
  event(e: SseEvent): Event[];
}

/** What a caller-format writer needs to know about the call. */
export interface WriteContext {
  /** The model name the client called (a route's name): shown where the format names the model. */
  model: string;
  /** A chat caller asked `stream_options.include_usage`. */
  includeUsage: boolean;
  /** A Gemini caller streams with `alt=sse` (else: one JSON array, element by element). */
  geminiSse: boolean;
  /** What the request reader kept for the answer (a Responses caller's request fields, echoed in its answer). */
  memo: Obj;
}

/** Writes the intermediate form as one caller format's answers. */
export interface AnswerWriter {
  json(answer: Answer, ctx: WriteContext): unknown;
  count(count: Count): unknown;
  stream(ctx: WriteContext): EventWriter;
}

/** One stream's writer: each event's bytes as it comes (the text of zero or more of the caller's events). */
export interface EventWriter {
  write(e: Event): string;
  /** The target's stream ended: what closes the caller's (or says it ended early). */
  end(): string;
}

/** The message a stream that ended before its answer was complete carries to the caller. */
export const CUT_SHORT = 'the upstream stream ended before the answer was complete';
