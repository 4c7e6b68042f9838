import type http from 'node:http';
import type {
  RouteSpec,
  VendorDefinition as AnyVendorDefinition,
  VendorName,
} from '../../src/gateway/vendor';

/** The three vendors' own formats (their config, keys and mounts): what this suite covers. */
type VendorDefinition = AnyVendorDefinition<VendorName>;
import { VENDOR_BY_NAME, VENDORS } from '../../src/gateway/vendors';
import type { ModelUsage } from '../../src/gateway/store';
import {
  alternatives,
  bodyModel,
  carrierName,
  carriers,
  creationFor,
  declaredMethods,
  equivalentSpellings,
  fill,
  hasBody,
  keyHeaderNames,
  lookalikeBody,
  modelBody,
  MULTIPART,
  multipartBody,
  noise,
  objectId,
  objectParams,
  oddJson,
  plainRoutes,
  readsBody,
  referenceFor,
  routeBody,
  routeName,
  SAMPLE_MODEL,
  sampleParams,
  SDK_HEADERS,
  undeclaredMethod,
  type Carrier,
  type Creation,
} from '../helpers/conformance';
import { settled } from '../helpers/eventually';
import { testConfig } from '../helpers/services';
import { rawRequest, startGateway, type RawResponse, type RunningGateway } from '../helpers/gateway';
import { MockVendor, RESPONSES_USAGE, type MockHandler, type Received } from '../helpers/mock-vendor';

/**
 * One conformance suite for every vendor, generated from the vendor definitions (src/gateway/vendors/*.ts): each
 * route of each table, on its bare path and through its vendor mount, is checked for exact pass-through with every
 * key carrier, Genway's own refusals in the vendor's shape, object ownership and key pinning, and metering. A route
 * added to a table is covered without a line here (a new usage format needs its canned answer in CANNED, below).
 *
 * Each test compares one object of named outcomes (`'key in x-api-key'`, `'no key'`...) with what they should be,
 * so a failure names the vendor, method and template (the test) and the case (the key in the diff). The exchanges
 * of one test run concurrently; each is told apart at the vendor by its own `x-conformance-id` header.
 */

const ONE_KEY: Record<VendorName, string[]> = {
  anthropic: ['sk-ant-conformance-1'],
  openai: ['sk-openai-conformance-1'],
  gemini: ['AIza-gemini-conformance-1'],
};
const TWO_KEYS: Record<VendorName, string[]> = {
  anthropic: ['sk-ant-pool-a', 'sk-ant-pool-b'],
  openai: ['sk-openai-pool-a', 'sk-openai-pool-b'],
  gemini: ['AIza-gemini-pool-a', 'AIza-gemini-pool-b'],
};
/** Every header any vendor's key travels in, from the client or to the vendor. */
const KEY_HEADERS = [...new Set([...keyHeaderNames(VENDORS), ...VENDORS.map((v) => v.keyTo.header)])];
/** Query parameters every generated request carries: their bytes must reach the vendor as sent. */
const QUERY = 'conf=1&q=a%2Fb%20c&p=x+y';
const UNKNOWN_KEY = `gwk_${'u'.repeat(43)}`;
/** Each vendor's 401 for a request with no key names where that vendor's SDKs send one. */
const MISSING_KEY: Record<string, string> = {
  anthropic: 'Missing API key: send your Genway key in x-api-key or Authorization: Bearer',
  openai: 'Missing API key: send your Genway key in Authorization: Bearer',
  gemini: 'Missing API key: send your Genway key in x-goog-api-key, Authorization: Bearer or ?key=',
};
const RATE_LIMIT = { ratePerSec: 0.001, burst: 1 };
const EXCHANGE_HEADER = 'x-conformance-id';
/** `gateway.maxRequestBytes` here: small, so a body over it is quick to send. */
const MAX_REQUEST_BYTES = 64 << 10;
/** Client headers some vendor never receives (`dropHeaders`): every request carries them. */
const DROPPED = Object.fromEntries(
  [...new Set(VENDORS.flatMap((v) => v.dropHeaders ?? []))].map((h) => [h, `conf-${h}`]),
);
/** Client headers no vendor ever receives: the client's cookies are for Genway's origin. */
const CLIENT_SESSION = { cookie: 'genway_console=conformance; theme=dark' };
/**
 * Vendor answer headers no client ever receives: Genway's own vendor account, the vendor's cookies, and the quota of
 * Genway's vendor key (what all accounts together have left).
 */
const VENDOR_SESSION = {
  'openai-organization': 'org-genway',
  'openai-project': 'proj_genway',
  'anthropic-organization-id': '5f1c0de0-0000-4000-8000-000000000000',
  'set-cookie': ['__cf_bm=vendor-session; path=/; HttpOnly', 'b=2; Path=/'],
  'x-ratelimit-limit-requests': '10000',
  'x-ratelimit-remaining-tokens': '149984',
  'x-ratelimit-reset-requests': '6ms',
  'anthropic-ratelimit-requests-remaining': '49',
  'anthropic-ratelimit-input-tokens-reset': '2030-01-01T00:00:12Z',
  'anthropic-priority-output-tokens-limit': '8000',
};
const TRACE = 'a=1; b="two"';
const { anthropic, gemini, openai } = VENDOR_BY_NAME;
const DEFAULT_CONFIG = testConfig();

let counter = 0;
/** A number unique in this file (object ids, exchange ids). */
const nextN = () => ++counter;

// --- one Genway and one recording vendor per describe -------------------------------------------------------------

interface Context {
  vendor: MockVendor;
  gw: RunningGateway;
  /** How the vendor answers an exchange (by its id; `okAnswer` otherwise). */
  answers: Map<string, MockHandler>;
  /** What the vendor received for an exchange in flight. */
  seen: Map<string, Received[]>;
}

function json(
  res: http.ServerResponse,
  status: number,
  body: Buffer | string,
  type = 'application/json',
): void {
  const bytes = Buffer.from(body);
  res.writeHead(status, { 'content-type': type, 'content-length': String(bytes.length) }).end(bytes);
}

/** `{"ok":true}` (200, JSON): the vendor's answer when a test does not care what it says. */
const okAnswer: MockHandler = (_req, res) => json(res, 200, '{"ok":true}');

/** An event stream written event by event, without a length (as the vendors send them). */
const streamAnswer =
  (events: string[]): MockHandler =>
  (_req, res) => {
    res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache' });
    for (const event of events) res.write(event);
    res.end();
  };

function useConformance(pools: Record<VendorName, string[]>): Context {
  const ctx = { answers: new Map(), seen: new Map() } as Context;
  beforeAll(async () => {
    ctx.vendor = await new MockVendor((req, res) => {
      const id = String(req.headers[EXCHANGE_HEADER]);
      ctx.seen.get(id)?.push(req);
      return (ctx.answers.get(id) ?? okAnswer)(req, res);
    }).start();
    const vendors = Object.fromEntries(VENDORS.map((v) => [v.name, { apiKeys: pools[v.name] }]));
    ctx.gw = await startGateway(ctx.vendor.url, {
      gateway: { ...vendors, usageFlushMs: 10, maxRequestBytes: MAX_REQUEST_BYTES },
    });
  });
  afterAll(async () => {
    await ctx.gw?.close();
    await ctx.vendor?.stop();
  });
  return ctx;
}

/** An account and its keys (an unrestricted one, `key`, first). */
async function keys(ctx: Context, ...options: { models?: string[]; rateLimit?: typeof RATE_LIMIT }[]) {
  const { accounts } = ctx.gw.h.services;
  const { accountId } = await accounts.createAccount('conformance', 100);
  const [own, ...more] = await Promise.all([{}, ...options].map((o) => accounts.createKey(accountId, o)));
  return { accountId, key: own.key, keyId: own.keyId, more };
}

// --- exchanges ----------------------------------------------------------------------------------------------------

/** A request as the vendor should receive it (no mount, no Genway key). */
interface VendorRequest {
  method: string;
  path: string;
  query: string;
  body?: Buffer;
  contentType?: string;
  headers?: Record<string, string>;
}

interface Exchange {
  /** Also the client's `x-request-id`, so Genway's `genway-request-id`. */
  id: string;
  res: RawResponse;
  /** What the vendor received in this exchange. */
  upstream: Received[];
}

interface Auth {
  key: string;
  carrier: Carrier;
}

/** One exchange with Genway: `url` is the path from the root (mount included) and query. */
async function exchange(
  ctx: Context,
  method: string,
  url: string,
  headers: Record<string, string>,
  body?: Buffer,
  answer?: MockHandler,
): Promise<Exchange> {
  const id = `conf-${nextN()}`;
  const upstream: Received[] = [];
  ctx.seen.set(id, upstream);
  if (answer) ctx.answers.set(id, answer);
  try {
    const res = await rawRequest(ctx.gw.base, {
      method,
      path: url,
      headers: { ...headers, 'x-request-id': id, [EXCHANGE_HEADER]: id },
      body,
    });
    return { id, res, upstream };
  } finally {
    ctx.seen.delete(id);
    ctx.answers.delete(id);
  }
}

/** The Genway key where `carrier` puts it (`Authorization: Bearer`, a key header, or `?key=` mid-query). */
function present(auth: Auth | null, query: string): { headers: Record<string, string>; query: string } {
  if (!auth) return { headers: {}, query };
  const { key, carrier } = auth;
  if (carrier.kind === 'query') {
    const [first, ...rest] = query ? query.split('&') : [];
    return { headers: {}, query: [first, `key=${key}`, ...rest].filter(Boolean).join('&') };
  }
  return { headers: { [carrier.name]: carrier.name === 'authorization' ? `Bearer ${key}` : key }, query };
}

/** `r` sent as the vendor's SDK would, on `mount`, with the key where `auth` says. */
function send(
  ctx: Context,
  vendor: VendorDefinition,
  r: VendorRequest,
  mount: string,
  auth: Auth | null,
  answer?: MockHandler,
): Promise<Exchange> {
  const presented = present(auth, r.query);
  const headers: Record<string, string> = {
    'x-conformance-trace': TRACE,
    ...DROPPED,
    ...CLIENT_SESSION,
    ...SDK_HEADERS[vendor.name],
    ...r.headers,
    ...presented.headers,
  };
  if (r.body) {
    headers['content-type'] = r.contentType ?? 'application/octet-stream';
    headers['content-length'] = String(r.body.length);
  }
  const url = `${mount}${r.path}${presented.query ? `?${presented.query}` : ''}`;
  return exchange(ctx, r.method, url, headers, r.body, answer);
}

/** The generated request for a route: first alternatives, sample parameters, the route's body. */
function requestFor(
  vendor: VendorDefinition,
  spec: RouteSpec,
  n: number,
  params = sampleParams(spec.path, n),
  body = routeBody(vendor, spec, n),
): VendorRequest {
  const query = spec.stream === 'alt=sse' ? `alt=sse&${QUERY}` : QUERY;
  return { method: spec.method, path: fill(spec.path, params), query, ...body };
}

const first = (vendor: VendorDefinition, key: string): Auth => ({ key, carrier: carriers(vendor)[0] });

// --- outcomes, as compared -------------------------------------------------------------------------------------------

/** Bytes as a readable string: printable ASCII as is, every other byte as `\xNN`. */
const bytes = (b: Buffer = Buffer.alloc(0)) =>
  b.toString('latin1').replace(/[^\x20-\x7e]/g, (c) => `\\x${c.charCodeAt(0).toString(16).padStart(2, '0')}`);

/** What the vendor received: request line, body, content and trace headers, every key header, the Genway key. */
function received(e: Exchange, genwayKey?: string) {
  return e.upstream.map((u) => ({
    request: `${u.method} ${u.url}`,
    body: bytes(u.body),
    'content-type': u.headers['content-type'],
    'content-length': u.headers['content-length'],
    trace: u.headers['x-conformance-trace'],
    via: u.headers.via,
    keys: Object.fromEntries(KEY_HEADERS.map((h) => [h, u.headers[h]])),
    vendorHeaders: Object.fromEntries(
      [...Object.keys(DROPPED), ...Object.keys(CLIENT_SESSION), ...defaultHeaderNames()].map((h) => [
        h,
        u.headers[h],
      ]),
    ),
    genwayKeyAnywhere:
      genwayKey !== undefined &&
      (u.rawHeaders.some((v) => v.includes(genwayKey)) || u.url.includes(genwayKey)),
    keyParameter: new URLSearchParams(u.url.split('?')[1] ?? '').has('key'),
  }));
}

/**
 * What the vendor should have received for `r` (sent with `sent` as its other headers): the same request, with
 * `vendorKey` in the vendor's own header, without the headers the vendor drops, with its defaults where none came.
 */
function forwardedAs(
  vendor: VendorDefinition,
  r: VendorRequest,
  vendorKey: string,
  sent: Record<string, string> = { ...DROPPED, ...SDK_HEADERS[vendor.name] },
) {
  const defaults = defaultsOf(vendor);
  const vendorHeaders: Record<string, string | undefined> = {};
  for (const h of Object.keys(DROPPED))
    vendorHeaders[h] = vendor.dropHeaders?.includes(h) ? undefined : sent[h];
  for (const h of Object.keys(CLIENT_SESSION)) vendorHeaders[h] = undefined;
  for (const h of defaultHeaderNames()) vendorHeaders[h] = sent[h] ?? defaults[h];
  return [
    {
      request: `${r.method} ${r.query ? `${r.path}?${r.query}` : r.path}`,
      body: bytes(r.body),
      'content-type': r.body ? r.contentType : undefined,
      'content-length': r.body ? String(r.body.length) : undefined,
      trace: TRACE,
      via: '1.1 genway',
      keys: Object.fromEntries(
        KEY_HEADERS.map((h) => [h, h === vendor.keyTo.header ? vendor.keyTo.value(vendorKey) : undefined]),
      ),
      vendorHeaders,
      genwayKeyAnywhere: false,
      keyParameter: false,
    },
  ];
}

/** A vendor's default headers (`defaultHeaders`) under the default config (the tests leave them as they are). */
const defaultsOf = (vendor: VendorDefinition): Record<string, string> =>
  vendor.defaultHeaders?.(DEFAULT_CONFIG.gateway[vendor.name]) ?? {};
const defaultHeaderNames = () => [...new Set(VENDORS.flatMap((v) => Object.keys(defaultsOf(v))))];

/** The client's response headers without this connection's own (Node's keep-alive, framing). */
function clientHeaders(res: RawResponse): http.IncomingHttpHeaders {
  const { connection: _c, 'keep-alive': _k, 'transfer-encoding': _t, ...rest } = res.headers;
  return rest;
}

/** Genway's additions to a passed-through response. */
const genwayHeaders = (e: Exchange) => ({
  'genway-request-id': e.id,
  via: '1.1 genway',
  'x-genway-overhead-ms': expect.stringMatching(/^\d+\.\d{3}$/) as unknown as string,
});

function parsed(body: Buffer): unknown {
  try {
    return JSON.parse(body.toString()) as unknown;
  } catch {
    return bytes(body);
  }
}

/** A refusal as the client saw it, and whether anything reached the vendor. */
const refusal = (e: Exchange) => ({
  forwarded: e.upstream.map((u) => `${u.method} ${u.url}`),
  status: e.res.status,
  body: parsed(e.res.body),
  headers: {
    'content-type': e.res.headers['content-type'],
    'genway-request-id': e.res.headers['genway-request-id'],
    'x-request-id': e.res.headers['x-request-id'],
    'x-should-retry': e.res.headers['x-should-retry'],
    'retry-after': e.res.headers['retry-after'],
    allow: e.res.headers.allow,
  },
});

/** Genway's own refusal: nothing forwarded, the vendor's error body, the retry advice headers. */
const refused = (
  vendor: VendorDefinition,
  e: Exchange,
  status: number,
  message: string,
  advice: Record<string, string> = {},
) => ({
  forwarded: [],
  status,
  body: vendor.errorBody(status, message),
  headers: { 'content-type': 'application/json', 'genway-request-id': e.id, ...advice },
});

/** A call that went through: what reached the vendor, and the status the client got. */
const passed = (e: Exchange) => ({
  forwarded: e.upstream.map((u) => `${u.method} ${u.url}`),
  body: bytes(e.upstream[0]?.body),
  status: e.res.status,
});
const passedAs = (r: VendorRequest, status = 200) => ({
  forwarded: [`${r.method} ${r.query ? `${r.path}?${r.query}` : r.path}`],
  body: bytes(r.body),
  status,
});

const NO_RETRY = { 'x-should-retry': 'false' };

/**
 * Compares named outcomes flattened to one level of `case › field` keys, so every line of a failure's diff names
 * the case it belongs to (the variants of one test run together).
 */
function expectOutcomes(actual: unknown, expected: unknown): void {
  expect(flat(actual)).toEqual(flat(expected));
}

function flat(value: unknown, prefix = '', out: Record<string, unknown> = {}): Record<string, unknown> {
  const leaf =
    value === null ||
    typeof value !== 'object' ||
    typeof (value as { asymmetricMatch?: unknown }).asymmetricMatch === 'function' ||
    Object.keys(value).length === 0;
  if (leaf) {
    if (value !== undefined) out[prefix] = value;
  } else for (const [k, v] of Object.entries(value)) flat(v, prefix ? `${prefix} › ${k}` : k, out);
  return out;
}

// --- generated cases ----------------------------------------------------------------------------------------------

interface RouteCase {
  label: string;
  vendor: VendorDefinition;
  spec: RouteSpec;
  mount: string;
  n: number;
}

const mounts = (vendor: VendorDefinition) => ['', vendor.mount];
const where = (mount: string) => (mount ? `through ${mount}` : 'bare path');

/** One case per route (all but refused and WebSocket ones, unless `routes` says), vendor and mount. */
function routeCases(
  filter: (vendor: VendorDefinition, spec: RouteSpec) => boolean = () => true,
  routes: (vendor: VendorDefinition) => readonly RouteSpec[] = plainRoutes,
): RouteCase[] {
  return VENDORS.flatMap((vendor) =>
    routes(vendor)
      .filter((spec) => filter(vendor, spec))
      .flatMap((spec) =>
        mounts(vendor).map((mount) => ({
          label: `${routeName(vendor, spec)} (${where(mount)})`,
          vendor,
          spec,
          mount,
          n: nextN(),
        })),
      ),
  );
}

const hasModel = (spec: RouteSpec) =>
  spec.model === 'body' || spec.model === 'path' || spec.model === 'batch' || spec.model === 'form';

// =================================================================================================================

describe('gateway conformance: every route of every vendor (one vendor key each)', () => {
  const ctx = useConformance(ONE_KEY);

  test.each(routeCases())(
    '$label: request and response bytes pass unchanged, the key swapped, with each key carrier',
    async ({ vendor, spec, mount, n }) => {
      const { key } = await keys(ctx);
      const r = requestFor(vendor, spec, n);
      const variants = [
        ...carriers(vendor).map((carrier) => ({
          name: `key in ${carrierName(carrier)}`,
          carrier,
          status: 201,
        })),
        { name: "the vendor's own 429", carrier: carriers(vendor)[0], status: 429 },
      ];
      const actual: Record<string, unknown> = {};
      const expected: Record<string, unknown> = {};
      await Promise.all(
        variants.map(async ({ name, carrier, status }, i) => {
          const answer = vendorAnswer(status, n * 10 + i);
          const e = await send(ctx, vendor, r, mount, { key, carrier }, answer.handler);
          actual[name] = {
            vendor: received(e, key),
            client: {
              status: e.res.status,
              statusMessage: e.res.statusMessage,
              headers: clientHeaders(e.res),
            },
            body: bytes(e.res.body),
          };
          expected[name] = {
            vendor: forwardedAs(vendor, r, ONE_KEY[vendor.name][0]),
            client: {
              status,
              statusMessage: 'Conformance Status',
              headers: { ...answer.passed, ...genwayHeaders(e) },
            },
            body: bytes(answer.body),
          };
        }),
      );
      expectOutcomes(actual, expected);
    },
  );

  test.each(routeCases())(
    "$label: Genway's own refusals, in the vendor's error shape",
    async ({ vendor, spec, mount, n }) => {
      const {
        key,
        more: [allowListed, outside, limited, revoked],
      } = await keys(
        ctx,
        { models: [SAMPLE_MODEL] },
        { models: ['some-other-model'] },
        { rateLimit: RATE_LIMIT },
        {},
      );
      await ctx.gw.h.services.accounts.revokeKey(revoked.keyId);
      const r = requestFor(vendor, spec, n);
      const withModel = requestFor(vendor, spec, n, undefined, modelBody(vendor, spec, n));
      const lookalike = lookalikeBody(vendor, spec, SAMPLE_MODEL, 'some-other-model');
      const wrong = undeclaredMethod(vendor, r.path);
      const declared = declaredMethods(vendor, r.path);
      const [
        noKey,
        unknownKey,
        revokedKey,
        looped,
        allowed,
        excluded,
        caseBlind,
        wrongMethod,
        [limitedFirst, limitedSecond],
      ] = await Promise.all([
        send(ctx, vendor, r, mount, null),
        send(ctx, vendor, r, mount, first(vendor, UNKNOWN_KEY)),
        send(ctx, vendor, r, mount, first(vendor, revoked.key)),
        send(ctx, vendor, { ...r, headers: { via: '1.1 edge, 1.1 genway' } }, mount, first(vendor, key)),
        send(ctx, vendor, withModel, mount, first(vendor, allowListed.key)),
        hasModel(spec) ? send(ctx, vendor, withModel, mount, first(vendor, outside.key)) : undefined,
        lookalike
          ? send(
              ctx,
              vendor,
              requestFor(vendor, spec, n, undefined, lookalike),
              mount,
              first(vendor, allowListed.key),
            )
          : undefined,
        send(ctx, vendor, { method: wrong, path: r.path, query: QUERY }, mount, first(vendor, key)),
        (async () => {
          const one = await send(ctx, vendor, r, mount, first(vendor, limited.key));
          return [one, await send(ctx, vendor, r, mount, first(vendor, limited.key))];
        })(),
      ]);
      // The Allow list in any order; the message quotes it as sent.
      const allowSent = wrongMethod.res.headers.allow ?? '';
      const allow =
        [...allowSent.split(', ')].sort().join() === [...declared].sort().join()
          ? allowSent
          : declared.join(', ');

      const actual: Record<string, unknown> = {
        'no key': refusal(noKey),
        'an unknown key': refusal(unknownKey),
        'a revoked key': refusal(revokedKey),
        'a request that already passed through Genway (Via)': refusal(looped),
        'a key whose allow-list holds the model':
          spec.model === 'hidden' ? refusal(allowed) : passed(allowed),
        'a rate-limited key, first call': passed(limitedFirst),
        'a rate-limited key, second call': refusal(limitedSecond),
        [`${wrong}, a method not declared on the path`]: refusal(wrongMethod),
      };
      const expected: Record<string, unknown> = {
        'no key': refused(vendor, noKey, 401, MISSING_KEY[vendor.name], NO_RETRY),
        'an unknown key': refused(vendor, unknownKey, 401, 'Invalid API key', NO_RETRY),
        'a revoked key': refused(
          vendor,
          revokedKey,
          401,
          'Invalid API key: this key has been revoked',
          NO_RETRY,
        ),
        'a request that already passed through Genway (Via)': refused(
          vendor,
          looped,
          508,
          'This request already passed through Genway (Via): the vendor base URL points back at Genway',
          NO_RETRY,
        ),
        'a key whose allow-list holds the model':
          spec.model === 'hidden'
            ? refused(
                vendor,
                allowed,
                403,
                "This API key has a model allow-list, and this call's models are inside an uploaded file Genway does not read",
                NO_RETRY,
              )
            : passedAs(withModel),
        'a rate-limited key, first call': passedAs(r),
        'a rate-limited key, second call': refused(
          vendor,
          limitedSecond,
          429,
          'Rate limit reached for this API key (0.001 requests/s, burst 1); retry after 1000 s',
          { 'x-should-retry': 'true', 'retry-after': '1000' },
        ),
        [`${wrong}, a method not declared on the path`]: refused(
          vendor,
          wrongMethod,
          405,
          `Method ${wrong} is not allowed here; allowed: ${allow}`,
          { allow },
        ),
      };
      if (excluded) {
        actual['a key whose allow-list excludes the model'] = refusal(excluded);
        expected['a key whose allow-list excludes the model'] = refused(
          vendor,
          excluded,
          403,
          `This API key has no access to model ${SAMPLE_MODEL}`,
          NO_RETRY,
        );
      }
      if (caseBlind && lookalike) {
        // Go's encoding/json matches field names regardless of case: a back end would run the other model.
        actual['a key whose allow-list holds the model, with a second model field in other case'] =
          refusal(caseBlind);
        expected['a key whose allow-list holds the model, with a second model field in other case'] = refused(
          vendor,
          caseBlind,
          400,
          `${lookalike.field}: a second model field spelled in other case; a back end that matches field names regardless of case (Go's encoding/json) could run it instead of the model Genway checked and prices`,
        );
      }
      expectOutcomes(actual, expected);
    },
  );

  test.each(
    routeCases(
      () => true,
      (v) => v.routes.filter((r) => r.refuse),
    ),
  )(
    '$label: refused for every key, never forwarded (through a mount, in any equivalent spelling too)',
    async ({ vendor, spec, mount, n }) => {
      const { key } = await keys(ctx);
      const r = requestFor(vendor, spec, n);
      const paths = { 'the path': r.path, ...(mount ? equivalentSpellings(r.path) : {}) };
      const actual: Record<string, unknown> = {};
      const expected: Record<string, unknown> = {};
      await Promise.all(
        Object.entries(paths).map(async ([name, path]) => {
          const e = await send(ctx, vendor, { ...r, path }, mount, first(vendor, key));
          actual[`${name}: ${path}`] = refusal(e);
          expected[`${name}: ${path}`] = refused(vendor, e, 403, spec.refuse!, NO_RETRY);
        }),
      );
      expectOutcomes(actual, expected);
    },
  );

  test.each(
    routeCases(
      () => true,
      (v) => v.routes.filter((r) => r.upgrade),
    ),
  )(
    '$label without Upgrade: a 400 saying it is a WebSocket endpoint, never forwarded',
    async ({ vendor, spec, mount, n }) => {
      const { key } = await keys(ctx);
      const r = requestFor(vendor, spec, n);
      const e = await send(ctx, vendor, r, mount, first(vendor, key));
      expect(refusal(e)).toEqual(
        refused(
          vendor,
          e,
          400,
          `${spec.method} ${r.path} is a WebSocket endpoint: send Upgrade: ${spec.upgrade}`,
        ),
      );
    },
  );

  test.each(routeCases((_v, spec) => hasBody(spec)))(
    '$label: a body over gateway.maxRequestBytes is a 413 where Genway reads it, piped unchanged where not',
    async ({ vendor, spec, mount, n }) => {
      const { key } = await keys(ctx);
      const reads = readsBody(spec);
      const body = reads
        ? {
            body: oddJson(bodyModel(vendor), `"pad":"${'x'.repeat(MAX_REQUEST_BYTES)}"`),
            contentType: 'application/json',
          }
        : { body: multipartBody(SAMPLE_MODEL, n, {}, MAX_REQUEST_BYTES + 1), contentType: MULTIPART };
      const r = requestFor(vendor, spec, n, undefined, body);
      const e = await send(ctx, vendor, r, mount, first(vendor, key));
      if (reads) {
        const message = `Request body of ${r.body!.length} bytes exceeds the limit of ${MAX_REQUEST_BYTES} bytes`;
        expectOutcomes(refusal(e), refused(vendor, e, 413, message));
      } else {
        expectOutcomes(passed(e), passedAs(r));
      }
    },
  );

  test.each(routeCases((_v, spec) => spec.absoluteUrls === true))(
    '$label: absolute vendor URLs in the answer point back at Genway (and its mount)',
    async ({ vendor, spec, mount, n }) => {
      const { key } = await keys(ctx);
      const answer = (base: string) => {
        const escaped = base.replace(/\//g, '\\/');
        return `{"id":"msgbatch_conf_${n}","results_url":"${base}/v1/messages/batches/msgbatch_conf_${n}/results",\n"escaped":"${escaped}\\/v1\\/x","elsewhere":"https://elsewhere.example/v1/x"}`;
      };
      const e = await send(ctx, vendor, requestFor(vendor, spec, n), mount, first(vendor, key), (_q, res) =>
        json(res, 200, answer(ctx.vendor.url)),
      );
      const body = answer(`${ctx.gw.base}${mount}`);
      expectOutcomes(
        {
          status: e.res.status,
          body: e.res.body.toString(),
          'content-length': e.res.headers['content-length'],
        },
        { status: 200, body, 'content-length': String(Buffer.byteLength(body)) },
      );
    },
  );

  test.each(routeCases((_v, spec) => spec.path.includes('(')))(
    '$label: every alternative of the template reaches the vendor',
    async ({ vendor, spec, mount, n }) => {
      const { key } = await keys(ctx);
      const params = sampleParams(spec.path, n);
      const actual: Record<string, unknown> = {};
      const expected: Record<string, unknown> = {};
      await Promise.all(
        alternatives(spec.path).map(async (template) => {
          const r = { ...requestFor(vendor, spec, n, params), path: fill(template, params) };
          const e = await send(ctx, vendor, r, mount, first(vendor, key));
          actual[r.path] = received(e, key);
          expected[r.path] = forwardedAs(vendor, r, ONE_KEY[vendor.name][0]);
        }),
      );
      expectOutcomes(actual, expected);
    },
  );

  describe('metering: the exact usage record per key', () => {
    const cases = routeCases((_v, spec) => spec.usage !== undefined).flatMap((c) =>
      (c.spec.stream && c.spec.stream !== 'always' ? (['json', 'sse'] as const) : (['json'] as const)).map(
        (variant) => ({ ...c, label: `${c.label}, ${variant} answer`, variant, n: nextN() }),
      ),
    );

    test.each(cases)('$label', async ({ vendor, spec, mount, variant, n }) => {
      const canned = CANNED[`${vendor.name}.${spec.usage}`];
      if (!canned) throw new Error(`no canned answer for the usage format ${vendor.name}.${spec.usage}`);
      const { key, keyId } = await keys(ctx);
      const streaming = variant === 'sse';
      const answer = streaming ? canned.sse!(n) : canned.json(n, spec);
      const r = meteredRequest(vendor, spec, n, streaming);
      const e = await send(
        ctx,
        vendor,
        r,
        mount,
        first(vendor, key),
        answer.events ? streamAnswer(answer.events) : cannedJson(canned, n, spec),
      );

      // A stream reports usage only when asked: Genway asks on the client's behalf, and hides the answer from it.
      const asked = streaming && spec.streamUsage !== undefined;
      const forwarded = asked
        ? {
            ...r,
            body: Buffer.from(`{"stream_options":{"include_usage":true},${r.body!.toString().slice(1)}`),
          }
        : r;
      const events = answer.events ?? [answer.text];
      const expected = usageOf(spec, canned);
      expectOutcomes(
        {
          vendor: received(e, key),
          status: e.res.status,
          body: e.res.body.toString(),
          usage: await settled(() => ctx.gw.h.services.store.usage.get(keyId), expected),
        },
        {
          vendor: forwardedAs(vendor, forwarded, ONE_KEY[vendor.name][0]),
          status: 200,
          body: events.filter((event) => !asked || event !== answer.usageOnly).join(''),
          usage: expected,
        },
      );
    });

    test.each(routeCases((_v, spec) => spec.streamUsage !== undefined))(
      '$label: a stream sent with a Content-Length reaches the client whole without its usage-only chunk',
      async ({ vendor, spec, mount, n }) => {
        const { key } = await keys(ctx);
        const answer = CANNED[`${vendor.name}.${spec.usage}`]!.sse!(n);
        const r = meteredRequest(vendor, spec, n, true);
        // The connection closes after this exchange: a body shorter than its announced length ends at once.
        const body = answer.events.filter((event) => event !== answer.usageOnly).join('');
        const length = String(Buffer.byteLength(body));
        const outcome = await send(
          ctx,
          vendor,
          { ...r, headers: { connection: 'close' } },
          mount,
          first(vendor, key),
          (_q, res) => json(res, 200, answer.text, 'text/event-stream'),
        ).then(
          (e) => ({
            body: e.res.body.toString(),
            'content-length': e.res.headers['content-length'] ?? length,
          }),
          (err: Error) => ({ error: err.message }),
        );
        expect(outcome).toEqual({ body, 'content-length': length });
      },
    );

    test.each(routeCases((_v, spec) => spec.billOnce === true))(
      '$label: results read twice are metered once',
      async ({ vendor, spec, mount, n }) => {
        const canned = CANNED[`${vendor.name}.${spec.usage}`]!;
        const { key, keyId } = await keys(ctx);
        const r = requestFor(vendor, spec, n);
        const statuses = [];
        for (let i = 0; i < 2; i++) {
          const e = await send(ctx, vendor, r, mount, first(vendor, key), cannedJson(canned, n, spec));
          statuses.push(e.res.status);
        }
        // A metered call after both reads: once its usage is in, a second count of the results would be too.
        const later = await sentinelCall(ctx, vendor, mount, first(vendor, key), n);
        const expected = { ...canned.lines, ...later };
        expectOutcomes(
          {
            statuses,
            usage: await settled(() => ctx.gw.h.services.store.usage.get(keyId), expected),
          },
          {
            statuses: [200, 200],
            usage: expected,
          },
        );
      },
    );

    test('through each vendor mount, equivalent spellings of metered paths (RFC 3986 6.2.2) are metered too', async () => {
      const cases = routeCases((_v, spec) => spec.usage !== undefined).filter((c) => c.mount !== '');
      const keyIds: Record<string, string> = {};
      const expected: Record<string, unknown> = {};
      await Promise.all(
        cases.map(async ({ vendor, spec, mount, n }) => {
          const canned = CANNED[`${vendor.name}.${spec.usage}`]!;
          const r = meteredRequest(vendor, spec, n, false);
          const path = equivalentSpellings(r.path)['a dot segment'];
          const { key, keyId } = await keys(ctx);
          await send(ctx, vendor, { ...r, path }, mount, first(vendor, key), cannedJson(canned, n, spec));
          const name = `${routeName(vendor, spec)} as ${mount}${path}`;
          expected[name] = usageOf(spec, canned);
          keyIds[name] = keyId;
        }),
      );
      const { usage } = ctx.gw.h.services.store;
      const read = async () =>
        Object.fromEntries(
          await Promise.all(
            Object.entries(keyIds).map(async ([name, keyId]) => [name, await usage.get(keyId)]),
          ),
        ) as Record<string, unknown>;
      expectOutcomes(await settled(read, expected), expected);
    });

    test.each(mounts(openai).map((mount) => ({ mount, at: where(mount) })))(
      "openai: a batch's output file, revealed by the batch, is metered once however often it is read ($at)",
      async ({ mount }) => {
        const n = nextN();
        const { key, keyId } = await keys(ctx);
        const auth = first(openai, key);
        const batchId = `batch_conf_${n}`;
        const fileId = `file-out-conf-${n}`;
        const batch =
          (status: string, output: string | null): MockHandler =>
          (_q, res) =>
            json(res, 200, JSON.stringify({ id: batchId, object: 'batch', status, output_file_id: output }));
        const create = openai.routes.find((s) => s.method === 'POST' && s.path === '/v1/batches')!;
        const created = await send(
          ctx,
          openai,
          requestFor(openai, create, n),
          mount,
          auth,
          batch('validating', null),
        );
        const done = await send(
          ctx,
          openai,
          { method: 'GET', path: `/v1/batches/${batchId}`, query: '' },
          mount,
          auth,
          batch('completed', fileId),
        );

        const lines = BATCH_OUTPUT_LINES.map((l) => `${JSON.stringify(l)}\n`).join('');
        const reads: unknown[] = [];
        for (let i = 0; i < 2; i++) {
          const read = await send(
            ctx,
            openai,
            { method: 'GET', path: `/v1/files/${fileId}/content`, query: '' },
            mount,
            auth,
            (_q, res) => json(res, 200, lines, 'application/octet-stream'),
          );
          reads.push({ status: read.res.status, body: read.res.body.toString() });
        }
        const later = await sentinelCall(ctx, openai, mount, auth, n);
        const expected = {
          'gpt-batch-a': { requests: 2, input: 12, output: 5, cacheRead: 4, cacheWrite: 0, reasoning: 1 },
          'gpt-batch-b': { requests: 1, input: 5, output: 2, cacheRead: 4, cacheWrite: 0, reasoning: 1 },
          ...later,
        };
        expectOutcomes(
          {
            statuses: [created.res.status, done.res.status],
            reads,
            usage: await settled(() => ctx.gw.h.services.store.usage.get(keyId), expected),
          },
          {
            statuses: [200, 200],
            reads: [
              { status: 200, body: lines },
              { status: 200, body: lines },
            ],
            usage: expected,
          },
        );
      },
    );
  });

  describe('unknown paths and the vendor of an ambiguous path', () => {
    /** Headers naming how a key travels: `authorization` gets `Bearer <key>`, an empty value the key itself. */
    const withKey = (how: Record<string, string>, key: string) =>
      Object.fromEntries(
        Object.entries(how).map(([h, v]) => [h, h === 'authorization' ? `Bearer ${key}` : v || key]),
      );

    test.each<{ method: string; path: string; how: Record<string, string>; vendor: VendorDefinition }>([
      { method: 'GET', path: '/v1/conformance-nothing', how: { authorization: '' }, vendor: openai },
      { method: 'GET', path: '/v1/conformance-nothing', how: { 'x-api-key': '' }, vendor: anthropic },
      {
        method: 'POST',
        path: '/v1/conformance-nothing',
        how: { authorization: '', 'anthropic-version': '2023-06-01' },
        vendor: anthropic,
      },
      { method: 'GET', path: '/v1/conformance-nothing', how: { 'x-goog-api-key': '' }, vendor: gemini },
      { method: 'GET', path: '/v1beta/conformance-nothing', how: { authorization: '' }, vendor: gemini },
      { method: 'GET', path: '/v1alpha/conformance-nothing', how: { authorization: '' }, vendor: gemini },
      {
        method: 'POST',
        path: '/upload/v1beta/conformance-nothing',
        how: { authorization: '' },
        vendor: gemini,
      },
      { method: 'POST', path: '/v1beta/models/x:fooBar', how: { 'x-goog-api-key': '' }, vendor: gemini },
      { method: 'POST', path: '/v1beta/models/x:fooBar', how: { authorization: '' }, vendor: gemini },
      { method: 'POST', path: '/v1/models/x:fooBar', how: { 'x-goog-api-key': '' }, vendor: gemini },
      { method: 'GET', path: '/v1/models/x:fooBar', how: { 'x-goog-api-key': '' }, vendor: gemini },
      { method: 'GET', path: '/v1/messages/batches/a/b/c', how: { 'x-api-key': '' }, vendor: anthropic },
    ])(
      '$method $path with $how: a 404 in the shape of $vendor.name',
      async ({ method, path, how, vendor }) => {
        const { key } = await keys(ctx);
        const e = await exchange(ctx, method, path, withKey(how, key));
        expect(refusal(e)).toEqual(refused(vendor, e, 404, `No ${vendor.name} route for ${method} ${path}`));
      },
    );

    test.each<{ name: string; how: Record<string, string>; vendor: VendorDefinition; query: boolean }>([
      { name: 'x-api-key', how: { 'x-api-key': '' }, vendor: anthropic, query: false },
      {
        name: 'Bearer and anthropic-version',
        how: { authorization: '', 'anthropic-version': '2023-06-01' },
        vendor: anthropic,
        query: false,
      },
      { name: 'x-goog-api-key', how: { 'x-goog-api-key': '' }, vendor: gemini, query: false },
      {
        name: 'Bearer and x-goog-api-client',
        how: { authorization: '', 'x-goog-api-client': 'genai-js/1' },
        vendor: gemini,
        query: false,
      },
      { name: '?key=', how: {}, vendor: gemini, query: true },
      { name: 'Bearer only', how: { authorization: '' }, vendor: openai, query: false },
    ])('GET /v1/models with $name goes to $vendor.name', async ({ how, vendor, query }) => {
      const { key } = await keys(ctx);
      const headers = { ...withKey(how, key), 'x-conformance-trace': TRACE };
      const e = await exchange(ctx, 'GET', `/v1/models${query ? `?key=${key}` : ''}`, headers);
      const r = { method: 'GET', path: '/v1/models', query: '' };
      expectOutcomes(
        { status: e.res.status, vendor: received(e, key) },
        { status: 200, vendor: forwardedAs(vendor, r, ONE_KEY[vendor.name][0], headers) },
      );
    });

    test.each<{ headers: Record<string, string>; vendor: VendorDefinition }>([
      { headers: { 'anthropic-version': '2023-06-01' }, vendor: anthropic },
      { headers: { 'x-goog-api-client': 'genai-js/1' }, vendor: gemini },
      { headers: {}, vendor: openai },
    ])(
      'GET /v1/models without a key, with $headers: a 401 in the shape of $vendor.name',
      async ({ headers, vendor }) => {
        const e = await exchange(ctx, 'GET', '/v1/models', headers);
        expect(refusal(e)).toEqual(refused(vendor, e, 401, MISSING_KEY[vendor.name], NO_RETRY));
      },
    );

    const unknownOnMount = VENDORS.flatMap((vendor) =>
      [
        `/v1/conformance-new-endpoint/${nextN()}`,
        ...(vendor.name === 'gemini' ? ['/v1beta/models/model-x:fooBar'] : []),
      ].map((path) => ({ label: `${vendor.name}: POST ${vendor.mount}${path}`, vendor, path, n: nextN() })),
    );

    test.each(unknownOnMount)(
      '$label passes through for an unrestricted key (each key carrier); a key with an allow-list gets a 403',
      async ({ vendor, path, n }) => {
        const {
          key,
          more: [restricted],
        } = await keys(ctx, { models: [SAMPLE_MODEL] });
        const r: VendorRequest = {
          method: 'POST',
          path,
          query: QUERY,
          body: multipartBody(SAMPLE_MODEL, n),
          contentType: MULTIPART,
        };
        const actual: Record<string, unknown> = {};
        const expected: Record<string, unknown> = {};
        await Promise.all([
          ...carriers(vendor).map(async (carrier) => {
            const e = await send(ctx, vendor, r, vendor.mount, { key, carrier });
            actual[`key in ${carrierName(carrier)}`] = { status: e.res.status, vendor: received(e, key) };
            expected[`key in ${carrierName(carrier)}`] = {
              status: 200,
              vendor: forwardedAs(vendor, r, ONE_KEY[vendor.name][0]),
            };
          }),
          (async () => {
            const e = await send(ctx, vendor, r, vendor.mount, first(vendor, restricted.key));
            actual['a key with an allow-list'] = refusal(e);
            expected['a key with an allow-list'] = refused(
              vendor,
              e,
              403,
              `This API key has a model allow-list: only ${vendor.name} routes Genway knows are passed for it, and POST ${path} is not one`,
              NO_RETRY,
            );
          })(),
        ]);
        expectOutcomes(actual, expected);
      },
    );
  });
});

// =================================================================================================================

describe('gateway conformance: objects stay with their account and the vendor key that made them (two keys each)', () => {
  const ctx = useConformance(TWO_KEYS);

  /** A call that names no object, so the pool's round robin picks its key. */
  const unrelated = (vendor: VendorDefinition) =>
    plainRoutes(vendor).find((r) => r.method === 'GET' && !r.path.includes('{'))!;

  /** Creates an object as `key`'s account through its creating route; returns the vendor key it went up with. */
  async function create(
    vendor: VendorDefinition,
    creation: Creation,
    id: string,
    mount: string,
    key: string,
    n: number,
  ) {
    const { creator } = creation;
    const extra = creator.stored === 'on-request' ? '"store":true' : '';
    const r = requestFor(vendor, creator, n, undefined, routeBody(vendor, creator, n, extra));
    const answer = creation.answer(id);
    const e = await send(ctx, vendor, r, mount, first(vendor, key), (_q, res) => json(res, 200, answer));
    const vendorKey = e.upstream[0]?.headers[vendor.keyTo.header];
    expectOutcomes(
      { status: e.res.status, body: e.res.body.toString(), forwarded: e.upstream.length },
      {
        status: 200,
        body: answer.toString(),
        forwarded: 1,
      },
    );
    return vendorKey as string;
  }

  /**
   * `own` (a call about the object, by its account) twice, each followed by a call naming no object: the object's
   * calls keep the creating key while the round robin goes on through the pool.
   */
  async function pinned(vendor: VendorDefinition, mount: string, key: string, n: number, own: VendorRequest) {
    const calls: unknown[] = [];
    const roundRobin: string[] = [];
    for (let i = 0; i < 2; i++) {
      const e = await send(ctx, vendor, own, mount, first(vendor, key));
      calls.push({ ...passed(e), key: e.upstream[0]?.headers[vendor.keyTo.header] });
      const other = await send(
        ctx,
        vendor,
        requestFor(vendor, unrelated(vendor), n),
        mount,
        first(vendor, key),
      );
      roundRobin.push(other.upstream[0]?.headers[vendor.keyTo.header] as string);
    }
    return { calls, roundRobin: roundRobin.sort() };
  }
  const pinnedTo = (vendor: VendorDefinition, own: VendorRequest, createdWith: string) => {
    const call = { ...passedAs(own), key: createdWith };
    return {
      calls: [call, call],
      roundRobin: TWO_KEYS[vendor.name].map((k) => vendor.keyTo.value(k)).sort(),
    };
  };

  test.each(routeCases((_v, spec) => spec.object !== undefined))(
    '$label: a 404 for another account; its own account reaches the vendor with the creating key',
    async ({ vendor, spec, mount, n }) => {
      const creation = creationFor(vendor, spec);
      if (!creation) throw new Error(`no route of ${vendor.name} creates the object of ${spec.path}`);
      const owner = await keys(ctx);
      const other = await keys(ctx);
      const params = objectParams(spec, creation, n);
      const id = objectId(spec, params);
      const createdWith = await create(vendor, creation, id, mount, owner.key, n);

      const r = requestFor(vendor, spec, n, params);
      const stranger = await send(ctx, vendor, r, mount, first(vendor, other.key));
      expectOutcomes(
        {
          'another account': refusal(stranger),
          owner: await pinned(vendor, mount, owner.key, n, r),
        },
        {
          'another account': refused(vendor, stranger, 404, `No such ${vendor.name} object: ${id}`),
          owner: pinnedTo(vendor, r, createdWith),
        },
      );
    },
  );

  test.each(routeCases((_v, spec) => spec.object !== undefined).filter((c) => c.mount !== ''))(
    '$label: another account’s equivalent spellings of the path (RFC 3986 6.2.2) do not reach the vendor either',
    async ({ vendor, spec, mount, n }) => {
      const creation = creationFor(vendor, spec)!;
      const owner = await keys(ctx);
      const other = await keys(ctx);
      const params = objectParams(spec, creation, n);
      const id = objectId(spec, params);
      await create(vendor, creation, id, mount, owner.key, n);

      const r = requestFor(vendor, spec, n, params);
      const actual: Record<string, unknown> = {};
      const expected: Record<string, unknown> = {};
      await Promise.all(
        Object.entries(equivalentSpellings(r.path)).map(async ([name, path]) => {
          const e = await send(ctx, vendor, { ...r, path }, mount, first(vendor, other.key));
          actual[`${name}: ${path}`] = refusal(e);
          expected[`${name}: ${path}`] = refused(vendor, e, 404, `No such ${vendor.name} object: ${id}`);
        }),
      );
      expectOutcomes(actual, expected);
    },
  );

  test.each(routeCases((v, spec) => spec.refs === true && referenceFor(v) !== undefined))(
    '$label: a body naming another account’s object is a 404; the owner’s goes up with the creating key',
    async ({ vendor, spec, mount, n }) => {
      const reference = referenceFor(vendor)!;
      const owner = await keys(ctx);
      const other = await keys(ctx);
      const id = objectId(reference.target, objectParams(reference.target, reference.creation, n));
      const createdWith = await create(vendor, reference.creation, id, mount, owner.key, n);

      const body = {
        body: oddJson(bodyModel(vendor), reference.member(id)),
        contentType: 'application/json',
      };
      const r = requestFor(vendor, spec, n, undefined, body);
      const stranger = await send(ctx, vendor, r, mount, first(vendor, other.key));
      // A route of an object (a file search store's import) names that one first.
      const named = [...(spec.object ? [objectId(spec, sampleParams(spec.path, n))] : []), id];
      expectOutcomes(
        {
          'another account': refusal(stranger),
          owner: await pinned(vendor, mount, owner.key, n, r),
        },
        {
          'another account': refused(
            vendor,
            stranger,
            404,
            `No such ${vendor.name} object: ${named.join(', ')}`,
          ),
          owner: pinnedTo(vendor, r, createdWith),
        },
      );
    },
  );

  test.each(routeCases((_v, spec) => spec.objectQuery !== undefined))(
    '$label: the resumable session URL points back at Genway; only its account continues it, with its key',
    async ({ vendor, spec, mount, n }) => {
      const owner = await keys(ctx);
      const other = await keys(ctx);
      // An upload into an object (a file search store) needs that object first.
      const creation = spec.object ? creationFor(vendor, spec) : undefined;
      if (spec.object && !creation)
        throw new Error(`no route of ${vendor.name} creates the object of ${spec.path}`);
      const params = creation ? objectParams(spec, creation, n) : sampleParams(spec.path, n);
      const objects = creation ? [objectId(spec, params)] : [];
      const objectKey = creation
        ? await create(vendor, creation, objects[0], mount, owner.key, n)
        : undefined;

      const path = fill(spec.path, params);
      const uploadId = `upload_conf_${n}`;
      const session = `${spec.objectQuery}=${uploadId}&upload_protocol=resumable`;
      const start: VendorRequest = {
        method: 'POST',
        path,
        query: '',
        body: Buffer.from('{"file":{"display_name":"conf"}}'),
        contentType: 'application/json',
        headers: { 'x-goog-upload-protocol': 'resumable', 'x-goog-upload-command': 'start' },
      };
      // Gemini's resumable protocol: the session URL says where the bytes go next.
      const started = await send(ctx, vendor, start, mount, first(vendor, owner.key), (_q, res) =>
        res
          .writeHead(200, {
            'x-goog-upload-url': `${ctx.vendor.url}${path}?${session}`,
            'x-goog-upload-status': 'active',
            'content-length': '0',
          })
          .end(),
      );
      const sessionKey = started.upstream[0]?.headers[vendor.keyTo.header] as string;

      const upload: VendorRequest = {
        method: 'POST',
        path,
        query: session,
        body: noise(512, n),
        contentType: 'application/octet-stream',
        headers: { 'x-goog-upload-command': 'upload, finalize', 'x-goog-upload-offset': '0' },
      };
      const stranger = await send(ctx, vendor, upload, mount, first(vendor, other.key));
      expectOutcomes(
        {
          started: { ...passed(started), url: started.res.headers['x-goog-upload-url'] },
          sessionKey: objectKey ?? sessionKey,
          'another account': refusal(stranger),
          owner: await pinned(vendor, mount, owner.key, n, upload),
        },
        {
          started: { ...passedAs(start), url: `${ctx.gw.base}${mount}${path}?${session}` },
          sessionKey,
          'another account': refused(
            vendor,
            stranger,
            404,
            `No such ${vendor.name} object: ${[...objects, uploadId].join(', ')}`,
          ),
          owner: pinnedTo(vendor, upload, sessionKey),
        },
      );
    },
  );
});

/**
 * A vendor answer with headers a proxy could lose or add to: repeated, request ids, a date, odd bytes, and Genway's
 * vendor session, which the client never gets (`passed`: the headers it gets).
 */
function vendorAnswer(status: number, n: number) {
  const body =
    status < 300
      ? Buffer.concat([Buffer.from(`{"conformance":${n} ,"text":"r\\u00e9ponse ✓"}\r\n\r\n`), noise(64, n)])
      : Buffer.from(`{"error":{"type":"vendor_says","message":"slow down ${n}"}}`);
  const headers: http.OutgoingHttpHeaders = {
    'content-type': status < 300 ? 'application/x-conformance' : 'application/json',
    'content-length': String(body.length),
    'x-request-id': `vendor-xrid-${n}`,
    'request-id': `vendor-rid-${n}`,
    'x-vendor-trace': TRACE,
    link: ['<https://a.example>; rel=a', '<https://b.example>; rel=b'],
    'cache-control': 'no-store',
    date: 'Tue, 01 Jan 2030 00:00:00 GMT',
    ...(status === 429 ? { 'retry-after': '7' } : {}),
  };
  const handler: MockHandler = (_req, res) =>
    res.writeHead(status, 'Conformance Status', { ...headers, ...VENDOR_SESSION }).end(body);
  // Both Link lines reach the client, which joins them.
  return { body, passed: { ...headers, link: (headers.link as string[]).join(', ') }, handler };
}

/** The vendor answering with `canned`'s JSON body (or JSON lines). */
const cannedJson =
  (canned: Canned, n: number, spec: RouteSpec): MockHandler =>
  (_q, res) =>
    json(res, 200, canned.json(n, spec).text, canned.lines ? 'application/binary' : 'application/json');

/**
 * The usage record one call of `spec` answered with `canned` adds: under the model the request named, else the
 * one the answer named (a form Genway pipes unread names none it knows), else `unknown`.
 */
function usageOf(spec: RouteSpec, canned: Canned): Record<string, ModelUsage> {
  const model =
    spec.model === 'body' || spec.model === 'path' ? SAMPLE_MODEL : (canned.answerModel ?? 'unknown');
  return canned.lines ?? { [model]: { requests: 1, ...canned.usage } };
}

/** A metered request: a JSON body (asking for a stream when `streaming`) or a form; `alt=sse` when streaming. */
function meteredRequest(
  vendor: VendorDefinition,
  spec: RouteSpec,
  n: number,
  streaming: boolean,
): VendorRequest {
  const wantsBodyStream = streaming && spec.stream === 'body';
  const body = !hasBody(spec)
    ? {}
    : readsBody(spec)
      ? {
          body: oddJson(bodyModel(vendor), wantsBodyStream ? '"stream":true' : ''),
          contentType: 'application/json',
        }
      : {
          body: multipartBody(SAMPLE_MODEL, n, wantsBodyStream ? { stream: 'true' } : {}),
          contentType: MULTIPART,
        };
  const r = requestFor(vendor, spec, n, undefined, body);
  return { ...r, query: spec.stream === 'alt=sse' && !streaming ? QUERY : r.query };
}

/**
 * A metered call for a model of its own (on the vendor's first metered route with a body model), answered with
 * its format's canned JSON: returns the usage record it adds.
 */
async function sentinelCall(
  ctx: Context,
  vendor: VendorDefinition,
  mount: string,
  auth: Auth,
  n: number,
): Promise<Record<string, ModelUsage>> {
  const spec =
    vendor.routes.find((r) => r.usage && r.model === 'body' && !r.stream) ??
    vendor.routes.find((r) => r.usage && r.model === 'body')!;
  const canned = CANNED[`${vendor.name}.${spec.usage}`]!;
  const r = requestFor(vendor, spec, n, undefined, {
    body: oddJson(bodyModel(vendor, 'sentinel-model')),
    contentType: 'application/json',
  });
  const e = await send(ctx, vendor, r, mount, auth, cannedJson(canned, n, spec));
  expect(e.res.status).toBe(200);
  return { 'sentinel-model': { requests: 1, ...canned.usage } };
}

// --- canned metered answers ---------------------------------------------------------------------------------------

interface CannedAnswer {
  /** The whole body (JSON or JSON lines). */
  text: string;
  /** An event stream, event by event. */
  events?: string[];
  /** The usage-only event a client that did not ask for it must not get. */
  usageOnly?: string;
}

interface Canned {
  json(n: number, spec: RouteSpec): CannedAnswer;
  sse?(n: number): CannedAnswer & { events: string[] };
  /** The model the answer names (the usage label when the request names none). */
  answerModel?: string;
  /** The tokens of one call, as the vendor module's reader splits them. */
  usage: Omit<ModelUsage, 'requests'>;
  /** JSON lines (batch results): the records per model. */
  lines?: Record<string, ModelUsage>;
}

const data = (event: string | null, payload: unknown) =>
  `${event ? `event: ${event}\n` : ''}data: ${JSON.stringify(payload)}\n\n`;
const whole = (events: string[]) => ({ text: events.join(''), events });

const ANTHROPIC_USAGE = {
  input_tokens: 30,
  cache_creation_input_tokens: 5,
  cache_read_input_tokens: 7,
  output_tokens: 11,
};
const CHAT_USAGE = {
  prompt_tokens: 50,
  completion_tokens: 20,
  total_tokens: 70,
  prompt_tokens_details: { cached_tokens: 10 },
  completion_tokens_details: { reasoning_tokens: 6 },
};
const IMAGES_USAGE = {
  input_tokens: 50,
  input_tokens_details: { cached_tokens: 5, text_tokens: 20, image_tokens: 30 },
  output_tokens: 100,
  output_tokens_details: { reasoning_tokens: 3 },
  total_tokens: 150,
};
const TRANSCRIPTION_USAGE = {
  type: 'tokens',
  input_tokens: 41,
  input_token_details: { text_tokens: 5, audio_tokens: 36 },
  output_tokens: 7,
  total_tokens: 48,
};
const GEMINI_USAGE = {
  promptTokenCount: 90,
  cachedContentTokenCount: 60,
  toolUsePromptTokenCount: 3,
  candidatesTokenCount: 5,
  thoughtsTokenCount: 2,
  totalTokenCount: 100,
};
const geminiChunk = (text: string, usageMetadata: unknown) => ({
  candidates: [{ content: { role: 'model', parts: [{ text }] }, index: 0 }],
  usageMetadata,
  modelVersion: 'gemini-answer',
});

const anthropicResult = (id: string, model: string, usage: unknown) => ({
  custom_id: id,
  result: {
    type: 'succeeded',
    message: {
      id: `msg_${id}`,
      type: 'message',
      model,
      content: [{ type: 'text', text: 'a "succeeded" one' }],
      usage,
    },
  },
});

/** Canned answers per usage format (`vendor.format`), with the token split the format's reader makes of them. */
const CANNED: Record<string, Canned> = {
  'anthropic.messages': {
    json: (n) => ({
      text: JSON.stringify({
        id: `msg_conf_${n}`,
        type: 'message',
        role: 'assistant',
        model: 'claude-answer',
        content: [{ type: 'text', text: 'ok' }],
        stop_reason: 'end_turn',
        usage: ANTHROPIC_USAGE,
      }),
    }),
    sse: (n) =>
      whole([
        data('message_start', {
          type: 'message_start',
          message: {
            id: `msg_conf_${n}`,
            type: 'message',
            role: 'assistant',
            model: 'claude-answer',
            content: [],
            usage: { ...ANTHROPIC_USAGE, output_tokens: 1 },
          },
        }),
        data('content_block_start', {
          type: 'content_block_start',
          index: 0,
          content_block: { type: 'text', text: '' },
        }),
        data('content_block_delta', {
          type: 'content_block_delta',
          index: 0,
          delta: { type: 'text_delta', text: 'ok' },
        }),
        data('content_block_stop', { type: 'content_block_stop', index: 0 }),
        data('message_delta', {
          type: 'message_delta',
          delta: { stop_reason: 'end_turn' },
          usage: { output_tokens: 11 },
        }),
        data('message_stop', { type: 'message_stop' }),
      ]),
    answerModel: 'claude-answer',
    // input_tokens excludes cache reads and writes, which Anthropic reports apart; no reasoning count.
    usage: { input: 30, output: 11, cacheRead: 7, cacheWrite: 5, reasoning: 0 },
  },
  'anthropic.batchResults': {
    json: () => ({
      text: [
        anthropicResult('a', 'claude-batch-a', {
          input_tokens: 10,
          cache_read_input_tokens: 2,
          cache_creation_input_tokens: 1,
          output_tokens: 4,
        }),
        { custom_id: 'b', result: { type: 'errored', error: { type: 'invalid_request_error' } } },
        anthropicResult('c', 'claude-batch-a', { input_tokens: 20, output_tokens: 6 }),
        anthropicResult('d', 'claude-batch-b', { input_tokens: 1, output_tokens: 1 }),
      ]
        .map((l) => JSON.stringify(l))
        .join('\n'),
    }),
    usage: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, reasoning: 0 },
    lines: {
      'claude-batch-a': { requests: 2, input: 30, output: 10, cacheRead: 2, cacheWrite: 1, reasoning: 0 },
      'claude-batch-b': { requests: 1, input: 1, output: 1, cacheRead: 0, cacheWrite: 0, reasoning: 0 },
    },
  },
  'openai.chat': {
    json: (n) => ({
      text: JSON.stringify({
        id: `chatcmpl-conf-${n}`,
        object: 'chat.completion',
        model: 'gpt-answer',
        choices: [{ index: 0, message: { role: 'assistant', content: 'ok' }, finish_reason: 'stop' }],
        usage: CHAT_USAGE,
      }),
    }),
    sse: (n) => {
      const chunk = (choices: unknown[], usage: unknown = null) =>
        data(null, {
          id: `chatcmpl-conf-${n}`,
          object: 'chat.completion.chunk',
          model: 'gpt-answer',
          choices,
          usage,
        });
      const usageOnly = chunk([], CHAT_USAGE);
      return {
        ...whole([
          chunk([{ index: 0, delta: { role: 'assistant', content: 'o' }, finish_reason: null }]),
          chunk([{ index: 0, delta: { content: 'k' }, finish_reason: 'stop' }]),
          usageOnly,
          'data: [DONE]\n\n',
        ]),
        usageOnly,
      };
    },
    answerModel: 'gpt-answer',
    // prompt_tokens includes the cached ones, completion_tokens the reasoning ones: taken out of each.
    usage: { input: 40, output: 14, cacheRead: 10, cacheWrite: 0, reasoning: 6 },
  },
  'openai.responses': {
    json: (n) => ({
      text: JSON.stringify({
        id: `resp_conf_${n}`,
        object: 'response',
        status: 'completed',
        model: 'gpt-answer',
        output: [],
        usage: RESPONSES_USAGE,
      }),
    }),
    sse: (n) => {
      const response = (status: string, usage: unknown) => ({
        id: `resp_conf_${n}`,
        object: 'response',
        status,
        model: 'gpt-answer',
        output: [],
        usage,
      });
      return whole([
        data('response.created', {
          type: 'response.created',
          sequence_number: 0,
          response: response('in_progress', null),
        }),
        data('response.output_text.delta', {
          type: 'response.output_text.delta',
          sequence_number: 1,
          delta: 'ok',
        }),
        data('response.completed', {
          type: 'response.completed',
          sequence_number: 2,
          response: response('completed', RESPONSES_USAGE),
        }),
      ]);
    },
    answerModel: 'gpt-answer',
    usage: { input: 32, output: 9, cacheRead: 8, cacheWrite: 0, reasoning: 2 },
  },
  'openai.images': {
    json: () => ({
      text: JSON.stringify({ created: 1700000000, data: [{ b64_json: 'AAAA' }], usage: IMAGES_USAGE }),
    }),
    sse: () =>
      whole([
        data('image_generation.partial_image', {
          type: 'image_generation.partial_image',
          b64_json: 'AA',
          partial_image_index: 0,
        }),
        data('image_generation.completed', {
          type: 'image_generation.completed',
          b64_json: 'AAAA',
          usage: IMAGES_USAGE,
        }),
      ]),
    usage: { input: 45, output: 97, cacheRead: 5, cacheWrite: 0, reasoning: 3 },
  },
  'openai.transcription': {
    json: () => ({ text: JSON.stringify({ text: 'ok', usage: TRANSCRIPTION_USAGE }) }),
    sse: () =>
      whole([
        data(null, { type: 'transcript.text.delta', delta: 'o' }),
        data(null, { type: 'transcript.text.done', text: 'ok', usage: TRANSCRIPTION_USAGE }),
      ]),
    // input_tokens counts the audio and the prompt, billed alike.
    usage: { input: 41, output: 7, cacheRead: 0, cacheWrite: 0, reasoning: 0 },
  },
  'gemini.generateContent': {
    json: (_n, spec) => {
      const chunks = [
        geminiChunk('o', { promptTokenCount: 90, cachedContentTokenCount: 60 }),
        geminiChunk('k', GEMINI_USAGE),
      ];
      // streamGenerateContent without alt=sse answers a JSON array of chunks; the last one's usage counts.
      return { text: JSON.stringify(spec.stream ? chunks : chunks[1]) };
    },
    sse: () =>
      whole([
        data(null, geminiChunk('o', { promptTokenCount: 90, cachedContentTokenCount: 60 })),
        data(null, geminiChunk('k', GEMINI_USAGE)),
      ]),
    answerModel: 'gemini-answer',
    // promptTokenCount includes the cached content (taken out) and not tool-use prompts (added); thoughts apart.
    usage: { input: 33, output: 5, cacheRead: 60, cacheWrite: 0, reasoning: 2 },
  },
  'gemini.callsOnly': {
    json: () => ({ text: '{"embedding":{"values":[0.5,-0.25]}}' }),
    usage: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, reasoning: 0 },
  },
};

/** An OpenAI batch's output file: a chat answer and a responses answer for gpt-batch-a, a responses one for b. */
const BATCH_RESPONSES_USAGE = {
  input_tokens: 9,
  input_tokens_details: { cached_tokens: 4 },
  output_tokens: 3,
  output_tokens_details: { reasoning_tokens: 1 },
};
const batchLine = (id: string, model: string, usage: unknown) => ({
  id: `batch_req_${id}`,
  custom_id: id,
  response: { status_code: 200, body: { model, usage } },
  error: null,
});
const BATCH_OUTPUT_LINES = [
  batchLine('a', 'gpt-batch-a', { prompt_tokens: 7, completion_tokens: 3 }),
  batchLine('b', 'gpt-batch-a', BATCH_RESPONSES_USAGE),
  batchLine('c', 'gpt-batch-b', BATCH_RESPONSES_USAGE),
];
