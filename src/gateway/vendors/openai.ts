import {
  EPHEMERAL_REFUSED,
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

/** `{"error":{"message","type","param","code"}}`, with OpenAI's types and codes. */
const ERRORS: Record<number, [type: string, code: string | null]> = {
  400: ['invalid_request_error', null],
  401: ['invalid_request_error', 'invalid_api_key'],
  402: ['insufficient_quota', 'insufficient_quota'],
  403: ['invalid_request_error', 'model_not_found'],
  404: ['invalid_request_error', 'not_found'],
  405: ['invalid_request_error', 'method_not_allowed'],
  413: ['invalid_request_error', 'request_too_large'],
  429: ['requests', 'rate_limit_exceeded'],
  502: ['server_error', 'upstream_unreachable'],
  503: ['server_error', 'service_unavailable'],
  504: ['server_error', 'upstream_timeout'],
  508: ['server_error', 'loop_detected'],
};

/** Responses (and image) usage: `input_tokens` includes cached ones, `output_tokens` includes reasoning. */
function readResponsesUsage(u: Record<string, unknown>, acc: UsageAccumulator): void {
  const cached = count(obj(u.input_tokens_details).cached_tokens);
  const reasoning = count(obj(u.output_tokens_details).reasoning_tokens);
  acc.set({
    input: Math.max(0, count(u.input_tokens) - cached),
    cacheRead: cached,
    output: Math.max(0, count(u.output_tokens) - reasoning),
    reasoning,
  });
}

/** Chat, completions and embeddings usage: `prompt_tokens` includes cached ones, `completion_tokens` reasoning. */
function readChatUsage(u: Record<string, unknown>, acc: UsageAccumulator): void {
  const cached = count(obj(u.prompt_tokens_details).cached_tokens);
  const reasoning = count(obj(u.completion_tokens_details).reasoning_tokens);
  acc.set({
    input: Math.max(0, count(u.prompt_tokens) - cached),
    cacheRead: cached,
    output: Math.max(0, count(u.completion_tokens) - reasoning),
    reasoning,
  });
}

/** Output items of the server-side tools OpenAI bills per call (`toolCallUsd`), by their item type. */
const PAID_ITEMS = new Set(['web_search_call', 'file_search_call']);

/** The paid tool calls among a response's output items. */
function readToolCalls(output: unknown, acc: UsageAccumulator): void {
  if (!Array.isArray(output)) return;
  let tools: Record<string, number> | undefined;
  for (const item of output) {
    const type = obj(item).type;
    if (typeof type === 'string' && PAID_ITEMS.has(type)) (tools ??= {})[type] = (tools[type] ?? 0) + 1;
  }
  if (tools) acc.set({ tools });
}

/**
 * Responses: the final `response.completed` (or `.incomplete` / `.failed`) event carries the response's usage, and
 * its output items the paid tool calls it made.
 */
const responses: UsageFormat = {
  triggers: ['"response.completed"', '"response.incomplete"', '"response.failed"'],
  frame:
    'event: response.output_text.delta\ndata: {"type":"response.output_text.delta","sequence_number":7,"item_id":"msg_67c9fdcecf488190bdd9a0409de3a1ec","output_index":0,"content_index":0,"delta":"x"}\n\n',
  reads: [
    ['response', 'model'],
    ['response', 'usage'],
    ['response', 'service_tier'],
  ],
  ending: ['"response.output_item.done"'],
  resuming: ['"response.output_item.added"'],
  event(e, acc) {
    const response = obj(e.response);
    acc.model = str(response.model) ?? acc.model;
    const usage = obj(response.usage);
    if (Object.keys(usage).length) readResponsesUsage(usage, acc);
    readToolCalls(response.output, acc);
    const tier = str(response.service_tier);
    if (tier) acc.set({ tier });
  },
  // A body's tier is read whole (responsesWhole): its tail may end in the echoed tools, text format and metadata,
  // where a client's own keys may be named service_tier.
  body: { key: '"usage"', marker: 'output_tokens', read: readResponsesUsage },
};

/**
 * Responses of a call that offered a tool billed per call or asked for a service tier: a JSON body is read whole
 * too, for its output items and its top-level tier (a stream's last event carries both, as always).
 */
const responsesWhole: UsageFormat = {
  ...responses,
  whole: {
    top: { at: [[]], keep: [['model'], ['usage'], ['service_tier']] },
    items: { at: [['output', '*']], keep: [['type']] },
    read(top, items, acc) {
      responses.event({ response: { ...top, output: items } }, acc);
    },
  },
};

/** Chat completions and completions: the last chunk carries `usage` when `stream_options.include_usage` is set. */
const chat: UsageFormat = {
  triggers: ['"prompt_tokens"'],
  frame:
    'data: {"id":"chatcmpl-B9MBs8CjcvOU2jLn4n570S5qMJKcT","object":"chat.completion.chunk","created":1741569952,"model":"gpt-4.1-2025-04-14","service_tier":"default","system_fingerprint":"fp_3f58d112f7","choices":[{"index":0,"delta":{"content":"x"},"logprobs":null,"finish_reason":null}]}\n\n',
  reads: [['model'], ['usage'], ['service_tier']],
  // A choice's finish reason (not null): the usage-only chunk follows.
  ending: ['"finish_reason":"'],
  event(e, acc) {
    acc.model = str(e.model) ?? acc.model;
    const usage = obj(e.usage);
    if (Object.keys(usage).length) readChatUsage(usage, acc);
    const tier = str(e.service_tier);
    if (tier) acc.set({ tier });
  },
  body: { key: '"usage"', marker: 'prompt_tokens', read: readChatUsage, tier: '"service_tier"' },
};

/** Image generation and edits (gpt-image): responses-style usage, on the JSON body or the completed event. */
const images: UsageFormat = {
  triggers: ['"input_tokens"'],
  reads: [['usage']],
  event(e, acc) {
    const usage = obj(e.usage);
    if (Object.keys(usage).length) readResponsesUsage(usage, acc);
  },
  body: { key: '"usage"', marker: 'input_tokens', read: readResponsesUsage },
};

/**
 * Transcriptions by token (gpt-4o-transcribe and its kin): `usage` of type `tokens` on the JSON answer, or on the
 * stream's `transcript.text.done`; `input_tokens` counts the audio and the prompt. whisper-1 reports seconds
 * (`type: "duration"`), which no token price bills: the route refuses it priced (`unmeteredModels`).
 */
function readTranscriptionUsage(u: Record<string, unknown>, acc: UsageAccumulator): void {
  if (u.type !== 'tokens') return;
  acc.set({ input: count(u.input_tokens), output: count(u.output_tokens) });
}

const transcription: UsageFormat = {
  triggers: ['"transcript.text.done"'],
  reads: [['type'], ['usage']],
  event(e, acc) {
    if (e.type === 'transcript.text.done') readTranscriptionUsage(obj(e.usage), acc);
  },
  body: { key: '"usage"', marker: 'input_tokens', read: readTranscriptionUsage },
};

/** A batch's output file (JSON lines): each line's `response.body` is a chat, embeddings or responses answer. */
const batchOutput: UsageFormat = {
  lines: true,
  triggers: ['"usage"'],
  reads: [
    ['response', 'body', 'model'],
    ['response', 'body', 'usage'],
  ],
  event(line, acc) {
    const body = obj(obj(line.response).body);
    acc.model = str(body.model);
    const usage = obj(body.usage);
    if ('prompt_tokens' in usage) readChatUsage(usage, acc);
    else if ('input_tokens' in usage) readResponsesUsage(usage, acc);
  },
};

/** A response object's id: the first `"id"` of the body or of the first event (`response.created`). */
const RESPONSE_ID = /"id"\s*:\s*"(resp_[^"\\]{1,200})"/;
const CHAT_ID = /"id"\s*:\s*"(chatcmpl-[^"\\]{1,200})"/;

/** A batch's own id, and its output file, whose content is billed once as the batch's usage. */
const batchObjects = (b: Record<string, unknown>) => [
  ...revealed(b.id, b.error_file_id),
  ...(typeof b.output_file_id === 'string' && b.output_file_id
    ? [{ id: b.output_file_id, usage: 'batchOutput' }]
    : []),
];
const created = { json: (b: Record<string, unknown>) => revealed(b.id) };

const modelEntry = (name: string, created: number) => ({
  id: name,
  object: 'model',
  created: Math.floor(created / 1000),
  owned_by: 'genway',
});

export const openai: VendorDefinition<'openai'> = {
  name: 'openai',
  mount: '/openai',
  env: { baseUrl: 'GENWAY_OPENAI_BASE_URL', apiKeys: 'OPENAI_API_KEY' },
  // The default on paths several vendors serve: every OpenAI-compatible client sends just a Bearer key.
  claims: () => true,
  keyHeaders: ['authorization'],
  keyTo: { header: 'authorization', value: (key) => `Bearer ${key}` },
  // The client's own organization and project would not match Genway's vendor key.
  dropHeaders: ['openai-organization', 'openai-project'],
  errorBody: (status, message) => {
    const [type, code] = ERRORS[status] ?? ['server_error', null];
    return { error: { message, type, param: null, code } };
  },
  usage: { responses, responsesWhole, chat, images, transcription, batchOutput },
  modelList: {
    list: (names, created) => ({ object: 'list', data: names.map((name) => modelEntry(name, created)) }),
    one: modelEntry,
  },
  // https://platform.openai.com/docs/pricing, built-in tools: web search 10 USD and file search 2.50 USD per 1,000
  // calls.
  toolCallUsd: { web_search_call: 0.01, file_search_call: 0.0025 },
  // Flex processing is half price on every model that offers it; priority's premium differs by model (a model's
  // serviceTierFactor.priority). `auto` runs at the project's own tier.
  serviceTiers: { factor: { flex: 0.5 }, standard: ['auto', 'default'] },
  // A response continued, a conversation (its id, or `{"id"}`), files in content parts, tools' containers, image
  // edits, batch inputs and fine-tuning (through the mount).
  refs: {
    fields: new Set([
      'previous_response_id',
      'file_id',
      'file_ids',
      'input_file_id',
      'conversation',
      'training_file',
      'validation_file',
    ]),
  },
  routes: [
    post('/v1/chat/completions', {
      model: 'body',
      usage: 'chat',
      stream: 'body',
      refs: true,
      creates: { head: CHAT_ID },
      stored: 'on-request',
      streamUsage: 'include_usage',
      call: { format: 'chat', op: 'create' },
    }),
    get('/v1/chat/completions'),
    get('/v1/chat/completions/{id}', { object: '{id}' }),
    post('/v1/chat/completions/{id}', { object: '{id}' }),
    del('/v1/chat/completions/{id}', { object: '{id}' }),
    get('/v1/chat/completions/{id}/messages', { object: '{id}' }),
    post('/v1/completions', { model: 'body', usage: 'chat', stream: 'body', streamUsage: 'include_usage' }),
    post('/v1/embeddings', { model: 'body', usage: 'chat', call: { format: 'embeddings', op: 'create' } }),
    post('/v1/moderations', { model: 'body' }),
    post('/v1/responses', {
      model: 'body',
      usage: 'responses',
      stream: 'body',
      refs: true,
      creates: { head: RESPONSE_ID },
      stored: 'by-default',
      // Read when done, whole: it may have called a paid tool.
      background: 'responsesWhole',
      detailedUsage: { tools: ['web_search', 'file_search'], fields: ['prompt'], usage: 'responsesWhole' },
      call: { format: 'responses', op: 'create' },
    }),
    get('/v1/responses', { upgrade: 'websocket', usage: 'responses' }),
    post('/v1/responses/input_tokens', {
      model: 'body',
      refs: true,
      call: { format: 'responses', op: 'count' },
    }),
    post('/v1/responses/compact', { model: 'body', usage: 'responses', refs: true }),
    get('/v1/responses/{id}', { object: '{id}', stream: 'always' }),
    del('/v1/responses/{id}', { object: '{id}' }),
    post('/v1/responses/{id}/cancel', { object: '{id}' }),
    get('/v1/responses/{id}/input_items', { object: '{id}' }),
    post('/v1/conversations', { creates: created }),
    get('/v1/conversations/{id}', { object: '{id}' }),
    post('/v1/conversations/{id}', { object: '{id}' }),
    del('/v1/conversations/{id}', { object: '{id}' }),
    get('/v1/conversations/{id}/items', { object: '{id}' }),
    post('/v1/conversations/{id}/items', { object: '{id}' }),
    get('/v1/conversations/{id}/items/{item}', { object: '{id}' }),
    del('/v1/conversations/{id}/items/{item}', { object: '{id}' }),
    get('/v1/models', { models: 'all' }),
    get('/v1/models/{model*}', { models: 'one' }),
    del('/v1/models/{model*}'),
    post('/v1/files', { creates: created }),
    get('/v1/files'),
    get('/v1/files/{id}', { object: '{id}' }),
    del('/v1/files/{id}', { object: '{id}' }),
    // A file Genway never saw made (an id from a list, a record expired) may be a batch's output.
    get('/v1/files/{id}/content', { object: '{id}', unseen: 'batchOutput' }),
    post('/v1/uploads', { creates: created }),
    post('/v1/uploads/{id}/parts', { object: '{id}' }),
    post('/v1/uploads/{id}/complete', {
      object: '{id}',
      creates: { json: (b) => revealed(obj(b.file).id) },
    }),
    post('/v1/uploads/{id}/cancel', { object: '{id}' }),
    post('/v1/batches', { model: 'hidden', refs: true, creates: { json: batchObjects } }),
    get('/v1/batches'),
    get('/v1/batches/{id}', { object: '{id}', creates: { json: batchObjects } }),
    post('/v1/batches/{id}/cancel', { object: '{id}' }),
    post('/v1/images/generations', { model: 'body', usage: 'images', stream: 'body' }),
    post('/v1/images/edits', { model: 'form', usage: 'images', stream: 'body', refs: true }),
    post('/v1/images/variations', { model: 'form', unmetered: 'image variations report no token usage' }),
    // Realtime's client secrets (and the sessions that return one) are ephemeral keys for a browser to call with.
    post('/v1/realtime/client_secrets', { refuse: EPHEMERAL_REFUSED }),
    post('/v1/realtime/sessions', { refuse: EPHEMERAL_REFUSED }),
    post('/v1/realtime/transcription_sessions', { refuse: EPHEMERAL_REFUSED }),
    post('/v1/audio/speech', {
      model: 'body',
      stream: 'body',
      unmetered: 'speech answers with audio, no usage',
    }),
    post('/v1/audio/transcriptions', {
      model: 'form',
      usage: 'transcription',
      stream: 'body',
      // The text, srt and vtt formats carry no usage; verbose_json is whisper-1's, which reports seconds.
      usageForm: { response_format: ['json', 'diarized_json'] },
      unmeteredModels: { pattern: /^whisper-/, why: 'whisper models report audio seconds, not tokens' },
    }),
    post('/v1/audio/translations', { model: 'form', unmetered: 'translations report no token usage' }),
  ],
  catalog: [
    {
      id: 'responses',
      slug: 'openai-responses',
      displayName: 'Responses format (OpenAI SDK)',
      describe: { endpoint: 'POST /v1/responses', key: 'Authorization: Bearer', mount: '/openai' },
    },
    {
      id: 'chat-completions',
      slug: 'openai-chat-completions',
      displayName: 'Chat completions format (OpenAI SDK and OpenAI-compatible clients)',
      describe: { endpoint: 'POST /v1/chat/completions', key: 'Authorization: Bearer', mount: '/openai' },
    },
  ],
};
