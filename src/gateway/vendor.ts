import type { IncomingHttpHeaders } from 'node:http';
import type { TokenUsage } from './store';
import type { JsonPath } from './json-records';
import type { Format, Op } from './upstreams/types';

/**
 * What Genway knows about one LLM vendor, as data: the modules in ./vendors/ each export one `VendorDefinition`,
 * and the router, proxy, usage taps, config and catalog are built from them. A new vendor route is one line in
 * its vendor's `routes`.
 */

export type VendorName = 'anthropic' | 'openai' | 'gemini';

/** Every format clients call Genway in: the three vendors' own APIs, and Claude's on Bedrock and on Vertex. */
export type InboundName = VendorName | 'bedrock' | 'vertex';

type Obj = Record<string, unknown>;

/** Where a route carries the model it runs (for allow-lists, prices and usage labels). */
export type ModelSource =
  /** The JSON body's top-level `model`. */
  | 'body'
  /** The `{model}` path parameter. */
  | 'path'
  /** Every `requests[].params.model` of a batch body (checked against allow-lists; billed when results are read). */
  | 'batch'
  /**
   * A `model` field of a multipart form (uploads of audio or images): read from a held copy of the body when a
   * model allow-list or the price table needs it, piped unread otherwise.
   */
  | 'form'
  /** The models are inside an uploaded file Genway does not read: a key with a model allow-list is refused. */
  | 'hidden';

/** An object a response revealed: created by this call (or, for a batch, the file its results went to). */
export interface RevealedObject {
  id: string;
  /** When reading this object's content is a metered call: the usage format to read it with (billed once). */
  usage?: string;
}

/** Where a response names the objects it created. */
export interface Creates {
  /** From the whole JSON response body (bounded: object metadata, not content). */
  json?(body: Obj): RevealedObject[];
  /** From the first bytes of the body, JSON or event stream (a response object's `id` comes first in both). */
  head?: RegExp;
  /**
   * From the response headers, which it may rewrite (a resumable upload URL must point back at Genway).
   * `clientBase` is the origin (and vendor mount) the client called, `vendorBase` the vendor's origin and base path.
   */
  headers?(headers: Record<string, string | string[] | undefined>, ctx: HeaderContext): RevealedObject[];
}

export interface HeaderContext {
  clientBase: string;
  vendorBase: string;
}

export interface RouteOptions {
  model?: ModelSource;
  /** Metered: the vendor's usage format (key of `VendorDefinition.usage`) its response is read with. */
  usage?: string;
  /**
   * Billed once per object (batch results): usage is charged only when the whole body was read, under a ledger
   * reference naming the object, so reading the results again charges nothing more.
   */
  billOnce?: boolean;
  /** How a client asks for a stream: the body's `stream: true`, Gemini's `alt=sse` query, or always. */
  stream?: 'body' | 'alt=sse' | 'always';
  /** The object this route addresses, from path parameters: e.g. `{id}` or `files/{id}`. */
  object?: string;
  /**
   * The usage format this route's answer is read with, billed once, when its object is one Genway never saw made:
   * a file's content may be a batch's results that no client-visible call revealed (an id taken from a list, or a
   * record expired). Whoever reads it pays, once per account.
   */
  unseen?: string;
  /** The query parameter naming the object this call continues (a resumable upload's `upload_id`). */
  objectQuery?: string;
  /** The JSON body may reference objects (file ids, `previous_response_id`...): read with the vendor's `refs`. */
  refs?: boolean;
  creates?: Creates;
  /**
   * Whether the vendor keeps what `creates` names: `by-default` unless the JSON body says `store: false`
   * (responses), `on-request` only when it says `store: true` (chat completions); absent: always.
   */
  stored?: 'by-default' | 'on-request';
  /**
   * A call the client runs in the background (`background: true`) answers before it ran, without usage: the object it
   * creates is metered when it is read (the usage format named here), once, at the call's own price.
   */
  background?: string;
  /**
   * Its stream reports usage only when the client asks (`stream_options.include_usage`): Genway asks on the
   * client's behalf, so every stream is metered, and takes the extra usage-only chunk out of what the client gets.
   */
  streamUsage?: 'include_usage';
  /**
   * Its JSON answer holds absolute vendor URLs the vendor's SDK then calls with the client's key (Anthropic's
   * `results_url`): they are rewritten to point back at Genway, or the SDK would take the Genway key to the vendor.
   */
  absoluteUrls?: boolean;
  /** A WebSocket endpoint (`GET` with `Upgrade: websocket`): its messages are admitted and metered one by one. */
  upgrade?: 'websocket';
  /** Never passed through, with this reason (calls that would hand the client a vendor credential). */
  refuse?: string;
  /**
   * A model call a route may send elsewhere (`gateway.routes`): its format, whether it generates or counts tokens,
   * and whether its path says it streams (Bedrock's invoke-with-response-stream, Gemini's streamGenerateContent).
   */
  call?: { format: Format; op: Op; streams?: boolean };
  /** The vendor's model list (`all`) or one model (`one`, its `{model}`): answered from the routes when there are any. */
  models?: 'all' | 'one';
  /**
   * It runs a model, but its answer carries no token usage Genway can read (why, here): a priced model is refused on
   * it, as it would run unbilled. Routes the vendor does not bill (token counts, moderation) leave it out.
   */
  unmetered?: string;
  /**
   * Models this metered route runs whose answer reports no token usage (why, here): a priced one is refused, as on
   * an `unmetered` route. For a vendor's models billed by another measure (whisper reports audio seconds).
   */
  unmeteredModels?: { pattern: RegExp; why: string };
  /**
   * A call whose answer's usage object does not tell its whole price: one that offers a server-side tool the vendor
   * bills per call (a `tools` entry whose `type` starts with one of `tools`), names one of `fields` (a stored prompt,
   * which may carry such tools), or asks for a service tier other than the plain one. Its answer is read with the
   * `usage` format named here, which reads a JSON body whole (its output items, its top-level service tier) instead
   * of its tail.
   */
  detailedUsage?: { tools: readonly string[]; fields: readonly string[]; usage: string };
  /**
   * Form fields that decide whether the answer reports usage (a transcription's `response_format`): on a priced call
   * each must be left out or hold one of these values, or the call is refused before it runs.
   */
  usageForm?: Readonly<Record<string, readonly string[]>>;
}

export type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

export interface RouteSpec extends RouteOptions {
  method: Method;
  /**
   * Path template: `{name}` matches one segment without `/` or `:`; `{name*}` one segment that may hold `:`
   * (OpenAI fine-tuned model ids); `{name**}` the rest of the path. `(a|b)` is a literal alternation of a segment.
   */
  path: string;
}

const route =
  (method: Method) =>
  (path: string, options: RouteOptions = {}): RouteSpec => ({ method, path, ...options });
export const get = route('GET');
export const post = route('POST');
export const patch = route('PATCH');
export const del = route('DELETE');

/** Accumulates one response's (or one result line's) token usage as a vendor format reads it. */
export class UsageAccumulator {
  model: string | undefined;
  usage: TokenUsage | null = null;

  /** Counts of this response so far: a later figure replaces an earlier one (streams report running totals). */
  set(fields: Partial<TokenUsage>): void {
    const u = (this.usage ??= { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, reasoning: 0 });
    if (fields.input !== undefined) u.input = fields.input;
    if (fields.output !== undefined) u.output = fields.output;
    if (fields.cacheRead !== undefined) u.cacheRead = fields.cacheRead;
    if (fields.cacheWrite !== undefined) u.cacheWrite = fields.cacheWrite;
    if (fields.reasoning !== undefined) u.reasoning = fields.reasoning;
    if (fields.cacheWrite1h !== undefined) u.cacheWrite1h = fields.cacheWrite1h;
    if (fields.tools !== undefined) u.tools = fields.tools;
    if (fields.tier !== undefined) u.tier = fields.tier;
  }
}

/**
 * How one response format carries token usage. `input` is prompt tokens billed at the input price (cache reads
 * and writes apart), `output` output tokens billed at the output price (reasoning apart).
 */
export interface UsageFormat {
  /** A body of JSON lines (batch results), one result per line. */
  lines?: boolean;
  /**
   * The key paths `event` reads (`*`: each array element): an event or result line too long to hold whole (a
   * streamed image's completed event, a batch result with long logprobs) is read in passing for these alone.
   */
  reads?: readonly JsonPath[];
  /**
   * The body is one JSON document of results (Gemini's inline batch results): each object at one of these paths is
   * one result, handed to `event` with its `reads`. Where several paths hold results (a vendor repeating them in two
   * places), the one holding the most counts.
   */
  results?: readonly JsonPath[];
  /** Substrings an event (or line) must hold to be worth parsing: most stream events carry no usage. */
  triggers: readonly string[];
  /**
   * The frame a stream of this format sends by the thousand (one text delta, its text cut to `x`): the stream's
   * markers (triggers, ending, resuming) are searched for from the byte this frame holds least (./marker.ts).
   */
  frame?: string;
  /** One parsed stream event, streamed-array element or result line. */
  event(e: Obj, acc: UsageAccumulator): void;
  /**
   * A whole JSON body: the last object under `key` holding `marker` is its usage, read by `read`; and the last
   * string under `tier` (a quoted key), when named, the service tier it ran at.
   */
  body?: { key: string; marker: string; read(usage: Obj, acc: UsageAccumulator): void; tier?: string };
  /**
   * A JSON body read front to back as it passes, in constant memory, for what its usage object does not tell (the
   * paid tool calls among a response's output items, its top-level service tier): the last object at one of
   * `top.at` (its values at `top.keep`), and each object at one of `items.at` (its values at `items.keep`), go to
   * `read`. A body in which this finds no usage is read by `body`.
   */
  whole?: {
    top: { at: readonly JsonPath[]; keep: readonly JsonPath[] };
    items: { at: readonly JsonPath[]; keep: readonly JsonPath[] };
    read(top: Obj, items: Obj[], acc: UsageAccumulator): void;
  };
  /** No usage in the response at all (Gemini embeddings): the call is still counted. */
  countOnly?: boolean;
  /**
   * Substrings of a stream that mean its answer is out and only its usage is to come (a finish reason, the end of a
   * content block or output item): a client that leaves after one does not stop the vendor; the rest is read for
   * the usage, for a few seconds at most.
   */
  ending?: readonly string[];
  /** Substrings that mean more of the answer follows after all (a new content block or output item starts). */
  resuming?: readonly string[];
}

/**
 * Object ids a JSON request body references: the values of these fields anywhere in the decoded body (a string, an
 * array of strings, or an object's `id`), so an escape in a field's name or value (`"previous\u005fresponse_id"`,
 * `"file-\u0041"`) hides nothing, and ids in arrays and in fields beside the first are found too. The body is walked
 * as JSON.parse left it, every time: a walk costs what the body has of objects and arrays, where a search of its raw
 * text for the fields' names (how it was first skipped) cost what it has of bytes, several times over. A coding
 * agent's 85 KB prompt: 16 µs walked, 122 µs searched; 1 KB: 0.1 against 1.6 µs (docs/performance.md).
 */
export interface BodyRefs {
  fields: ReadonlySet<string>;
  /** The id a field's value names, when it is not the value itself (a file's URL names `files/...`). */
  idOf?(value: string): string | undefined;
}

/** The object ids `json` references by `refs`' fields, at any depth (iterative: no recursion limit to reach). */
export function refsIn(json: unknown, refs: BodyRefs): string[] {
  const out: string[] = [];
  const name = (value: unknown) => {
    if (typeof value !== 'string') return;
    const id = refs.idOf ? refs.idOf(value) : value;
    if (id) out.push(id);
  };
  const take = (value: unknown) => {
    if (Array.isArray(value)) {
      for (const item of value) take(item);
    } else if (value !== null && typeof value === 'object') name((value as Obj).id);
    else name(value);
  };
  const stack: unknown[] = [json];
  while (stack.length) {
    const value = stack.pop();
    if (value === null || typeof value !== 'object') continue;
    if (Array.isArray(value)) {
      for (const item of value) if (item !== null && typeof item === 'object') stack.push(item);
      continue;
    }
    for (const field in value) {
      const member = (value as Obj)[field];
      if (refs.fields.has(field)) take(member);
      if (member !== null && typeof member === 'object') stack.push(member);
    }
  }
  return out;
}

export interface VendorConfig {
  baseUrl: string;
  apiKeys: readonly string[];
  defaultVersion?: string;
}

export interface GatewayCatalogEntry {
  id: string;
  slug: string;
  displayName: string;
  describe: Record<string, unknown>;
}

export interface VendorDefinition<N extends InboundName = InboundName> {
  name: N;
  /** The vendor-prefixed mount (`/anthropic`), which passes any path of this vendor through. */
  mount: string;
  /**
   * Its paths are served under its mount only (`/bedrock/model/...`): a cloud's format, which no first-party path
   * shares, and whose calls go only where routes (or the first upstream of its type) send them.
   */
  mountOnly?: boolean;
  /** Environment variables of this vendor's config (config/load.ts reads them); none for the clouds' formats. */
  env?: { baseUrl: string; apiKeys: string };
  /** On a path several vendors serve (`GET /v1/models`), whether the request's own headers name this vendor. */
  claims(headers: IncomingHttpHeaders, hasQueryKey: boolean): boolean;
  /** Request headers this vendor's SDKs may carry the (Genway) key in; `authorization` is `Bearer <key>`. */
  keyHeaders: readonly string[];
  /** Whether `?key=` carries the key (Google style). */
  queryKey?: boolean;
  /** Where the vendor key goes. */
  keyTo: { header: string; value(key: string): string };
  /** Client headers that never reach the vendor: they name the client's own vendor account, not Genway's key. */
  dropHeaders?: readonly string[];
  /**
   * Why a metered call's answer would come without its usage, when the request asks the vendor so (Gemini's field
   * masks and protobuf answers): such a call to a priced model is refused.
   */
  hidesUsage?(
    query: URLSearchParams,
    headers: Record<string, string | string[] | undefined>,
  ): string | undefined;
  /** Headers filled in when the client sends none (the messages format's version date). */
  defaultHeaders?(config: VendorConfig): Record<string, string>;
  /** Genway's own errors in this vendor's error body, so its SDK raises its usual error class. */
  errorBody(status: number, message: string): unknown;
  /** Headers that go with an error body (Bedrock names the error's type in `x-amzn-ErrorType`). */
  errorHeaders?(status: number): Record<string, string>;
  /** Its model list's shape, and one model's (the routes a key may call, `created` epoch ms). */
  modelList?: {
    list(names: readonly string[], created: number): unknown;
    one(name: string, created: number): unknown;
  };
  usage: Record<string, UsageFormat>;
  /**
   * USD per call of the server-side tools the vendor bills per call (`TokenUsage.tools`, by the names its usage
   * formats count them under), at its published rates: a model's `toolCallUsd` price replaces one.
   */
  toolCallUsd?: Readonly<Record<string, number>>;
  /**
   * Factors of the token prices for the service tiers a call may ask for in its JSON body's `service_tier` and the
   * answer reports (`TokenUsage.tier`), where the vendor's rate is one factor for every model (OpenAI's flex is half
   * price). A model's `serviceTierFactor` replaces one; a priced call asking for a tier neither names is refused.
   * `standard` names the tiers that are the plain prices.
   */
  serviceTiers?: { factor: Readonly<Record<string, number>>; standard: readonly string[] };
  refs?: BodyRefs;
  /** The model name as allow-lists and prices know it (Gemini bodies say `models/gemini-...`). */
  modelName?(raw: string): string;
  routes: readonly RouteSpec[];
  /** The LLM-gateway entries of the model catalog (`GET /api/v1/models?integration_type=llm_gateway`). */
  catalog: readonly GatewayCatalogEntry[];
}

/** A model name's version suffix: a date (OpenAI's `-2024-08-06`, Anthropic's `-20241022`) or Gemini's `-001`. */
const VERSION_SUFFIX = /-(?:\d{4}-\d{2}-\d{2}|\d{8}|\d{3})$/;

/** The name a dated snapshot is of (`gpt-x-2024-08-06` is of `gpt-x`), or undefined when `model` is none. */
export function snapshotBase(model: string): string | undefined {
  return VERSION_SUFFIX.test(model) ? model.replace(VERSION_SUFFIX, '') : undefined;
}

/** Non-negative whole numbers from a vendor's JSON, 0 for anything else. */
export const count = (v: unknown): number =>
  typeof v === 'number' && Number.isFinite(v) && v > 0 ? Math.floor(v) : 0;
export const obj = (v: unknown): Obj => (typeof v === 'object' && v !== null ? (v as Obj) : {});
export const str = (v: unknown): string | undefined => (typeof v === 'string' && v ? v : undefined);

/** A route that mints a short-lived vendor credential: refused on every vendor (docs/decisions.md). */
export const EPHEMERAL_REFUSED =
  'Ephemeral vendor tokens are not issued through Genway: a client holding one would call the vendor directly, outside its key, limits and metering';

/** The objects a response revealed, from id fields that may be missing. */
export function revealed(...values: unknown[]): RevealedObject[] {
  return values.flatMap((v) => (typeof v === 'string' && v ? [{ id: v }] : []));
}

/**
 * A field that is `model` in another case (`Model`, `MODEL`), if any. JSON.parse keeps it apart from `model`, but
 * Go's encoding/json (Ollama and other OpenAI-compatible servers behind a custom base URL) matches field names without
 * regard to case, the last one winning: the allow-list would check (and the price table price) one model and the back
 * end run the other. Looked for only for keys with an allow-list and for priced calls.
 */
export function modelLookalike(object: Record<string, unknown>): string | undefined {
  for (const name in object)
    if (name !== 'model' && name.length === 5 && name.toLowerCase() === 'model') return name;
  return undefined;
}
