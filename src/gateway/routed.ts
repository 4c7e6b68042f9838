import type { IncomingHttpHeaders } from 'node:http';
import { ApiError } from '../errors';
import { editJson } from './json-edit';
import type { Adaptation, ResponseHead } from './proxy';
import { createUsageTap, type UsageTap } from './usage';
import {
  responseTranslator,
  translateRequest,
  TranslationError,
  UnreadableAnswer,
  type CallFormat,
  type ResponseTranslator,
  type TargetFormat,
} from './translate';
import { betasOf, headerVersion, messagesIn } from './upstreams/envelopes';
import { eventStreamToSse, sseToEventStream } from './upstreams/eventstream';
import type { Envelope, ErrorShape, Format, ModelCall, UpstreamRequest } from './upstreams/types';
import type { RouteSpec, UsageFormat, VendorDefinition } from './vendor';
import { VENDOR_BY_NAME } from './vendors';

/**
 * The parts of a routed call that are about formats, not about one call's state: reading a call from the envelope a
 * client sent it in, the usage reader and price rules of a target's format, and adapting a target's answer (its
 * framing, its error shape) for the caller.
 */

type Json = Record<string, unknown>;

/** The vendor whose API a format is (its usage readers, tool prices and service tiers). */
export const VENDOR_OF_FORMAT: Record<Format, VendorDefinition> = {
  messages: VENDOR_BY_NAME.anthropic,
  chat: VENDOR_BY_NAME.openai,
  responses: VENDOR_BY_NAME.openai,
  embeddings: VENDOR_BY_NAME.openai,
  generate: VENDOR_BY_NAME.gemini,
};

/** The usage reader of a target's answer in `format` (counts report no usage, and cost nothing). */
export function usageFormatOf(format: Format, op: ModelCall['op']): UsageFormat | undefined {
  if (op === 'count') return undefined;
  const vendor = VENDOR_OF_FORMAT[format];
  const name =
    format === 'messages'
      ? 'messages'
      : format === 'generate'
        ? 'generateContent'
        : format === 'responses'
          ? 'responses'
          : 'chat';
  return vendor.usage[name];
}

/** The envelope a format arrives in from an inbound format. */
function envelopeOf(vendor: VendorDefinition): Envelope {
  return vendor.name === 'bedrock' ? 'bedrock' : vendor.name === 'vertex' ? 'vertex' : 'native';
}

const first = (value: string | string[] | undefined) => (Array.isArray(value) ? value[0] : value);

/** A model call as the client sent it: its format, envelope, stream, and the messages format's version and betas. */
export function readModelCall(
  vendor: VendorDefinition,
  spec: RouteSpec & { call: NonNullable<RouteSpec['call']> },
  text: string | undefined,
  json: Json | undefined,
  headers: IncomingHttpHeaders,
  query: string,
): ModelCall {
  if (!json || text === undefined) {
    throw new ApiError('invalid_request', 'body: must be a JSON object (the model call a route sends on)');
  }
  const { format, op, streams } = spec.call;
  const envelope = envelopeOf(vendor);
  const call: ModelCall = {
    format,
    op,
    text,
    json,
    envelope,
    stream: streams === true || (json.stream === true && format !== 'generate'),
    betas: [],
    query: query || undefined,
  };
  if (format === 'messages') {
    call.version =
      envelope === 'native'
        ? first(headers['anthropic-version'])
        : (headerVersion(first(headers['anthropic-version'])) ??
          (typeof json.anthropic_version === 'string' ? json.anthropic_version : undefined));
    call.betas = betasOf(headers['anthropic-beta'], envelope === 'bedrock' ? json.anthropic_beta : undefined);
  }
  return call;
}

/** Whether a chat stream asks for its usage (`stream_options.include_usage`). */
function asksForUsage(json: Json): boolean {
  const options = json.stream_options;
  return typeof options === 'object' && options !== null && (options as Json).include_usage === true;
}

/**
 * A chat completions stream reports usage only when asked: a routed one is asked on the client's behalf (so it is
 * metered), and the usage-only chunk is then kept from a client that did not ask. Returns the call to send.
 */
export function withStreamUsage(call: ModelCall): { call: ModelCall; added: boolean } {
  if (call.format !== 'chat' || !call.stream || asksForUsage(call.json)) return { call, added: false };
  const options =
    typeof call.json.stream_options === 'object' && call.json.stream_options !== null
      ? call.json.stream_options
      : {};
  const stream_options = { ...(options as Json), include_usage: true };
  const text = editJson(call.text, { set: { stream_options } });
  return { call: { ...call, text, json: { ...call.json, stream_options } }, added: true };
}

const CALL_FORMATS = new Set<string>(['chat', 'messages', 'generate', 'responses']);
const TARGET_FORMATS = new Set<string>(['chat', 'messages', 'generate']);

/** Whether a call in `from` reaches a model speaking `to` through translation (./translate). */
export const translates = (from: Format, to: Format): boolean =>
  from !== to && CALL_FORMATS.has(from) && TARGET_FORMATS.has(to);

/** A routed call's body in the target's format, and what the answer's translation needs. */
export interface Translated {
  call: ModelCall;
  answer: ResponseTranslator;
}

/**
 * A call translated for a target speaking `to`, and the translator of its answer back (src/gateway/translate). The
 * caller's envelope is undone first (a Bedrock or Vertex body is read as Anthropic's). Throws TranslationError for what
 * the target cannot express.
 */
export function translated(read: ModelCall, to: Format, model: string, routeName: string): Translated {
  let json = read.json;
  if (read.format === 'messages' && read.envelope !== 'native') {
    json = JSON.parse(messagesIn(read, 'native', routeName).body) as Json;
  }
  const from = read.format as CallFormat;
  const target = to as TargetFormat;
  const request = translateRequest(from, target, read.op, json, { targetModel: model, stream: read.stream });
  const text = JSON.stringify(request.body);
  return {
    call: {
      format: to,
      op: read.op,
      text,
      json: request.body,
      envelope: 'native',
      stream: request.stream,
      betas: [],
    },
    answer: responseTranslator(target, from, read.op, {
      model: routeName,
      stream: read.stream,
      includeUsage: read.format === 'chat' && asksForUsage(read.json),
      geminiSse: read.format === 'generate' && /(^|&)alt=sse(&|$)/.test(read.query ?? ''),
      memo: request.memo,
    }),
  };
}

/** A refusal of translation as the caller's 400, naming the field. */
export function untranslatable(err: TranslationError): ApiError {
  return new ApiError(
    'invalid_request',
    err.message.startsWith(err.field) ? err.message : `${err.field}: ${err.message}`,
  );
}

/** The error shapes each inbound format's clients read (the first: the one Genway writes for them). */
const SHAPES_OF: Record<string, readonly ErrorShape[]> = {
  anthropic: ['anthropic'],
  openai: ['openai'],
  gemini: ['google'],
  // Bedrock's clients are Anthropic's SDK (and Claude Code): they read Anthropic's shape and AWS's `message`.
  bedrock: ['aws', 'anthropic'],
  // Claude on Vertex answers model errors in Anthropic's shape, the platform's in Google's.
  vertex: ['google', 'anthropic'],
};

/** The message of an error body in `shape` (undefined: not one). */
function errorMessage(shape: ErrorShape, body: unknown): string | undefined {
  const o = (typeof body === 'object' && body !== null ? body : {}) as Json;
  const error = (typeof o.error === 'object' && o.error !== null ? o.error : {}) as Json;
  const text = shape === 'aws' ? (o.message ?? o.Message) : error.message;
  return typeof text === 'string' ? text : undefined;
}

/** How the caller receives a stream: server-sent events, or (a Bedrock caller) AWS's event stream. */
function callerFraming(vendor: VendorDefinition): 'sse' | 'eventstream' {
  return vendor.name === 'bedrock' ? 'eventstream' : 'sse';
}

const EVENT_STREAM = 'application/vnd.amazon.eventstream';

/**
 * How `target`'s answer reaches a caller of `vendor`: its usage read with the target format's reader (from server-sent
 * events, a Bedrock stream's decoded first), its framing made the caller's, and its error body put in the caller's
 * error shape when the caller's clients would not read the target's. Undefined: it passes as it came, untapped.
 */
export function adaptAnswer(options: {
  vendor: VendorDefinition;
  call: ModelCall;
  request: UpstreamRequest;
  shape: ErrorShape;
  status: number;
  head: ResponseHead;
  usage: UsageFormat | undefined;
  /** Hands the tap to the caller's meter (created per answer). */
  tapped(tap: UsageTap): void;
  /** Drops the usage-only chunk a chat stream was asked for on the client's behalf. */
  withoutUsageChunk?: { write(chunk: Buffer): Buffer; end(): Buffer };
  /** The answer's translation into the caller's format, when the target speaks another. */
  translator?: ResponseTranslator;
}): Adaptation | undefined {
  const { vendor, call, request, status, head, translator } = options;
  if (translator) return translatedAnswer(options, translator);
  if (status < 200 || status >= 300) {
    if (SHAPES_OF[vendor.name]?.includes(options.shape)) return undefined;
    return {
      streams: false,
      contentType: 'application/json',
      whole: (body) => {
        let parsed: unknown;
        try {
          parsed = JSON.parse(body.toString('utf8'));
        } catch {
          parsed = undefined;
        }
        const message =
          errorMessage(options.shape, parsed) ??
          (body.length ? body.toString('utf8').slice(0, 512) : `HTTP ${status}`);
        return Buffer.from(JSON.stringify(vendor.errorBody(status, message)));
      },
    };
  }
  const streamed =
    request.framing === 'eventstream'
      ? (head.contentType ?? '').includes(EVENT_STREAM)
      : (head.contentType ?? '').includes('text/event-stream');
  if (call.stream && request.framing === 'eventstream' && !streamed) {
    throw new ApiError(
      'bad_gateway',
      `Upstream answered a stream as ${head.contentType ?? 'no content type'}, not an event stream`,
    );
  }
  const deframe = streamed && request.framing === 'eventstream' ? eventStreamToSse() : undefined;
  const canonicalType = deframe ? 'text/event-stream' : head.contentType;
  const tap = options.usage ? createUsageTap(options.usage, canonicalType, head.contentEncoding) : null;
  if (tap) options.tapped(tap);
  const wanted = callerFraming(vendor);
  const framing = streamed ? request.framing : undefined;
  // Same framing both ways: the bytes pass as they came (a Bedrock stream to a Bedrock caller, decoded only for the tap).
  if (!streamed || framing === wanted) {
    if (deframe) {
      return { streams: true, deframe: (chunk) => (tap?.write(deframe(chunk)), chunk) };
    }
    if (options.withoutUsageChunk && streamed) {
      return {
        streams: true,
        tap: tap ? (chunk) => tap.write(chunk) : undefined,
        transform: options.withoutUsageChunk,
      };
    }
    return { streams: streamed, tap: tap ? (chunk) => tap.write(chunk) : undefined };
  }
  if (wanted === 'eventstream') {
    return {
      streams: true,
      contentType: EVENT_STREAM,
      tap: tap ? (chunk) => tap.write(chunk) : undefined,
      transform: sseToEventStream(),
    };
  }
  return {
    streams: true,
    contentType: 'text/event-stream; charset=utf-8',
    deframe,
    tap: tap ? (chunk) => tap.write(chunk) : undefined,
  };
}

/** Composes two transforms: the first's output goes through the second. */
function chain(
  first: { write(chunk: Buffer): Buffer; end(): Buffer },
  second: { write(chunk: Buffer): Buffer; end(): Buffer },
): { write(chunk: Buffer): Buffer; end(): Buffer } {
  return {
    write: (chunk) => second.write(first.write(chunk)),
    end: () => Buffer.concat([second.write(first.end()), second.end()]),
  };
}

/**
 * A translated answer: an error body in the caller's error shape, a JSON answer rewritten whole (a 502 when it cannot
 * be read), a stream translated event by event (deframed first, framed for a Bedrock caller last), its usage read
 * from the target's own bytes.
 */
function translatedAnswer(
  options: Parameters<typeof adaptAnswer>[0],
  translator: ResponseTranslator,
): Adaptation {
  const { vendor, request, status, head } = options;
  if (status < 200 || status >= 300) {
    return {
      streams: false,
      contentType: 'application/json',
      whole: (body) => translator.error(status, body),
    };
  }
  const type = head.contentType ?? '';
  const streamed =
    request.framing === 'eventstream' ? type.includes(EVENT_STREAM) : type.includes('text/event-stream');
  const deframe = streamed && request.framing === 'eventstream' ? eventStreamToSse() : undefined;
  const tap = options.usage
    ? createUsageTap(options.usage, deframe ? 'text/event-stream' : head.contentType, head.contentEncoding)
    : null;
  if (tap) options.tapped(tap);
  const tapWrite = tap ? (chunk: Buffer) => tap.write(chunk) : undefined;
  if (!streamed) {
    if (options.call.stream) {
      throw new ApiError(
        'bad_gateway',
        `Upstream answered a stream as ${head.contentType ?? 'no content type'}, not an event stream`,
      );
    }
    return {
      streams: false,
      contentType: 'application/json',
      tap: tapWrite,
      whole: (body) => {
        try {
          return Buffer.from(JSON.stringify(translator.json(body)));
        } catch (err) {
          if (err instanceof UnreadableAnswer)
            throw new ApiError('bad_gateway', `Upstream answer unreadable: ${err.message}`);
          throw err;
        }
      },
    };
  }
  const events = translator.stream();
  const framing = callerFraming(vendor);
  const geminiArray =
    options.call.format === 'generate' && !/(^|&)alt=sse(&|$)/.test(options.call.query ?? '');
  return {
    streams: true,
    contentType:
      framing === 'eventstream'
        ? EVENT_STREAM
        : geminiArray
          ? 'application/json'
          : 'text/event-stream; charset=utf-8',
    deframe,
    tap: tapWrite,
    transform: framing === 'eventstream' ? chain(events, sseToEventStream()) : events,
  };
}
