import { NOTE } from '../chat/fields';
import { dropped, mapped, passed, refused, rule, type FieldTable } from '../table';

const isNull = (v: unknown) => v === null;
const serverTool = 'a server tool runs at Anthropic: no other format runs it';

/** Anthropic messages as the caller: each field against the chat completions and generateContent targets. */
export const MESSAGES_FIELDS: FieldTable = {
  caller: 'messages',
  minimal: { model: 'm', max_tokens: 100, messages: [{ role: 'user', content: 'hi' }] },
  rules: [
    rule('model', {
      chat: mapped('`model`: the route target’s model'),
      generate: mapped('the request path: the route target’s model'),
    }),
    rule('messages', { chat: mapped('`messages` (below)'), generate: mapped('`contents` (below)') }),
    rule('max_tokens', {
      chat: mapped('`max_completion_tokens`'),
      generate: mapped('`generationConfig.maxOutputTokens`'),
    }),
    rule(
      'stream',
      {
        chat: mapped('`stream`, with `stream_options.include_usage`'),
        generate: mapped('`:streamGenerateContent?alt=sse` instead of `:generateContent`'),
      },
      { value: true },
    ),
    rule(
      'system',
      {
        chat: mapped('a leading `system` message (blocks joined)'),
        generate: mapped('`systemInstruction.parts`'),
      },
      { value: 'be brief' },
    ),
    rule('system[].type: "text"', { chat: mapped('joined text'), generate: mapped('a `text` part') }),
    rule('system[].cache_control', { chat: dropped(NOTE.cacheHints), generate: dropped(NOTE.cacheHints) }),
    rule('system[].citations', { chat: dropped('no citations'), generate: dropped('no citations') }),
    rule(
      'cache_control',
      { chat: dropped(NOTE.cacheHints), generate: dropped(NOTE.cacheHints) },
      {
        value: { type: 'ephemeral' },
      },
    ),
    rule(
      'stop_sequences',
      { chat: mapped('`stop`'), generate: mapped('`generationConfig.stopSequences`') },
      {
        value: ['END'],
      },
    ),
    rule(
      'temperature',
      { chat: passed(), generate: mapped('`generationConfig.temperature`') },
      { value: 0.5 },
    ),
    rule('top_p', { chat: passed(), generate: mapped('`generationConfig.topP`') }, { value: 0.5 }),
    rule(
      'top_k',
      { chat: refused('no top-k sampling'), generate: mapped('`generationConfig.topK`') },
      { value: 5 },
    ),
    rule(
      'metadata',
      { chat: mapped('`user_id` → `user`'), generate: dropped(NOTE.noEndUser) },
      {
        value: { user_id: 'u1' },
      },
    ),
    rule(
      'service_tier',
      { chat: dropped(NOTE.serviceTier), generate: dropped(NOTE.serviceTier) },
      { value: 'auto' },
    ),
    rule(
      'speed',
      { chat: refused('no fast mode'), generate: refused('no fast mode') },
      { value: 'fast' },
      {
        test: (v) => v === 'standard' || v === null,
        note: 'standard is left out',
      },
    ),
    rule(
      'inference_geo',
      {
        chat: refused('no inference region: a residency request is never dropped'),
        generate: refused('no inference region: a residency request is never dropped'),
      },
      { value: 'us' },
      { test: isNull, note: 'null is left out' },
    ),
    rule(
      'container',
      { chat: refused(serverTool), generate: refused(serverTool) },
      { value: 'c1' },
      {
        test: isNull,
        note: 'null is left out',
      },
    ),
    rule('mcp_servers', { chat: refused(serverTool), generate: refused(serverTool) }, { value: [] }),
    rule(
      'diagnostics',
      {
        chat: dropped('prompt-cache diagnostics are the target’s own'),
        generate: dropped('prompt-cache diagnostics are the target’s own'),
      },
      { value: { previous_message_id: 'msg_1' } },
    ),
    rule(
      'context_management',
      {
        chat: dropped('server-side context editing: the target gets the whole context as sent'),
        generate: dropped('server-side context editing: the target gets the whole context as sent'),
      },
      { value: { edits: [] } },
    ),
    rule('thinking', {
      chat: mapped('`reasoning_effort` (below)'),
      generate: mapped('`generationConfig.thinkingConfig` (below)'),
    }),
    rule('thinking.type: "enabled"', {
      chat: mapped('`reasoning_effort` by `budget_tokens`: under 4,096 low, under 16,384 medium, more high'),
      generate: mapped('`thinkingBudget: budget_tokens`, `includeThoughts: true`'),
    }),
    rule('thinking.type: "adaptive"', {
      chat: mapped('`reasoning_effort` from `output_config.effort`, else left to the model'),
      generate: mapped('`thinkingBudget: -1` (dynamic), `includeThoughts: true`'),
    }),
    rule('thinking.type: "disabled"', {
      chat: dropped('no `reasoning_effort` is sent: the model’s default (none is not valid on every model)'),
      generate: mapped('`thinkingBudget: 0`'),
    }),
    rule('thinking.type: "between_tools"', {
      chat: refused('no thinking limited to tool turns'),
      generate: refused('no thinking limited to tool turns'),
    }),
    rule('thinking.display', {
      chat: dropped('chat shows reasoning only where the target gives it'),
      generate: mapped('omitted → `includeThoughts: false`'),
    }),
    rule('output_config', {
      chat: mapped('`effort` → `reasoning_effort`; `format` → `response_format` (below)'),
      generate: mapped('`effort` → `thinkingConfig.thinkingLevel`; `format` → `responseJsonSchema` (below)'),
    }),
    rule('output_config.effort', {
      chat: mapped('`reasoning_effort`'),
      generate: mapped('`thinkingConfig.thinkingLevel` (xhigh, max → HIGH)'),
    }),
    rule('output_config.format', {
      chat: mapped('`response_format: {type: json_schema, json_schema: {name: "output", schema}}`'),
      generate: mapped('`responseMimeType: application/json`, `responseJsonSchema: schema`'),
    }),
    rule('tools', {
      chat: mapped('function tools `{name, description, parameters: input_schema, strict}`'),
      generate: mapped('`tools[0].functionDeclarations[]`: `{name, description, parametersJsonSchema}`'),
    }),
    rule('tools[].type: "custom"', {
      chat: mapped('a function tool'),
      generate: mapped('a function declaration'),
    }),
    rule('tools[].type (server tools)', { chat: refused(serverTool), generate: refused(serverTool) }),
    rule('tools[].strict', { chat: passed('`function.strict`'), generate: dropped(NOTE.geminiStrict) }),
    rule('tools[].cache_control', { chat: dropped(NOTE.cacheHints), generate: dropped(NOTE.cacheHints) }),
    rule('tools[].eager_input_streaming', {
      chat: dropped('a streaming granularity hint'),
      generate: dropped('a streaming granularity hint'),
    }),
    rule(
      'tools[].defer_loading',
      {
        chat: refused('tool search runs at Anthropic'),
        generate: refused('tool search runs at Anthropic'),
      },
      undefined,
      { test: (v) => v === false, note: 'false is left out' },
    ),
    rule(
      'tools[].input_examples',
      {
        chat: refused('no tool input examples'),
        generate: refused('no tool input examples'),
      },
      undefined,
      { test: (v) => Array.isArray(v) && !v.length, note: 'an empty list is left out' },
    ),
    rule(
      'tools[].allowed_callers',
      {
        chat: refused('programmatic tool calling runs at Anthropic'),
        generate: refused('programmatic tool calling runs at Anthropic'),
      },
      undefined,
      {
        test: (v) => Array.isArray(v) && v.every((c) => c === 'direct'),
        note: '["direct"] is left out',
      },
    ),
    rule(
      'tool_choice',
      {
        chat: mapped('auto, none, any → required, tool → a named function'),
        generate: mapped(
          '`toolConfig.functionCallingConfig.mode`: AUTO, NONE, any → ANY, tool → ANY with `allowedFunctionNames`',
        ),
      },
      { value: { type: 'any' } },
    ),
    rule(
      'tool_choice.disable_parallel_tool_use',
      {
        chat: mapped('`parallel_tool_calls: false`'),
        generate: mapped(NOTE.oneCall),
      },
      undefined,
      { test: (v) => v === false, note: 'false is left out' },
    ),

    rule('messages[].role: "user"', { chat: passed(), generate: mapped('`contents[]` with role `user`') }),
    rule('messages[].role: "assistant"', {
      chat: passed(),
      generate: mapped('`contents[]` with role `model`'),
    }),
    rule('messages[].role: "system"', {
      chat: mapped('a `system` message in its place'),
      generate: mapped('joined to `systemInstruction` (its position is lost)'),
    }),
    rule('messages[].content[].type: "text"', {
      chat: mapped('a text part'),
      generate: mapped('a `text` part'),
    }),
    rule('messages[].content[].cache_control', {
      chat: dropped(NOTE.cacheHints),
      generate: dropped(NOTE.cacheHints),
    }),
    rule(
      'messages[].content[].citations',
      {
        chat: refused('no citations in requests'),
        generate: refused('no citations in requests'),
      },
      undefined,
      { test: (v) => v === null || (Array.isArray(v) && !v.length), note: 'none is left out' },
    ),
    rule('messages[].content[].type: "image"', {
      chat: mapped('an `image_url` part: base64 as a `data:` URL, url as is'),
      generate: mapped('base64 as `inlineData`, url as `fileData.fileUri`'),
    }),
    rule('messages[].content[].source.type: "file"', {
      chat: refused(NOTE.fileId),
      generate: refused(NOTE.fileId),
    }),
    rule(
      'messages[].content[].transformations',
      {
        chat: refused('no image transformations'),
        generate: refused('no image transformations'),
      },
      undefined,
      { test: isNull, note: 'null is left out' },
    ),
    rule('messages[].content[].type: "document"', {
      chat: mapped('base64 PDF → a `file` part with `file_data`; text → a text part'),
      generate: mapped('base64 → `inlineData`; url → `fileData.fileUri`; text → `inlineData` text/plain'),
    }),
    rule('messages[].content[].source.type: "url" (document)', {
      chat: refused(NOTE.docUrlChat),
      generate: mapped('`fileData.fileUri` (application/pdf)'),
    }),
    rule('messages[].content[].source.type: "content"', {
      chat: refused('no document made of content blocks'),
      generate: refused('no document made of content blocks'),
    }),
    rule('messages[].content[].title', {
      chat: mapped('the file part’s `filename`'),
      generate: dropped('inline data has no name'),
    }),
    rule(
      'messages[].content[].context',
      {
        chat: refused('no document context'),
        generate: refused('no document context'),
      },
      undefined,
      { test: isNull, note: 'null is left out' },
    ),
    rule('messages[].content[].type: "search_result"', {
      chat: refused('no search-result blocks'),
      generate: refused('no search-result blocks'),
    }),
    rule('messages[].content[].type: "tool_use"', {
      chat: mapped('`tool_calls[]` (input as JSON text)'),
      generate: mapped('a `functionCall` part `{id, name, args}`'),
    }),
    rule('messages[].content[].caller', {
      chat: dropped('the caller of a client tool is the model'),
      generate: dropped('the caller of a client tool is the model'),
    }),
    rule(
      'messages[].content[].toolset_name',
      { chat: refused(serverTool), generate: refused(serverTool) },
      undefined,
      {
        test: isNull,
        note: 'null is left out',
      },
    ),
    rule('messages[].content[].type: "tool_result"', {
      chat: mapped('a `tool` message `{tool_call_id, content}`'),
      generate: mapped('a `functionResponse` part `{id, name, response: {output}}` (the name from the call)'),
    }),
    rule('messages[].content[].is_error', {
      chat: dropped('tool messages have no error flag: the content is sent as is'),
      generate: mapped('`response: {error}` instead of `{output}`'),
    }),
    rule('messages[].content[].content[].type: "text"', {
      chat: mapped('the tool message’s text'),
      generate: mapped('`response.output` text'),
    }),
    rule('messages[].content[].content[].type: "image"', {
      chat: refused('tool messages hold text only'),
      generate: mapped('`functionResponse.parts[]` inlineData or fileData'),
    }),
    rule('messages[].content[].content[].type: "document"', {
      chat: refused('tool messages hold text only'),
      generate: mapped('`functionResponse.parts[]` inlineData or fileData (plain text joins the output)'),
    }),
    rule('messages[].content[].content[].type: "search_result"', {
      chat: refused('no search-result blocks'),
      generate: refused('no search-result blocks'),
    }),
    rule('messages[].content[].content[].type: "tool_reference"', {
      chat: refused(serverTool),
      generate: refused(serverTool),
    }),
    rule('messages[].content[].content[].cache_control', {
      chat: dropped(NOTE.cacheHints),
      generate: dropped(NOTE.cacheHints),
    }),
    rule('messages[].content[].type: "thinking"', {
      chat: dropped('chat completions takes no reasoning back'),
      generate: dropped(NOTE.geminiThoughts),
    }),
    rule('messages[].content[].type: "redacted_thinking"', {
      chat: dropped('chat completions takes no reasoning back'),
      generate: dropped(NOTE.geminiThoughts),
    }),
    rule('messages[].content[].type (server tool blocks)', {
      chat: refused(serverTool),
      generate: refused(serverTool),
    }),
  ],
};

/** Content block types of the server tools, refused on every target. */
export const SERVER_BLOCKS = new Set([
  'server_tool_use',
  'web_search_tool_result',
  'web_fetch_tool_result',
  'code_execution_tool_result',
  'bash_code_execution_tool_result',
  'text_editor_code_execution_tool_result',
  'tool_search_tool_result',
  'container_upload',
  'mcp_tool_use',
  'mcp_tool_result',
  'compaction',
]);
