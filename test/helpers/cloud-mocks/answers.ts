/**
 * The cloud mocks' deterministic answers: one text, token counts computed from the request the same way every time,
 * a tool call when a request offers tools and asks for one, and markers in the prompt that force an outcome.
 */

/** The text every mock answers with, and the pieces its streams carry it in. */
export const MOCK_TEXT_DELTAS = ['Hello', ' there', ' from', ' the mock.'];
export const MOCK_TEXT = MOCK_TEXT_DELTAS.join('');
/** Output tokens of a text answer (Anthropic output_tokens, Gemini candidatesTokenCount, OpenAI completion_tokens). */
export const MOCK_OUTPUT_TOKENS = 9;
/** Output tokens of a tool-call answer. */
export const MOCK_TOOL_OUTPUT_TOKENS = 31;
/** Gemini answers report this many thinking tokens (thoughtsTokenCount), counted into totalTokenCount. */
export const GEMINI_THOUGHTS_TOKENS = 6;
/** The text block a Claude tool-call answer starts with. */
export const toolPreamble = (name: string): string => `Calling ${name}.`;

/** Keys whose string values (or arrays of strings and objects) are prompt text in all three vendors' bodies. */
const TEXT_KEYS = new Set(['text', 'content', 'system', 'instructions', 'input', 'prompt']);

function words(text: string): number {
  return text.split(/\s+/).filter(Boolean).length;
}

function countText(node: unknown, underTextKey: boolean): number {
  if (typeof node === 'string') return underTextKey ? words(node) : 0;
  if (Array.isArray(node)) return node.reduce((sum: number, item) => sum + countText(item, underTextKey), 0);
  if (node === null || typeof node !== 'object') return 0;
  let sum = 0;
  for (const [key, value] of Object.entries(node)) {
    // An object's own fields decide for themselves; only arrays and strings inherit a text key.
    sum += countText(value, TEXT_KEYS.has(key) && (typeof value === 'string' || Array.isArray(value)));
  }
  return sum;
}

/**
 * Prompt tokens of a request body, as every mock reports them: 8 plus the number of whitespace-separated words in
 * every string under a `text`, `content`, `system`, `instructions`, `input` or `prompt` key (markers count as words).
 * One user message "Hello there" is 10 tokens in every vendor's shape.
 */
export function mockPromptTokens(body: unknown): number {
  return 8 + countText(body, false);
}

export interface Markers {
  /** `[mock:status=429]`: answer this HTTP status, in the service's error shape, before any stream starts. */
  status?: number;
  /** `[mock:stream-error=throttlingException]`: start the stream, then fail it the service's way (`drop` cuts the connection). */
  streamError?: string;
  /** `[mock:tool]`: answer with a call of the first offered tool (or the one tool_choice names). */
  tool: boolean;
  /** `[mock:cache-read=N]`: N more prompt tokens, read from the prompt cache. */
  cacheRead: number;
  /** `[mock:cache-write=N]`: N more prompt tokens, written to the prompt cache (Anthropic models only). */
  cacheWrite: number;
  /** `[mock:delay=MS]`: wait before answering. */
  delayMs: number;
}

/** The markers in a request's text (the raw body; they survive JSON escaping since they hold no quote or backslash). */
export function readMarkers(text: string): Markers {
  const markers: Markers = { tool: false, cacheRead: 0, cacheWrite: 0, delayMs: 0 };
  for (const [, name, value = ''] of text.matchAll(/\[mock:([a-z-]+)(?:=([^\]\s"\\]+))?\]/g)) {
    if (name === 'status') markers.status = Number(value);
    else if (name === 'stream-error') markers.streamError = value;
    else if (name === 'tool') markers.tool = true;
    else if (name === 'cache-read') markers.cacheRead = Number(value) || 0;
    else if (name === 'cache-write') markers.cacheWrite = Number(value) || 0;
    else if (name === 'delay') markers.delayMs = Number(value) || 0;
  }
  return markers;
}

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => v !== null && typeof v === 'object' && !Array.isArray(v);

/** Arguments for a tool call, read off its JSON schema: strings "mock" (or the first enum value), numbers 42, true. */
export function sampleArguments(schema: unknown): Json {
  if (!isObject(schema) || !isObject(schema.properties)) return {};
  const required = Array.isArray(schema.required) ? (schema.required as string[]) : undefined;
  const args: Json = {};
  for (const [name, property] of Object.entries(schema.properties)) {
    if (required && !required.includes(name)) continue;
    args[name] = sampleValue(property);
  }
  return args;
}

function sampleValue(schema: unknown): unknown {
  if (!isObject(schema)) return null;
  if (Array.isArray(schema.enum) && schema.enum.length > 0) return schema.enum[0];
  const type = String(schema.type ?? '').toLowerCase();
  if (type === 'string') return 'mock';
  if (type === 'number' || type === 'integer') return 42;
  if (type === 'boolean') return true;
  if (type === 'array') return [];
  if (type === 'object') return sampleArguments(schema);
  return null;
}

/** A JSON text cut into `n` pieces of about equal length, as streamed tool arguments arrive. */
export function fragments(text: string, n = 3): string[] {
  const size = Math.ceil(text.length / n);
  const pieces: string[] = [];
  for (let i = 0; i < text.length; i += size) pieces.push(text.slice(i, i + size));
  return pieces;
}

/** The tool a Claude request asks to be called: the one tool_choice names, else the first with an input schema. */
export function anthropicTool(body: Json): { name: string; schema: unknown } | undefined {
  const tools = Array.isArray(body.tools) ? body.tools.filter(isObject) : [];
  const choice = isObject(body.tool_choice) ? body.tool_choice : undefined;
  const named = choice?.type === 'tool' ? tools.find((t) => t.name === choice.name) : undefined;
  const tool = named ?? tools.find((t) => 'input_schema' in t) ?? tools[0];
  return tool && typeof tool.name === 'string' ? { name: tool.name, schema: tool.input_schema } : undefined;
}

/** The function a Gemini request declares first. */
export function geminiFunction(body: Json): { name: string; schema: unknown } | undefined {
  const tools = Array.isArray(body.tools) ? body.tools.filter(isObject) : [];
  for (const tool of tools) {
    const declarations = Array.isArray(tool.functionDeclarations) ? tool.functionDeclarations : [];
    const first = declarations.find(isObject);
    if (first && typeof first.name === 'string') {
      return { name: first.name, schema: first.parameters ?? first.parametersJsonSchema };
    }
  }
  return undefined;
}

/** The function an OpenAI request (chat: {type, function: {...}}; responses: {type, name, ...}) offers first. */
export function openaiFunction(body: Json): { name: string; schema: unknown } | undefined {
  const tools = Array.isArray(body.tools) ? body.tools.filter(isObject) : [];
  for (const tool of tools) {
    if (tool.type !== 'function') continue;
    const fn = isObject(tool.function) ? tool.function : tool;
    if (typeof fn.name === 'string') return { name: fn.name, schema: fn.parameters };
  }
  return undefined;
}

// ---------------------------------------------------------------------------------------------------- Anthropic

export interface ClaudeAnswerOptions {
  /** The message id, e.g. msg_bdrk_01… or msg_vrtx_01… */
  id: string;
  /** The tool_use block id. */
  toolUseId: string;
  model: string;
  body: Json;
  markers: Markers;
}

export interface ClaudeUsage {
  input_tokens: number;
  cache_creation_input_tokens: number;
  cache_read_input_tokens: number;
  output_tokens: number;
}

/** The answer a Claude request gets: text, or a tool call when it offers tools and carries `[mock:tool]`. */
export function claudeAnswer({ id, toolUseId, model, body, markers }: ClaudeAnswerOptions) {
  const tool = markers.tool ? anthropicTool(body) : undefined;
  const usage: ClaudeUsage = {
    input_tokens: mockPromptTokens({ system: body.system, messages: body.messages }),
    cache_creation_input_tokens: markers.cacheWrite,
    cache_read_input_tokens: markers.cacheRead,
    output_tokens: tool ? MOCK_TOOL_OUTPUT_TOKENS : MOCK_OUTPUT_TOKENS,
  };
  const input = tool ? sampleArguments(tool.schema) : {};
  const content: Json[] = tool
    ? [
        { type: 'text', text: toolPreamble(tool.name) },
        { type: 'tool_use', id: toolUseId, name: tool.name, input },
      ]
    : [{ type: 'text', text: MOCK_TEXT }];
  const message = {
    id,
    type: 'message',
    role: 'assistant',
    model,
    content,
    stop_reason: tool ? 'tool_use' : 'end_turn',
    stop_sequence: null,
    usage,
  };

  /** The same answer as Anthropic's stream events (no `ping`: callers add it where the service sends it). */
  function events(): Json[] {
    const start: Json = {
      type: 'message_start',
      message: { ...message, content: [], stop_reason: null, usage: { ...usage, output_tokens: 1 } },
    };
    const blocks: Json[] = [];
    if (tool) {
      const preamble = toolPreamble(tool.name);
      blocks.push(
        { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } },
        { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: preamble } },
        { type: 'content_block_stop', index: 0 },
        {
          type: 'content_block_start',
          index: 1,
          content_block: { type: 'tool_use', id: toolUseId, name: tool.name, input: {} },
        },
        ...['', ...fragments(JSON.stringify(input))].map((partial_json) => ({
          type: 'content_block_delta',
          index: 1,
          delta: { type: 'input_json_delta', partial_json },
        })),
        { type: 'content_block_stop', index: 1 },
      );
    } else {
      blocks.push(
        { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } },
        ...MOCK_TEXT_DELTAS.map((text) => ({
          type: 'content_block_delta',
          index: 0,
          delta: { type: 'text_delta', text },
        })),
        { type: 'content_block_stop', index: 0 },
      );
    }
    return [
      start,
      ...blocks,
      {
        type: 'message_delta',
        delta: { stop_reason: message.stop_reason, stop_sequence: null },
        usage: { output_tokens: usage.output_tokens },
      },
      { type: 'message_stop' },
    ];
  }

  return { message, usage, events };
}

// ---------------------------------------------------------------------------------------------------- Gemini

export interface GeminiAnswerOptions {
  model: string;
  responseId: string;
  body: Json;
  markers: Markers;
}

/** A Gemini answer as Vertex gives it: whole, and as stream chunks (usage in the last one only). */
export function geminiAnswer({ model, responseId, body, markers }: GeminiAnswerOptions) {
  const fn = markers.tool ? geminiFunction(body) : undefined;
  const prompt = mockPromptTokens({ contents: body.contents, systemInstruction: body.systemInstruction });
  const promptTokenCount = prompt + markers.cacheRead;
  const candidatesTokenCount = fn ? MOCK_TOOL_OUTPUT_TOKENS : MOCK_OUTPUT_TOKENS;
  const usageMetadata: Json = {
    promptTokenCount,
    candidatesTokenCount,
    totalTokenCount: promptTokenCount + candidatesTokenCount + GEMINI_THOUGHTS_TOKENS,
    ...(markers.cacheRead > 0 ? { cachedContentTokenCount: markers.cacheRead } : {}),
    trafficType: 'ON_DEMAND',
    promptTokensDetails: [{ modality: 'TEXT', tokenCount: promptTokenCount }],
    candidatesTokensDetails: [{ modality: 'TEXT', tokenCount: candidatesTokenCount }],
    ...(markers.cacheRead > 0
      ? { cacheTokensDetails: [{ modality: 'TEXT', tokenCount: markers.cacheRead }] }
      : {}),
    thoughtsTokenCount: GEMINI_THOUGHTS_TOKENS,
  };
  const envelope = { modelVersion: model, createTime: '2026-01-01T00:00:00.000000Z', responseId };
  const candidate = (parts: Json[], finishReason?: string): Json => ({
    content: { role: 'model', parts },
    ...(finishReason ? { finishReason } : {}),
  });
  const parts: Json[] = fn
    ? [{ functionCall: { name: fn.name, args: sampleArguments(fn.schema) } }]
    : [{ text: MOCK_TEXT }];
  const response = { candidates: [candidate(parts, 'STOP')], usageMetadata, ...envelope };

  function chunks(): Json[] {
    if (fn) return [response];
    return MOCK_TEXT_DELTAS.map((text, i) =>
      i < MOCK_TEXT_DELTAS.length - 1
        ? { candidates: [candidate([{ text }])], ...envelope }
        : { candidates: [candidate([{ text }], 'STOP')], usageMetadata, ...envelope },
    );
  }

  return { response, usageMetadata, chunks };
}

// ---------------------------------------------------------------------------------------------------- OpenAI (Azure)

/** Azure's content filter verdict on a prompt or a choice: nothing filtered. */
export const NOT_FILTERED = {
  hate: { filtered: false, severity: 'safe' },
  self_harm: { filtered: false, severity: 'safe' },
  sexual: { filtered: false, severity: 'safe' },
  violence: { filtered: false, severity: 'safe' },
};
const PROMPT_FILTER_RESULTS = [
  {
    prompt_index: 0,
    content_filter_results: { ...NOT_FILTERED, jailbreak: { filtered: false, detected: false } },
  },
];

export interface OpenAIAnswerOptions {
  id: string;
  callId: string;
  model: string;
  body: Json;
  markers: Markers;
}

/** A chat completion as Azure gives it: JSON, and SSE chunks (the first one Azure's prompt filter verdict). */
export function chatAnswer({ id, callId, model, body, markers }: OpenAIAnswerOptions) {
  const fn = markers.tool ? openaiFunction(body) : undefined;
  const prompt = mockPromptTokens({ messages: body.messages }) + markers.cacheRead;
  const completion = fn ? MOCK_TOOL_OUTPUT_TOKENS : MOCK_OUTPUT_TOKENS;
  const usage = {
    completion_tokens: completion,
    completion_tokens_details: {
      accepted_prediction_tokens: 0,
      audio_tokens: 0,
      reasoning_tokens: 0,
      rejected_prediction_tokens: 0,
    },
    prompt_tokens: prompt,
    prompt_tokens_details: { audio_tokens: 0, cached_tokens: markers.cacheRead },
    total_tokens: prompt + completion,
  };
  const args = fn ? JSON.stringify(sampleArguments(fn.schema)) : '';
  const toolCall = fn && { id: callId, type: 'function', function: { name: fn.name, arguments: args } };
  const finish = fn ? 'tool_calls' : 'stop';
  const common = { id, created: 1767225600, model, system_fingerprint: 'fp_mock' };
  const completionJson = {
    ...common,
    object: 'chat.completion',
    choices: [
      {
        index: 0,
        finish_reason: finish,
        logprobs: null,
        message: {
          role: 'assistant',
          content: fn ? null : MOCK_TEXT,
          refusal: null,
          annotations: [],
          ...(toolCall ? { tool_calls: [toolCall] } : {}),
        },
        content_filter_results: NOT_FILTERED,
      },
    ],
    usage,
    prompt_filter_results: PROMPT_FILTER_RESULTS,
  };

  function chunks(includeUsage: boolean): Json[] {
    const chunk = (delta: Json, finish_reason: string | null = null): Json => ({
      ...common,
      object: 'chat.completion.chunk',
      choices: [
        {
          index: 0,
          delta,
          finish_reason,
          logprobs: null,
          content_filter_results: delta.content ? NOT_FILTERED : {},
        },
      ],
      ...(includeUsage ? { usage: null } : {}),
    });
    const deltas: Json[] = toolCall
      ? [
          chunk({
            role: 'assistant',
            content: null,
            refusal: null,
            tool_calls: [
              { index: 0, id: callId, type: 'function', function: { ...toolCall.function, arguments: '' } },
            ],
          }),
          ...fragments(args).map((piece) =>
            chunk({ tool_calls: [{ index: 0, function: { arguments: piece } }] }),
          ),
        ]
      : [
          chunk({ role: 'assistant', content: '', refusal: null }),
          ...MOCK_TEXT_DELTAS.map((content) => chunk({ content })),
        ];
    return [
      // Azure's first chunk: the prompt filter's verdict, with no choices and empty ids.
      {
        choices: [],
        created: 0,
        id: '',
        model: '',
        object: '',
        prompt_filter_results: PROMPT_FILTER_RESULTS,
      },
      ...deltas,
      chunk({}, finish),
      ...(includeUsage ? [{ ...common, object: 'chat.completion.chunk', choices: [], usage }] : []),
    ];
  }

  return { completion: completionJson, usage, chunks };
}

/** A Responses API answer: the response object, and its stream events. */
export function responsesAnswer({ id, callId, model, body, markers }: OpenAIAnswerOptions) {
  const fn = markers.tool ? openaiFunction(body) : undefined;
  const input = mockPromptTokens({ input: body.input, instructions: body.instructions }) + markers.cacheRead;
  const outputTokens = fn ? MOCK_TOOL_OUTPUT_TOKENS : MOCK_OUTPUT_TOKENS;
  const usage = {
    input_tokens: input,
    input_tokens_details: { cached_tokens: markers.cacheRead },
    output_tokens: outputTokens,
    output_tokens_details: { reasoning_tokens: 0 },
    total_tokens: input + outputTokens,
  };
  const messageId = `msg_${id.slice(5)}`;
  const args = fn ? JSON.stringify(sampleArguments(fn.schema)) : '';
  const item: Json = fn
    ? {
        type: 'function_call',
        id: `fc_${id.slice(5)}`,
        call_id: callId,
        name: fn.name,
        arguments: args,
        status: 'completed',
      }
    : {
        type: 'message',
        id: messageId,
        status: 'completed',
        role: 'assistant',
        content: [{ type: 'output_text', text: MOCK_TEXT, annotations: [], logprobs: [] }],
      };
  const response = (status: string, done: boolean): Json => ({
    id,
    object: 'response',
    created_at: 1767225600,
    status,
    error: null,
    incomplete_details: null,
    instructions: body.instructions ?? null,
    model,
    output: done ? [item] : [],
    parallel_tool_calls: true,
    previous_response_id: body.previous_response_id ?? null,
    store: body.store ?? true,
    temperature: 1,
    text: { format: { type: 'text' } },
    tool_choice: body.tool_choice ?? 'auto',
    tools: body.tools ?? [],
    top_p: 1,
    truncation: 'disabled',
    usage: done ? usage : null,
    metadata: {},
  });

  function events(): [string, Json][] {
    const list: Json[] = [
      { type: 'response.created', response: response('in_progress', false) },
      { type: 'response.in_progress', response: response('in_progress', false) },
    ];
    if (fn) {
      list.push(
        {
          type: 'response.output_item.added',
          output_index: 0,
          item: { ...item, arguments: '', status: 'in_progress' },
        },
        ...fragments(args).map((delta) => ({
          type: 'response.function_call_arguments.delta',
          item_id: item.id,
          output_index: 0,
          delta,
        })),
        { type: 'response.function_call_arguments.done', item_id: item.id, output_index: 0, arguments: args },
        { type: 'response.output_item.done', output_index: 0, item },
      );
    } else {
      const part = { type: 'output_text', text: '', annotations: [], logprobs: [] };
      const at = { item_id: messageId, output_index: 0, content_index: 0 };
      list.push(
        {
          type: 'response.output_item.added',
          output_index: 0,
          item: { ...item, status: 'in_progress', content: [] },
        },
        { type: 'response.content_part.added', ...at, part },
        ...MOCK_TEXT_DELTAS.map((delta) => ({
          type: 'response.output_text.delta',
          ...at,
          delta,
          logprobs: [],
        })),
        { type: 'response.output_text.done', ...at, text: MOCK_TEXT, logprobs: [] },
        { type: 'response.content_part.done', ...at, part: { ...part, text: MOCK_TEXT } },
        { type: 'response.output_item.done', output_index: 0, item },
      );
    }
    list.push({ type: 'response.completed', response: response('completed', true) });
    return list.map((event, sequence_number) => [String(event.type), { ...event, sequence_number }]);
  }

  return { response: response('completed', true), usage, events };
}

/** The embedding every input gets. */
export const MOCK_EMBEDDING = [0.25, -0.5, 0.125];

/** Embeddings of each input (base64 of little-endian float32 when asked, as the openai SDK asks by default). */
export function embeddingsAnswer(body: Json, model: string) {
  const inputs = Array.isArray(body.input) ? body.input : [body.input];
  const tokens = mockPromptTokens({ input: body.input });
  const embedding =
    body.encoding_format === 'base64'
      ? Buffer.from(new Float32Array(MOCK_EMBEDDING).buffer).toString('base64')
      : MOCK_EMBEDDING;
  return {
    object: 'list',
    data: inputs.map((_, index) => ({ object: 'embedding', index, embedding })),
    model,
    usage: { prompt_tokens: tokens, total_tokens: tokens },
  };
}
