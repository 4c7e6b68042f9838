import { refsIn } from '../../src/gateway/vendor';
import type { Method, RouteSpec, VendorDefinition, VendorName } from '../../src/gateway/vendor';

/**
 * Concrete requests generated from the vendor route tables, for the gateway conformance suite
 * (test/integration/gateway-conformance.test.ts). Templates are read here independently of src/gateway/routes.ts,
 * from their documented grammar: `{x}` one segment without `/` or `:`, `{x*}` one segment that may hold `:`,
 * `{x**}` the rest of the path, `(a|b)` a literal alternation.
 */

const PARAM = /\{([A-Za-z_]+)(\*{0,2})\}/g;
const ALTERNATION = /\(([^()]+)\)/;

/** Every concrete template of `(a|b)` alternations, in declaration order (the first alternative first). */
export function alternatives(template: string): string[] {
  const m = ALTERNATION.exec(template);
  if (!m) return [template];
  const [before, after] = [template.slice(0, m.index), template.slice(m.index + m[0].length)];
  return m[1].split('|').flatMap((alt) => alternatives(before + alt + after));
}

/** The template with the first alternative of each `(a|b)`. */
export const firstAlternative = (template: string): string => alternatives(template)[0];

/** Whether a concrete path matches a template (any alternative). */
export function matches(template: string, path: string): boolean {
  return alternatives(template).some((t) => {
    let source = '^';
    let last = 0;
    for (const m of t.matchAll(PARAM)) {
      source += t.slice(last, m.index).replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
      source += m[2] === '**' ? '.+' : m[2] === '*' ? '[^/]+' : '[^/:]+';
      last = m.index + m[0].length;
    }
    source += `${t.slice(last).replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`;
    return new RegExp(source).test(path);
  });
}

/** The parameters of a (concrete) template, in order: name and kind (`''`, `'*'`, `'**'`). */
export function paramsOf(template: string): { name: string; kind: string }[] {
  return [...template.matchAll(PARAM)].map((m) => ({ name: m[1], kind: m[2] }));
}

export const SAMPLE_MODEL = 'model-x';
/** An OpenAI fine-tuned model id: a `{model*}` segment holding `:`. */
export const SAMPLE_COLON_MODEL = 'ft:gpt-x:org:custom:1';

/** Sample values: `{model}` model-x, `{model*}` a colon-holding id, `{id}` obj_conf_<n>, `{op}` op_conf_<n>... */
export function sampleParams(template: string, n: number): Record<string, string> {
  const values: Record<string, string> = {};
  for (const { name, kind } of paramsOf(template)) {
    if (name === 'model') values[name] = kind === '*' ? SAMPLE_COLON_MODEL : SAMPLE_MODEL;
    else if (kind === '**') values[name] = `rest_conf_${n}/a/b`;
    else values[name] = `${name === 'id' ? 'obj' : name}_conf_${n}`;
  }
  return values;
}

/** The template (first alternatives) with its parameters filled in. */
export function fill(template: string, values: Record<string, string>): string {
  return firstAlternative(template).replace(PARAM, (_, name: string) => {
    const value = values[name];
    if (value === undefined) throw new Error(`no value for {${name}} in ${template}`);
    return value;
  });
}

const METHODS: readonly Method[] = ['GET', 'POST', 'DELETE', 'PATCH', 'PUT'];

/** The methods a vendor declares for a concrete path (any of its templates matching it). */
export function declaredMethods(vendor: VendorDefinition, path: string): Method[] {
  return [...new Set(vendor.routes.filter((r) => matches(r.path, path)).map((r) => r.method))];
}

/** A method the vendor does not declare for this path (GET first, PUT last), for the 405 case. */
export function undeclaredMethod(vendor: VendorDefinition, path: string): Method {
  const declared = declaredMethods(vendor, path);
  const method = METHODS.find((m) => !declared.includes(m));
  if (!method) throw new Error(`every method is declared for ${path}`);
  return method;
}

/** Where a client's SDK carries the Genway key: each `keyHeaders` entry, and `?key=` where the vendor takes it. */
export type Carrier = { kind: 'header'; name: string } | { kind: 'query' };

export function carriers(vendor: VendorDefinition): Carrier[] {
  return [
    ...vendor.keyHeaders.map((name): Carrier => ({ kind: 'header', name })),
    ...(vendor.queryKey ? [{ kind: 'query' } as Carrier] : []),
  ];
}

export const carrierName = (c: Carrier): string => (c.kind === 'query' ? '?key=' : c.name);

/**
 * The request headers that say which vendor's SDK sent a request (ambiguous paths go by them). The version is one
 * no default has, so a header kept as sent is told apart from one Genway filled in.
 */
export const SDK_HEADERS: Readonly<Record<VendorName, Record<string, string>>> = {
  anthropic: { 'anthropic-version': '2099-12-31' },
  gemini: { 'x-goog-api-client': 'genai-js/conformance' },
  openai: {},
};

/** Every header name any vendor's SDK may carry a key in. */
export const keyHeaderNames = (vendors: readonly VendorDefinition[]): string[] => [
  ...new Set(vendors.flatMap((v) => v.keyHeaders)),
];

/** Whether Genway reads this route's body (and forwards the copy it read): the model, object ids or `store`. */
export const readsBody = (spec: RouteSpec): boolean =>
  spec.model === 'body' || !!spec.refs || spec.stored !== undefined;

/** Whether a request on this route carries a body at all. */
export const hasBody = (spec: RouteSpec): boolean => spec.method !== 'GET' && spec.method !== 'DELETE';

/** The model a JSON body names for a vendor (Gemini bodies say `models/...`, which allow-lists know without it). */
export const bodyModel = (vendor: VendorDefinition, model = SAMPLE_MODEL): string =>
  vendor.name === 'gemini' ? `models/${model}` : model;

/**
 * A JSON body with bytes no re-serialisation would keep: spacing, escapes, a surrogate pair, raw UTF-8, number
 * spellings. `extra` is inserted as more members (`"stream":true`, a reference...).
 */
export function oddJson(model: string, extra = ''): Buffer {
  return Buffer.from(
    `{ "model" : "${model}",\n  "input":"caf\\u00e9 ✓ \\ud83d\\ude00 \\"q\\" \\/ 1.0e3" ,"n":1.50,${extra ? ` ${extra},` : ''}\t"list":[ 1,2 ,3 ] }  `,
  );
}

/** An Anthropic message batch body: its models sit in `requests[].params.model`. */
export function batchJson(model: string): Buffer {
  return Buffer.from(
    `{"requests" : [ {"custom_id":"c1","params":{"model":"${model}","max_tokens":1,"messages":[]}} ]}`,
  );
}

/**
 * A body whose model is `model`, with a second model field in other case beside it (at the top level, or in a
 * batch request's params), and the name Genway's refusal gives that field; none for a route without a JSON model.
 */
export function lookalikeBody(
  vendor: VendorDefinition,
  spec: RouteSpec,
  model: string,
  other: string,
): { body: Buffer; contentType: string; field: string } | undefined {
  const contentType = 'application/json';
  if (spec.model === 'body')
    return { body: oddJson(bodyModel(vendor, model), `"MODEL":"${other}"`), contentType, field: 'MODEL' };
  if (spec.model !== 'batch') return undefined;
  const body = Buffer.from(
    `{"requests":[{"custom_id":"c1","params":{"model":"${model}","max_tokens":1}},` +
      `{"custom_id":"c2","params":{"model":"${model}","Model":"${other}","max_tokens":1}}]}`,
  );
  return { body, contentType, field: 'requests[1].params.Model' };
}

export const BOUNDARY = 'conformance-7MA4YWxkTrZu0gW';
export const MULTIPART = `multipart/form-data; boundary=${BOUNDARY}`;

/** Deterministic bytes, every value from 0 to 255 included (CR, LF, NUL, invalid UTF-8). */
export function noise(length: number, seed: number): Buffer {
  const out = Buffer.alloc(length);
  let x = seed >>> 0 || 1;
  for (let i = 0; i < length; i++) {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    out[i] = i < 256 ? (i * 7 + seed) & 0xff : x & 0xff;
  }
  return out;
}

/**
 * A multipart upload with a `model` field and a file part of raw bytes: not JSON, so Genway can only pipe it
 * (or, for `model: 'form'` routes with an allow-list, read its model field).
 */
export function multipartBody(
  model: string,
  seed: number,
  extraFields: Record<string, string> = {},
  fileBytes = 256,
): Buffer {
  const field = (name: string, value: string) =>
    `--${BOUNDARY}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`;
  return Buffer.concat([
    Buffer.from(
      field('model', model) +
        Object.entries(extraFields)
          .map(([k, v]) => field(k, v))
          .join('') +
        `--${BOUNDARY}\r\nContent-Disposition: form-data; name="file"; filename="conf.bin"\r\nContent-Type: application/octet-stream\r\n\r\n`,
    ),
    noise(fileBytes, seed),
    Buffer.from(`\r\n--${BOUNDARY}--\r\n`),
  ]);
}

/** The body (and its type) a route's request carries: odd JSON where Genway reads it, raw multipart otherwise. */
export function routeBody(
  vendor: VendorDefinition,
  spec: RouteSpec,
  seed: number,
  extra = '',
): { body?: Buffer; contentType?: string } {
  if (!hasBody(spec)) return {};
  if (readsBody(spec)) return { body: oddJson(bodyModel(vendor), extra), contentType: 'application/json' };
  return { body: multipartBody(SAMPLE_MODEL, seed), contentType: MULTIPART };
}

/** The body a key with a model allow-list needs on a route: where its model sits (`batch`: the batch's requests). */
export function modelBody(
  vendor: VendorDefinition,
  spec: RouteSpec,
  seed: number,
  model = SAMPLE_MODEL,
): { body?: Buffer; contentType?: string } {
  if (spec.model === 'batch') return { body: batchJson(model), contentType: 'application/json' };
  if (spec.model === 'body')
    return { body: oddJson(bodyModel(vendor, model)), contentType: 'application/json' };
  if (spec.model === 'form') return { body: multipartBody(model, seed), contentType: MULTIPART };
  return routeBody(vendor, spec, seed);
}

/**
 * Spellings of a path that RFC 3986 (6.2.2) makes equivalent to it, which a vendor's front end may normalise
 * before routing: a dot segment, a dot-dot segment, a percent-encoded letter (in the second segment).
 */
export function equivalentSpellings(path: string): Record<string, string> {
  const [top, second, ...rest] = path.slice(1).split('/');
  const tail = rest.length ? `/${rest.join('/')}` : '';
  const encoded = `%${second.charCodeAt(0).toString(16).toUpperCase()}${second.slice(1)}`;
  return {
    'a dot segment': `/${top}/./${second}${tail}`,
    'a dot-dot segment': `/${top}/conf/../${second}${tail}`,
    'a percent-encoded letter': `/${top}/${encoded}${tail}`,
  };
}

/** The routes the generic cases cover: all but refused ones and WebSocket endpoints (each has a test of its own). */
export const plainRoutes = (vendor: VendorDefinition): RouteSpec[] =>
  vendor.routes.filter((r) => !r.refuse && !r.upgrade);

export const routeName = (vendor: VendorDefinition, spec: RouteSpec): string =>
  `${vendor.name} ${spec.method} ${spec.path}`;

// ---------------------------------------------------------------------------------------------------------------
// Objects: which route creates the object a route addresses, and how its answer names it.

/** How a creating route's answer names an object, as its `creates` reads it. */
export interface Creation {
  creator: RouteSpec;
  /** What object ids must start with for the creator's `creates.head` pattern (`resp_`), else ''. */
  prefix: string;
  /** The creating answer naming `id`. */
  answer(id: string): Buffer;
}

/** The JSON shapes that name a created object, tried in order against the creator's own `creates.json`. */
const CREATED_SHAPES: ((id: string) => Record<string, unknown>)[] = [
  (id) => ({ id }),
  (id) => ({ name: id }),
  (id) => ({ file: { id } }),
  (id) => ({ file: { name: id } }),
];

function creationOf(creator: RouteSpec): Creation | undefined {
  const { json, head } = creator.creates ?? {};
  if (json) {
    const shape = CREATED_SHAPES.find((s) => json(s('probe_id')).some((o) => o.id === 'probe_id'));
    if (shape) {
      return {
        creator,
        prefix: '',
        answer: (id) => Buffer.from(JSON.stringify({ ...shape(id), object: 'conformance' })),
      };
    }
  }
  if (head) {
    // The literal start of the pattern's capture group (`"id":"(resp_...)"` -> `resp_`).
    const prefix = /\(([A-Za-z][\w-]*)\[/.exec(head.source)?.[1] ?? '';
    const answer = (id: string) => Buffer.from(`{"id":"${id}","object":"conformance","status":"completed"}`);
    if (head.exec(answer(`${prefix}probe`).toString())?.[1] === `${prefix}probe`) {
      return { creator, prefix, answer };
    }
  }
  return undefined;
}

/** Path segments for pairing: no `upload` segment, no `:action` suffix (`{model}:predict` -> `{model}`). */
const pairingSegments = (template: string) =>
  firstAlternative(template)
    .split('/')
    .filter((s) => s && s !== 'upload' && s !== 'download')
    .map((s) => s.replace(/:[A-Za-z]+$/, ''));

/**
 * The route that creates what `spec` addresses: among the vendor's POST routes that reveal a new object (not one
 * addressing an object themselves), the one sharing the most leading path segments with it (`/v1/files/{id}` ->
 * `POST /v1/files`); ties go to those whose path names the object's collection (`batches/{id}` ->
 * `...:batchGenerateContent`), then to the last declared (`...:predictLongRunning` for model operations).
 */
export function creationFor(vendor: VendorDefinition, spec: RouteSpec): Creation | undefined {
  const target = pairingSegments(spec.path);
  const firstParam = target.findIndex((s) => s.startsWith('{'));
  const stem = (target[firstParam - 1] ?? '').replace(/(es|s)$/, '').toLowerCase();
  let best: { creation: Creation; score: number; named: boolean } | undefined;
  for (const creator of vendor.routes) {
    if (creator.method !== 'POST' || creator.object || creator.refuse || !creator.creates) continue;
    const creation = creationOf(creator);
    if (!creation) continue;
    const segments = pairingSegments(creator.path);
    let score = 0;
    while (score < segments.length && segments[score] === target[score]) score++;
    if (score === 0) continue;
    const named = stem !== '' && creator.path.toLowerCase().includes(stem);
    if (!best || score > best.score || (score === best.score && (named || !best.named))) {
      best = { creation, score, named };
    }
  }
  return best?.creation;
}

/** The concrete parameters of an object route: its object's first parameter carries the creator's id prefix. */
export function objectParams(spec: RouteSpec, creation: Creation, n: number): Record<string, string> {
  const values = sampleParams(spec.path, n);
  const first = paramsOf(spec.object ?? '')[0];
  if (first && creation.prefix) values[first.name] = creation.prefix + values[first.name];
  return values;
}

/** The object id a route names, from its `object` template and its parameters. */
export const objectId = (spec: RouteSpec, values: Record<string, string>): string =>
  (spec.object ?? '').replace(PARAM, (_, name: string) => values[name]);

/** JSON members that reference an object in a request body, tried against each vendor's own `refs`. */
const REF_SHAPES: ((id: string) => string)[] = [
  (id) => `"file_id":"${id}"`,
  (id) => `"previous_response_id":"${id}"`,
  (id) => `"cachedContent":"${id}"`,
  (id) => `"fileData":{"fileUri":"https://vendor.example/v1beta/${id}","mimeType":"text/plain"}`,
];

export interface Reference {
  /** The object route whose object is referenced (its creator makes it). */
  target: RouteSpec;
  creation: Creation;
  /** The JSON member referencing `id`. */
  member(id: string): string;
}

/**
 * How a vendor's request bodies reference an object it can create: the first object route (files first: what
 * bodies mostly reference) whose id one of the shapes above names, as the vendor's `refs` read it.
 */
export function referenceFor(vendor: VendorDefinition): Reference | undefined {
  if (!vendor.refs) return undefined;
  const targets = vendor.routes
    .filter((r) => r.object && !r.refuse)
    .sort((a, b) => Number(b.path.includes('/files/')) - Number(a.path.includes('/files/')));
  for (const target of targets) {
    const creation = creationFor(vendor, target);
    if (!creation) continue;
    const id = objectId(target, objectParams(target, creation, 0));
    for (const member of REF_SHAPES) {
      const text = oddJson(SAMPLE_MODEL, member(id)).toString();
      if (refsIn(JSON.parse(text), vendor.refs).includes(id)) {
        return { target, creation, member };
      }
    }
  }
  return undefined;
}
