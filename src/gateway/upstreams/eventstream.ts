import type * as Codec from '@smithy/eventstream-codec';
import type { Message } from '@smithy/eventstream-codec';
import type * as Utf8 from '@smithy/util-utf8';
import { SseReader, sseEvent } from '../sse';

/**
 * Bedrock's InvokeModelWithResponseStream frames its answer as an AWS event stream (binary messages, each with its
 * length, headers and CRCs; application/vnd.amazon.eventstream). Each `chunk` event holds one Anthropic stream event
 * as `{"bytes": base64}`; an `exception` message ends the stream with an error. These convert it to and from the
 * server-sent events the messages format streams in, the Anthropic events inside unchanged. Messages are decoded
 * and encoded by AWS's own codec (CRCs checked and written); this only finds where each one ends.
 */

/** AWS's codec, loaded with the first Bedrock stream rather than at every start (docs/performance.md, start-up). */
let aws:
  | { codec: Codec.EventStreamCodec; toUtf8: typeof Utf8.toUtf8; fromUtf8: typeof Utf8.fromUtf8 }
  | undefined;
function awsCodec(): NonNullable<typeof aws> {
  if (!aws) {
    /* eslint-disable @typescript-eslint/no-require-imports */
    const { toUtf8, fromUtf8 } = require('@smithy/util-utf8') as typeof Utf8;
    const { EventStreamCodec } = require('@smithy/eventstream-codec') as typeof Codec;
    /* eslint-enable @typescript-eslint/no-require-imports */
    aws = { codec: new EventStreamCodec(toUtf8, fromUtf8), toUtf8, fromUtf8 };
  }
  return aws;
}

/** The Anthropic error types of Bedrock's stream exceptions, and back. */
const ERROR_OF_EXCEPTION: Record<string, string> = {
  throttlingException: 'rate_limit_error',
  serviceUnavailableException: 'overloaded_error',
  modelTimeoutException: 'timeout_error',
  validationException: 'invalid_request_error',
  internalServerException: 'api_error',
  modelStreamErrorException: 'api_error',
};
const EXCEPTION_OF_ERROR: Record<string, string> = {
  rate_limit_error: 'throttlingException',
  overloaded_error: 'serviceUnavailableException',
  timeout_error: 'modelTimeoutException',
  invalid_request_error: 'validationException',
};

/** The longest message accepted (Bedrock's are a few KiB; a 16 MiB frame is no Bedrock stream). */
const MESSAGE_LIMIT = 16 << 20;

const str = (value: string) => ({ type: 'string' as const, value });

/** Splits bytes into whole event-stream messages, as they arrive. */
class Frames {
  private held: Buffer = Buffer.alloc(0);

  push(chunk: Buffer): Message[] {
    let buf = this.held.length ? Buffer.concat([this.held, chunk]) : chunk;
    const out: Message[] = [];
    while (buf.length >= 4) {
      const length = buf.readUInt32BE(0);
      if (length < 16 || length > MESSAGE_LIMIT)
        throw new Error(`an event stream message of ${length} bytes`);
      if (buf.length < length) break;
      out.push(awsCodec().codec.decode(buf.subarray(0, length)));
      buf = buf.subarray(length);
    }
    this.held = buf.length ? Buffer.from(buf) : Buffer.alloc(0);
    return out;
  }
}

const header = (message: Message, name: string): string | undefined => {
  const h = message.headers[name];
  return h && h.type === 'string' ? h.value : undefined;
};

/** Bedrock's event stream as server-sent events, as they arrive. Throws on bytes that are no event stream. */
export function eventStreamToSse(): (chunk: Buffer) => Buffer {
  const frames = new Frames();
  return (chunk) => {
    let out = '';
    for (const message of frames.push(chunk)) {
      const kind = header(message, ':message-type');
      const body = awsCodec().toUtf8(message.body);
      if (kind === 'event') {
        if (header(message, ':event-type') !== 'chunk') continue;
        const bytes = (JSON.parse(body) as { bytes?: unknown }).bytes;
        if (typeof bytes !== 'string') continue;
        const data = Buffer.from(bytes, 'base64').toString('utf8');
        const type = (JSON.parse(data) as { type?: unknown }).type;
        // Frames without a type (keep-alives) carry no event.
        if (typeof type === 'string') out += sseEvent(type, data);
      } else {
        const name =
          header(message, ':exception-type') ?? header(message, ':error-code') ?? 'internalServerException';
        let text = body;
        try {
          const parsed = JSON.parse(body) as { message?: unknown; Message?: unknown };
          text = String(parsed.message ?? parsed.Message ?? body);
        } catch {
          // a plain-text message
        }
        const error = { type: ERROR_OF_EXCEPTION[name] ?? 'api_error', message: `Bedrock ${name}: ${text}` };
        out += sseEvent('error', JSON.stringify({ type: 'error', error }));
      }
    }
    return Buffer.from(out);
  };
}

/** One Anthropic stream event as Bedrock frames it. */
function chunkMessage(data: string): Uint8Array {
  const payload = JSON.stringify({ bytes: Buffer.from(data).toString('base64') });
  return awsCodec().codec.encode({
    headers: {
      ':event-type': str('chunk'),
      ':content-type': str('application/json'),
      ':message-type': str('event'),
    },
    body: awsCodec().fromUtf8(payload),
  });
}

function exceptionMessage(data: string): Uint8Array {
  let type = 'api_error';
  let message = data;
  try {
    const error = (JSON.parse(data) as { error?: { type?: unknown; message?: unknown } }).error;
    if (typeof error?.type === 'string') type = error.type;
    if (typeof error?.message === 'string') message = error.message;
  } catch {
    // not JSON: the text is the message
  }
  const exception = EXCEPTION_OF_ERROR[type] ?? 'internalServerException';
  return awsCodec().codec.encode({
    headers: {
      ':exception-type': str(exception),
      ':content-type': str('application/json'),
      ':message-type': str('exception'),
    },
    body: awsCodec().fromUtf8(JSON.stringify({ message })),
  });
}

/** The messages format's server-sent events framed as Bedrock's event stream, event by event. */
export function sseToEventStream(): { write(chunk: Buffer): Buffer; end(): Buffer } {
  const reader = new SseReader();
  const frame = (events: ReturnType<SseReader['push']>) => {
    const out: Uint8Array[] = [];
    for (const e of events) {
      if (!e.data) continue;
      out.push(e.event === 'error' ? exceptionMessage(e.data) : chunkMessage(e.data));
    }
    return out.length === 1
      ? Buffer.from(out[0].buffer, out[0].byteOffset, out[0].byteLength)
      : Buffer.concat(out);
  };
  return { write: (chunk) => frame(reader.push(chunk)), end: () => frame(reader.end()) };
}
