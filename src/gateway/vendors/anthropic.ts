import {
  count,
  del,
  get,
  obj,
  post,
  revealed,
  str,
  type UsageAccumulator,
  type UsageFormat,
  type VendorDefinition,
} from '../vendor';

/** `{"type":"error","error":{"type":...,"message":...}}`, with the error types of Anthropic's API. */
const ERROR_TYPES: Record<number, string> = {
  400: 'invalid_request_error',
  401: 'authentication_error',
  402: 'billing_error',
  403: 'permission_error',
  404: 'not_found_error',
  405: 'invalid_request_error',
  413: 'request_too_large',
  429: 'rate_limit_error',
  502: 'api_error',
  503: 'overloaded_error',
  504: 'timeout_error',
  508: 'api_error',
};

/**
 * `input_tokens` excludes cache reads and writes, which Anthropic reports (and prices) apart; `cache_creation` splits
 * the writes by how long they are kept, five minutes or an hour, each at its own price.
 */
function readUsage(u: Record<string, unknown>, acc: UsageAccumulator): void {
  const byTtl =
    typeof u.cache_creation === 'object' && u.cache_creation !== null ? obj(u.cache_creation) : undefined;
  const hour = byTtl ? count(byTtl.ephemeral_1h_input_tokens) : undefined;
  const written =
    'cache_creation_input_tokens' in u
      ? count(u.cache_creation_input_tokens)
      : byTtl
        ? count(byTtl.ephemeral_5m_input_tokens) + hour!
        : undefined;
  acc.set({
    input: 'input_tokens' in u ? count(u.input_tokens) : undefined,
    cacheRead: 'cache_read_input_tokens' in u ? count(u.cache_read_input_tokens) : undefined,
    // The hour-long writes are part of the total; a total reported below them is raised to them.
    cacheWrite: written === undefined ? undefined : Math.max(written, hour ?? 0),
    cacheWrite1h: hour,
    output: 'output_tokens' in u ? count(u.output_tokens) : undefined,
    // Web searches are billed per search; web fetches cost only their tokens.
    tools:
      typeof u.server_tool_use === 'object' && u.server_tool_use !== null
        ? { web_search: count(obj(u.server_tool_use).web_search_requests) }
        : undefined,
  });
}

/** Messages: `message_start` carries input and cache counts, each `message_delta` the running output count. */
const messages: UsageFormat = {
  // One search finds both events that matter (and message_stop, which is tiny and ignored).
  triggers: ['"message_'],
  frame:
    'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"x"}}\n\n',
  reads: [['type'], ['message', 'model'], ['message', 'usage'], ['usage']],
  // The output count comes in message_delta, after the last block stops (and no other starts).
  ending: ['"content_block_stop"'],
  resuming: ['"content_block_start"'],
  event(e, acc) {
    if (e.type === 'message_start') {
      const message = obj(e.message);
      acc.model = str(message.model) ?? acc.model;
      readUsage(obj(message.usage), acc);
    } else if (e.type === 'message_delta') {
      const usage = obj(e.usage);
      if (Object.keys(usage).length) readUsage(usage, acc);
    }
  },
  body: { key: '"usage"', marker: 'output_tokens', read: readUsage },
};

/** Message batch results (JSON lines): each succeeded result carries its message, model and usage. */
const batchResults: UsageFormat = {
  lines: true,
  triggers: ['"succeeded"'],
  reads: [
    ['result', 'type'],
    ['result', 'message', 'model'],
    ['result', 'message', 'usage'],
  ],
  event(line, acc) {
    const result = obj(line.result);
    if (result.type !== 'succeeded') return;
    const message = obj(result.message);
    acc.model = str(message.model);
    readUsage(obj(message.usage), acc);
  },
};

const modelEntry = (name: string, created: number) => ({
  type: 'model',
  id: name,
  display_name: name,
  created_at: new Date(created).toISOString(),
});

export const anthropic: VendorDefinition<'anthropic'> = {
  name: 'anthropic',
  mount: '/anthropic',
  env: { baseUrl: 'GENWAY_ANTHROPIC_BASE_URL', apiKeys: 'ANTHROPIC_API_KEY' },
  // The SDK always sends anthropic-version, and its key in x-api-key (a Bearer only with authToken, then with the
  // version header). An x-api-key beside a Bearer is some OpenAI-compatible tool's extra header, not this SDK.
  claims: (headers) =>
    headers['anthropic-version'] !== undefined ||
    (headers['x-api-key'] !== undefined && headers.authorization === undefined),
  keyHeaders: ['x-api-key', 'authorization'],
  keyTo: { header: 'x-api-key', value: (key) => key },
  defaultHeaders: (config) =>
    config.defaultVersion ? { 'anthropic-version': config.defaultVersion } : ({} as Record<string, string>),
  errorBody: (status, message) => ({
    type: 'error',
    error: { type: ERROR_TYPES[status] ?? 'api_error', message },
  }),
  usage: { messages, batchResults },
  modelList: {
    list: (names, created) => ({
      data: names.map((name) => modelEntry(name, created)),
      has_more: false,
      first_id: names[0] ?? null,
      last_id: names[names.length - 1] ?? null,
    }),
    one: modelEntry,
  },
  // https://platform.claude.com/docs/en/about-claude/pricing: web search, 10 USD per 1,000 searches.
  toolCallUsd: { web_search: 0.01 },
  // Files in content blocks (`{"type":"document","source":{"type":"file","file_id":...}}`), skills in a container.
  refs: { fields: new Set(['file_id', 'skill_id']) },
  routes: [
    post('/v1/messages', {
      model: 'body',
      usage: 'messages',
      stream: 'body',
      refs: true,
      call: { format: 'messages', op: 'create' },
    }),
    post('/v1/messages/count_tokens', {
      model: 'body',
      refs: true,
      call: { format: 'messages', op: 'count' },
    }),
    post('/v1/messages/batches', {
      model: 'batch',
      refs: true,
      creates: { json: (b) => revealed(b.id) },
      absoluteUrls: true,
    }),
    get('/v1/messages/batches', { absoluteUrls: true }),
    get('/v1/messages/batches/{id}', { object: '{id}', absoluteUrls: true }),
    del('/v1/messages/batches/{id}', { object: '{id}', absoluteUrls: true }),
    post('/v1/messages/batches/{id}/cancel', { object: '{id}', absoluteUrls: true }),
    get('/v1/messages/batches/{id}/results', { object: '{id}', usage: 'batchResults', billOnce: true }),
    post('/v1/complete', {
      model: 'body',
      stream: 'body',
      unmetered: 'the legacy Text Completions API reports no usage',
    }),
    get('/v1/models', { models: 'all' }),
    get('/v1/models/{model*}', { models: 'one' }),
    post('/v1/files', { creates: { json: (b) => revealed(b.id) } }),
    get('/v1/files'),
    get('/v1/files/{id}', { object: '{id}' }),
    del('/v1/files/{id}', { object: '{id}' }),
    get('/v1/files/{id}/content', { object: '{id}' }),
    post('/v1/skills', { creates: { json: (b) => revealed(b.id) } }),
    get('/v1/skills'),
    get('/v1/skills/{id}', { object: '{id}' }),
    del('/v1/skills/{id}', { object: '{id}' }),
    post('/v1/skills/{id}/versions', { object: '{id}' }),
    get('/v1/skills/{id}/versions', { object: '{id}' }),
    get('/v1/skills/{id}/versions/{version}', { object: '{id}' }),
    del('/v1/skills/{id}/versions/{version}', { object: '{id}' }),
  ],
  catalog: [
    {
      id: 'messages',
      slug: 'anthropic-messages',
      displayName: 'Messages format (Anthropic SDK)',
      describe: {
        endpoint: 'POST /v1/messages',
        key: 'x-api-key or Authorization: Bearer',
        versionHeader: 'anthropic-version',
        mount: '/anthropic',
      },
    },
  ],
};
