import { dropped, mapped, passed, refused, rule, type FieldTable } from '../table';

/** Notes several callers' tables share, so one decision reads the same everywhere. */
export const NOTE = {
  /** Messages targets get sampling parameters: Genway's default API version (2023-06-01) takes them. */
  sampling: (field: string) =>
    `\`${field}\` (an upstream on API version 2026-10-21, which removed sampling parameters, answers 400 naming it)`,
  maxTokens: '`max_tokens` (when absent: 8192, as the messages format requires one)',
  noCandidates: 'one answer per call: several choices are not translated',
  noLogprobs: 'log probabilities are not translated',
  noPenalty: 'no frequency or presence penalty',
  noSeed: 'no sampling seed',
  cacheHints: 'a caching hint: the target caches by its own rules',
  notStored: 'nothing is stored: the target keeps no completion',
  noEndUser: 'no end-user field',
  geminiStrict: 'no strict switch on function declarations: the schema is sent, not enforced',
  oneCall: 'Gemini has no switch for it: the answer keeps its first function call only',
  audio: 'audio is not translated',
  fileId: 'a file uploaded to the caller’s vendor cannot be read by the target',
  legacyFunctions: 'the legacy functions API is not translated: use tools',
  builtIn: 'a built-in tool of the caller’s vendor',
  prediction: 'predicted outputs are not translated',
  serviceTier: 'service tiers are not translated (auto and default ask for nothing)',
  geminiThoughts: 'past thoughts are not sent back to Gemini (it ignores them)',
  verbosity: 'a hint on the answer’s length with no equivalent: the model answers at its own length',
  docUrlChat: 'chat completions takes files only as bytes (`file_data`)',
} as const;

const isOne = (v: unknown) => v === 1 || v === null;
const isZero = (v: unknown) => v === 0 || v === null;

/** OpenAI chat completions as the caller: each field against the messages and generateContent targets. */
export const CHAT_FIELDS: FieldTable = {
  caller: 'chat',
  minimal: { model: 'm', messages: [{ role: 'user', content: 'hi' }] },
  rules: [
    rule('model', {
      messages: mapped('`model`: the route target’s model'),
      generate: mapped('the request path: the route target’s model'),
    }),
    rule('messages', { messages: mapped('`messages` (below)'), generate: mapped('`contents` (below)') }),
    rule(
      'stream',
      {
        messages: passed(),
        generate: mapped('`:streamGenerateContent?alt=sse` instead of `:generateContent`'),
      },
      { value: true },
    ),
    rule(
      'stream_options',
      {
        messages: mapped(
          '`include_usage`: usage always comes from the target; the usage chunk only when asked',
        ),
        generate: mapped(
          '`include_usage`: usage always comes from the target; the usage chunk only when asked',
        ),
      },
      { value: { include_usage: true } },
    ),
    rule(
      'max_completion_tokens',
      {
        messages: mapped(NOTE.maxTokens),
        generate: mapped('`generationConfig.maxOutputTokens`'),
      },
      { value: 100 },
    ),
    rule(
      'max_tokens',
      {
        messages: mapped(NOTE.maxTokens),
        generate: mapped('`generationConfig.maxOutputTokens`'),
      },
      { value: 100 },
    ),
    rule(
      'temperature',
      {
        messages: passed(NOTE.sampling('temperature')),
        generate: mapped('`generationConfig.temperature`'),
      },
      { value: 0.2 },
    ),
    rule(
      'top_p',
      {
        messages: passed(NOTE.sampling('top_p')),
        generate: mapped('`generationConfig.topP`'),
      },
      { value: 0.5 },
    ),
    rule(
      'stop',
      {
        messages: mapped('`stop_sequences`'),
        generate: mapped('`generationConfig.stopSequences`'),
      },
      { value: ['END'] },
    ),
    rule(
      'n',
      { messages: refused(NOTE.noCandidates), generate: refused(NOTE.noCandidates) },
      { value: 2 },
      {
        test: isOne,
        note: '1 is left out',
      },
    ),
    rule(
      'frequency_penalty',
      {
        messages: refused(NOTE.noPenalty),
        generate: mapped('`generationConfig.frequencyPenalty`'),
      },
      { value: 0.5 },
      { test: isZero, note: '0 (the default) is left out' },
    ),
    rule(
      'presence_penalty',
      {
        messages: refused(NOTE.noPenalty),
        generate: mapped('`generationConfig.presencePenalty`'),
      },
      { value: 0.5 },
      { test: isZero, note: '0 (the default) is left out' },
    ),
    rule(
      'seed',
      { messages: refused(NOTE.noSeed), generate: mapped('`generationConfig.seed`') },
      { value: 7 },
    ),
    rule(
      'logprobs',
      { messages: refused(NOTE.noLogprobs), generate: refused(NOTE.noLogprobs) },
      { value: true },
      {
        test: (v) => v === false || v === null,
        note: 'false is left out',
      },
    ),
    rule(
      'top_logprobs',
      { messages: refused(NOTE.noLogprobs), generate: refused(NOTE.noLogprobs) },
      { value: 3 },
      {
        test: isZero,
        note: '0 is left out',
      },
    ),
    rule(
      'logit_bias',
      {
        messages: refused('no token biases'),
        generate: refused('no token biases'),
      },
      { value: { '50256': -100 } },
      {
        test: (v) => v === null || (typeof v === 'object' && !Object.keys(v).length),
        note: 'an empty map is left out',
      },
    ),
    rule('tools', {
      messages: mapped('`tools[]`: `{name, description, input_schema: parameters, strict}`'),
      generate: mapped('`tools[0].functionDeclarations[]`: `{name, description, parametersJsonSchema}`'),
    }),
    rule('tools[].type: "function"', {
      messages: mapped('a custom tool'),
      generate: mapped('a function declaration'),
    }),
    rule('tools[].type: "custom"', {
      messages: refused('no free-form (grammar) tools'),
      generate: refused('no free-form (grammar) tools'),
    }),
    rule('tools[].function.strict', { messages: passed('`strict`'), generate: dropped(NOTE.geminiStrict) }),
    rule(
      'tool_choice',
      {
        messages: mapped('`tool_choice`: auto, none, required → `any`, a function → `{type: tool, name}`'),
        generate: mapped(
          '`toolConfig.functionCallingConfig.mode`: AUTO, NONE, required → ANY, a function → ANY with `allowedFunctionNames`',
        ),
      },
      { value: 'required' },
    ),
    rule('tool_choice.type: "allowed_tools"', {
      messages: refused('no allowed-tools subset'),
      generate: refused('no allowed-tools subset'),
    }),
    rule('tool_choice.type: "custom"', {
      messages: refused('no free-form (grammar) tools'),
      generate: refused('no free-form (grammar) tools'),
    }),
    rule(
      'parallel_tool_calls',
      {
        messages: mapped('false → `tool_choice.disable_parallel_tool_use: true`'),
        generate: mapped(NOTE.oneCall),
      },
      { value: false },
      { test: (v) => v === true || v === null, note: 'true (the default) is left out' },
    ),
    rule('response_format', {
      messages: mapped('`output_config.format` (below)'),
      generate: mapped('`generationConfig.responseMimeType` and `responseJsonSchema` (below)'),
    }),
    rule('response_format.type: "text"', {
      messages: dropped('the default'),
      generate: dropped('the default'),
    }),
    rule('response_format.type: "json_object"', {
      messages: refused('JSON output needs a schema in the messages format: use `json_schema`'),
      generate: mapped('`responseMimeType: application/json`'),
    }),
    rule('response_format.type: "json_schema"', {
      messages: mapped(
        '`output_config.format: {type: json_schema, schema}` (name, description and strict left out)',
      ),
      generate: mapped('`responseMimeType: application/json`, `responseJsonSchema: schema`'),
    }),
    rule(
      'reasoning_effort',
      {
        messages: mapped(
          '`thinking: {type: adaptive}` with `output_config.effort` (minimal → low); none → `thinking: {type: disabled}`; ' +
            'a turn continuing tool calls whose `thinking_blocks` were not sent back runs without thinking (the format requires them)',
        ),
        generate: mapped(
          '`thinkingConfig.thinkingLevel` (xhigh, max → HIGH) with `includeThoughts`; none → `thinkingBudget: 0`',
        ),
      },
      { value: 'high' },
    ),
    rule(
      'verbosity',
      { messages: dropped(NOTE.verbosity), generate: dropped(NOTE.verbosity) },
      { value: 'low' },
    ),
    rule(
      'user',
      { messages: mapped('`metadata.user_id`'), generate: dropped(NOTE.noEndUser) },
      { value: 'u1' },
    ),
    rule(
      'safety_identifier',
      {
        messages: mapped('`metadata.user_id` (unless `user` is set)'),
        generate: dropped(NOTE.noEndUser),
      },
      { value: 'u1' },
    ),
    rule(
      'metadata',
      { messages: dropped(NOTE.notStored), generate: dropped(NOTE.notStored) },
      { value: { a: 'b' } },
    ),
    rule('store', { messages: dropped(NOTE.notStored), generate: dropped(NOTE.notStored) }, { value: true }),
    rule(
      'service_tier',
      { messages: refused(NOTE.serviceTier), generate: refused(NOTE.serviceTier) },
      {
        value: 'flex',
      },
      { test: (v) => v === 'auto' || v === 'default' || v === null, note: 'auto and default are left out' },
    ),
    rule(
      'prompt_cache_key',
      { messages: dropped(NOTE.cacheHints), generate: dropped(NOTE.cacheHints) },
      { value: 'k' },
    ),
    rule(
      'prompt_cache_retention',
      { messages: dropped(NOTE.cacheHints), generate: dropped(NOTE.cacheHints) },
      {
        value: '24h',
      },
    ),
    rule(
      'prompt_cache_options',
      { messages: dropped(NOTE.cacheHints), generate: dropped(NOTE.cacheHints) },
      {
        value: { mode: 'implicit' },
      },
    ),
    rule(
      'modalities',
      { messages: refused(NOTE.audio), generate: refused(NOTE.audio) },
      { value: ['text', 'audio'] },
      {
        test: (v) => v === null || (Array.isArray(v) && v.every((m) => m === 'text')),
        note: '["text"] is left out',
      },
    ),
    rule(
      'audio',
      { messages: refused(NOTE.audio), generate: refused(NOTE.audio) },
      { value: { voice: 'alloy', format: 'mp3' } },
    ),
    rule(
      'prediction',
      { messages: refused(NOTE.prediction), generate: refused(NOTE.prediction) },
      {
        value: { type: 'content', content: 'x' },
      },
    ),
    rule(
      'web_search_options',
      { messages: refused(NOTE.builtIn), generate: refused(NOTE.builtIn) },
      { value: {} },
    ),
    rule(
      'moderation',
      { messages: refused('no moderation policy'), generate: refused('no moderation policy') },
      {
        value: { model: 'omni-moderation-latest' },
      },
    ),
    rule(
      'functions',
      { messages: refused(NOTE.legacyFunctions), generate: refused(NOTE.legacyFunctions) },
      {
        value: [{ name: 'f', parameters: {} }],
      },
    ),
    rule(
      'function_call',
      { messages: refused(NOTE.legacyFunctions), generate: refused(NOTE.legacyFunctions) },
      {
        value: 'auto',
      },
    ),

    rule('messages[].role: "system"', {
      messages: mapped('the leading ones: `system`; a later one: a `system` message in its place'),
      generate: mapped('`systemInstruction` (a later one is joined to it too: its position is lost)'),
    }),
    rule('messages[].role: "developer"', {
      messages: mapped('as `system`'),
      generate: mapped('as `system`'),
    }),
    rule('messages[].role: "user"', {
      messages: passed(),
      generate: mapped('`contents[]` with role `user`'),
    }),
    rule('messages[].role: "assistant"', {
      messages: passed(),
      generate: mapped('`contents[]` with role `model`'),
    }),
    rule('messages[].role: "tool"', {
      messages: mapped('a `tool_result` block in a user message (consecutive results in one)'),
      generate: mapped(
        'a `functionResponse` part `{id, name, response: {output}}` (the name from the call; consecutive results in one content)',
      ),
    }),
    rule('messages[].role: "function"', {
      messages: refused(NOTE.legacyFunctions),
      generate: refused(NOTE.legacyFunctions),
    }),
    rule('messages[].name', {
      messages: dropped('no participant names'),
      generate: dropped('no participant names'),
    }),
    rule('messages[].content[].type: "text"', { messages: passed(), generate: mapped('a `text` part') }),
    rule('messages[].content[].prompt_cache_breakpoint', {
      messages: dropped(NOTE.cacheHints),
      generate: dropped(NOTE.cacheHints),
    }),
    rule('messages[].content[].type: "image_url"', {
      messages: mapped('an `image` block: a `data:` URL as a base64 source, an http(s) URL as a url source'),
      generate: mapped('a `data:` URL as `inlineData`, an http(s) URL as `fileData.fileUri`'),
    }),
    rule('messages[].content[].image_url.detail', {
      messages: dropped('no per-image detail level'),
      generate: dropped('no per-image detail level'),
    }),
    rule('messages[].content[].type: "file"', {
      messages: mapped(
        '`file.file_data` (a `data:` URL): a `document` block (PDF as base64, text/plain as text)',
      ),
      generate: mapped('`file.file_data`: `inlineData`'),
    }),
    rule('messages[].content[].file.file_id', {
      messages: refused(NOTE.fileId),
      generate: refused(NOTE.fileId),
    }),
    rule('messages[].content[].file.filename', {
      messages: mapped('the document’s `title`'),
      generate: dropped('inline data has no name'),
    }),
    rule('messages[].content[].type: "input_audio"', {
      messages: refused(NOTE.audio),
      generate: refused(NOTE.audio),
    }),
    rule('messages[].content[].type: "refusal"', {
      messages: mapped('a text block (assistant)'),
      generate: mapped('a text part (model)'),
    }),
    rule('messages[].refusal', { messages: mapped('a text block'), generate: mapped('a text part') }),
    rule('messages[].tool_calls[]', {
      messages: mapped('`tool_use` blocks `{id, name, input}` (the arguments parsed)'),
      generate: mapped('`functionCall` parts `{id, name, args}` (with the thought signature the id carries)'),
    }),
    rule('messages[].tool_calls[].type: "custom"', {
      messages: refused('no free-form (grammar) tools'),
      generate: refused('no free-form (grammar) tools'),
    }),
    rule('messages[].tool_call_id', {
      messages: mapped('`tool_use_id`'),
      generate: mapped('`functionResponse.id`, and its `name` from the call with that id'),
    }),
    rule('messages[].thinking_blocks', {
      messages: mapped('`thinking` and `redacted_thinking` blocks, signatures kept (a LiteLLM extension)'),
      generate: dropped(NOTE.geminiThoughts),
    }),
    rule('messages[].reasoning_content', {
      messages: dropped('thinking without its signature cannot be sent back: see `thinking_blocks`'),
      generate: dropped(NOTE.geminiThoughts),
    }),
    rule('messages[].parsed', {
      messages: dropped('the openai SDK’s parsed copy of an earlier answer’s content'),
      generate: dropped('the openai SDK’s parsed copy of an earlier answer’s content'),
    }),
    rule('messages[].annotations', {
      messages: dropped('citations of an earlier answer'),
      generate: dropped('citations of an earlier answer'),
    }),
    rule('messages[].audio', { messages: refused(NOTE.audio), generate: refused(NOTE.audio) }),
    rule('messages[].function_call', {
      messages: refused(NOTE.legacyFunctions),
      generate: refused(NOTE.legacyFunctions),
    }),
  ],
};
