/**
 * An OpenAI chat completions upstream, as api.openai.com answers (an OpenAI-compatible server's `reasoning_content`
 * added when reasoning is asked): request checks the API makes, JSON answers, chunked streams with the usage chunk
 * when asked, and errors in OpenAI's shape.
 */
import { MockError, pieces, type Ask, type Json, type Script } from './script';

/** The request fields the API knows (`openai` 6.x ChatCompletionCreateParams); any other is a 400, as there. */
const FIELDS = new Set([
  'messages',
  'model',
  'audio',
  'frequency_penalty',
  'function_call',
  'functions',
  'logit_bias',
  'logprobs',
  'max_completion_tokens',
  'max_tokens',
  'metadata',
  'modalities',
  'moderation',
  'n',
  'parallel_tool_calls',
  'prediction',
  'presence_penalty',
  'prompt_cache_key',
  'prompt_cache_options',
  'prompt_cache_retention',
  'reasoning_effort',
  'response_format',
  'safety_identifier',
  'seed',
  'service_tier',
  'stop',
  'store',
  'stream',
  'stream_options',
  'temperature',
  'tool_choice',
  'tools',
  'top_logprobs',
  'top_p',
  'user',
  'verbosity',
  'web_search_options',
]);
const PART_TYPES = new Set(['text', 'image_url', 'input_audio', 'file']);
const EFFORTS = new Set(['none', 'minimal', 'low', 'medium', 'high', 'xhigh', 'max']);
const NAME = /^[a-zA-Z0-9_-]{1,64}$/;

const bad = (message: string, param?: string): never => {
  throw new MockError(400, param ? `${message} (param: ${param})` : message, 'invalid_request_error');
};

/** Checks a request as the API does, and reads what it asks. */
export function chatAsk(body: Json, size: number): Ask {
  for (const key in body) if (!FIELDS.has(key)) bad(`Unrecognized request argument supplied: ${key}`);
  if (typeof body.model !== 'string' || !body.model) bad('you must provide a model parameter');
  if (body.stream_options != null && body.stream !== true) {
    bad("The 'stream_options' parameter is only allowed when 'stream' is enabled.", 'stream_options');
  }
  if (body.reasoning_effort != null && !EFFORTS.has(body.reasoning_effort as string)) {
    bad(`Invalid value: '${String(body.reasoning_effort)}'.`, 'reasoning_effort');
  }
  const messages = body.messages as Json[];
  if (!Array.isArray(messages) || messages.length === 0)
    bad("'messages' must contain at least one message", 'messages');
  checkMessages(messages);
  const tools = ((body.tools as Json[] | undefined) ?? []).map((t, i) => {
    const fn = t.function as Json | undefined;
    if (t.type !== 'function' || !fn || !NAME.test(String(fn.name)))
      bad(`Invalid tools[${i}]`, `tools[${i}]`);
    return { name: String(fn!.name), schema: (fn!.parameters as Json) ?? {} };
  });
  const choice = body.tool_choice;
  const format = body.response_format as Json | undefined;
  const trailing: Json[] = [];
  for (let i = messages.length - 1; i >= 0 && messages[i]!.role === 'tool'; i--)
    trailing.unshift(messages[i]!);
  const user = trailing.length ? undefined : [...messages].reverse().find((m) => m.role === 'user');
  const parts = Array.isArray(user?.content) ? (user!.content as Json[]) : [];
  return {
    lastUserText:
      typeof user?.content === 'string'
        ? user.content
        : parts
            .filter((p) => p.type === 'text')
            .map((p) => p.text)
            .join(' '),
    toolResults: trailing.map((m) =>
      typeof m.content === 'string' ? m.content : (m.content as Json[]).map((p) => p.text).join(''),
    ),
    tools,
    ...(choice === 'none' || choice === 'required' ? { toolChoice: choice } : {}),
    ...(typeof choice === 'object' && choice
      ? { toolChoice: { name: String(((choice as Json).function as Json).name) } }
      : {}),
    ...(format?.type === 'json_schema' ? { schema: (format.json_schema as Json).schema as Json } : {}),
    ...(format?.type === 'json_object' ? { schema: 'json' as const } : {}),
    thinking: body.reasoning_effort != null && body.reasoning_effort !== 'none',
    ...(typeof (body.max_completion_tokens ?? body.max_tokens) === 'number'
      ? { maxTokens: (body.max_completion_tokens ?? body.max_tokens) as number }
      : {}),
    ...(body.stop != null
      ? { stop: typeof body.stop === 'string' ? [body.stop] : (body.stop as string[]) }
      : {}),
    images: parts.filter((p) => p.type === 'image_url').length,
    documents: parts.filter((p) => p.type === 'file').length,
    size,
  };
}

function checkMessages(messages: Json[]): void {
  let awaiting = new Set<string>();
  messages.forEach((m, i) => {
    const role = m.role;
    if (!['system', 'developer', 'user', 'assistant', 'tool', 'function'].includes(role as string)) {
      bad(
        `Invalid value: '${String(role)}'. Supported values are: 'system', 'assistant', 'user', 'function', 'tool', and 'developer'.`,
        `messages[${i}].role`,
      );
    }
    if (role === 'tool') {
      if (!awaiting.delete(String(m.tool_call_id))) {
        bad(
          "Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls'.",
          `messages[${i}].role`,
        );
      }
      return;
    }
    if (awaiting.size) {
      bad(
        `An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. The following tool_call_ids did not have response messages: ${[...awaiting].join(', ')}`,
        `messages[${i}].role`,
      );
    }
    if (role === 'assistant') {
      const calls = (m.tool_calls as Json[] | undefined) ?? [];
      awaiting = new Set(calls.map((c) => String(c.id)));
      if (m.content == null && !calls.length)
        bad(`Invalid value for 'content': expected a string, got null.`, `messages[${i}].content`);
      for (const c of calls) {
        if (typeof (c.function as Json)?.arguments !== 'string')
          bad('tool call arguments must be a string', `messages[${i}].tool_calls`);
      }
    }
    if (role === 'user' && Array.isArray(m.content)) {
      (m.content as Json[]).forEach((p, j) => {
        if (!PART_TYPES.has(p.type as string))
          bad(`Invalid value: '${String(p.type)}'.`, `messages[${i}].content[${j}].type`);
        if (p.type === 'image_url' && typeof (p.image_url as Json)?.url !== 'string')
          bad('image_url.url is required', `messages[${i}].content[${j}]`);
      });
    }
  });
  if (awaiting.size) {
    bad(
      `An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'.`,
      'messages',
    );
  }
}

const FINISH = { end: 'stop', stop_sequence: 'stop', max_tokens: 'length', tool_use: 'tool_calls' } as const;

function usage(s: Script): Json {
  return {
    prompt_tokens: s.usage.input,
    completion_tokens: s.usage.output,
    total_tokens: s.usage.input + s.usage.output,
    prompt_tokens_details: { cached_tokens: s.usage.cacheRead, audio_tokens: 0 },
    completion_tokens_details: {
      reasoning_tokens: s.usage.reasoning,
      audio_tokens: 0,
      accepted_prediction_tokens: 0,
      rejected_prediction_tokens: 0,
    },
  };
}

const callId = (i: number) => `call_mock${i}Ab3xYz`;

export function chatJson(s: Script, model: string): Json {
  return {
    id: 'chatcmpl-mock1',
    object: 'chat.completion',
    created: 1_760_000_000,
    model,
    choices: [
      {
        index: 0,
        message: {
          role: 'assistant',
          content: s.calls.length && !s.text ? null : s.text,
          refusal: null,
          annotations: [],
          ...(s.thinking ? { reasoning_content: s.thinking } : {}),
          ...(s.calls.length
            ? {
                tool_calls: s.calls.map((c, i) => ({
                  id: callId(i),
                  type: 'function',
                  function: { name: c.name, arguments: JSON.stringify(c.args) },
                })),
              }
            : {}),
        },
        logprobs: null,
        finish_reason: FINISH[s.stop],
      },
    ],
    usage: usage(s),
    service_tier: 'default',
    system_fingerprint: 'fp_mock',
  };
}

/** The stream's SSE frames, one per chunk, as the API sends them (an `obfuscation` pad on each chunk). */
export function chatStream(s: Script, model: string, includeUsage: boolean): string[] {
  const frames: string[] = [];
  const chunk = (delta: Json, finish: string | null = null) => {
    const body: Json = {
      id: 'chatcmpl-mock2',
      object: 'chat.completion.chunk',
      created: 1_760_000_000,
      model,
      service_tier: 'default',
      system_fingerprint: 'fp_mock',
      choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }],
      ...(includeUsage ? { usage: null } : {}),
      obfuscation: 'x9',
    };
    frames.push(`data: ${JSON.stringify(body)}\n\n`);
  };
  chunk({ role: 'assistant', content: '', refusal: null });
  for (const piece of pieces(s.thinking ?? '')) chunk({ reasoning_content: piece });
  let first = true;
  for (const piece of pieces(s.text)) {
    chunk({ content: piece });
    if (first && s.streamFail) {
      frames.push(
        `data: ${JSON.stringify({ error: { message: 'The server had an error while processing your request.', type: 'server_error', param: null, code: null } })}\n\n`,
      );
      return frames;
    }
    first = false;
  }
  s.calls.forEach((c, i) => {
    chunk({
      tool_calls: [{ index: i, id: callId(i), type: 'function', function: { name: c.name, arguments: '' } }],
    });
    for (const piece of pieces(JSON.stringify(c.args), 5))
      chunk({ tool_calls: [{ index: i, function: { arguments: piece } }] });
  });
  chunk({}, FINISH[s.stop]);
  if (includeUsage) {
    frames.push(
      `data: ${JSON.stringify({ id: 'chatcmpl-mock2', object: 'chat.completion.chunk', created: 1_760_000_000, model, service_tier: 'default', system_fingerprint: 'fp_mock', choices: [], usage: usage(s), obfuscation: 'x9' })}\n\n`,
    );
  }
  frames.push('data: [DONE]\n\n');
  return frames;
}

const ERRORS: Record<number, [string, string | null]> = {
  400: ['invalid_request_error', null],
  401: ['invalid_request_error', 'invalid_api_key'],
  403: ['invalid_request_error', 'unsupported_country_region_territory'],
  404: ['invalid_request_error', 'model_not_found'],
  429: ['requests', 'rate_limit_exceeded'],
  500: ['server_error', null],
  503: ['server_error', 'service_unavailable'],
};

export function chatError(status: number, message: string): Json {
  const [type, code] = ERRORS[status] ?? ['server_error', null];
  return { error: { message, type, param: null, code } };
}
