import {
  EPHEMERAL_REFUSED,
  count,
  del,
  get,
  obj,
  patch,
  post,
  revealed,
  str,
  type HeaderContext,
  type RouteOptions,
  type RouteSpec,
  type UsageAccumulator,
  type UsageFormat,
  type VendorDefinition,
} from '../vendor';

/** Google RPC status names: `{"error":{"code","message","status"}}`. */
const STATUS: Record<number, string> = {
  400: 'INVALID_ARGUMENT',
  401: 'UNAUTHENTICATED',
  402: 'RESOURCE_EXHAUSTED',
  403: 'PERMISSION_DENIED',
  404: 'NOT_FOUND',
  405: 'INVALID_ARGUMENT',
  413: 'INVALID_ARGUMENT',
  429: 'RESOURCE_EXHAUSTED',
  502: 'UNAVAILABLE',
  503: 'UNAVAILABLE',
  504: 'DEADLINE_EXCEEDED',
  508: 'ABORTED',
};

/** Google's error body (`{"error":{code,message,status}}`), for Gemini's API and Vertex's alike. */
export const googleError = (status: number, message: string) => ({
  error: { code: status, message, status: STATUS[status] ?? 'INTERNAL' },
});

/**
 * `promptTokenCount` includes the cached content's tokens (`cachedContentTokenCount`) and tool-use prompts are
 * counted apart; `candidatesTokenCount` excludes thinking (`thoughtsTokenCount`).
 */
function readUsage(u: Record<string, unknown>, acc: UsageAccumulator): void {
  const cached = count(u.cachedContentTokenCount);
  acc.set({
    input: Math.max(0, count(u.promptTokenCount) - cached) + count(u.toolUsePromptTokenCount),
    cacheRead: cached,
    output: count(u.candidatesTokenCount),
    reasoning: count(u.thoughtsTokenCount),
  });
}

/**
 * Grounding with Google Search, billed per grounded prompt (Gemini 2.x) or per search query (Gemini 3) after a free
 * allowance: a model's `toolCallUsd` prices `grounded_prompt` or `google_search_query` (no vendor default). The
 * candidate with the most queries counts; a later chunk's count replaces an earlier one's (streams repeat it).
 */
function readGrounding(candidates: unknown, acc: UsageAccumulator): void {
  if (!Array.isArray(candidates)) return;
  let queries = -1;
  for (const candidate of candidates) {
    const asked = obj(obj(candidate).groundingMetadata).webSearchQueries;
    if (Array.isArray(asked)) queries = Math.max(queries, asked.length);
  }
  if (queries >= 0)
    acc.set({ tools: { grounded_prompt: queries > 0 ? 1 : 0, google_search_query: queries } });
}

/** Every chunk of a stream may carry `usageMetadata` with the running totals; the last one counts. */
const generateContent: UsageFormat = {
  triggers: ['"usageMetadata"', '"groundingMetadata"'],
  frame:
    'data: {"candidates": [{"content": {"parts": [{"text": "x"}],"role": "model"},"index": 0}],"usageMetadata": {"promptTokenCount": 9,"candidatesTokenCount": 12,"totalTokenCount": 21},"modelVersion": "gemini-2.5-flash","responseId": "x1bFaK3tBoeNnvgPq_WOoAQ"}\r\n\r\n',
  reads: [['modelVersion'], ['usageMetadata']],
  event(e, acc) {
    acc.model = str(e.modelVersion) ?? acc.model;
    const usage = obj(e.usageMetadata);
    if (Object.keys(usage).length) readUsage(usage, acc);
    readGrounding(e.candidates, acc);
  },
  body: { key: '"usageMetadata"', marker: 'promptTokenCount', read: readUsage },
};

/**
 * A call that offered Google Search: a JSON body (one answer, or a stream's array of chunks) is read front to back
 * for its candidates' grounding too, which may sit more than the tail before the usage.
 */
const generateContentGrounded: UsageFormat = {
  ...generateContent,
  whole: {
    // One answer, or (streamGenerateContent without alt=sse) an array of chunks, the last one's totals counting.
    top: { at: [[], ['*']], keep: [['modelVersion'], ['usageMetadata']] },
    items: {
      at: [
        ['candidates', '*'],
        ['*', 'candidates', '*'],
      ],
      keep: [['groundingMetadata', 'webSearchQueries']],
    },
    read(top, items, acc) {
      generateContent.event({ ...top, candidates: items }, acc);
    },
  },
};

/** Calls offering Google Search (a `tools` entry named for it, in either spelling) are read for their grounding. */
const GROUNDED = {
  tools: ['googleSearch', 'google_search'],
  fields: [],
  usage: 'generateContentGrounded',
} as const;

/** A batch result (`{"key", "response"}` or `{"metadata", "response"}`): its response is a generateContent answer. */
const batchResult = {
  reads: [
    ['response', 'modelVersion'],
    ['response', 'usageMetadata'],
  ],
  event(result: Record<string, unknown>, acc: UsageAccumulator) {
    generateContent.event(obj(result.response), acc);
  },
};

/** A batch's results file (`responsesFile`, JSON lines), downloaded with `files/{id}:download`. */
const batchLines: UsageFormat = { lines: true, triggers: ['"usageMetadata"'], ...batchResult };

/**
 * A batch read when it is done holds its inline results: the operation's `response` and the batch's
 * `metadata.output` each hold them (which one depends on the client's path to them), counted once.
 */
const batchInline: UsageFormat = {
  triggers: [],
  results: [
    ['response', 'inlinedResponses', 'inlinedResponses', '*'],
    ['metadata', 'output', 'inlinedResponses', 'inlinedResponses', '*'],
  ],
  ...batchResult,
};

/** Embeddings and predictions report no tokens: each call is counted, with no tokens to price. */
const callsOnly: UsageFormat = { triggers: [], event: () => undefined, countOnly: true };

/** A resource name Genway records, alone or at the end of a URL (`fileData.fileUri`). */
const RESOURCE = /(?:^|\/)((?:files|cachedContents|fileSearchStores|batches)\/[A-Za-z0-9_-]{1,128})$/;

/**
 * The resumable upload's session URL points at the vendor: rewritten to point back at Genway (the client sends the
 * bytes there next), and its `upload_id` remembered, so the bytes go up with the key that opened the session.
 */
function uploadSession(headers: Record<string, string | string[] | undefined>, ctx: HeaderContext) {
  const url = headers['x-goog-upload-url'];
  if (typeof url !== 'string') return [];
  if (!URL.canParse(url)) return [];
  const parsed = new URL(url);
  const rest = url.startsWith(ctx.vendorBase)
    ? url.slice(ctx.vendorBase.length)
    : parsed.pathname + parsed.search;
  headers['x-goog-upload-url'] = ctx.clientBase + rest;
  return revealed(parsed.searchParams.get('upload_id'));
}

const VERSIONS = '(v1beta|v1|v1alpha)';
/** One route for every API version. */
const v = (make: (path: string, options?: RouteOptions) => RouteSpec, path: string, options?: RouteOptions) =>
  make(`/${VERSIONS}${path}`, options);
/** A model action on both models and tuned models: `/{version}/(models|tunedModels)/{model}:{action}`. */
const action = (name: string, options: RouteOptions = {}) =>
  post(`/${VERSIONS}/(models|tunedModels)/{model}:${name}`, { model: 'path', ...options });
const named = (b: Record<string, unknown>) => revealed(b.name);
/** A done batch's results file, in the operation's `response` or the batch's `metadata.output`: billed once. */
function resultsFile(b: Record<string, unknown>) {
  const file = str(obj(b.response).responsesFile) ?? str(obj(obj(b.metadata).output).responsesFile);
  return file ? [{ id: file, usage: 'batchLines' }] : [];
}

const modelEntry = (name: string) => ({
  name: `models/${name}`,
  version: 'genway',
  displayName: name,
  supportedGenerationMethods: ['generateContent', 'streamGenerateContent', 'countTokens'],
});

export const gemini: VendorDefinition<'gemini'> = {
  name: 'gemini',
  mount: '/gemini',
  env: { baseUrl: 'GENWAY_GEMINI_BASE_URL', apiKeys: 'GEMINI_API_KEY' },
  claims: (headers, hasQueryKey) =>
    hasQueryKey || headers['x-goog-api-key'] !== undefined || headers['x-goog-api-client'] !== undefined,
  keyHeaders: ['x-goog-api-key', 'authorization'],
  queryKey: true,
  hidesUsage: (query, headers) => {
    const masks = [...query.getAll('fields'), ...query.getAll('$fields'), headers['x-goog-fieldmask']].flat();
    for (const mask of masks) {
      if (mask !== undefined && !/usage_?[mM]etadata/.test(mask)) {
        return 'A field mask (fields, $fields or X-Goog-FieldMask) must keep usageMetadata on a metered call: Genway reads the usage from the answer';
      }
    }
    if ([...query.getAll('alt'), ...query.getAll('$alt')].some((alt) => alt !== 'json' && alt !== 'sse')) {
      return 'alt must be json or sse on a metered call: Genway reads the usage from the answer';
    }
    return undefined;
  },
  // The key goes in the header, never in the URL, where logs along the way would keep it.
  keyTo: { header: 'x-goog-api-key', value: (key) => key },
  errorBody: (status, message) => googleError(status, message),
  usage: { generateContent, generateContentGrounded, callsOnly, batchLines, batchInline },
  modelList: {
    list: (names) => ({ models: names.map((name) => modelEntry(name)) }),
    one: (name) => modelEntry(name),
  },
  // `fileData.fileUri`, `cachedContent`, a batch's or an import's `fileName`, a file search tool's stores; both
  // spellings (the REST API takes snake_case too).
  refs: {
    fields: new Set([
      'fileUri',
      'file_uri',
      'cachedContent',
      'cached_content',
      'fileName',
      'file_name',
      'fileSearchStoreNames',
      'file_search_store_names',
    ]),
    idOf: (value) => RESOURCE.exec(value)?.[1],
  },
  modelName: (raw) => (raw.startsWith('models/') ? raw.slice(7) : raw),
  routes: [
    action('generateContent', {
      usage: 'generateContent',
      refs: true,
      detailedUsage: GROUNDED,
      call: { format: 'generate', op: 'create' },
    }),
    action('streamGenerateContent', {
      usage: 'generateContent',
      stream: 'alt=sse',
      refs: true,
      detailedUsage: GROUNDED,
      call: { format: 'generate', op: 'create', streams: true },
    }),
    action('countTokens', { refs: true, call: { format: 'generate', op: 'count' } }),
    action('embedContent', { usage: 'callsOnly' }),
    action('batchEmbedContents', { usage: 'callsOnly' }),
    action('asyncBatchEmbedContent', {
      refs: true,
      creates: { json: named },
      unmetered: 'embedding batches report no token usage',
    }),
    // The batch is remembered with its results' usage format: read when done, they are billed once.
    action('batchGenerateContent', {
      refs: true,
      creates: { json: (b) => revealed(b.name).map((o) => ({ ...o, usage: 'batchInline' })) },
    }),
    action('predict', { usage: 'callsOnly' }),
    action('predictLongRunning', {
      creates: { json: named },
      unmetered: 'long-running predictions (video) report no token usage',
    }),
    v(get, '/models', { models: 'all' }),
    v(get, '/models/{model}', { models: 'one' }),
    v(get, '/models/{model}/operations'),
    v(get, '/models/{model}/operations/{op}', { object: 'models/{model}/operations/{op}' }),
    v(get, '/tunedModels'),
    v(get, '/tunedModels/{model}'),
    v(post, '/cachedContents', { model: 'body', refs: true, creates: { json: named } }),
    v(get, '/cachedContents'),
    v(get, '/cachedContents/{id}', { object: 'cachedContents/{id}' }),
    v(patch, '/cachedContents/{id}', { object: 'cachedContents/{id}' }),
    v(del, '/cachedContents/{id}', { object: 'cachedContents/{id}' }),
    post(`/upload/${VERSIONS}/files`, {
      objectQuery: 'upload_id',
      creates: { headers: uploadSession, json: (b) => revealed(obj(b.file).name) },
    }),
    v(post, '/files', { creates: { json: (b) => revealed(obj(b.file).name) } }),
    v(get, '/files'),
    v(get, '/files/{id}', { object: 'files/{id}' }),
    v(del, '/files/{id}', { object: 'files/{id}' }),
    // Only files the vendor made can be downloaded: one Genway never saw made may be a batch's results.
    v(get, '/files/{id}:download', { object: 'files/{id}', unseen: 'batchLines' }),
    get(`/download/${VERSIONS}/files/{id}:download`, { object: 'files/{id}', unseen: 'batchLines' }),
    v(get, '/batches'),
    v(get, '/batches/{id}', { object: 'batches/{id}', creates: { json: resultsFile } }),
    v(del, '/batches/{id}', { object: 'batches/{id}' }),
    v(post, '/batches/{id}:cancel', { object: 'batches/{id}' }),
    v(get, '/operations'),
    v(get, '/operations/{op}'),
    v(post, '/fileSearchStores', { creates: { json: named } }),
    v(get, '/fileSearchStores'),
    v(get, '/fileSearchStores/{id}', { object: 'fileSearchStores/{id}' }),
    v(del, '/fileSearchStores/{id}', { object: 'fileSearchStores/{id}' }),
    v(post, '/fileSearchStores/{id}:importFile', { object: 'fileSearchStores/{id}', refs: true }),
    post(`/upload/${VERSIONS}/fileSearchStores/{id}:uploadToFileSearchStore`, {
      object: 'fileSearchStores/{id}',
      objectQuery: 'upload_id',
      creates: { headers: uploadSession },
    }),
    v(get, '/fileSearchStores/{id}/operations/{op}', { object: 'fileSearchStores/{id}' }),
    v(get, '/fileSearchStores/{id}/documents', { object: 'fileSearchStores/{id}' }),
    v(get, '/fileSearchStores/{id}/documents/{doc}', { object: 'fileSearchStores/{id}' }),
    v(del, '/fileSearchStores/{id}/documents/{doc}', { object: 'fileSearchStores/{id}' }),
    // Both spellings: @google/genai's `authTokens.create` posts to `auth_tokens`.
    v(post, '/authTokens', { refuse: EPHEMERAL_REFUSED }),
    v(post, '/auth_tokens', { refuse: EPHEMERAL_REFUSED }),
  ],
  catalog: [
    {
      id: 'generate-content',
      slug: 'gemini-generate-content',
      displayName: 'Generate-content format (Google GenAI SDK)',
      describe: {
        endpoint: 'POST /v1beta/models/{model}:generateContent',
        key: 'x-goog-api-key',
        mount: '/gemini',
      },
    },
  ],
};
