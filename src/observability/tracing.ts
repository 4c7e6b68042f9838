import type { IncomingMessage, ServerResponse } from 'node:http';
import {
  defaultTextMapGetter,
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  type Attributes,
  type Context,
  type Span,
  type Tracer,
} from '@opentelemetry/api';
import { ExportResultCode, W3CTraceContextPropagator } from '@opentelemetry/core';
import { resourceFromAttributes } from '@opentelemetry/resources';
import {
  BasicTracerProvider,
  BatchSpanProcessor,
  ParentBasedSampler,
  TraceIdRatioBasedSampler,
  type ReadableSpan,
  type SpanExporter,
} from '@opentelemetry/sdk-trace-base';
import {
  ATTR_ERROR_TYPE,
  ATTR_HTTP_REQUEST_METHOD,
  ATTR_HTTP_RESPONSE_STATUS_CODE,
  ATTR_SERVER_ADDRESS,
  ATTR_SERVER_PORT,
  ATTR_SERVICE_NAME,
} from '@opentelemetry/semantic-conventions';
import type { Config } from '../config';
import type { Logger } from './logger';
import { createOtlpJsonExporter } from './otlp-exporter';

/**
 * The gen_ai attribute names (OpenTelemetry GenAI semantic conventions, still "development" there): spelled out
 * here, as OpenTelemetry advises for conventions that are not stable, rather than imported from the incubating set.
 */
export const GEN_AI = {
  operation: 'gen_ai.operation.name',
  system: 'gen_ai.system',
  provider: 'gen_ai.provider.name',
  requestModel: 'gen_ai.request.model',
  responseModel: 'gen_ai.response.model',
  inputTokens: 'gen_ai.usage.input_tokens',
  outputTokens: 'gen_ai.usage.output_tokens',
  cacheReadTokens: 'gen_ai.usage.cache_read.input_tokens',
  cacheWriteTokens: 'gen_ai.usage.cache_creation.input_tokens',
  reasoningTokens: 'gen_ai.usage.reasoning.output_tokens',
  timeToFirstChunk: 'gen_ai.response.time_to_first_chunk',
} as const;

/** Genway's own attributes, under its own namespace. */
export const GENWAY = {
  keyId: 'genway.key_id',
  accountId: 'genway.account_id',
  requestId: 'genway.request_id',
  route: 'genway.route',
  upstream: 'genway.upstream',
  upstreamType: 'genway.upstream.type',
  upstreamModel: 'genway.upstream.model',
  taskId: 'genway.task_id',
  taskModel: 'genway.task.model',
  chargeUsd: 'genway.charge_usd',
} as const;

/** The event at the vendor's first byte (its response head) on a gateway span. */
export const FIRST_BYTE_EVENT = 'genway.upstream.first_byte';

/** `error.type` of the answers Genway writes when the vendor gave none (the proxy's 502 and 504). */
const NO_ANSWER: Record<number, string> = { 502: 'upstream_unreachable', 504: 'upstream_timeout' };

/** `gen_ai.provider.name` (and the older `gen_ai.system`) of each vendor Genway passes through. */
const PROVIDERS: Record<string, string> = {
  anthropic: 'anthropic',
  openai: 'openai',
  gemini: 'gcp.gemini',
  bedrock: 'aws.bedrock',
  vertex: 'gcp.vertex_ai',
  'azure-openai': 'azure.ai.openai',
};

/** The gen_ai operation a route performs, by method and route template; routes not listed carry none. */
const OPERATIONS: [RegExp, string][] = [
  [/^POST \/v1\/(chat\/completions|messages|responses)$/, 'chat'],
  [/^POST \/model\/\{model\*\}\/invoke(-with-response-stream)?$/, 'chat'],
  [/^POST .*\/models\/\{model\}:(rawPredict|streamRawPredict)$/, 'chat'],
  [/^POST \/v1\/(completions|complete)$/, 'text_completion'],
  [/^POST \/v1\/embeddings$/, 'embeddings'],
  [/^POST .*:(generateContent|streamGenerateContent)$/, 'generate_content'],
  [/^POST .*:(embedContent|batchEmbedContents)$/, 'embeddings'],
];
const operations = new Map<string, string | undefined>();

/** The gen_ai operation of a route template (`/v1/chat/completions` -> `chat`); undefined for other routes. */
export function operationOf(method: string, template: string | undefined): string | undefined {
  if (template === undefined) return undefined;
  const key = `${method} ${template}`;
  if (operations.has(key)) return operations.get(key);
  const found = OPERATIONS.find(([pattern]) => pattern.test(key))?.[1];
  operations.set(key, found);
  return found;
}

/** Token counts as Genway meters them: `input` excludes cache reads and writes, `output` excludes reasoning. */
export interface SpanUsage {
  model?: string;
  usage: { input: number; output: number; cacheRead: number; cacheWrite: number; reasoning: number };
}

/** What is known of a gateway call when it arrives. */
export interface GatewayCallStart {
  /** `performance.now()` when the request arrived. */
  start: number;
  vendor: string;
  method: string;
  /** The matched route template (absent when no route matched): gives the gen_ai operation. */
  template: string | undefined;
  /** The route label of metrics and the access log (with a vendor mount, if any). */
  route: string;
  requestId: string;
  /** The vendor's origin (server.address, server.port); unknown until a routed call's target answers. */
  origin: URL | undefined;
}

/**
 * The span of one gateway call: CLIENT kind (Genway calling the vendor on the caller's behalf), named
 * `{gen_ai.operation.name} {gen_ai.request.model}` once the model is read. Every method is cheap and safe to call
 * after the end (it then does nothing).
 */
export class GatewaySpan {
  private readonly operation: string | undefined;
  private ended = false;
  private failure: string | undefined;
  /** False once the call went up and no answer came back. */
  private answered = true;

  constructor(
    private readonly span: Span,
    private readonly started: number,
    operation: string | undefined,
  ) {
    this.operation = operation;
  }

  /** The caller, once admitted, and the model its request names. */
  request(auth: { keyId: string; accountId: string }, model: string | undefined): void {
    if (this.ended) return;
    this.span.setAttribute(GENWAY.keyId, auth.keyId);
    this.span.setAttribute(GENWAY.accountId, auth.accountId);
    if (model === undefined) return;
    this.span.setAttribute(GEN_AI.requestModel, model);
    if (this.operation) this.span.updateName(`${this.operation} ${model}`);
  }

  /**
   * Where a routed call ran: the upstream (its id and type, the provider it is) and the model's name there, which
   * replace the caller's vendor as the span's provider and server.
   */
  routed(upstream: { name: string; type: string; origin: URL }, model: string): void {
    if (this.ended) return;
    const provider = PROVIDERS[upstream.type] ?? upstream.type;
    this.span.setAttributes({
      [GENWAY.upstream]: upstream.name,
      [GENWAY.upstreamType]: upstream.type,
      [GENWAY.upstreamModel]: model,
      [GEN_AI.provider]: provider,
      [GEN_AI.system]: provider,
      [ATTR_SERVER_ADDRESS]: upstream.origin.hostname,
      [ATTR_SERVER_PORT]: serverPort(upstream.origin),
    });
  }

  /**
   * How the vendor answered: `headers` is when its response head arrived (`performance.now()`), the first chunk the
   * caller can get; `status` is undefined when it never answered (unreachable, timed out).
   */
  upstream(exchange: { headers?: number; status?: number }): void {
    if (this.ended) return;
    this.answered = exchange.status !== undefined;
    const at = exchange.headers;
    if (at === undefined) return;
    this.span.setAttribute(GEN_AI.timeToFirstChunk, Math.max(0, at - this.started) / 1000);
    this.span.addEvent(FIRST_BYTE_EVENT, at);
  }

  /**
   * The usage readings of the response, in the conventions' terms: input tokens include cache reads and writes,
   * output tokens include reasoning. Nothing is set when the vendor reported no tokens (Gemini embeddings).
   */
  usage(readings: readonly SpanUsage[]): void {
    if (this.ended || readings.length === 0) return;
    let input = 0;
    let output = 0;
    let cacheRead = 0;
    let cacheWrite = 0;
    let reasoning = 0;
    for (const { usage: u } of readings) {
      input += u.input;
      output += u.output;
      cacheRead += u.cacheRead;
      cacheWrite += u.cacheWrite;
      reasoning += u.reasoning;
    }
    const model = readings.find((r) => r.model)?.model;
    if (model) this.span.setAttribute(GEN_AI.responseModel, model);
    if (input + output + cacheRead + cacheWrite + reasoning === 0) return;
    this.span.setAttributes({
      [GEN_AI.inputTokens]: input + cacheRead + cacheWrite,
      [GEN_AI.outputTokens]: output + reasoning,
      [GEN_AI.cacheReadTokens]: cacheRead,
      [GEN_AI.cacheWriteTokens]: cacheWrite,
      [GEN_AI.reasoningTokens]: reasoning,
    });
  }

  /** Genway refused or failed the call itself (an ApiError code: `rate_limited`, `bad_gateway`, ...). */
  refused(code: string): void {
    this.failure = code;
  }

  /** The response is over (finished or cut): status, error status on a 5xx or a cut stream, and the end time. */
  end(status: number, finished: boolean): void {
    if (this.ended) return;
    this.ended = true;
    this.span.setAttribute(ATTR_HTTP_RESPONSE_STATUS_CODE, status);
    const error =
      status >= 400
        ? (this.failure ?? (this.answered ? String(status) : NO_ANSWER[status]) ?? String(status))
        : finished
          ? undefined
          : 'response_cut';
    if (error) this.span.setAttribute(ATTR_ERROR_TYPE, error);
    if (status >= 500 || (error && !finished)) this.span.setStatus({ code: SpanStatusCode.ERROR });
    // On the same clock as the start and the first byte (the SDK would take Date.now() for a span given a start).
    this.span.end(performance.now());
  }
}

export interface Tracing {
  /** Starts the span of a gateway call (parented by the request's `traceparent`, if any). */
  gatewayCall(req: IncomingMessage, call: GatewayCallStart): GatewaySpan;
  /**
   * A span for a task submission (`genway.task.submit`), ended when the response closes; `done` records the task
   * and its charge once it is accepted.
   */
  taskSubmit(
    req: IncomingMessage,
    res: ServerResponse,
    ids: { model: string; requestId: string; keyId?: string; accountId?: string },
  ): { done(taskId: string, chargeMicros: number): void };
  /** Exports what is finished. */
  flush(): Promise<void>;
  /** Ends the exporter after exporting what is queued. */
  shutdown(): Promise<void>;
}

/** Bounds on a stuck collector: an export, and a flush at shutdown, give up after this. */
const EXPORT_TIMEOUT_MS = 5000;

/**
 * The tracer when `tracing.otlpEndpoint` is set, else undefined: callers hold `tracing?: Tracing` and do nothing per
 * request while it is off. The provider is Genway's own (never registered as the global one) and nothing is patched:
 * spans exist only where Genway starts them.
 */
export function createTracing(config: Config['tracing'], logger: Logger): Tracing | undefined {
  if (!config.otlpEndpoint) return undefined;
  const exporter = reportingFailures(
    createOtlpJsonExporter({
      url: config.otlpEndpoint,
      headers: { ...config.headers },
      timeoutMs: EXPORT_TIMEOUT_MS,
    }),
    logger,
  );
  const provider = new BasicTracerProvider({
    resource: resourceFromAttributes({ [ATTR_SERVICE_NAME]: config.serviceName }),
    sampler: new ParentBasedSampler({ root: new TraceIdRatioBasedSampler(config.sampleRatio) }),
    spanProcessors: [
      new BatchSpanProcessor(exporter, {
        scheduledDelayMillis: config.exportDelayMs,
        exportTimeoutMillis: EXPORT_TIMEOUT_MS,
      }),
    ],
  });
  const tracer = provider.getTracer('genway');
  const propagator = new W3CTraceContextPropagator();
  /** The caller's trace, when it sent a `traceparent`; a new trace otherwise. */
  const parentOf = (req: IncomingMessage): Context =>
    req.headers.traceparent === undefined
      ? ROOT_CONTEXT
      : propagator.extract(ROOT_CONTEXT, req.headers, defaultTextMapGetter);

  return {
    gatewayCall: (req, call) => {
      const operation = operationOf(call.method, call.template);
      const provider = PROVIDERS[call.vendor] ?? call.vendor;
      const attributes: Attributes = {
        [GEN_AI.provider]: provider,
        [GEN_AI.system]: provider,
        [ATTR_HTTP_REQUEST_METHOD]: call.method,
        ...(call.origin && {
          [ATTR_SERVER_ADDRESS]: call.origin.hostname,
          [ATTR_SERVER_PORT]: serverPort(call.origin),
        }),
        [GENWAY.route]: call.route,
        [GENWAY.requestId]: call.requestId,
      };
      if (operation) attributes[GEN_AI.operation] = operation;
      const span = startSpan(tracer, operation ?? `${call.method} ${call.route}`, {
        kind: SpanKind.CLIENT,
        attributes,
        startTime: call.start,
        parent: parentOf(req),
      });
      return new GatewaySpan(span, call.start, operation);
    },
    taskSubmit: (req, res, ids) => {
      const attributes: Attributes = {
        [GENWAY.taskModel]: ids.model,
        [GENWAY.requestId]: ids.requestId,
      };
      if (ids.keyId) attributes[GENWAY.keyId] = ids.keyId;
      if (ids.accountId) attributes[GENWAY.accountId] = ids.accountId;
      const span = startSpan(tracer, 'genway.task.submit', {
        kind: SpanKind.SERVER,
        attributes,
        parent: parentOf(req),
      });
      res.once('close', () => {
        const status = res.statusCode;
        span.setAttribute(ATTR_HTTP_RESPONSE_STATUS_CODE, status);
        if (status >= 400) span.setAttribute(ATTR_ERROR_TYPE, String(status));
        if (status >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
        span.end();
      });
      return {
        done: (taskId, chargeMicros) => {
          span.setAttribute(GENWAY.taskId, taskId);
          span.setAttribute(GENWAY.chargeUsd, chargeMicros / 1e6);
        },
      };
    },
    flush: () => provider.forceFlush(),
    shutdown: () => provider.shutdown(),
  };
}

function startSpan(
  tracer: Tracer,
  name: string,
  options: { kind: SpanKind; attributes: Attributes; startTime?: number; parent: Context },
): Span {
  const { parent, ...rest } = options;
  return tracer.startSpan(name, rest, parent);
}

function serverPort(origin: URL): number {
  if (origin.port) return Number(origin.port);
  return origin.protocol === 'https:' ? 443 : 80;
}

/** The exporter, with failed exports logged (at most once a minute): the SDK itself reports nothing by default. */
function reportingFailures(exporter: SpanExporter, logger: Logger): SpanExporter {
  let lastReport = -Infinity;
  return {
    export: (spans: ReadableSpan[], done) =>
      exporter.export(spans, (result) => {
        if (result.code !== ExportResultCode.SUCCESS && performance.now() - lastReport > 60_000) {
          lastReport = performance.now();
          logger.warn(
            { err: result.error, spans: spans.length },
            'exporting traces failed (OTLP); later failures in the next minute are not logged',
          );
        }
        done(result);
      }),
    shutdown: () => exporter.shutdown(),
    forceFlush: () => exporter.forceFlush?.() ?? Promise.resolve(),
  };
}
