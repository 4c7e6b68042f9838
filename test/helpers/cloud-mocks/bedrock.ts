import { EventStreamCodec } from '@smithy/eventstream-codec';
import { fromUtf8, toUtf8 } from '@smithy/util-utf8';
import { claudeAnswer, mockPromptTokens, readMarkers, type Markers } from './answers';
import {
  header,
  jsonBody,
  LoopbackService,
  sendJson,
  writeInPieces,
  type CloudReceived,
  type MockReply,
  type Verdict,
} from './loopback';
import { verifySigV4, type AwsCredentials } from './sigv4';

export interface MockBedrockOptions {
  /** The region requests must be signed for (default us-east-1). */
  region?: string;
  /** AWS credentials accepted in SigV4 signatures. */
  credentials?: AwsCredentials | AwsCredentials[];
  /** Bedrock API keys accepted as `Authorization: Bearer <key>`. Neither option given: one default of each. */
  apiKey?: string | string[];
  /** Known model ids (or ARNs); another gets 400 "The provided model identifier is invalid." Default: any. */
  models?: string[];
  /**
   * `anthropic_version` values accepted in bodies. Default `bedrock-2023-05-31` (AWS's documented value) and
   * `2026-10-21`, which @anthropic-ai/bedrock-sdk 1.x copies into the body from the base SDK's anthropic-version header.
   */
  anthropicVersions?: string[];
  /** Largest clock difference accepted in x-amz-date, in minutes (default 15). */
  maxSkewMinutes?: number;
}

export const DEFAULT_AWS_CREDENTIALS: AwsCredentials = {
  accessKeyId: 'AKIAMOCKBEDROCK00001',
  secretAccessKey: 'mockBedrockSecretKey/0000000000000000000',
  sessionToken: 'IQoJb3JpZ2luX2VjEMockSessionToken',
};
export const DEFAULT_BEDROCK_API_KEY = 'ABSKQmVkcm9ja0FQSUtleS1tb2NrOm1vY2stYmVkcm9jay1hcGkta2V5';

/** Bedrock's latencies in its headers and invocation metrics (fixed, in ms). */
export const BEDROCK_LATENCY = { invocationLatency: 321, firstByteLatency: 123 };

const CORAL = 'http://internal.amazon.com/coral/com.amazon.coral.service/';
const BEDROCK = 'http://internal.amazon.com/coral/com.amazon.bedrock/';

/** Bedrock's errors by status: x-amzn-ErrorType and message, as InvokeModel answers them. */
const BEDROCK_ERRORS: Record<number, [string, string]> = {
  400: ['ValidationException', 'Malformed input request, please reformat your input and try again.'],
  403: ['AccessDeniedException', "You don't have access to the model with the specified model ID."],
  404: ['ResourceNotFoundException', 'Requested resource not found.'],
  408: ['ModelTimeoutException', 'Model has timed out in processing the request. Try your request again.'],
  424: ['ModelErrorException', 'The model returned an error. Try your request again.'],
  429: ['ThrottlingException', 'Too many requests, please wait before trying again.'],
  500: [
    'InternalServerException',
    'The system encountered an unexpected error during processing. Try your request again.',
  ],
  503: ['ServiceUnavailableException', 'Bedrock is unable to process your request.'],
};

/** Mid-stream exceptions: `:exception-type` and the frame's message. */
const STREAM_EXCEPTIONS: Record<string, Record<string, unknown>> = {
  throttlingException: { message: 'Too many requests, please wait before trying again.' },
  modelStreamErrorException: {
    message: 'The model produced an error while streaming.',
    originalStatusCode: 500,
    originalMessage: 'Internal server error',
  },
  internalServerException: {
    message: 'The system encountered an unexpected error during processing. Try your request again.',
  },
  serviceUnavailableException: { message: 'Bedrock is unable to process your request.' },
  validationException: { message: 'Malformed input request, please reformat your input and try again.' },
  modelTimeoutException: {
    message: 'Model has timed out in processing the request. Try your request again.',
  },
};

const PADDING = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789';
const codec = new EventStreamCodec(toUtf8, fromUtf8);

/** One event-stream frame as Bedrock sends a chunk: the event's JSON in base64 under `bytes`, padded by `p`. */
export function chunkFrame(event: unknown, n: number): Uint8Array {
  const bytes = Buffer.from(JSON.stringify(event)).toString('base64');
  const p = PADDING.slice(0, 1 + ((n * 7) % PADDING.length));
  return codec.encode({
    headers: {
      ':event-type': { type: 'string', value: 'chunk' },
      ':content-type': { type: 'string', value: 'application/json' },
      ':message-type': { type: 'string', value: 'event' },
    },
    body: fromUtf8(JSON.stringify({ bytes, p })),
  });
}

/** An exception frame as Bedrock ends a failing stream with. */
export function exceptionFrame(exceptionType: string, body: unknown): Uint8Array {
  return codec.encode({
    headers: {
      ':exception-type': { type: 'string', value: exceptionType },
      ':content-type': { type: 'string', value: 'application/json' },
      ':message-type': { type: 'string', value: 'exception' },
    },
    body: fromUtf8(JSON.stringify(body)),
  });
}

type Operation = 'invoke' | 'invoke-with-response-stream' | 'count-tokens';
const OPERATIONS = new Set<string>(['invoke', 'invoke-with-response-stream', 'count-tokens']);

/**
 * AWS Bedrock runtime (Anthropic models through InvokeModel) on loopback: every request's SigV4 signature
 * recomputed with AWS's signer, or a Bedrock API key; answers and event streams framed as Bedrock frames them.
 */
export class MockBedrock extends LoopbackService {
  readonly region: string;
  readonly credentialList: readonly AwsCredentials[];
  readonly apiKeys: readonly string[];
  private readonly models?: ReadonlySet<string>;
  private readonly anthropicVersions: ReadonlySet<string>;
  private readonly maxSkewMs: number;
  private requests = 0;

  constructor(options: MockBedrockOptions = {}) {
    super();
    const none = options.credentials === undefined && options.apiKey === undefined;
    this.region = options.region ?? 'us-east-1';
    this.credentialList = none ? [DEFAULT_AWS_CREDENTIALS] : [options.credentials ?? []].flat();
    this.apiKeys = none ? [DEFAULT_BEDROCK_API_KEY] : [options.apiKey ?? []].flat();
    this.models = options.models && new Set(options.models);
    this.anthropicVersions = new Set(options.anthropicVersions ?? ['bedrock-2023-05-31', '2026-10-21']);
    this.maxSkewMs = (options.maxSkewMinutes ?? 15) * 60_000;
  }

  /** The first credentials it accepts. */
  get credentials(): AwsCredentials {
    const first = this.credentialList[0];
    if (!first) throw new Error('this MockBedrock accepts no AWS credentials');
    return first;
  }

  /** The first Bedrock API key it accepts. */
  get apiKey(): string {
    const first = this.apiKeys[0];
    if (!first) throw new Error('this MockBedrock accepts no API key');
    return first;
  }

  protected async authenticate(req: CloudReceived): Promise<Verdict> {
    const authorization = header(req, 'authorization') ?? '';
    if (/^Bearer /i.test(authorization)) {
      if (this.apiKeys.includes(authorization.slice(7).trim())) return { ok: true, auth: 'apiKey' };
      // What Bedrock answers an unknown or expired API key.
      const message = 'Authentication failed: Please make sure your API Key is valid.';
      return {
        ok: false,
        auth: 'apiKey',
        reason: message,
        reject: (res) =>
          sendJson(
            res,
            403,
            { Message: message },
            { 'x-amzn-errortype': `AccessDeniedException:${CORAL}`, ...this.ids() },
          ),
      };
    }
    const failure = await verifySigV4(req, {
      service: 'bedrock',
      region: this.region,
      credentials: this.credentialList,
      maxSkewMs: this.maxSkewMs,
    });
    if (!failure) return { ok: true, auth: 'sigv4' };
    return {
      ok: false,
      auth: authorization ? 'sigv4' : null,
      reason: failure.message,
      reject: (res) =>
        sendJson(
          res,
          403,
          { message: failure.message },
          { 'x-amzn-errortype': `${failure.errorType}:${CORAL}`, ...this.ids() },
        ),
    };
  }

  protected async answer(req: CloudReceived, res: MockReply): Promise<void> {
    const route = req.path.match(/^\/model\/([^/]+)\/([a-z-]+)$/);
    if (req.method !== 'POST' || !route || !OPERATIONS.has(route[2])) {
      return sendJson(
        res,
        404,
        { message: null },
        { 'x-amzn-errortype': `UnknownOperationException:${CORAL}` },
      );
    }
    const modelId = decodeURIComponent(route[1]);
    const operation = route[2] as Operation;
    if (this.models && !this.models.has(modelId)) {
      return this.error(res, 400, 'The provided model identifier is invalid.');
    }
    if (operation === 'count-tokens') return this.countTokens(req, res);

    const body = jsonBody(req);
    const invalid = this.invalidBody(body);
    if (invalid || !body) return this.error(res, 400, invalid ?? 'Malformed input request');
    const markers = readMarkers(req.body.toString('utf8'));
    if (markers.status) return this.error(res, markers.status);
    const n = this.nextSequence();
    const answer = claudeAnswer({
      id: `msg_bdrk_01Mock${String(n).padStart(18, '0')}`,
      toolUseId: `toolu_bdrk_01Mock${String(n).padStart(16, '0')}`,
      model: modelId,
      body,
      markers,
    });
    const counts = {
      'x-amzn-bedrock-input-token-count': answer.usage.input_tokens,
      'x-amzn-bedrock-output-token-count': answer.usage.output_tokens,
      ...(answer.usage.cache_read_input_tokens
        ? { 'x-amzn-bedrock-cache-read-input-token-count': answer.usage.cache_read_input_tokens }
        : {}),
      ...(answer.usage.cache_creation_input_tokens
        ? { 'x-amzn-bedrock-cache-write-input-token-count': answer.usage.cache_creation_input_tokens }
        : {}),
    };
    if (operation === 'invoke') {
      return sendJson(res, 200, answer.message, {
        ...this.ids(),
        'x-amzn-bedrock-invocation-latency': BEDROCK_LATENCY.invocationLatency,
        ...counts,
      });
    }
    return this.stream(res, answer.events(), answer.usage, markers);
  }

  /** The event stream: one chunk frame per Anthropic event, message_stop carrying Bedrock's invocation metrics. */
  private async stream(
    res: MockReply,
    events: Record<string, unknown>[],
    usage: {
      input_tokens: number;
      output_tokens: number;
      cache_read_input_tokens: number;
      cache_creation_input_tokens: number;
    },
    markers: Markers,
  ): Promise<void> {
    res.writeHead(200, {
      'content-type': 'application/vnd.amazon.eventstream',
      'x-amzn-bedrock-content-type': 'application/json',
      ...this.ids(),
    });
    const last = events.length - 1;
    events[last] = {
      ...events[last],
      'amazon-bedrock-invocationMetrics': {
        inputTokenCount: usage.input_tokens,
        outputTokenCount: usage.output_tokens,
        invocationLatency: BEDROCK_LATENCY.invocationLatency,
        firstByteLatency: BEDROCK_LATENCY.firstByteLatency,
        ...(usage.cache_read_input_tokens ? { cacheReadInputTokenCount: usage.cache_read_input_tokens } : {}),
        ...(usage.cache_creation_input_tokens
          ? { cacheWriteInputTokenCount: usage.cache_creation_input_tokens }
          : {}),
      },
    };
    const frames = events.map((event, i) => chunkFrame(event, i));
    if (!markers.streamError) {
      await writeInPieces(res, frames);
      return void res.end();
    }
    // A failing stream: the start of the answer, then the exception (or, for `drop`, a cut connection).
    await writeInPieces(res, frames.slice(0, 3));
    if (markers.streamError === 'drop') return void res.destroy();
    const body = STREAM_EXCEPTIONS[markers.streamError] ?? { message: `mock ${markers.streamError}` };
    res.end(exceptionFrame(markers.streamError, body));
  }

  /** CountTokens: `{"input":{"invokeModel":{"body":"<base64 of an InvokeModel body>"}}}` → `{"inputTokens": N}`. */
  private countTokens(req: CloudReceived, res: MockReply): void {
    const input = jsonBody(req)?.input as
      | { invokeModel?: { body?: unknown }; converse?: unknown }
      | undefined;
    if (input?.converse !== undefined) {
      return sendJson(res, 200, { inputTokens: mockPromptTokens(input.converse) }, this.ids());
    }
    const encoded = input?.invokeModel?.body;
    if (typeof encoded !== 'string') {
      return this.error(
        res,
        400,
        "1 validation error detected: Value null at 'input' failed to satisfy constraint: Member must not be null",
      );
    }
    let inner: unknown;
    try {
      inner = JSON.parse(Buffer.from(encoded, 'base64').toString('utf8'));
    } catch {
      return this.error(res, 400, 'Malformed input request, please reformat your input and try again.');
    }
    const body = inner !== null && typeof inner === 'object' ? (inner as Record<string, unknown>) : undefined;
    const invalid = this.invalidBody(body);
    if (invalid || !body) return this.error(res, 400, invalid ?? 'Malformed input request');
    sendJson(
      res,
      200,
      { inputTokens: mockPromptTokens({ system: body.system, messages: body.messages }) },
      this.ids(),
    );
  }

  /** What Bedrock says of an Anthropic body it refuses, or undefined when it takes it. */
  private invalidBody(body: Record<string, unknown> | undefined): string | undefined {
    const malformed = (why: string) =>
      `Malformed input request: ${why}, please reformat your input and try again.`;
    if (!body) return malformed('expected a JSON object');
    for (const key of ['model', 'stream']) {
      if (key in body) return malformed(`#: extraneous key [${key}] is not permitted`);
    }
    for (const key of ['anthropic_version', 'max_tokens', 'messages']) {
      if (!(key in body)) return malformed(`#: required key [${key}] not found`);
    }
    if (typeof body.anthropic_version !== 'string' || !this.anthropicVersions.has(body.anthropic_version)) {
      return malformed(
        `#/anthropic_version: ${JSON.stringify(body.anthropic_version)} is not a valid enum value`,
      );
    }
    if ('anthropic_beta' in body) {
      const betas = body.anthropic_beta;
      if (!Array.isArray(betas) || betas.some((b) => typeof b !== 'string')) {
        return malformed('#/anthropic_beta: expected type: JSONArray, found: String');
      }
    }
    if (!Array.isArray(body.messages)) return malformed('#/messages: expected type: JSONArray');
    return undefined;
  }

  /** A Bedrock error answer: `{"message": ...}` with x-amzn-ErrorType. */
  private error(res: MockReply, status: number, message?: string): void {
    const [type, text] = BEDROCK_ERRORS[status] ?? [`MockStatus${status}Exception`, `mock status ${status}`];
    sendJson(
      res,
      status,
      { message: message ?? text },
      { 'x-amzn-errortype': `${type}:${BEDROCK}`, ...this.ids() },
    );
  }

  private ids(): Record<string, string> {
    const n = ++this.requests;
    return { 'x-amzn-requestid': `00000000-0000-4000-8000-${String(n).padStart(12, '0')}` };
  }
}
