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

type Transform = { write(chunk: Buffer): Buffer; end(): Buffer };

/** Composes two transforms: the first's output goes through the second. */
function chain(first: Transform | undefined, second: Transform | undefined): Transform | undefined {
  if (!first || !second) return first ?? second;
  return {
    write: (chunk) => second.write(first.write(chunk)),
    end: () => Buffer.concat([second.write(first.end()), second.end()]),
  };
}

/** An error body in `shape` as the caller's error body, the upstream's message and the status kept. */
function reshapedError(vendor: VendorDefinition, shape: ErrorShape, status: number, body: Buffer): Buffer {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body.toString('utf8'));
  } catch {
    parsed = undefined;
  }
  const message =
    errorMessage(shape, parsed) ?? (body.length ? body.toString('utf8').slice(0, 512) : `HTTP ${status}`);
  return Buffer.from(JSON.stringify(vendor.errorBody(status, message)));
}

/**
 * How `target`'s answer reaches a caller of `vendor`:
 * - an error: in the caller's error shape (translated, or reshaped when the caller's clients would not read the
 *   upstream's), its status kept;
 * - a JSON answer: translated whole when the target speaks another format (a 502 when it cannot be read), else as is;
 * - a stream: deframed (AWS's event stream into server-sent events), read for usage, translated event by event, and
 *   framed for a Bedrock caller; a Bedrock stream to a Bedrock caller passes as it came, decoded only for the tap.
 * The usage tap always reads the target's own (deframed) bytes with its format's reader. Undefined: as it came, untapped.
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
  withoutUsageChunk?: Transform;
  /** The answer's translation into the caller's format, when the target speaks another. */
  translator?: ResponseTranslator;
}): Adaptation | undefined {
  const { vendor, call, request, status, head, translator } = options;
  if (status < 200 || status >= 300) {
    if (translator)
      return {
        streams: false,
        contentType: 'application/json',
        whole: (body) => translator.error(status, body),
      };
    if (SHAPES_OF[vendor.name]?.includes(options.shape)) return undefined;
    return {
      streams: false,
      contentType: 'application/json',
      whole: (body) => reshapedError(vendor, options.shape, status, body),
    };
  }
  const type = head.contentType ?? '';
  const streamed =
    request.framing === 'eventstream' ? type.includes(EVENT_STREAM) : type.includes('text/event-stream');
  if (call.stream && !streamed && (request.framing === 'eventstream' || translator)) {
    throw new ApiError(
      'bad_gateway',
      `Upstream answered a stream as ${head.contentType ?? 'no content type'}, not an event stream`,
    );
  }
  const deframe = streamed && request.framing === 'eventstream' ? eventStreamToSse() : undefined;
  const usageTap = options.usage
    ? createUsageTap(options.usage, deframe ? 'text/event-stream' : head.contentType, head.contentEncoding)
    : null;
  if (usageTap) options.tapped(usageTap);
  const tap = usageTap ? (chunk: Buffer) => usageTap.write(chunk) : undefined;

  if (!streamed) {
    if (!translator) return tap && { streams: false, tap };
    return {
      streams: false,
      contentType: 'application/json',
      tap,
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
  const wanted = callerFraming(vendor);
  if (!translator && request.framing === wanted) {
    if (deframe) return { streams: true, deframe: (chunk) => (usageTap?.write(deframe(chunk)), chunk) };
    return { streams: true, tap, transform: options.withoutUsageChunk };
  }
  // From here the bytes after deframe are the target's server-sent events, made the caller's.
  const geminiArray = call.format === 'generate' && !/(^|&)alt=sse(&|$)/.test(call.query ?? '');
  return {
    streams: true,
    contentType:
      wanted === 'eventstream'
        ? EVENT_STREAM
        : translator && geminiArray
          ? 'application/json'
          : 'text/event-stream; charset=utf-8',
    deframe,
    tap,
    transform: chain(
      translator?.stream() ?? options.withoutUsageChunk,
      wanted === 'eventstream' ? sseToEventStream() : undefined,
    ),
  };
}
