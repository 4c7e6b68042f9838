import { randomUUID } from 'node:crypto';
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import type { AccountsService, AuthContext } from '../accounts/service';
import { assertModelAllowed } from '../accounts/service';
import type { Config } from '../config';
import { ApiError } from '../errors';
import { admit, bearerToken } from '../http/auth';
import { logRequest, observeRequest, requestIdOf } from '../http/request-context';
import type { Logger } from '../observability/logger';
import type { Metrics } from '../observability/metrics';
import type { Store, TokenUsage } from '../store';
import { hasOwnVia, VendorProxy, type Exchange } from './proxy';
import { UsageMeter } from './meter';
import { createUsageTap, type UsageTap } from './usage';
import { createVendors, type Vendor, type VendorName } from './vendors';

/** `by-headers`: `GET /v1/models` belongs to the messages vendor when the request carries its headers. */
type RouteVendor = VendorName | 'by-headers';

interface GatewayRoute {
  /** Route template for metrics and logs. */
  template: string;
  pattern: RegExp;
  methods: readonly string[];
  vendor: RouteVendor;
  /** Where the model id is: the JSON body's `model`, the path (first capture group), or nowhere. */
  model: 'body' | 'path' | 'none';
  /** Generation calls: their token usage is recorded (and priced). */
  metered: boolean;
}

const ID = '[^/]+';
const ROUTES: GatewayRoute[] = [
  {
    template: '/v1/messages',
    pattern: /^\/v1\/messages$/,
    methods: ['POST'],
    vendor: 'anthropic',
    model: 'body',
    metered: true,
  },
  {
    template: '/v1/messages/count_tokens',
    pattern: /^\/v1\/messages\/count_tokens$/,
    methods: ['POST'],
    vendor: 'anthropic',
    model: 'body',
    metered: false,
  },
  {
    template: '/v1/responses',
    pattern: /^\/v1\/responses$/,
    methods: ['POST'],
    vendor: 'openai',
    model: 'body',
    metered: true,
  },
  {
    template: '/v1/responses/:id',
    pattern: new RegExp(`^/v1/responses/${ID}$`),
    methods: ['GET', 'DELETE'],
    vendor: 'openai',
    model: 'none',
    metered: false,
  },
  {
    template: '/v1/responses/:id/cancel',
    pattern: new RegExp(`^/v1/responses/${ID}/cancel$`),
    methods: ['POST'],
    vendor: 'openai',
    model: 'none',
    metered: false,
  },
  {
    template: '/v1/responses/:id/input_items',
    pattern: new RegExp(`^/v1/responses/${ID}/input_items$`),
    methods: ['GET'],
    vendor: 'openai',
    model: 'none',
    metered: false,
  },
  {
    template: '/v1beta/models/:model:generateContent',
    pattern: /^\/v1beta\/models\/([^/:]+):generateContent$/,
    methods: ['POST'],
    vendor: 'gemini',
    model: 'path',
    metered: true,
  },
  {
    template: '/v1beta/models/:model:streamGenerateContent',
    pattern: /^\/v1beta\/models\/([^/:]+):streamGenerateContent$/,
    methods: ['POST'],
    vendor: 'gemini',
    model: 'path',
    metered: true,
  },
  {
    template: '/v1beta/models/:model:countTokens',
    pattern: /^\/v1beta\/models\/([^/:]+):countTokens$/,
    methods: ['POST'],
    vendor: 'gemini',
    model: 'path',
    metered: false,
  },
  {
    template: '/v1beta/models',
    pattern: /^\/v1beta\/models$/,
    methods: ['GET'],
    vendor: 'gemini',
    model: 'none',
    metered: false,
  },
  {
    template: '/v1beta/models/:model',
    pattern: new RegExp(`^/v1beta/models/${ID}$`),
    methods: ['GET'],
    vendor: 'gemini',
    model: 'none',
    metered: false,
  },
  {
    template: '/v1/models',
    pattern: /^\/v1\/models$/,
    methods: ['GET'],
    vendor: 'by-headers',
    model: 'none',
    metered: false,
  },
  {
    template: '/v1/models/:id',
    pattern: new RegExp(`^/v1/models/${ID}$`),
    methods: ['GET'],
    vendor: 'by-headers',
    model: 'none',
    metered: false,
  },
];

/** The messages vendor's SDK sends `anthropic-version` and its key in `x-api-key`; the responses vendor's does neither. */
function vendorByHeaders(headers: IncomingHttpHeaders): VendorName {
  return headers['anthropic-version'] !== undefined || headers['x-api-key'] !== undefined
    ? 'anthropic'
    : 'openai';
}

/** The Genway key, wherever the vendor's SDK put it: `x-api-key`, `x-goog-api-key`, `Authorization: Bearer`, `?key=`. */
function presentedKey(req: IncomingMessage, query: URLSearchParams | null): string | undefined {
  const header = req.headers['x-api-key'] ?? req.headers['x-goog-api-key'];
  if (typeof header === 'string' && header.trim()) return header.trim();
  if (req.headers.authorization) return bearerToken(req.headers.authorization);
  return query?.get('key') ?? undefined;
}

/** Reads the whole body (bounded) so `model` can be read from a copy; the original bytes go upstream. */
function readBody(req: IncomingMessage, limit: number): Promise<Buffer> {
  const declared = Number(req.headers['content-length']);
  if (declared > limit) {
    return Promise.reject(
      new ApiError(
        'payload_too_large',
        `Request body of ${declared} bytes exceeds the limit of ${limit} bytes`,
      ),
    );
  }
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) {
        req.off('data', onData);
        reject(new ApiError('payload_too_large', `Request body exceeds the limit of ${limit} bytes`));
        return;
      }
      chunks.push(chunk);
    };
    req.on('data', onData);
    req.once('end', () => resolve(chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, size)));
    req.once('error', reject);
  });
}

/** The `model` of a JSON body, read from a parsed copy. */
function modelOfBody(body: Buffer): string | undefined {
  try {
    const parsed: unknown = JSON.parse(body.toString('utf8'));
    const model = (parsed as { model?: unknown } | null)?.model;
    return typeof model === 'string' && model ? model : undefined;
  } catch {
    return undefined;
  }
}

/** A model name as a metric label and usage key: bounded, whatever a client sends. */
function modelLabel(model: string | undefined): string {
  return model ? model.slice(0, 128) : 'unknown';
}

const first = (value: string | string[] | undefined): string | undefined =>
  Array.isArray(value) ? value[0] : value;

function statusClass(status: number | undefined): string {
  return status ? `${Math.floor(status / 100)}xx` : 'error';
}

export interface GatewayDeps {
  config: Config;
  accounts: AccountsService;
  store: Store;
  metrics: Metrics;
  logger: Logger;
}

export interface Gateway {
  /** True for the gateway's paths (`/v1...`, `/v1beta...`), which bypass Express. */
  owns(url: string): boolean;
  handle(req: IncomingMessage, res: ServerResponse): void;
  /** Writes the usage summed so far to the store (read-your-writes for the admin usage endpoint). */
  flushUsage(): Promise<void>;
  /** Closes upstream connections and writes the last usage. */
  close(): Promise<void>;
}

/** `/v1`, `/v1/...`, `/v1beta`, `/v1beta/...` (the task API lives under `/api/v1`). */
function isGatewayPath(url: string): boolean {
  if (!url.startsWith('/v1')) return false;
  const next = url.charCodeAt(3);
  // end, '/', '?', or 'beta' followed by end, '/' or '?'
  if (Number.isNaN(next) || next === 47 || next === 63) return true;
  if (!url.startsWith('beta', 3)) return false;
  const after = url.charCodeAt(7);
  return Number.isNaN(after) || after === 47 || after === 63;
}

/**
 * The LLM gateway: `/v1/*` and `/v1beta/*` in the three vendor formats. Matched by a table here, not by
 * Express routing, and mounted without any body parser: the body is read once, raw, and forwarded as is.
 */
export function createGateway({ config, accounts, store, metrics, logger }: GatewayDeps): Gateway {
  const gateway = config.gateway;
  const vendors = createVendors(gateway);
  const proxy = new VendorProxy({
    connectTimeoutMs: gateway.connectTimeoutMs,
    idleTimeoutMs: gateway.idleTimeoutMs,
  });
  const prices = new Map(Object.entries(gateway.prices));
  const meter = new UsageMeter(store.usage, metrics, logger, gateway.usageFlushMs);
  const admission = {
    accounts,
    keyGate: store.keyGate,
    defaultLimit: config.rateLimits.default,
    onRateLimited: () => metrics.rateLimitRejections.inc({ surface: 'gateway' }),
  };

  async function account(vendor: Vendor, auth: AuthContext, model: string, usage: TokenUsage): Promise<void> {
    meter.add(vendor.name, auth.keyId, model, usage);
    const price = prices.get(model);
    if (!price) return;
    // USD per million tokens is micro-USD per token.
    const micros = Math.round(usage.input * price.inputPerMTokUsd + usage.output * price.outputPerMTokUsd);
    // The tokens are spent: take the price, or what is left of the balance (the next call is then refused).
    if (micros > 0) await accounts.chargeAtMost(auth.accountId, micros, `llm:${randomUUID()}`);
  }

  function observe(vendor: Vendor, exchange: Exchange): void {
    const end = performance.now();
    const labels = { vendor: vendor.name, status_class: statusClass(exchange.status) };
    metrics.gatewayUpstreamResponses.inc({ vendor: vendor.name, code: String(exchange.status ?? 0) });
    const upstreamEnd = exchange.upstreamEnd ?? end;
    if (exchange.headers !== undefined) {
      metrics.gatewayTimeToFirstByte.observe(labels, (exchange.headers - exchange.sent) / 1000);
    }
    metrics.gatewayUpstreamDuration.observe(labels, (upstreamEnd - exchange.sent) / 1000);
    const overhead = end - exchange.start - (upstreamEnd - exchange.sent);
    metrics.gatewayOverhead.observe(labels, Math.max(0, overhead) / 1000);
  }

  /** One gateway exchange: who asked, where it goes, and how it ended, for the access line and metrics. */
  interface Call {
    requestId: string;
    start: number;
    route: string;
    vendor: Vendor;
  }

  function finish(req: IncomingMessage, res: ServerResponse, call: Call): void {
    res.once('close', () => {
      const { requestId, start, route } = call;
      observeRequest(metrics, route, req.method!, res.statusCode, start);
      logRequest(
        logger,
        { requestId, method: req.method!, url: req.url!, status: res.statusCode, start, route },
        res.writableFinished,
      );
    });
  }

  /** Genway's own refusal in the vendor's shape; never a stack trace, never the envelope. */
  function refuse(req: IncomingMessage, res: ServerResponse, call: Call, err: unknown): void {
    const apiError = err instanceof ApiError ? err : new ApiError('internal', 'Internal server error');
    if (apiError.status >= 500) {
      logger.error({ err, requestId: call.requestId, route: call.route }, 'gateway request failed');
    }
    if (res.headersSent) {
      res.destroy();
      return;
    }
    if (req.readable) req.resume(); // drain an unread body so the connection can be reused
    call.vendor.renderError(res, apiError, { 'X-Request-Id': call.requestId });
  }

  async function handle(
    req: IncomingMessage,
    res: ServerResponse,
    call: Call,
    path: string,
    route: GatewayRoute | undefined,
  ): Promise<void> {
    const url = req.url!;
    if (!route) throw new ApiError('not_found', `No gateway route for ${req.method} ${path}`);
    if (!route.methods.includes(req.method!)) {
      const allow = route.methods.join(', ');
      throw new ApiError(
        'method_not_allowed',
        `Method ${req.method} is not allowed here; allowed: ${allow}`,
        {
          Allow: allow,
        },
      );
    }
    if (hasOwnVia(req.headers.via)) {
      throw new ApiError(
        'loop_detected',
        'This request already passed through Genway (Via): the vendor base URL points back at Genway',
      );
    }

    const q = url.indexOf('?');
    const query = q === -1 ? null : new URLSearchParams(url.slice(q + 1));
    const auth = await admit(admission, presentedKey(req, query));

    const hasBody =
      req.headers['content-length'] !== undefined || req.headers['transfer-encoding'] !== undefined;
    const body = hasBody ? await readBody(req, gateway.maxRequestBytes) : null;
    // The model as the client named it (read from a parsed copy): for the allow-list, the price table and the
    // usage labels, so usage and prices line up whatever version string the vendor answers with.
    let model: string | undefined;
    if (route.model === 'path') model = decodeURIComponent(route.pattern.exec(path)![1]);
    else if (route.model === 'body' && body && (route.metered || auth.models)) model = modelOfBody(body);
    if (auth.models && route.model !== 'none') {
      if (!model) {
        throw new ApiError(
          'invalid_request',
          "model: required (a string) to check this key's model allow-list",
        );
      }
      assertModelAllowed(auth, model);
    }
    if (model && prices.has(model) && ((await store.accounts.balanceMicros(auth.accountId)) ?? 0) <= 0) {
      throw new ApiError(
        'insufficient_balance',
        'Insufficient balance: this account has no balance left for metered models',
      );
    }

    // The Gemini-style `?key=` is Genway's key: it never travels on.
    let forwardPath = url;
    if (query?.has('key')) {
      query.delete('key');
      const rest = query.toString();
      forwardPath = rest ? `${path}?${rest}` : path;
    }

    const { vendor } = call;
    let tap: UsageTap | null = null;
    proxy.forward(req, res, {
      vendor,
      path: forwardPath,
      body,
      start: call.start,
      requestId: call.requestId,
      onResponse: route.metered
        ? (_status, headers) => {
            tap = createUsageTap(
              vendor.format,
              first(headers['content-type']),
              first(headers['content-encoding']),
            );
            return tap?.write;
          }
        : undefined,
      onClose: (exchange) => {
        observe(vendor, exchange);
        // Complete usage at the end of a response; what was seen so far when the client left early.
        void tap
          ?.finish()
          .then((r) => r && account(vendor, auth, modelLabel(model ?? r.model), r.usage))
          .catch((err: unknown) =>
            logger.error({ err, vendor: vendor.name }, 'recording gateway usage failed'),
          );
      },
    });
  }

  return {
    owns: (url) => isGatewayPath(url),
    handle: (req, res) => {
      const start = performance.now();
      const url = req.url!;
      const q = url.indexOf('?');
      const path = q === -1 ? url : url.slice(0, q);
      const route = ROUTES.find((r) => r.pattern.test(path));
      const beta = path.startsWith('/v1beta');
      const vendorName =
        route && route.vendor !== 'by-headers'
          ? route.vendor
          : beta
            ? 'gemini'
            : vendorByHeaders(req.headers);
      const call: Call = {
        requestId: requestIdOf(req),
        start,
        route: route?.template ?? (beta ? '/v1beta/*' : '/v1/*'),
        vendor: vendors[vendorName],
      };
      finish(req, res, call);
      handle(req, res, call, path, route).catch((err: unknown) => refuse(req, res, call, err));
    },
    flushUsage: () => meter.flush(),
    close: async () => {
      await proxy.close();
      await meter.close();
    },
  };
}
