import { NOTE } from '../chat/fields';
import { dropped, mapped, passed, refused, rule, type FieldTable } from '../table';

const builtIn = 'a built-in tool of Gemini: no other format runs it';
const noAudio = 'audio and speech are not translated';

/**
 * Gemini generateContent as the caller: each field (camelCase; the snake_case spellings the REST API takes are read
 * the same) against the chat completions and messages targets.
 */
export const GENERATE_FIELDS: FieldTable = {
  caller: 'generate',
  minimal: { contents: [{ role: 'user', parts: [{ text: 'hi' }] }] },
  rules: [
    rule('contents', { chat: mapped('`messages` (below)'), messages: mapped('`messages` (below)') }),
    rule('model', {
      chat: mapped('`model`: the route target’s model (the path names the route)'),
      messages: mapped('`model`: the route target’s model (the path names the route)'),
    }),
    rule(
      'systemInstruction',
      {
        chat: mapped('a leading `system` message (text parts joined)'),
        messages: mapped('`system` text blocks'),
      },
      { value: { parts: [{ text: 'be brief' }] } },
    ),
    rule('tools', { chat: mapped('function tools (below)'), messages: mapped('custom tools (below)') }),
    rule('tools[].functionDeclarations', {
      chat: mapped('function tools `{name, description, parameters}`'),
      messages: mapped('tools `{name, description, input_schema}`'),
    }),
    rule('tools[].functionDeclarations[].parametersJsonSchema', {
      chat: mapped('`function.parameters`'),
      messages: mapped('`input_schema`'),
    }),
    rule('tools[].functionDeclarations[].parameters', {
      chat: mapped(
        '`function.parameters`, converted to JSON Schema (lower-case types, nullable → a null type)',
      ),
      messages: mapped('`input_schema`, converted to JSON Schema (lower-case types, nullable → a null type)'),
    }),
    rule('tools[].functionDeclarations[].response', {
      chat: dropped('no schema for a function’s result'),
      messages: dropped('no schema for a function’s result'),
    }),
    rule('tools[].functionDeclarations[].responseJsonSchema', {
      chat: dropped('no schema for a function’s result'),
      messages: dropped('no schema for a function’s result'),
    }),
    rule(
      'tools[].functionDeclarations[].behavior',
      {
        chat: refused('no non-blocking functions'),
        messages: refused('no non-blocking functions'),
      },
      undefined,
      { test: (v) => v === 'BLOCKING' || v === 'UNSPECIFIED', note: 'BLOCKING is left out' },
    ),
    rule('tools[] (built-in tools)', { chat: refused(builtIn), messages: refused(builtIn) }),
    rule('toolConfig', {
      chat: mapped('`tool_choice` (below)'),
      messages: mapped('`tool_choice` (below)'),
    }),
    rule('toolConfig.functionCallingConfig.mode', {
      chat: mapped('AUTO → auto, NONE → none, ANY → required (with one allowed name: that function)'),
      messages: mapped('AUTO → auto, NONE → none, ANY → any (with one allowed name: `{type: tool, name}`)'),
    }),
    rule('toolConfig.functionCallingConfig.mode: "VALIDATED"', {
      chat: refused('no validated mode'),
      messages: refused('no validated mode'),
    }),
    rule('toolConfig.functionCallingConfig.allowedFunctionNames', {
      chat: mapped('one name: a named tool choice; several are refused'),
      messages: mapped('one name: a named tool choice; several are refused'),
    }),
    rule('toolConfig.functionCallingConfig.streamFunctionCallArguments', {
      chat: dropped('arguments stream anyway (as whole calls to a Gemini caller)'),
      messages: dropped('arguments stream anyway (as whole calls to a Gemini caller)'),
    }),
    rule('toolConfig.retrievalConfig', { chat: refused(builtIn), messages: refused(builtIn) }),
    rule(
      'toolConfig.includeServerSideToolInvocations',
      { chat: refused(builtIn), messages: refused(builtIn) },
      undefined,
      {
        test: (v) => v === false,
        note: 'false is left out',
      },
    ),
    rule(
      'safetySettings',
      {
        chat: dropped('the target applies its own safety policy'),
        messages: dropped('the target applies its own safety policy'),
      },
      { value: [{ category: 'HARM_CATEGORY_HARASSMENT', threshold: 'BLOCK_NONE' }] },
    ),
    rule(
      'cachedContent',
      {
        chat: refused('a Gemini cached content cannot be read by the target'),
        messages: refused('a Gemini cached content cannot be read by the target'),
      },
      { value: 'cachedContents/abc' },
    ),
    rule(
      'labels',
      { chat: dropped('billing labels are Google’s'), messages: dropped('billing labels are Google’s') },
      {
        value: { team: 'a' },
      },
    ),
    rule('generationConfig', { chat: mapped('(below)'), messages: mapped('(below)') }),
    rule('generationConfig.temperature', {
      chat: passed('`temperature`'),
      messages: mapped(NOTE.sampling('temperature')),
    }),
    rule('generationConfig.topP', { chat: passed('`top_p`'), messages: mapped(NOTE.sampling('top_p')) }),
    rule('generationConfig.topK', {
      chat: refused('no top-k sampling'),
      messages: mapped(NOTE.sampling('top_k')),
    }),
    rule(
      'generationConfig.candidateCount',
      { chat: refused(NOTE.noCandidates), messages: refused(NOTE.noCandidates) },
      undefined,
      {
        test: (v) => v === 1,
        note: '1 is left out',
      },
    ),
    rule('generationConfig.maxOutputTokens', {
      chat: mapped('`max_completion_tokens`'),
      messages: mapped('`max_tokens`'),
    }),
    rule('generationConfig.stopSequences', { chat: mapped('`stop`'), messages: mapped('`stop_sequences`') }),
    rule(
      'generationConfig.presencePenalty',
      { chat: passed('`presence_penalty`'), messages: refused(NOTE.noPenalty) },
      undefined,
      {
        test: (v) => v === 0,
        note: '0 is left out',
      },
    ),
    rule(
      'generationConfig.frequencyPenalty',
      { chat: passed('`frequency_penalty`'), messages: refused(NOTE.noPenalty) },
      undefined,
      {
        test: (v) => v === 0,
        note: '0 is left out',
      },
    ),
    rule('generationConfig.seed', { chat: passed('`seed`'), messages: refused(NOTE.noSeed) }),
    rule('generationConfig.responseMimeType', {
      chat: mapped('application/json → `response_format` json_object (json_schema with a schema)'),
      messages: mapped('application/json with a schema → `output_config.format`'),
    }),
    rule('generationConfig.responseMimeType: "application/json" (no schema)', {
      chat: mapped('`response_format: {type: json_object}`'),
      messages: refused('JSON output needs a schema in the messages format'),
    }),
    rule('generationConfig.responseMimeType: "text/x.enum"', {
      chat: refused('no enum output mode'),
      messages: refused('no enum output mode'),
    }),
    rule('generationConfig.responseJsonSchema', {
      chat: mapped('`response_format: {type: json_schema, json_schema: {name: "output", schema}}`'),
      messages: mapped('`output_config.format: {type: json_schema, schema}`'),
    }),
    rule('generationConfig.responseSchema', {
      chat: mapped('as `responseJsonSchema`, converted to JSON Schema'),
      messages: mapped('as `responseJsonSchema`, converted to JSON Schema'),
    }),
    rule(
      'generationConfig.responseModalities',
      { chat: refused(noAudio), messages: refused(noAudio) },
      undefined,
      {
        test: (v) => Array.isArray(v) && v.every((m) => m === 'TEXT'),
        note: '["TEXT"] is left out',
      },
    ),
    rule(
      'generationConfig.responseLogprobs',
      { chat: refused(NOTE.noLogprobs), messages: refused(NOTE.noLogprobs) },
      undefined,
      {
        test: (v) => v === false,
        note: 'false is left out',
      },
    ),
    rule('generationConfig.logprobs', { chat: refused(NOTE.noLogprobs), messages: refused(NOTE.noLogprobs) }),
    rule('generationConfig.thinkingConfig', {
      chat: mapped('`reasoning_effort` (below)'),
      messages: mapped('`thinking` (below)'),
    }),
    rule('generationConfig.thinkingConfig.thinkingLevel', {
      chat: mapped('`reasoning_effort` (lower-case)'),
      messages: mapped('`thinking: {type: adaptive}`, `output_config.effort` (minimal → low)'),
    }),
    rule('generationConfig.thinkingConfig.thinkingBudget', {
      chat: mapped('0 → none; -1 → left to the model; else under 4,096 low, under 16,384 medium, more high'),
      messages: mapped('0 → disabled; -1 → adaptive; else `{type: enabled, budget_tokens}` (at least 1,024)'),
    }),
    rule('generationConfig.thinkingConfig.includeThoughts', {
      chat: dropped('chat shows reasoning only where the target gives it'),
      messages: mapped('absent or false → `display: omitted` (Gemini shows no thoughts unless asked)'),
    }),
    rule('generationConfig.mediaResolution', {
      chat: dropped('no media resolution setting'),
      messages: dropped('no media resolution setting'),
    }),
    rule('generationConfig.speechConfig', { chat: refused(noAudio), messages: refused(noAudio) }),
    rule(
      'generationConfig.audioTimestamp',
      { chat: refused(noAudio), messages: refused(noAudio) },
      undefined,
      {
        test: (v) => v === false,
        note: 'false is left out',
      },
    ),
    rule('generationConfig.enableAffectiveDialog', { chat: refused(noAudio), messages: refused(noAudio) }),
    rule(
      'generationConfig.enableEnhancedCivicAnswers',
      {
        chat: refused('a Gemini-only feature'),
        messages: refused('a Gemini-only feature'),
      },
      undefined,
      { test: (v) => v === false, note: 'false is left out' },
    ),
    rule('generationConfig.routingConfig', {
      chat: refused('Vertex model routing'),
      messages: refused('Vertex model routing'),
    }),
    rule('generationConfig.modelSelectionConfig', {
      chat: refused('Vertex model routing'),
      messages: refused('Vertex model routing'),
    }),

    rule('contents[].role: "user"', {
      chat: mapped('a `user` message (function responses: `tool` messages)'),
      messages: passed(),
    }),
    rule('contents[].role: "model"', {
      chat: mapped('an `assistant` message'),
      messages: mapped('an `assistant` message'),
    }),
    rule('contents[].role: "function"', { chat: mapped('as `user`'), messages: mapped('as `user`') }),
    rule('contents[].parts[].text', { chat: mapped('text'), messages: mapped('a text block') }),
    rule('contents[].parts[].thought', {
      chat: dropped('chat completions takes no reasoning back'),
      messages: mapped('a `thinking` block with its `thoughtSignature` (unsigned thoughts are left out)'),
    }),
    rule('contents[].parts[].thoughtSignature', {
      chat: dropped('Gemini’s own signatures mean nothing to another model'),
      messages: mapped('on a thought: the thinking block’s signature; else left out'),
    }),
    rule('contents[].parts[].inlineData', {
      chat: mapped(
        'images → `image_url` (`data:` URL); PDF → `file`; text/plain → text; other types refused',
      ),
      messages: mapped(
        'images → `image` (base64); PDF → `document`; text/plain → a text document; other types refused',
      ),
    }),
    rule('contents[].parts[].fileData', {
      chat: mapped('an http(s) image URL → `image_url`; Gemini Files API and gs:// URIs are refused'),
      messages: mapped(
        'an http(s) URL → an `image` or `document` url source; Gemini Files API and gs:// URIs are refused',
      ),
    }),
    rule('contents[].parts[].fileData (document)', {
      chat: refused(NOTE.docUrlChat),
      messages: mapped('a `document` with a url source'),
    }),
    rule('contents[].parts[].functionCall', {
      chat: mapped('`tool_calls[]` (id kept, or minted)'),
      messages: mapped('a `tool_use` block (id kept, or minted)'),
    }),
    rule('contents[].parts[].functionResponse', {
      chat: mapped('a `tool` message: `response.output` as text, other responses as JSON text'),
      messages: mapped(
        'a `tool_result` block: `response.output` as text (`error` → `is_error`), other responses as JSON',
      ),
    }),
    rule('contents[].parts[].functionResponse.parts', {
      chat: refused('tool messages hold text only'),
      messages: mapped('image and document blocks in the `tool_result`'),
    }),
    rule(
      'contents[].parts[].functionResponse.willContinue',
      {
        chat: refused('no streamed function responses'),
        messages: refused('no streamed function responses'),
      },
      undefined,
      { test: (v) => v === false, note: 'false is left out' },
    ),
    rule('contents[].parts[].functionResponse.scheduling', {
      chat: dropped('a Live API setting'),
      messages: dropped('a Live API setting'),
    }),
    rule('contents[].parts[].mediaResolution', {
      chat: dropped('no media resolution setting'),
      messages: dropped('no media resolution setting'),
    }),
    rule('contents[].parts[].partMetadata', {
      chat: dropped('the caller’s own metadata'),
      messages: dropped('the caller’s own metadata'),
    }),
    rule('contents[].parts[].videoMetadata', {
      chat: refused('video is not translated'),
      messages: refused('video is not translated'),
    }),
    rule('contents[].parts[].executableCode', { chat: refused(builtIn), messages: refused(builtIn) }),
    rule('contents[].parts[].codeExecutionResult', { chat: refused(builtIn), messages: refused(builtIn) }),
    rule('contents[].parts[].toolCall', { chat: refused(builtIn), messages: refused(builtIn) }),
    rule('contents[].parts[].toolResponse', { chat: refused(builtIn), messages: refused(builtIn) }),
  ],
};
