import { NOTE } from '../chat/fields';
import { dropped, mapped, passed, refused, rule, type FieldTable, type Handling } from '../table';

const all = (h: Handling) => ({ chat: h, messages: h, generate: h });
const isNull = (v: unknown) => v === null;
const builtIn = 'a built-in tool of OpenAI: no other format runs it';
const CUSTOM =
  'a function taking one string, `input` (a grammar is described in the function’s description, not enforced); ' +
  'its calls come back as `custom_tool_call` items';
const stateful = 'state kept at OpenAI: send the whole conversation in `input`';

/** OpenAI Responses as the caller: each field against the chat completions, messages and generateContent targets. */
export const RESPONSES_FIELDS: FieldTable = {
  caller: 'responses',
  minimal: { model: 'm', input: 'hi' },
  rules: [
    rule('model', {
      chat: mapped('`model`: the route target’s model'),
      messages: mapped('`model`: the route target’s model'),
      generate: mapped('the request path: the route target’s model'),
    }),
    rule('input', {
      chat: mapped('`messages` (below); a string is one user message'),
      messages: mapped('`messages` (below); a string is one user message'),
      generate: mapped('`contents` (below); a string is one user content'),
    }),
    rule(
      'instructions',
      {
        chat: mapped('a leading `system` message'),
        messages: mapped('`system`'),
        generate: mapped('`systemInstruction`'),
      },
      { value: 'be brief' },
    ),
    rule(
      'max_output_tokens',
      {
        chat: mapped('`max_completion_tokens`'),
        messages: mapped('`max_tokens` (when absent: 8192)'),
        generate: mapped('`generationConfig.maxOutputTokens`'),
      },
      { value: 100 },
    ),
    rule(
      'temperature',
      {
        chat: passed(),
        messages: passed(NOTE.sampling('temperature')),
        generate: mapped('`generationConfig.temperature`'),
      },
      { value: 0.2 },
    ),
    rule(
      'top_p',
      {
        chat: passed(),
        messages: passed(NOTE.sampling('top_p')),
        generate: mapped('`generationConfig.topP`'),
      },
      { value: 0.5 },
    ),
    rule(
      'stream',
      {
        chat: mapped('`stream`, with `stream_options.include_usage`'),
        messages: passed(),
        generate: mapped('`:streamGenerateContent?alt=sse`'),
      },
      { value: true },
    ),
    rule('stream_options', all(dropped('obfuscation padding is not added')), {
      value: { include_obfuscation: false },
    }),
    rule('tools', {
      chat: mapped('function tools'),
      messages: mapped('custom tools `{name, description, input_schema}`'),
      generate: mapped('`tools[0].functionDeclarations[]`'),
    }),
    rule('tools[].type: "function"', {
      chat: mapped('`{type: function, function: {name, description, parameters, strict}}`'),
      messages: mapped('`{name, description, input_schema: parameters, strict}`'),
      generate: mapped('`{name, description, parametersJsonSchema: parameters}`'),
    }),
    rule('tools[].type (built-in tools)', all(refused(builtIn))),
    rule(
      'tools[].type: "namespace"',
      all(
        mapped(
          'each of its functions (and free-form tools) as one named `<namespace>__<name>`, the namespace’s description before its own; their calls come back as calls into the namespace (`namespace`, `name`)',
        ),
      ),
    ),
    rule('tools[].tools', all(mapped('the namespace’s tools, each as above'))),
    rule(
      'input[].namespace',
      all(mapped('a call into a namespace: the call named `<namespace>__<name>`, as its tool was')),
    ),
    rule('tools[].type: "custom"', all(mapped(CUSTOM))),
    rule('tools[].strict', { chat: passed(), messages: passed(), generate: dropped(NOTE.geminiStrict) }),
    rule('tools[].output_schema', all(dropped('no schema for a function’s result'))),
    rule('tools[].defer_loading', all(refused('tool search runs at OpenAI')), undefined, {
      test: (v) => v === false,
      note: 'false is left out',
    }),
    rule('tools[].allowed_callers', all(refused('programmatic tool calling runs at OpenAI')), undefined, {
      test: (v) => v === null || (Array.isArray(v) && v.every((c) => c === 'direct')),
      note: '["direct"] is left out',
    }),
    rule(
      'tool_choice',
      {
        chat: mapped('auto, none, required, `{type: function, name}` → a named function'),
        messages: mapped('auto, none, required → any, `{type: function, name}` → `{type: tool, name}`'),
        generate: mapped('AUTO, NONE, required → ANY, a function → ANY with `allowedFunctionNames`'),
      },
      { value: 'required' },
    ),
    rule(
      'tool_choice.type (other than function and custom)',
      all(refused('only function and custom tool choices are translated')),
    ),
    rule(
      'parallel_tool_calls',
      {
        chat: passed(),
        messages: mapped('false → `tool_choice.disable_parallel_tool_use: true`'),
        generate: mapped(NOTE.oneCall),
      },
      { value: false },
      { test: (v) => v === true || v === null, note: 'true (the default) is left out' },
    ),
    rule('text', {
      chat: mapped('`format` → `response_format` (below)'),
      messages: mapped('`format` → `output_config.format` (below)'),
      generate: mapped('`format` → `responseMimeType`, `responseJsonSchema` (below)'),
    }),
    rule('text.format.type: "text"', all(dropped('the default'))),
    rule('text.format.type: "json_object"', {
      chat: mapped('`response_format: {type: json_object}`'),
      messages: refused('JSON output needs a schema in the messages format: use `json_schema`'),
      generate: mapped('`responseMimeType: application/json`'),
    }),
    rule('text.format.type: "json_schema"', {
      chat: mapped(
        '`response_format: {type: json_schema, json_schema: {name, description, schema, strict}}`',
      ),
      messages: mapped('`output_config.format: {type: json_schema, schema}`'),
      generate: mapped('`responseMimeType: application/json`, `responseJsonSchema: schema`'),
    }),
    rule('text.verbosity', all(dropped(NOTE.verbosity))),
    rule(
      'reasoning',
      {
        chat: mapped('`effort` → `reasoning_effort`'),
        messages: mapped('`effort` → adaptive thinking with `output_config.effort`; none → disabled'),
        generate: mapped('`effort` → `thinkingConfig.thinkingLevel`; `summary` → `includeThoughts`'),
      },
      { value: { effort: 'low' } },
    ),
    rule('reasoning.effort', {
      chat: mapped('`reasoning_effort`'),
      messages: mapped(
        '`thinking: {type: adaptive}`, `output_config.effort` (minimal → low); none → disabled',
      ),
      generate: mapped('`thinkingConfig.thinkingLevel` (xhigh, max → HIGH); none → `thinkingBudget: 0`'),
    }),
    rule('reasoning.summary', {
      chat: dropped('chat shows reasoning only where the target gives it'),
      messages: mapped('thinking is shown (as reasoning summary items)'),
      generate: mapped('`includeThoughts: true`'),
    }),
    rule('reasoning.generate_summary', {
      chat: dropped('chat shows reasoning only where the target gives it'),
      messages: mapped('as `summary`'),
      generate: mapped('as `summary`'),
    }),
    rule(
      'include',
      {
        chat: mapped('(below)'),
        messages: mapped('(below)'),
        generate: mapped('(below)'),
      },
      { value: ['reasoning.encrypted_content'] },
    ),
    rule('include[]: "reasoning.encrypted_content"', {
      chat: dropped('chat completions returns no reasoning to resend'),
      messages: mapped('a thinking block’s signature travels in `encrypted_content`'),
      generate: dropped('Gemini’s thought signatures travel in the function call ids'),
    }),
    rule('include[] (other)', all(refused('only reasoning.encrypted_content is translated'))),
    rule('store', all(dropped(NOTE.notStored)), { value: true }),
    rule(
      'previous_response_id',
      all(refused(stateful)),
      { value: 'resp_1' },
      { test: isNull, note: 'null is left out' },
    ),
    rule(
      'conversation',
      all(refused(stateful)),
      { value: 'conv_1' },
      { test: isNull, note: 'null is left out' },
    ),
    rule(
      'prompt',
      all(refused('a stored prompt lives at OpenAI')),
      { value: { id: 'pmpt_1' } },
      {
        test: isNull,
        note: 'null is left out',
      },
    ),
    rule(
      'background',
      all(refused('background runs are kept at OpenAI')),
      { value: true },
      {
        test: (v) => v === false || v === null,
        note: 'false is left out',
      },
    ),
    rule(
      'context_management',
      all(dropped('server-side compaction: the target gets the whole context as sent')),
      {
        value: [{ type: 'compaction' }],
      },
    ),
    rule('prompt_cache_key', all(dropped(NOTE.cacheHints)), { value: 'k' }),
    rule('prompt_cache_retention', all(dropped(NOTE.cacheHints)), { value: '24h' }),
    rule('prompt_cache_options', all(dropped(NOTE.cacheHints)), { value: { mode: 'implicit' } }),
    rule('metadata', all(dropped(NOTE.notStored)), { value: { a: 'b' } }),
    rule(
      'client_metadata',
      all(
        dropped(
          'labels of the calling client (Codex’s session and turn ids) for OpenAI’s logs: nothing is logged there',
        ),
      ),
      { value: { session_id: 's1' } },
    ),
    rule(
      'user',
      { chat: passed(), messages: mapped('`metadata.user_id`'), generate: dropped(NOTE.noEndUser) },
      { value: 'u1' },
    ),
    rule(
      'safety_identifier',
      {
        chat: mapped('`user` (unless `user` is set)'),
        messages: mapped('`metadata.user_id` (unless `user` is set)'),
        generate: dropped(NOTE.noEndUser),
      },
      { value: 'u1' },
    ),
    rule(
      'service_tier',
      all(refused(NOTE.serviceTier)),
      { value: 'flex' },
      {
        test: (v) => v === 'auto' || v === 'default' || v === null,
        note: 'auto and default are left out',
      },
    ),
    rule(
      'truncation',
      all(refused('no server-side truncation: an overlong context fails')),
      { value: 'auto' },
      {
        test: (v) => v === 'disabled' || v === null,
        note: 'disabled (the default) is left out',
      },
    ),
    rule(
      'top_logprobs',
      all(refused(NOTE.noLogprobs)),
      { value: 3 },
      { test: (v) => v === 0 || v === null, note: '0 is left out' },
    ),
    rule(
      'max_tool_calls',
      all(refused('no limit on built-in tool calls')),
      { value: 3 },
      {
        test: isNull,
        note: 'null is left out',
      },
    ),
    rule(
      'moderation',
      all(refused('no moderation policy')),
      { value: { model: 'omni-moderation-latest' } },
      {
        test: isNull,
        note: 'null is left out',
      },
    ),

    rule('input[].type: "message"', {
      chat: mapped('a message of its role'),
      messages: mapped('a message of its role (system and developer: `system`)'),
      generate: mapped('a content (system and developer: `systemInstruction`)'),
    }),
    rule('input[].role: "system"', {
      chat: mapped('a `system` message'),
      messages: mapped('leading: `system`; later: a `system` message'),
      generate: mapped('`systemInstruction` (a later one loses its position)'),
    }),
    rule('input[].role: "developer"', all(mapped('as `system`'))),
    rule('input[].role: "user"', all(mapped('a user turn'))),
    rule('input[].role: "assistant"', all(mapped('an assistant (model) turn'))),
    rule('input[].id', all(dropped('item ids are OpenAI’s'))),
    rule('input[].status', all(dropped('an item’s status'))),
    rule('input[].phase', all(dropped('a phase label of the assistant’s own messages'))),
    rule('input[].content[].type: "input_text"', all(mapped('text'))),
    rule('input[].content[].type: "output_text"', all(mapped('text (assistant)'))),
    rule('input[].content[].type: "refusal"', all(mapped('text (assistant)'))),
    rule('input[].content[].annotations', all(dropped('citations of an earlier answer'))),
    rule('input[].content[].logprobs', all(dropped('log probabilities of an earlier answer'))),
    rule('input[].content[].prompt_cache_breakpoint', all(dropped(NOTE.cacheHints))),
    rule('input[].content[].type: "input_image"', {
      chat: mapped('`image_url`'),
      messages: mapped('an `image` block (data: URL → base64, http(s) → url)'),
      generate: mapped('`inlineData` (data: URL) or `fileData.fileUri`'),
    }),
    rule('input[].content[].detail', all(dropped('no per-image detail level'))),
    rule('input[].content[].file_id', all(refused(NOTE.fileId))),
    rule('input[].content[].type: "input_file"', {
      chat: mapped('`file_data` → a `file` part'),
      messages: mapped('`file_data` → a `document` block; `file_url` → a url document'),
      generate: mapped('`file_data` → `inlineData`; `file_url` → `fileData.fileUri`'),
    }),
    rule('input[].content[].file_url', {
      chat: refused(NOTE.docUrlChat),
      messages: mapped('a `document` with a url source'),
      generate: mapped('`fileData.fileUri`'),
    }),
    rule('input[].content[].filename', {
      chat: passed('`file.filename`'),
      messages: mapped('the document’s `title`'),
      generate: dropped('inline data has no name'),
    }),
    rule('input[].content[].type: "input_audio"', all(refused(NOTE.audio))),
    rule('input[].type: "function_call"', {
      chat: mapped('`tool_calls[]` on an assistant message (`call_id` as the id)'),
      messages: mapped('a `tool_use` block (`call_id` as the id)'),
      generate: mapped('a `functionCall` part (with the thought signature the call id carries)'),
    }),
    rule('input[].type: "function_call_output"', {
      chat: mapped('a `tool` message'),
      messages: mapped('a `tool_result` block'),
      generate: mapped('a `functionResponse` part `{id, name, response: {output}}` (the name from the call)'),
    }),
    rule('input[].output[].type: "input_image"', {
      chat: refused('tool messages hold text only'),
      messages: mapped('an image block in the `tool_result`'),
      generate: mapped('`functionResponse.parts[]`'),
    }),
    rule('input[].output[].type: "input_file"', {
      chat: refused('tool messages hold text only'),
      messages: mapped('a document block in the `tool_result`'),
      generate: mapped('`functionResponse.parts[]`'),
    }),
    rule('input[].output[].type: "input_text"', all(mapped('text'))),
    rule('input[].type: "reasoning"', {
      chat: dropped('chat completions takes no reasoning back'),
      messages: mapped(
        'a `thinking` block: summary text, signature from `encrypted_content` (unsigned ones left out)',
      ),
      generate: dropped(NOTE.geminiThoughts),
    }),
    rule('input[].type: "item_reference"', all(refused(stateful))),
    rule('input[].type: "custom_tool_call"', all(mapped('a tool call whose arguments are `{input}`'))),
    rule('input[].type: "custom_tool_call_output"', all(mapped('a tool result'))),
    rule('input[].type (built-in tool items)', all(refused(builtIn))),
  ],
};
