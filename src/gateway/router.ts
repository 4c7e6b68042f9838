import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { StringDecoder } from 'node:string_decoder';
import { KeyHashMemo } from '../accounts/api-keys';
import type { AccountsService, AuthContext } from '../accounts/service';
import type { BalanceGuard, BudgetGuard } from '../accounts/budgets';
import { assertModelAllowed } from '../accounts/service';
import { systemClock, type Clock } from '../clock';
import type { Config, Price, TokenPrices } from '../config';
import { ApiError } from '../errors';
import { admit, keyInAuthorization, vendorAuthMessages, type AuthMessages } from '../http/auth';
import { logServerError, unexpectedError } from '../http/errors';
import { logRequest, requestIdOf, requestObserver } from '../http/request-context';
import type { Logger } from '../observability/logger';
import type { Metrics } from '../observability/metrics';
import type { GatewaySpan, Tracing } from '../observability/tracing';
import type { AccountStore, KeyGate } from '../accounts/store';
import type { VendorKeyHealth } from './key-health';
import { watchKeyHealth, type VendorKey } from './key-pool';
import type { VendorObjectStore } from './objects';
import type { UsageStore } from './store';
import type { TokenUsage } from './store';
import type { GatewayCharges } from './charges';
import { formValues, nameMentions } from './form';
import { UsageMeter } from './meter';
import type { ObjectOwner } from './objects';
import { hasOwnVia, REQUEST_ID_HEADER, VendorProxy, type Exchange, type ResponseHeaders } from './proxy';
import { ModelRoutes, type Target } from './model-routes';
import type { RoutedTarget } from './proxy';
import {
  adaptAnswer,
  readModelCall,
  translated,
  translates,
  untranslatable,
  usageFormatOf,
  VENDOR_OF_FORMAT,
  withStreamUsage,
  type Translated,
} from './routed';
import { TranslationError } from './translate';
import { RouteTable, type Resolution } from './routes';
import { bindUpstreams, renderError, type Upstream } from './upstream';
import type { ModelCall, UpstreamRequest } from './upstreams/types';
import { createUsageTap, type UsageReading, type UsageTap } from './usage';
import {
  modelLookalike,
  refsIn,
  snapshotBase,
  type RevealedObject,
  type RouteSpec,
  type UsageFormat,
  type VendorDefinition,
  type VendorName,
} from './vendor';
import { INBOUND } from './vendors';
import { proxyWebSocket } from './websocket';
import type { GatewayCallLog, RequestLog } from '../logs'; // [logs]

export interface GatewayDeps {
  config: Config;
  accounts: AccountsService;
  /** The ports the gateway uses (services.ts passes the store's adapters). */
  store: {
    accounts: AccountStore;
    keyGate: KeyGate;
    usage: UsageStore;
    vendorObjects: VendorObjectStore;
    /** Vendor key cooldowns shared between replicas (absent: each process keeps its own). */
    vendorKeyHealth?: VendorKeyHealth;
  };
  metrics: Metrics;
  logger: Logger;
  /** Absent when tracing is off: no span, no per-request work. */
  tracing?: Tracing;
  /** Refuses a call once a hard budget of its key or account is spent; absent = no budgets. */
  budgetGuard?: BudgetGuard;
  /** Refuses a call to a priced model once the account's balance is spent. */
  balanceGuard: BalanceGuard;
  /** Where priced calls' prices go: tabs posted to the ledger (and journaled, Redis mode). */
  charges: GatewayCharges;
  /** Dates the metered usage (the system's clock when absent). */
  clock?: Clock;
  /** [logs] One request-log row per call (src/logs); absent = no rows, no per-call work. */
  requestLog?: RequestLog;
}

export interface Gateway {
  /** True for the gateway's paths (`/v1`, `/v1beta`, `/v1alpha`, `/upload`, and the vendor mounts), ahead of Express. */
  owns(url: string): boolean;
  handle(req: IncomingMessage, res: ServerResponse): void;
  /** An HTTP upgrade (the Responses WebSocket mode) on one of the gateway's paths. */
  upgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void;
  /** Writes the usage and charges summed so far to the store (read-your-writes for the usage reports). */
  flushUsage(): Promise<void>;
  /** Closes upstream connections and writes the last usage. */
  close(): Promise<void>;
}

/** First path segments the gateway answers (the task API lives under `/api/v1`). */
const OWNED = new Set([
  'v1',
  'v1beta',
  'v1alpha',
  'upload',
  'download',
  ...INBOUND.map((v) => v.mount.slice(1)),
]);
const MOUNTS = new Map(INBOUND.map((v) => [v.mount.slice(1), v]));
/** Each vendor's 401 messages, naming where its SDKs send a key. */
const AUTH_MESSAGES = new Map<string, AuthMessages>(
  INBOUND.map((v) => [
    v.name,
    vendorAuthMessages([
      ...v.keyHeaders.map((h) => (h === 'authorization' ? 'Authorization: Bearer' : h)),
      ...(v.queryKey ? ['?key='] : []),
    ]),
  ]),
);

function firstSegment(url: string): string {
  let end = 1;
  while (end < url.length) {
    const c = url.charCodeAt(end);
    if (c === 47 /* / */ || c === 63 /* ? */) break;
    end++;
  }
  return url.slice(1, end);
}

/**
 * The `key` query parameter (Google's style: any spelling a decoder reads as `key`, any case) and the query
 * without it; the other parameters keep their exact bytes.
 */
export function splitQueryKey(query: string): { key?: string; rest: string } {
  if (!/key|%/i.test(query)) return { rest: query };
  let key: string | undefined;
  const kept: string[] = [];
  for (const part of query.split('&')) {
    const eq = part.indexOf('=');
    const name = decoded(eq === -1 ? part : part.slice(0, eq));
    if (name.toLowerCase() !== 'key') {
      kept.push(part);
      continue;
    }
    key ??= eq === -1 ? '' : decoded(part.slice(eq + 1));
  }
  return { key, rest: kept.join('&') };
}

const UNRESERVED = /[A-Za-z0-9\-._~]/;

/**
 * The RFC 3986 (6.2.2) normal form of a path, the one a vendor's front end routes on: escapes of unreserved
 * characters decoded, other escapes in upper case, then dot segments removed (5.2.4). Genway routes, checks ownership
 * and forwards this one spelling, so no other spelling of a path can reach what its normal form is refused.
 */
export function normalizePath(path: string): string {
  const p = path.includes('%')
    ? path.replace(/%([0-9A-Fa-f]{2})/g, (_escape, hex: string) => {
        const c = String.fromCharCode(parseInt(hex, 16));
        return UNRESERVED.test(c) ? c : `%${hex.toUpperCase()}`;
      })
    : path;
  if (!/\/\.\.?(\/|$)/.test(p)) return p;
  const out: string[] = [];
  const segments = p.split('/');
  for (let i = 1; i < segments.length; i++) {
    const s = segments[i];
    if (s === '..') out.pop();
    else if (s !== '.') out.push(s);
  }
  const last = segments[segments.length - 1];
  const trailing = (last === '.' || last === '..') && out.length > 0 ? '/' : '';
  return `/${out.join('/')}${trailing}`;
}

function decodable(text: string): boolean {
  try {
    decodeURIComponent(text);
    return true;
  } catch {
    return false;
  }
}

/** A multipart body (a file upload): streamed to the vendor, never held. */
function isMultipart(contentType: string | undefined): boolean {
  return contentType !== undefined && /^\s*multipart\//i.test(contentType);
}

function decoded(text: string): string {
  try {
    return decodeURIComponent(text.replace(/\+/g, ' '));
  } catch {
    return text;
  }
}

/** The Genway key, wherever the client's SDK put it: `x-api-key`, `x-goog-api-key`, `Authorization: Bearer`, `?key=`. */
function presentedKey(req: IncomingMessage, queryKey: string | undefined): string | undefined {
  const header = req.headers['x-api-key'] ?? req.headers['x-goog-api-key'];
  if (typeof header === 'string' && header.trim()) return header.trim();
  if (req.headers.authorization) return keyInAuthorization(req.headers.authorization);
  return queryKey || undefined;
}

/** The key hash each connection presented last: see KeyHashMemo. */
const keyMemos = new WeakMap<Socket, KeyHashMemo>();

function keyMemoOf(socket: Socket): KeyHashMemo {
  let memo = keyMemos.get(socket);
  if (!memo) keyMemos.set(socket, (memo = new KeyHashMemo()));
  return memo;
}

/** Reads the whole body (bounded) so Genway can read `model` and object ids from a copy; the bytes go up as read. */
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
    // `on`, not `once`: each is emitted at most once, and `once` wraps and later removes a listener per request.
    req.on('end', () => resolve(chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, size)));
    req.on('error', reject);
  });
}

type Json = Record<string, unknown>;

function parseJson(text: string | undefined): Json | undefined {
  if (!text) return undefined;
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Json) : undefined;
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

/** The models a request runs, as allow-lists and prices know them; [] when the route names none. */
function modelsOf(
  spec: RouteSpec | undefined,
  vendor: VendorDefinition,
  params: Record<string, string>,
  body?: Json,
) {
  const name = (raw: unknown) =>
    typeof raw === 'string' && raw ? (vendor.modelName ? vendor.modelName(raw) : raw) : undefined;
  switch (spec?.model) {
    case 'path':
      return [name(decoded(params.model))];
    case 'body':
      return [name(body?.model)];
    case 'batch': {
      const requests = body?.requests;
      if (!Array.isArray(requests) || requests.length === 0) return [undefined];
      return requests.map((r) => name((r as { params?: { model?: unknown } } | null)?.params?.model));
    }
    default:
      return [];
  }
}

/** Models a call on a path no route names may run: its JSON body's `model`, and a Gemini-style `models/{m}:action`. */
function unroutedModels(vendor: VendorDefinition, path: string, body?: Json): string[] {
  const name = (raw: unknown) =>
    typeof raw === 'string' && raw ? [vendor.modelName ? vendor.modelName(raw) : raw] : [];
  const action = /\/(?:models|tunedModels)\/([^/:]+):/.exec(path);
  return [...name(body?.model), ...name(action ? decoded(action[1]) : undefined)];
}

/** A form field Genway reads: its one value (null for a file part), or why the vendor may read another. */
interface FormField {
  value: string | null | undefined;
  ambiguous?: string;
}

/**
 * The fields of a multipart form Genway reads (its model, and the route's `usageForm` fields), each as the vendor's
 * parser reads it (./form.ts). A field named twice is ambiguous: Go's FormValue runs the first and Python's
 * frameworks the last, so an allow-list, a price or a usage check could pass on one value while the vendor runs the
 * other. The caller refuses it where it matters (the model always, usage fields on a priced call).
 */
async function formFields(
  body: Buffer,
  contentType: string | undefined,
  names: readonly string[],
): Promise<Map<string, FormField>> {
  const values = await formValues(body, contentType, names);
  const mentions = nameMentions(body, names);
  const fields = new Map<string, FormField>();
  for (const name of names) {
    const given = values?.get(name) ?? [];
    const ambiguous =
      given.length > 1
        ? `${name}: given ${given.length} times in the form; a vendor runs the first or the last, so it must be given once`
        : mentions.get(name)! > given.length
          ? `${name}: the form names it in a way multipart parsers read differently (an encoded or repeated name parameter, or a part inside another); send it once, as name="${name}"`
          : undefined;
    fields.set(name, { value: given[0], ambiguous });
  }
  return fields;
}

/**
 * Whether a JSON body's `tools` offers one billed per call: an entry whose `type` (OpenAI's shape) or one of whose
 * own keys (Gemini's `{"googleSearch": {}}`) starts with one of `types`.
 */
function offersTool(json: Json | undefined, types: readonly string[]): boolean {
  const tools = json?.tools;
  if (!Array.isArray(tools)) return false;
  const named = (name: unknown) => typeof name === 'string' && types.some((t) => name.startsWith(t));
  return tools.some(
    (tool) =>
      typeof tool === 'object' &&
      tool !== null &&
      (named((tool as { type?: unknown }).type) || Object.keys(tool).some(named)),
  );
}

/** Whether a JSON body asks for a service tier other than the vendor's plain ones. */
function asksTier(json: Json | undefined, vendor: VendorDefinition): boolean {
  const tier = json?.service_tier;
  return typeof tier === 'string' && !!vendor.serviceTiers && !vendor.serviceTiers.standard.includes(tier);
}

/**
 * A priced call's form fields that would make the answer leave out its usage (the route's `usageForm`), or that the
 * vendor may read otherwise than Genway: the refusal.
 */
function hiddenByForm(usageForm: RouteSpec['usageForm'], form: Map<string, FormField>): string | undefined {
  for (const [name, keeps] of Object.entries(usageForm ?? {})) {
    const { value, ambiguous } = form.get(name)!;
    if (ambiguous) return ambiguous;
    if (value === undefined || (value !== null && keeps.includes(value))) continue;
    const given = value === null ? 'a file part' : JSON.stringify(value);
    return `${name}: ${given} answers without token usage, which a priced model needs (Genway bills from it): use ${keeps.map((k) => JSON.stringify(k)).join(' or ')}, or leave it out`;
  }
  return undefined;
}

/** The lookalike of a request body where the route reads its model: the top level, or each batch request's params. */
function lookalikeOf(spec: RouteSpec | undefined, body: Json | undefined): string | undefined {
  if (!body) return undefined;
  if (spec?.model === 'body') return modelLookalike(body);
  if (spec?.model !== 'batch' || !Array.isArray(body.requests)) return undefined;
  for (let i = 0; i < body.requests.length; i++) {
    const params = (body.requests[i] as { params?: unknown } | null)?.params;
    if (typeof params !== 'object' || params === null) continue;
    const found = modelLookalike(params as Json);
    if (found !== undefined) return `requests[${i}].params.${found}`;
  }
  return undefined;
}

/**
 * The models a call runs against its key's allow-list (each must be a string it holds), and a field that is `model`
 * in another case (see modelLookalike): refused for an allow-listed key, and for a priced call, whose price is the
 * checked model's. Throws the refusal.
 */
function assertModels(
  auth: AuthContext,
  models: unknown[],
  lookalike: string | undefined,
  priced: boolean,
): void {
  if (auth.models) {
    for (const model of models.length ? models : [undefined]) {
      if (typeof model !== 'string' || !model)
        throw new ApiError(
          'invalid_request',
          "model: required (a string) to check this key's model allow-list",
        );
      assertModelAllowed(auth, model);
    }
  }
  if (lookalike !== undefined && (auth.models || priced)) {
    throw new ApiError(
      'invalid_request',
      `${lookalike}: a second model field spelled in other case; a back end that matches field names regardless of case (Go's encoding/json) could run it instead of the model Genway checked and prices`,
    );
  }
}

/** Anthropic's cache write prices against its input price: five minutes, and an hour (the defaults of unset ones). */
const CACHE_WRITE_FACTOR = 1.25;
const CACHE_WRITE_1H_FACTOR = 2;

/** USD per million tokens is micro-USD per token; a long prompt puts every token of the call at long-context prices. */
function tokenCost(model: Price, u: TokenUsage): number {
  const long = model.longContext;
  // The rates of this call: the model's, or its long-context ones.
  const price: TokenPrices =
    long && u.input + u.cacheRead + u.cacheWrite > long.aboveInputTokens ? long : model;
  const hour = Math.min(u.cacheWrite1h ?? 0, u.cacheWrite);
  return (
    u.input * price.inputPerMTokUsd +
    u.cacheRead * (price.cacheReadPerMTokUsd ?? price.inputPerMTokUsd) +
    (u.cacheWrite - hour) * (price.cacheWritePerMTokUsd ?? price.inputPerMTokUsd * CACHE_WRITE_FACTOR) +
    hour * (price.cacheWrite1hPerMTokUsd ?? price.inputPerMTokUsd * CACHE_WRITE_1H_FACTOR) +
    u.output * price.outputPerMTokUsd +
    u.reasoning * (price.reasoningPerMTokUsd ?? price.outputPerMTokUsd)
  );
}

/** The factor of a call's token prices for the service tier it ran at: the model's, else the vendor's, else 1. */
function tierFactor(price: Price, vendor: VendorDefinition, tier: string | undefined): number {
  if (tier === undefined) return 1;
  return price.serviceTierFactor?.[tier] ?? vendor.serviceTiers?.factor[tier] ?? 1;
}

/**
 * A priced call asking for a service tier that has no factor (the model's or the vendor's) and is not the plain
 * one: the refusal, as it would run at that tier's rates and be charged the plain prices.
 */
function unpricedTier(price: Price, vendor: VendorDefinition, json: Json | undefined): string | undefined {
  const tiers = vendor.serviceTiers;
  const tier = json?.service_tier;
  if (!tiers || typeof tier !== 'string' || tiers.standard.includes(tier)) return undefined;
  if (price.serviceTierFactor?.[tier] !== undefined || tiers.factor[tier] !== undefined) return undefined;
  return `service_tier: ${JSON.stringify(tier)} has no price for this model (its serviceTierFactor.${tier}), so it would run at that tier's rates and be charged the plain ones: ask for ${tiers.standard.map((t) => JSON.stringify(t)).join(' or ')}, or leave it out`;
}

/** Micro-USD for the server-side tool calls the vendor bills per call: the model's price, else the vendor's rate. */
function toolCost(price: Price, vendor: VendorDefinition, u: TokenUsage): number {
  let usd = 0;
  for (const tool in u.tools)
    usd += u.tools[tool] * (price.toolCallUsd?.[tool] ?? vendor.toolCallUsd?.[tool] ?? 0);
  return usd * 1e6;
}

/** How much of a creation response is kept to read object ids from: metadata, never content. */
const CREATED_JSON_BYTES = 1 << 20;
const HEAD_BYTES = 8 << 10;

/** A route spec that names a model call (what `plan` routes). */
type RoutedSpec = RouteSpec & { call: NonNullable<RouteSpec['call']> };

/** A target of one routed call: its request built once, when first tried (a fallback may never be). */
interface RoutedCallTarget extends RoutedTarget {
  readonly format: ModelCall['format'];
  /** The model's name at the upstream. */
  readonly model: string;
  /** The call asked a chat stream's usage on the client's behalf: the usage-only chunk is kept from the client. */
  readonly askedUsage: boolean;
  /** The call translated for a target speaking another format, and its answer's translation back. */
  readonly translated?: Translated;
}

function routedTarget(target: Target, read: ModelCall, translation?: Translated): RoutedCallTarget {
  // A translated call asks a chat target for its usage itself, and answers the caller in the caller's format.
  const { call: sent, added } = translation
    ? { call: translation.call, added: false }
    : withStreamUsage(read);
  let built: UpstreamRequest | undefined;
  return {
    upstream: target.upstream,
    model: target.model,
    format: sent.format,
    askedUsage: added,
    translated: translation,
    request: () => (built ??= target.upstream.calls.request(sent, target.model)),
    drops: translation ? vendorHeader : undefined,
  };
}

/**
 * A header of one vendor's API (its version, betas, client): a translated call's own format's, which mean nothing, or
 * something else, to a target of another format.
 */
const vendorHeader = (name: string) =>
  name.startsWith('anthropic-') || name.startsWith('openai-') || name.startsWith('x-goog-');

/** One gateway exchange: who asked, where it goes, and how it ended, for the access line and metrics. */
interface Call {
  requestId: string;
  start: number;
  route: string;
  /** The format the client called in: Genway's own errors take its shape. */
  inbound: VendorDefinition;
  /** Where it goes: the vendor's own upstream (its format's unrouted calls); a routed call's target once one answers. */
  upstream: Upstream | undefined;
  /** The proxy's part of the call, once it forwards: closed with the client's response. */
  forwarding?: { close(): void };
  /** The call's trace span, only while tracing is on. */
  span?: GatewaySpan;
  /** [logs] The call's request-log row, only while request logs are on. */
  log?: GatewayCallLog;
}

/**
 * The LLM gateway: every vendor route of ./vendors/*, matched by a table ahead of Express and mounted without any
 * body parser. A body Genway must read (the model, object ids) is read once, raw, and forwarded as is; any other
 * body (uploads) is piped through. Each request is admitted with the caller's Genway key, checked against its
 * allow-list, pinned to the vendor key that created the objects it names, forwarded with a vendor key, and metered
 * from a copy of the response as it passes.
 */
export function createGateway({
  config,
  accounts,
  store,
  metrics,
  logger,
  tracing,
  budgetGuard,
  balanceGuard,
  charges,
  clock,
  requestLog, // [logs]
}: GatewayDeps): Gateway {
  const gateway = config.gateway;
  const every = bindUpstreams(gateway, { metrics, logger, health: store.vendorKeyHealth });
  const upstreams = every.vendors;
  const keyHealth = store.vendorKeyHealth
    ? watchKeyHealth(
        [...every.byId.values()].map((u) => u.pool),
        store.vendorKeyHealth,
        gateway.failover.refreshMs,
        logger,
      )
    : undefined;
  const modelRoutes = new ModelRoutes(gateway.routes, every.byId);
  const table = new RouteTable(INBOUND);
  const proxy = new VendorProxy({
    connectTimeoutMs: gateway.connectTimeoutMs,
    idleTimeoutMs: gateway.idleTimeoutMs,
  });
  const prices = new Map(Object.entries(gateway.prices));
  /**
   * A model's price: its own, else that of its name without a version suffix (`-2024-08-06`, `-20241022`, `-001`):
   * vendors answer with the dated snapshot a name points at (a batch's results name no other), and a client may name
   * it, so a priced name's snapshots cost what it does.
   */
  const priceFor = (model: string | undefined): Price | undefined => {
    if (model === undefined) return undefined;
    const own = prices.get(model);
    if (own !== undefined) return own;
    const base = snapshotBase(model);
    return base === undefined ? undefined : prices.get(base);
  };
  const meter = new UsageMeter(
    store.usage,
    (delta) => store.accounts.addUsage(delta),
    metrics,
    logger,
    gateway.usageFlushMs,
    new Set(Object.keys(gateway.prices)),
    clock,
  );
  const objects = store.vendorObjects;
  const observeRequest = requestObserver(metrics);
  const admission = {
    accounts,
    keyGate: store.keyGate,
    defaultLimit: config.rateLimits.default,
    onRateLimited: () => metrics.rateLimitRejections.inc({ surface: 'gateway' }),
  };

  /**
   * Meters and charges a batch's results once per batch, at the batch price, however often they are fetched. The
   * charge goes first, under the batch's own reference (the ledger takes it once); the marker only keeps a second
   * fetch out of the token counters.
   */
  async function accountOnce(
    upstream: Upstream,
    auth: AuthContext,
    readings: UsageReading[],
    billOnce: string,
    owner: ObjectOwner | undefined,
  ): Promise<void> {
    // A background response is a call run later: a call's price for the model it named, under a reference of its own.
    const call = owner?.call === true;
    const requestModel = call ? owner.model : undefined;
    // Results that name no model are priced by the model of the call that made their batch.
    if (owner?.model) readings = readings.map((r) => (r.model ? r : { ...r, model: owner.model }));
    const micros = priceOf(upstream.def, requestModel, readings, call ? 1 : gateway.batchPriceFactor);
    if (micros > 0) {
      await charges.once({
        accountId: auth.accountId,
        micros,
        reference: `${call ? 'llm-later' : 'llm-batch'}:${upstream.name}:${billOnce}`,
        keyId: auth.keyId,
        model: modelLabel(readings[0]?.model),
      });
    }
    // The marker's id holds a NUL, which no id a client names can (path segments and JSON strings exclude it).
    const marker = `\u0000billed:${billOnce}`;
    const [metered] = await objects.recall(upstream.name, [marker]);
    if (metered) return;
    await objects.remember(
      upstream.name,
      [{ id: marker, owner: { accountId: auth.accountId, keyFingerprint: '' } }],
      gateway.objectTtlMs,
    );
    meterAll(upstream, auth, requestModel, readings);
  }

  const now = () => (clock ?? systemClock).now();
  /** Records objects a call made as its account's (a failed write is logged: the call itself went through). */
  const rememberObjects = (vendor: string, records: { id: string; owner: ObjectOwner }[]) =>
    objects
      .remember(
        vendor,
        records.map((r) => ({ id: r.id, owner: { ...r.owner, at: now() } })),
        gateway.objectTtlMs,
      )
      .catch((err: unknown) => {
        logger.error({ err, vendor }, 'remembering vendor objects failed');
      });

  /**
   * The records of the objects a call names; another account's is a 404, as if it did not exist. A record in use
   * lives on: one written more than half its lifetime ago is written again, so only objects left unused for
   * `objectTtlMs` are forgotten (and then pass to whoever names them).
   */
  async function ownedBy(
    auth: AuthContext,
    vendor: string,
    named: string[],
  ): Promise<(ObjectOwner | null)[]> {
    const owners = await objects.recall(vendor, named);
    if (owners.some((o) => o && o.accountId !== auth.accountId)) {
      throw new ApiError('not_found', `No such ${vendor} object: ${named.join(', ')}`);
    }
    const renewBefore = now() - gateway.objectTtlMs / 2;
    const renewed = named.flatMap((id, i) => {
      const owner = owners[i];
      return owner && !((owner.at ?? 0) > renewBefore) ? [{ id, owner }] : [];
    });
    if (renewed.length) void rememberObjects(vendor, renewed);
    return owners;
  }

  /** A call's (or a batch's) price: its tokens at `factor` of their prices (batches), its tool calls in full. */
  function priceOf(
    vendor: VendorDefinition,
    requestModel: string | undefined,
    readings: UsageReading[],
    factor = 1,
  ): number {
    let micros = 0;
    for (const r of readings) {
      const price = priceFor(modelLabel(requestModel ?? r.model));
      if (!price) continue;
      micros += tokenCost(price, r.usage) * factor * tierFactor(price, vendor, r.usage.tier);
      if (r.usage.tools) micros += toolCost(price, vendor, r.usage);
    }
    return Math.round(micros);
  }

  function meterAll(
    upstream: Upstream,
    auth: AuthContext,
    requestModel: string | undefined,
    readings: UsageReading[],
  ) {
    for (const r of readings)
      meter.add(upstream.name, auth, modelLabel(requestModel ?? r.model), r.usage, r.requests);
  }

  /** Meters one call's readings and puts their price on its tab; returns the price (micro-USD). */
  function account(
    upstream: Upstream,
    auth: AuthContext,
    requestModel: string | undefined,
    readings: UsageReading[],
    /** Whose rules price it (tool calls, service tiers): the upstream's format's, for a routed call. */
    pricing: VendorDefinition = upstream.def,
  ): number {
    meterAll(upstream, auth, requestModel, readings);
    const micros = priceOf(pricing, requestModel, readings);
    // The tokens are spent: the price goes on the key and model's tab (the ledger then takes it, or what is left of
    // the balance; the next call is refused once the balance is owed).
    if (micros > 0)
      charges.add(auth.accountId, auth.keyId, modelLabel(requestModel ?? readings[0]?.model), micros);
    return micros; // [logs]
  }

  /**
   * Hands what a tap read to `record` (metering and the charge); what this returns settles when the readings are in
   * hand (a compressed body is read asynchronously) and the charge is in the journal (Redis mode), so the response
   * ends after both.
   */
  function settleUsage(
    tap: UsageTap,
    record: (readings: UsageReading[]) => void,
    failed: (err: unknown) => void,
  ): Promise<void> | undefined {
    try {
      const readings = tap.finish();
      if (!Array.isArray(readings))
        return readings.then((got) => {
          record(got);
          return charges.written();
        }, failed);
      record(readings);
      return charges.written();
    } catch (err) {
      failed(err);
    }
    return undefined;
  }

  /** Whether a call runs a priced model: it then needs a balance left (what it costs is known once it ran). */
  const needsBalance = (models: readonly unknown[]) =>
    prices.size > 0 && models.some((m) => typeof m === 'string' && priceFor(m) !== undefined);

  /** The upstream metrics of one vendor and status, bound once (a handful of label sets per vendor). */
  const bound = new Map<string, Map<number, ReturnType<typeof bindUpstreamMetrics>>>();
  function bindUpstreamMetrics(vendor: string, status: number | undefined) {
    const labels = { vendor, status_class: statusClass(status) };
    return {
      responses: metrics.gatewayUpstreamResponses.child({ vendor, code: String(status ?? 0) }),
      ttfb: metrics.gatewayTimeToFirstByte.child(labels),
      duration: metrics.gatewayUpstreamDuration.child(labels),
      overhead: metrics.gatewayOverhead.child(labels),
    };
  }

  function observe(upstream: Upstream, exchange: Exchange): void {
    const end = performance.now();
    const status = exchange.status ?? 0;
    let byStatus = bound.get(upstream.name);
    if (!byStatus) bound.set(upstream.name, (byStatus = new Map()));
    let m = byStatus.get(status);
    if (!m) byStatus.set(status, (m = bindUpstreamMetrics(upstream.name, exchange.status)));
    m.responses.inc();
    const upstreamEnd = exchange.upstreamEnd ?? end;
    if (exchange.headers !== undefined) m.ttfb.observe((exchange.headers - exchange.sent) / 1000);
    m.duration.observe((upstreamEnd - exchange.sent) / 1000);
    const overhead = end - exchange.start - (upstreamEnd - exchange.sent);
    m.overhead.observe(Math.max(0, overhead) / 1000);
  }

  /** The one 'close' listener of a gateway response: the proxy's end of it, then metrics and the access line. */
  function finish(req: IncomingMessage, res: ServerResponse, call: Call): void {
    res.on('close', () => {
      // A response closes once: `on` spares the wrapper and the removal `once` makes per request.
      call.forwarding?.close();
      call.span?.end(res.statusCode, res.writableFinished);
      call.log?.closed(res.statusCode, res.writableFinished, call.forwarding !== undefined); // [logs]
      const { requestId, start, route } = call;
      observeRequest(route, req.method!, res.statusCode, start);
      logRequest(
        logger,
        { requestId, method: req.method!, url: req.url!, status: res.statusCode, start, route },
        res.writableFinished,
      );
    });
  }

  /** Retry advice for the vendors' SDKs, which read `x-should-retry` before their own rules. */
  function refusalHeaders(call: Call, status: number): Record<string, string> {
    const headers: Record<string, string> = { [REQUEST_ID_HEADER]: call.requestId };
    if (status === 429) headers['x-should-retry'] = 'true';
    else if (status === 401 || status === 402 || status === 403 || status === 508) {
      headers['x-should-retry'] = 'false';
    }
    return headers;
  }

  /** Genway's own refusal in the vendor's shape; never a stack trace, never the envelope. */
  function refuse(req: IncomingMessage, res: ServerResponse, call: Call, err: unknown): void {
    const apiError = err instanceof ApiError ? err : unexpectedError(err);
    call.span?.refused(apiError.code);
    call.log?.refused(apiError.code); // [logs]
    logServerError(logger, apiError, err, { requestId: call.requestId, route: call.route });
    if (res.headersSent) {
      res.destroy();
      return;
    }
    if (req.readable) req.resume(); // drain an unread body so the connection can be reused
    renderError(call.inbound, res, apiError, refusalHeaders(call, apiError.status));
  }

  /** Scheme, host and mount the client called, for URLs handed back to it (a resumable upload's session URL). */
  function clientBase(req: IncomingMessage, mount: string): string {
    const trust = config.server.trustProxy;
    const proto =
      (trust && first(req.headers['x-forwarded-proto'])?.split(',')[0].trim()) ||
      ((req.socket as { encrypted?: boolean }).encrypted ? 'https' : 'http');
    const host = (trust && first(req.headers['x-forwarded-host'])?.split(',')[0].trim()) || req.headers.host;
    return host ? `${proto}://${host}${mount}` : config.server.publicUrl.replace(/\/+$/, '') + mount;
  }

  interface Request {
    path: string;
    query: string;
    queryKey: string | undefined;
    mount: string;
    resolution: Resolution;
  }

  /** Everything up to the proxy: refusals, admission, allow-list, objects. */
  async function handle(req: IncomingMessage, res: ServerResponse, call: Call, r: Request): Promise<void> {
    const { resolution } = r;
    const vendor = resolution.vendor;
    const own = call.upstream;
    const route = resolution.kind === 'route' ? resolution.route : undefined;
    const spec = route?.spec;
    const params = resolution.kind === 'route' ? resolution.params : {};
    if (resolution.kind === 'method') {
      const allow = resolution.allow.join(', ');
      throw new ApiError(
        'method_not_allowed',
        `Method ${req.method} is not allowed here; allowed: ${allow}`,
        {
          Allow: allow,
        },
      );
    }
    if (r.path.includes('%') && !decodable(r.path)) {
      throw new ApiError('invalid_request', 'Malformed percent-escape in the path');
    }
    // A cloud format's mount passes nothing it does not know: its calls go only where routes send them.
    if (resolution.kind === 'unknown' && (!r.mount || vendor.mountOnly)) {
      throw new ApiError('not_found', `No ${vendor.name} route for ${req.method} ${r.path}`);
    }
    if (hasOwnVia(req.headers.via)) {
      throw new ApiError(
        'loop_detected',
        'This request already passed through Genway (Via): the vendor base URL points back at Genway',
      );
    }
    if (spec?.refuse) throw new ApiError('forbidden', spec.refuse);
    if (spec?.upgrade) {
      throw new ApiError(
        'invalid_request',
        `${req.method} ${r.path} is a WebSocket endpoint: send Upgrade: websocket`,
      );
    }

    const admitted = admit(
      admission,
      presentedKey(req, r.queryKey),
      AUTH_MESSAGES.get(vendor.name),
      keyMemoOf(req.socket),
    );
    const auth = admitted instanceof Promise ? await admitted : admitted;
    call.log?.admitted(auth); // [logs]
    // Over a hard budget, every route is refused: a call's price is known only once it has run.
    const budgetRead = budgetGuard?.check(auth);
    if (budgetRead) await budgetRead;
    if (spec?.models && req.method === 'GET' && modelRoutes.size > 0 && vendor.modelList) {
      if (answerModels(res, call, vendor.modelList, spec.models, auth, params)) return;
    }
    if (auth.models && (!spec || spec.model === 'hidden')) {
      throw new ApiError(
        'forbidden',
        spec
          ? `This API key has a model allow-list, and this call's models are inside an uploaded file Genway does not read`
          : `This API key has a model allow-list: only ${vendor.name} routes Genway knows are passed for it, and ${req.method} ${r.path} is not one`,
      );
    }

    const hasBody =
      req.headers['content-length'] !== undefined || req.headers['transfer-encoding'] !== undefined;
    // A body that may reference objects is read whatever its declared type (a vendor may read JSON sent as
    // something else), but for a multipart upload, which streams: on a route that takes references, and on a path no
    // route names (a vendor mount passes any path).
    const readsBody =
      spec !== undefined
        ? spec.model === 'body' ||
          spec.call !== undefined ||
          (spec.refs && !isMultipart(req.headers['content-type'])) ||
          spec.stored !== undefined ||
          (spec.model === 'batch' && !!auth.models) ||
          (spec.model === 'form' && (!!auth.models || prices.size > 0))
        : !isMultipart(req.headers['content-type']);
    // A compressed body would be read as noise (no model, no references) while the vendor may inflate it and run it.
    const encoding = req.headers['content-encoding'];
    if (hasBody && readsBody && encoding !== undefined && encoding.trim().toLowerCase() !== 'identity') {
      throw new ApiError(
        'invalid_request',
        `Content-Encoding: ${encoding}: a request body Genway reads (for its model and the objects it names) must be sent uncompressed`,
      );
    }
    const body = hasBody && readsBody ? await readBody(req, gateway.maxRequestBytes) : null;
    const text = body?.toString('utf8');
    const json = parseJson(text);

    // The model as the client named it: for the allow-list, the price table and the usage labels, so usage and
    // prices line up whatever version string the vendor answers with.
    const form =
      spec?.model === 'form' && body
        ? await formFields(body, req.headers['content-type'], ['model', ...Object.keys(spec.usageForm ?? {})])
        : undefined;
    const formModel = form?.get('model');
    if (formModel?.ambiguous) throw new ApiError('invalid_request', formModel.ambiguous);
    const models =
      spec?.model === 'form' ? [formModel?.value ?? undefined] : modelsOf(spec, vendor, params, json);
    // Text JSON.parse accepts but no store or vendor can hold: refused before anything moves.
    if (models.some((m) => m !== undefined && !m.isWellFormed())) {
      throw new ApiError(
        'invalid_request',
        'model: must not hold a lone UTF-16 surrogate (an unpaired \\ud800-\\udfff escape)',
      );
    }
    const priced = needsBalance(models);
    if (models.length && (auth.models || priced)) assertModels(auth, models, lookalikeOf(spec, json), priced);
    // A route whose answer carries no token usage (or none a client cannot switch off) would run a priced model free.
    if (priced && spec) {
      const pricedModel = models.find((m) => priceFor(m))!;
      const price = priceFor(pricedModel)!;
      const unmetered =
        spec.unmetered ??
        (spec.unmeteredModels?.pattern.test(pricedModel) ? spec.unmeteredModels.why : undefined) ??
        (spec.usage && vendor.usage[spec.usage]?.countOnly ? 'its answer reports no token usage' : undefined);
      if (unmetered) {
        throw new ApiError(
          'forbidden',
          `${req.method} ${r.path}: ${unmetered}, so the priced model ${pricedModel} would run unbilled: priced models run only on metered routes`,
        );
      }
      const hidden = form && hiddenByForm(spec.usageForm, form);
      if (hidden) throw new ApiError('invalid_request', hidden);
      const tier = unpricedTier(price, vendor, json);
      if (tier) throw new ApiError('forbidden', tier);
    }
    // A path no route names (a vendor mount passes any) is metered by no one: a priced model must not run there.
    if (!spec && prices.size > 0) {
      const named = unroutedModels(vendor, r.path, json);
      if (needsBalance(named)) {
        throw new ApiError(
          'forbidden',
          `${req.method} ${r.path} is not a route Genway meters, and it names the priced model ${named.find((m) => priceFor(m))}: priced models run only on metered routes`,
        );
      }
    }
    if (priced && spec?.usage && vendor.hidesUsage) {
      const hidden = vendor.hidesUsage(new URLSearchParams(r.query), req.headers);
      if (hidden) throw new ApiError('invalid_request', hidden);
    }
    const model = spec?.model === 'batch' ? undefined : models[0];
    call.span?.request(auth, model);
    call.log?.request(auth, model, body, res); // [logs]
    // A batch whose models are inside an uploaded file (OpenAI's) may run any priced model: it needs a balance too.
    if (priced || (spec?.model === 'hidden' && prices.size > 0)) {
      const balanceRead = balanceGuard.check(auth.accountId);
      if (balanceRead) await balanceRead;
    }

    const planned =
      spec?.call && (modelRoutes.size > 0 || vendor.mountOnly) ? plan(vendor, model) : undefined;
    if (planned) {
      // A routed call may still name objects (a file id, a cached content): only its own account's.
      const named = namedObjects(spec, vendor, params, r, json);
      if (named.length) await ownedBy(auth, vendor.name, named);
      return forwardRouted(req, res, call, r, spec as RoutedSpec, auth, model!, text, json, planned);
    }
    if (!own) throw new ApiError('not_found', `No ${vendor.name} route for ${req.method} ${r.path}`);
    const upstream = own;

    // Objects this call names: bound to the account that made them, and to the vendor key that made them.
    const named = namedObjects(spec, vendor, params, r, json);
    let owner: ObjectOwner | undefined;
    let key: VendorKey | undefined;
    if (named.length) {
      const owners = await ownedBy(auth, vendor.name, named);
      owner = owners.find((o): o is ObjectOwner => o !== null);
      key = owner ? upstream.keyOf(owner.keyFingerprint) : undefined;
    }
    key ??= upstream.nextKey();

    // An object Genway never saw made is read with the route's `unseen` format (a batch's results nobody revealed).
    const unseen = spec?.unseen && named.length && !owner ? spec.unseen : undefined;
    // A call priced by more than its usage object (tool calls, a service tier) is read with its detailed format.
    const detail = spec?.detailedUsage;
    const detailed =
      detail &&
      (offersTool(json, detail.tools) ||
        detail.fields.some((f) => json?.[f] !== undefined) ||
        asksTier(json, vendor))
        ? detail.usage
        : undefined;
    const usageName = detailed ?? spec?.usage ?? owner?.usage ?? unseen;
    const format: UsageFormat | undefined = usageName ? vendor.usage[usageName] : undefined;
    const billOnce = (spec?.billOnce ?? owner?.usage ?? unseen) ? named[0] : undefined;
    // A call about an object Genway never saw made (or whose record expired) records nothing: its reader would take
    // the object, and what it reveals (a batch's output file), from the account that made it.
    const creates =
      spec?.creates &&
      (spec.object === undefined || owner !== undefined) &&
      (spec.stored === undefined ||
        (spec.stored === 'by-default' ? json?.store !== false : json?.store === true))
        ? spec.creates
        : undefined;
    // Run in the background: what it creates answers with the usage later, and is metered when read.
    const later = spec?.background && json?.background === true ? spec.background : undefined;
    const remembered: Promise<unknown>[] = [];
    const remember = (found: RevealedObject[]) => {
      if (!found.length) return;
      const fingerprint = key ? upstream.fingerprint(key) : '';
      // Metered objects keep the model of the call that made them: their results are priced by it where they name none.
      const madeBy = model ?? owner?.model;
      const records = found.map((o) => ({
        id: o.id,
        owner: {
          accountId: auth.accountId,
          keyFingerprint: fingerprint,
          ...(o.usage
            ? { usage: o.usage, ...(madeBy ? { model: madeBy } : {}) }
            : later
              ? { usage: later, call: true, model }
              : {}),
        },
      }));
      remembered.push(rememberObjects(vendor.name, records));
    };

    // A stream that reports no usage unless asked: asked for here, and the usage-only chunk kept from the client.
    let sent = body;
    let transform: ReturnType<typeof withoutUsageChunk> | undefined;
    if (spec?.streamUsage && json?.stream === true && text && !asksForUsage(json)) {
      sent = withUsageRequested(text, json);
      transform = withoutUsageChunk();
    }

    const query = r.queryKey === undefined ? r.query : splitQueryKey(r.query).rest;
    let tap: UsageTap | null = null;
    let watch: ((chunk: Buffer) => void) | undefined;
    /**
     * Meters the tap's readings and charges their price, once. What this returns settles when the readings are in
     * hand (a compressed body is read asynchronously) and the charge is in the journal (Redis mode), not when posted.
     */
    let recorded = false;
    function recordUsage(): Promise<void> | undefined {
      recorded = true;
      const t = tap as UsageTap | null;
      if (!t) return undefined;
      const failed = (err: unknown) =>
        logger.error({ err, vendor: vendor.name }, 'recording gateway usage failed');
      const record = (readings: UsageReading[]) => {
        if (!readings.length) return;
        call.span?.usage(readings);
        if (billOnce) {
          accountOnce(upstream, auth, readings, billOnce, owner).catch(failed);
          call.log?.usage(readings, 0); // [logs] batch results: charged once, under the batch's reference
        } else {
          const micros = account(upstream, auth, model, readings);
          call.log?.usage(readings, micros); // [logs]
        }
      };
      return settleUsage(t, record, failed);
    }
    if (res.destroyed || req.socket.destroyed) return; // the client left while it was admitted
    call.forwarding = proxy.forward(req, res, {
      upstream,
      key,
      pinned: owner !== undefined,
      onKey: (served) => (key = served),
      path: query ? `${r.path}?${query}` : r.path,
      body: sent ?? (hasBody ? req : null),
      transform,
      whole: billOnce !== undefined,
      // Only a stream has an answer out before its usage (and a plain JSON call no closure to pay for).
      lingers:
        format?.ending && (json?.stream === true || spec?.stream === 'always')
          ? () => (tap as UsageTap | null)?.ending() ?? false
          : undefined,
      start: call.start,
      requestId: call.requestId,
      rewritesHeaders: creates?.headers !== undefined,
      rewriteBody: spec?.absoluteUrls ? pointingBack(upstream.base, clientBase(req, r.mount)) : undefined,
      onResponse:
        !format && !creates
          ? undefined
          : (status, head, headers) => {
              if (status < 200 || status >= 300) return undefined;
              if (format) tap = createUsageTap(format, head.contentType, head.contentEncoding);
              if (creates)
                watch = watchCreated(creates, headers, clientBase(req, r.mount), upstream.base, remember);
              const t = tap as UsageTap | null;
              if (!watch) return t?.write;
              const w = watch;
              return t ? (chunk) => (t.write(chunk), w(chunk)) : w;
            },
      beforeEnd: () => {
        watch?.(END);
        // The charge is journaled before the client's response ends (see holdLast in the proxy).
        const readings = recordUsage();
        if (!remembered.length) return readings;
        return Promise.all(readings ? [...remembered, readings] : remembered);
      },
      onClose: (exchange) => {
        observe(upstream, exchange);
        call.span?.upstream(exchange);
        // What was seen so far when the client left early (a batch's results are billed only when whole).
        const recording = !recorded && !(billOnce && !exchange.complete) ? recordUsage() : undefined; // [logs]
        call.log?.exchange(exchange, recording); // [logs]
      },
    });
  }

  /** When the routes' list was made: their models' `created`. */
  const routesSince = Date.now();

  /**
   * `GET /v1/models` (and Gemini's) with routes configured: the routes this key may call, in the vendor's list shape;
   * one route's entry for `GET .../models/{name}` (false: not a route, the vendor's own model passes through).
   */
  function answerModels(
    res: ServerResponse,
    call: Call,
    shapes: NonNullable<VendorDefinition['modelList']>,
    which: 'all' | 'one',
    auth: AuthContext,
    params: Record<string, string>,
  ): boolean {
    const mayCall = (name: string) => auth.models === null || auth.models.includes(name);
    let body: unknown;
    if (which === 'all') body = shapes.list([...modelRoutes.names()].filter(mayCall), routesSince);
    else {
      const name = decoded(params.model ?? '');
      if (!modelRoutes.has(name)) return false;
      if (!mayCall(name)) throw new ApiError('not_found', `No model ${name}`);
      body = shapes.one(name, routesSince);
    }
    const payload = JSON.stringify(body);
    res.writeHead(200, {
      [REQUEST_ID_HEADER]: call.requestId,
      'content-type': 'application/json',
      'content-length': Buffer.byteLength(payload),
    });
    res.end(payload);
    return true;
  }

  /**
   * The targets a model call tries: its route's, in the route's order; for a cloud format's call naming a model no
   * route names, the first upstream of that cloud's type, with the model as named. Undefined: the vendor's own.
   */
  function plan(vendor: VendorDefinition, model: string | undefined): Target[] | undefined {
    const planned = model === undefined ? undefined : modelRoutes.plan(model);
    if (planned || !vendor.mountOnly) return planned;
    const upstream = every.firstOf(vendor.name);
    if (!upstream || model === undefined) {
      throw new ApiError(
        'not_found',
        `No route for model ${model ?? '(none)'} in gateway.routes, and no ${vendor.name} upstream in gateway.upstreams`,
      );
    }
    return [{ upstream, model }];
  }

  /**
   * A routed call (src/gateway/model-routes.ts): each target gets the call in its own envelope (the model's name and
   * what its API requires changed, every other byte as sent), its answer comes back in the caller's framing and error
   * shape, read for usage by its format's reader and priced by the route's name.
   */
  function forwardRouted(
    req: IncomingMessage,
    res: ServerResponse,
    call: Call,
    r: Request,
    spec: RoutedSpec,
    auth: AuthContext,
    model: string,
    text: string | undefined,
    json: Json | undefined,
    planned: Target[],
  ): void {
    const vendor = r.resolution.vendor;
    const query = r.queryKey === undefined ? r.query : splitQueryKey(r.query).rest;
    const read = readModelCall(vendor, spec, text, json, req.headers, query);
    const skipped: string[] = [];
    let refusal: ApiError | undefined;
    const targets: RoutedCallTarget[] = [];
    for (const t of planned) {
      const format = t.upstream.calls.format(t.model, read.format);
      if (!t.upstream.calls.serves(format, read.op)) {
        skipped.push(
          `${t.upstream.name} serves no ${format} ${read.op === 'count' ? 'token count' : 'call'}`,
        );
        continue;
      }
      if (format === read.format) {
        targets.push(routedTarget(t, read));
        continue;
      }
      if (!translates(read.format, format)) {
        skipped.push(
          `${t.upstream.name} speaks ${format}, which a ${read.format} call is not translated into`,
        );
        continue;
      }
      try {
        targets.push(routedTarget(t, read, translated(read, format, t.model, model)));
      } catch (err) {
        if (!(err instanceof TranslationError)) throw err;
        // What this target cannot express: the next may (a target of the caller's own format passes it).
        refusal ??= untranslatable(err);
      }
    }
    if (!targets.length) {
      throw (
        refusal ??
        new ApiError(
          'invalid_request',
          `model: no target of ${JSON.stringify(model)} takes this ${read.format} call (${skipped.join('; ')})`,
        )
      );
    }
    const first = targets[0];
    let served: RoutedCallTarget = first;
    let tap: UsageTap | null = null;
    let recorded = false;
    const failed = (err: unknown) =>
      logger.error({ err, upstream: served.upstream.name }, 'recording gateway usage failed');
    function recordUsage(): Promise<void> | undefined {
      recorded = true;
      const t = tap as UsageTap | null;
      if (!t) return undefined;
      const record = (readings: UsageReading[]) => {
        if (!readings.length) return;
        call.span?.usage(readings);
        const micros = account(served.upstream, auth, model, readings, VENDOR_OF_FORMAT[served.format]);
        call.log?.usage(readings, micros);
      };
      return settleUsage(t, record, failed);
    }
    if (res.destroyed || req.socket.destroyed) return;
    call.forwarding = proxy.forward(req, res, {
      upstream: first.upstream,
      key: first.upstream.nextKey(),
      path: r.path,
      body: Buffer.from(read.text),
      start: call.start,
      requestId: call.requestId,
      lingers: read.stream ? () => (tap as UsageTap | null)?.ending() ?? false : undefined,
      renderError: (out, err, headers) => renderError(vendor, out, err, headers),
      route: {
        targets,
        adapt: (target, status, head) =>
          adaptAnswer({
            vendor,
            call: read,
            request: (target as RoutedCallTarget).request(),
            shape: target.upstream.calls.errorShape,
            status,
            head,
            usage: usageFormatOf((target as RoutedCallTarget).format, read.op),
            tapped: (t) => (tap = t),
            withoutUsageChunk: (target as RoutedCallTarget).askedUsage ? withoutUsageChunk() : undefined,
            translator: (target as RoutedCallTarget).translated?.answer,
          }),
        served: (target) => {
          served = target as RoutedCallTarget;
          call.upstream = served.upstream;
          call.span?.routed(served.upstream, served.model);
          call.log?.routed(served.upstream.name, served.model);
        },
      },
      beforeEnd: () => recordUsage(),
      onClose: (exchange) => {
        observe(served.upstream, exchange);
        call.span?.upstream(exchange);
        call.log?.exchange(exchange, recorded ? undefined : recordUsage());
      },
    });
  }

  function request(req: IncomingMessage): Request {
    const url = req.url!;
    const q = url.indexOf('?');
    let path = q === -1 ? url : url.slice(0, q);
    if (path.includes('%') || path.includes('/.')) path = normalizePath(path);
    const query = q === -1 ? '' : url.slice(q + 1);
    const queryKey = query ? splitQueryKey(query).key : undefined;
    const segment = firstSegment(path);
    const mounted = MOUNTS.get(segment);
    let mount = '';
    if (mounted) {
      mount = `/${segment}`;
      path = path.slice(mount.length) || '/';
    }
    const resolution = table.resolve(req.method!, path, req.headers, queryKey !== undefined, mounted);
    return { path, query, queryKey, mount, resolution };
  }

  function routeLabel(r: Request): string {
    if (r.resolution.kind === 'route') return r.mount + r.resolution.route.template;
    return `${r.mount}/${r.mount ? '' : firstSegment(r.path)}*`.replace('//', '/');
  }

  return {
    owns: (url) => url.charCodeAt(0) === 47 && OWNED.has(firstSegment(url)),
    handle: (req, res) => {
      const start = performance.now();
      const r = request(req);
      const inbound = r.resolution.vendor;
      const call: Call = {
        requestId: requestIdOf(req),
        start,
        route: routeLabel(r),
        inbound,
        upstream: inbound.mountOnly ? undefined : upstreams[inbound.name as VendorName],
      };
      if (tracing) {
        const { resolution } = r;
        call.span = tracing.gatewayCall(req, {
          start,
          vendor: resolution.vendor.name,
          method: req.method!,
          template: resolution.kind === 'route' ? resolution.route.template : undefined,
          route: call.route,
          requestId: call.requestId,
          origin: call.upstream?.origin,
        });
      }
      // [logs] The call's row (src/logs): written once the call is over.
      if (requestLog)
        call.log = requestLog.gatewayCall(req, call.requestId, start, call.route, r.resolution.vendor.name);
      finish(req, res, call);
      handle(req, res, call, r).catch((err: unknown) => refuse(req, res, call, err));
    },
    upgrade: (req, socket, head) => {
      const r = request(req);
      const inbound = r.resolution.vendor;
      if (inbound.mountOnly) {
        socket.destroy();
        return;
      }
      const upstream = upstreams[inbound.name as VendorName];
      const wsKey = upstream.nextKey();
      const requestId = requestIdOf(req); // [logs] also the id of each turn's row
      proxyWebSocket({
        req,
        socket,
        head,
        upstream,
        route: r.resolution.kind === 'route' ? r.resolution.route.spec : undefined,
        path: r.path,
        query: r.queryKey === undefined ? r.query : splitQueryKey(r.query).rest,
        admit: () =>
          admit(admission, presentedKey(req, r.queryKey), AUTH_MESSAGES.get(r.resolution.vendor.name)),
        allowed: (auth, asked) => assertModels(auth, asked.models, asked.lookalike, false),
        check: async (auth, asked, message) => {
          const priced = needsBalance(asked.models);
          assertModels(auth, asked.models, asked.lookalike, priced);
          if (priced) {
            // The event's fields, or (its other shape) its `response`'s: a tier asked in either is checked.
            const price = priceFor(asked.models.find((m) => typeof m === 'string' && priceFor(m)) as string)!;
            for (const fields of [message, message.response]) {
              const tier = unpricedTier(price, upstream.def, fields as Json | undefined);
              if (tier) throw new ApiError('forbidden', tier);
            }
          }
          await budgetGuard?.check(auth);
          if (priced) await balanceGuard.check(auth.accountId);
          // A turn continues a response or reads a file as an HTTP call does: only its own account's.
          const refs = upstream.def.refs;
          const named = refs ? refsIn(message, refs) : [];
          if (named.length) await ownedBy(auth, upstream.name, named);
        },
        created: (auth, responseId) => {
          const owner = {
            accountId: auth.accountId,
            keyFingerprint: wsKey ? upstream.fingerprint(wsKey) : '',
          };
          void rememberObjects(upstream.name, [{ id: responseId, owner }]);
        },
        key: wsKey,
        requestId, // [logs]
        idleTimeoutMs: gateway.idleTimeoutMs,
        connectTimeoutMs: gateway.connectTimeoutMs,
        logger,
        onUsage: (auth, model, readings) => {
          const micros = account(upstream, auth, model, readings);
          requestLog?.webSocketTurn(
            req,
            requestId,
            auth,
            model,
            readings,
            micros,
            routeLabel(r),
            upstream.name,
          ); // [logs]
        },
      });
    },
    flushUsage: () => Promise.all([meter.flush(), charges.settle()]).then(() => undefined),
    close: async () => {
      keyHealth?.close();
      every.close();
      await proxy.close();
      await meter.close();
    },
  };
}

/**
 * The objects a call names: its route's object (and, when its decoded id holds a `/`, each part: a vendor that decodes
 * `%2F` before routing reads `file-A%2Fcontent` as file-A's content), every value of its object query parameter, and
 * what its JSON body references. A path no route names (through a vendor mount) names every segment and pair of
 * segments of it, trailing, doubled or encoded slashes and all, and the referencing fields of its query and body:
 * it cannot reach an object of another account by a path Genway does not know.
 */
function namedObjects(
  spec: RouteSpec | undefined,
  vendor: VendorDefinition,
  params: Record<string, string>,
  r: { path: string; query: string },
  json: Json | undefined,
): string[] {
  const ids: string[] = [];
  if (spec?.object) {
    const id = spec.object.replace(/\{(\w+)\}/g, (_, name: string) => decoded(params[name] ?? ''));
    ids.push(id);
    const parts = id.split('/');
    if (parts.length > spec.object.split('/').length) ids.push(...parts);
  }
  // Parsed only where a parameter can name an object (most calls have no query, or only `alt=sse`).
  const query =
    r.query && (spec === undefined || spec.objectQuery) ? new URLSearchParams(r.query) : undefined;
  if (spec?.objectQuery && query) ids.push(...query.getAll(spec.objectQuery).filter(Boolean));
  const refs = vendor.refs;
  if (refs && (spec === undefined || spec.refs) && json) ids.push(...refsIn(json, refs));
  if (spec === undefined) {
    let path = r.path;
    try {
      path = decodeURIComponent(path);
    } catch {
      // refused before this as a malformed escape
    }
    const segments = path.split('/').filter(Boolean);
    for (let i = 0; i < segments.length; i++) {
      ids.push(segments[i]);
      if (i + 1 < segments.length) ids.push(`${segments[i]}/${segments[i + 1]}`);
    }
    if (refs && query) {
      for (const [name, value] of query) if (refs.fields.has(name)) ids.push(refs.idOf?.(value) ?? value);
    }
  }
  // No vendor id holds a NUL (a decoded %00): Genway's own markers do, and a client cannot name them.
  const unique = ids.length > 1 ? [...new Set(ids)] : ids;
  return unique.filter((id) => id !== '' && !id.includes('\u0000') && id.isWellFormed());
}

function asksForUsage(json: Json): boolean {
  const options = json.stream_options;
  return typeof options === 'object' && options !== null && (options as Json).include_usage === true;
}

/**
 * The body with `stream_options.include_usage` set: inserted after the opening brace when the client sent no
 * `stream_options` (every other byte as sent), otherwise the body re-serialised with the option added.
 */
function withUsageRequested(text: string, json: Json): Buffer {
  const open = text.indexOf('{');
  if (json.stream_options === undefined && open !== -1) {
    return Buffer.from(
      `${text.slice(0, open + 1)}"stream_options":{"include_usage":true},${text.slice(open + 1)}`,
    );
  }
  const options =
    typeof json.stream_options === 'object' && json.stream_options !== null ? json.stream_options : {};
  return Buffer.from(JSON.stringify({ ...json, stream_options: { ...options, include_usage: true } }));
}

/** An event the client did not ask for: the final chunk of an asked-for usage report (no choices, a usage). */
const USAGE_ONLY = /"choices"\s*:\s*\[\s*\]/;

/**
 * Drops the usage-only chunk from an event stream as it passes (events split at blank lines; a partial event is
 * held until its end arrives). Every other event goes on byte for byte.
 */
function withoutUsageChunk(): { write(chunk: Buffer): Buffer; end(): Buffer } {
  const decoder = new StringDecoder('utf8');
  let carry = '';
  const pass = (text: string): string => {
    let out = '';
    let start = 0;
    const boundary = /\r?\n\r?\n/g;
    for (let m = boundary.exec(text); m; m = boundary.exec(text)) {
      const end = m.index + m[0].length;
      const event = text.slice(start, end);
      if (!(event.includes('"usage"') && USAGE_ONLY.test(event))) out += event;
      start = end;
    }
    carry = text.slice(start);
    // No event is this long: not the stream this was meant for; what is held goes on unchanged.
    if (carry.length > 1 << 20) {
      out += carry;
      carry = '';
    }
    return out;
  };
  return {
    write: (chunk) => Buffer.from(pass(carry + decoder.write(chunk))),
    end: () => {
      const rest = carry + decoder.end();
      carry = '';
      return Buffer.from(rest);
    },
  };
}

/** Rewrites absolute vendor URLs in a JSON body to Genway's (the JSON may escape its slashes). */
function pointingBack(vendorBase: string, base: string): (body: Buffer) => Buffer {
  const escaped = vendorBase.replace(/\//g, '\\/');
  return (body) => {
    const text = body.toString('utf8');
    if (!text.includes(vendorBase) && !text.includes(escaped)) return body;
    return Buffer.from(text.split(vendorBase).join(base).split(escaped).join(base.replace(/\//g, '\\/')));
  };
}

/** Marks the end of a body for `watchCreated`. */
const END = Buffer.alloc(0);

/**
 * Finds the objects a creation response names, as early as it can (headers, the first bytes), and hands them to
 * `remember` (whose writes hold the end of the response, so the client can use an id only once it is recorded).
 */
function watchCreated(
  creates: NonNullable<RouteSpec['creates']>,
  /** Given when `creates.headers` reads them (the proxy then writes them from this object). */
  headers: ResponseHeaders | undefined,
  base: string,
  vendorBase: string,
  remember: (found: RevealedObject[]) => void,
): ((chunk: Buffer) => void) | undefined {
  if (creates.headers && headers) remember(creates.headers(headers, { clientBase: base, vendorBase }));
  const { head, json } = creates;
  if (!head && !json) return undefined;
  const chunks: Buffer[] = [];
  let size = 0;
  let headDone = !head;
  let jsonDone = !json;
  return (chunk) => {
    const ended = chunk === END;
    if (!ended && !(headDone && jsonDone)) {
      chunks.push(chunk);
      size += chunk.length;
    }
    if (!headDone && (ended || size >= HEAD_BYTES || head!.test(chunk.toString('latin1')))) {
      headDone = true;
      const text = Buffer.concat(chunks).subarray(0, HEAD_BYTES).toString('utf8');
      const id = head!.exec(text)?.[1];
      if (id) remember([{ id }]);
    }
    if (!jsonDone && (ended || size > CREATED_JSON_BYTES)) {
      jsonDone = true;
      if (size <= CREATED_JSON_BYTES) {
        const parsed = parseJson(Buffer.concat(chunks).toString('utf8'));
        if (parsed) remember(json!(parsed));
      }
    }
    if (headDone && jsonDone) chunks.length = 0;
  };
}
