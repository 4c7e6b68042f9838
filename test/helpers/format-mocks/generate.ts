/**
 * A Gemini generateContent upstream, as generativelanguage.googleapis.com answers a Gemini 3 model: its request checks
 * (function responses right after their calls, as many as there were calls; the current turn's first function call
 * signed), JSON answers, `alt=sse` streams (or one JSON array) with running usage, function calls whole with a thought
 * signature on the first, thoughts when `includeThoughts`, and errors in Google's shape.
 */
import { MockError, pieces, type Ask, type Json, type Script } from './script';

const FIELDS = new Set([
  'contents',
  'systemInstruction',
  'tools',
  'toolConfig',
  'safetySettings',
  'generationConfig',
  'cachedContent',
  'labels',
  'model',
]);
const CONFIG = new Set([
  'temperature',
  'topP',
  'topK',
  'candidateCount',
  'maxOutputTokens',
  'stopSequences',
  'presencePenalty',
  'frequencyPenalty',
  'seed',
  'responseMimeType',
  'responseSchema',
  'responseJsonSchema',
  'responseModalities',
  'responseLogprobs',
  'logprobs',
  'thinkingConfig',
  'mediaResolution',
  'speechConfig',
]);
const DATA = [
  'text',
  'inlineData',
  'fileData',
  'functionCall',
  'functionResponse',
  'executableCode',
  'codeExecutionResult',
];
const FUNCTION_NAME = /^[a-zA-Z_][a-zA-Z0-9_.-]{0,63}$/;
/** The value Google documents for calls another model made, which skips signature validation. */
const SKIP = 'skip_thought_signature_validator';

export const THOUGHT_SIGNATURE = 'CiQB+/mock/thought+sig==';

const bad = (message: string): never => {
  throw new MockError(400, message, 'INVALID_ARGUMENT');
};

export function generateAsk(body: Json, size: number): Ask {
  for (const key in body)
    if (!FIELDS.has(key)) bad(`Invalid JSON payload received. Unknown name "${key}": Cannot find field.`);
  const contents = body.contents as Json[];
  if (!Array.isArray(contents) || !contents.length)
    bad('* GenerateContentRequest.contents: contents is not specified');
  contents.forEach(checkContent);
  checkCalls(contents);
  const config = (body.generationConfig as Json | undefined) ?? {};
  for (const key in config)
    if (!CONFIG.has(key))
      bad(`Invalid JSON payload received. Unknown name "${key}" at 'generation_config': Cannot find field.`);
  const thinking = (config.thinkingConfig as Json | undefined) ?? {};
  if (thinking.thinkingLevel !== undefined && thinking.thinkingBudget !== undefined) {
    bad('thinking_budget and thinking_level are not supported together.');
  }
  if (config.responseSchema && config.responseJsonSchema)
    bad('responseSchema and responseJsonSchema cannot both be set.');
  const schema = (config.responseJsonSchema ?? config.responseSchema) as Json | undefined;
  if (schema && config.responseMimeType !== 'application/json')
    bad('responseMimeType must be application/json to use a response schema.');
  const tools: Ask['tools'] = [];
  for (const tool of (body.tools as Json[] | undefined) ?? []) {
    for (const f of (tool.functionDeclarations as Json[] | undefined) ?? []) {
      if (!FUNCTION_NAME.test(String(f.name)))
        bad(`* GenerateContentRequest.tools[0].function_declarations[0].name: Invalid function name.`);
      if (f.parameters && f.parametersJsonSchema)
        bad('parameters and parameters_json_schema cannot both be set.');
      tools.push({ name: String(f.name), schema: ((f.parametersJsonSchema ?? f.parameters) as Json) ?? {} });
    }
  }
  const calling = ((body.toolConfig as Json | undefined)?.functionCallingConfig as Json | undefined) ?? {};
  const allowed = calling.allowedFunctionNames as string[] | undefined;
  const last = contents[contents.length - 1]!;
  const parts = last.role === 'model' ? [] : (last.parts as Json[]);
  const results = parts
    .filter((p) => p.functionResponse)
    .map((p) => (p.functionResponse as Json).response as Json);
  const kind = (p: Json) => String(((p.inlineData ?? p.fileData) as Json | undefined)?.mimeType ?? '');
  return {
    lastUserText: parts
      .filter((p) => typeof p.text === 'string' && !p.thought)
      .map((p) => p.text)
      .join(' '),
    toolResults: results.map((r) => (typeof r?.output === 'string' ? r.output : JSON.stringify(r))),
    tools,
    ...(calling.mode === 'NONE' ? { toolChoice: 'none' as const } : {}),
    ...(calling.mode === 'ANY'
      ? { toolChoice: allowed?.length === 1 ? { name: allowed[0]! } : ('required' as const) }
      : {}),
    ...(schema
      ? { schema }
      : config.responseMimeType === 'application/json'
        ? { schema: 'json' as const }
        : {}),
    thinking: thinking.includeThoughts === true,
    ...(typeof config.maxOutputTokens === 'number' ? { maxTokens: config.maxOutputTokens } : {}),
    ...(Array.isArray(config.stopSequences) ? { stop: config.stopSequences as string[] } : {}),
    images: parts.filter((p) => kind(p).startsWith('image/')).length,
    documents: parts.filter((p) => kind(p) === 'application/pdf' || kind(p) === 'text/plain').length,
    size,
  };
}

function checkContent(c: Json, i: number): void {
  if (c.role !== undefined && c.role !== 'user' && c.role !== 'model' && c.role !== 'function') {
    bad(`Please use a valid role: user, model.`);
  }
  const parts = c.parts as Json[];
  if (!Array.isArray(parts) || !parts.length)
    bad(`* GenerateContentRequest.contents[${i}].parts: contents.parts must not be empty.`);
  parts.forEach((p, j) => {
    const data = DATA.filter((k) => p[k] !== undefined);
    if (data.length !== 1)
      bad(
        `* GenerateContentRequest.contents[${i}].parts[${j}].data: required oneof field 'data' must have one initialized field`,
      );
    if (p.functionResponse && !(p.functionResponse as Json).name)
      bad(
        `* GenerateContentRequest.contents[${i}].parts[${j}].function_response.name: Name cannot be empty.`,
      );
    if (p.functionCall && !(p.functionCall as Json).name)
      bad(`* GenerateContentRequest.contents[${i}].parts[${j}].function_call.name: Name cannot be empty.`);
  });
}

/**
 * A function response turn comes right after its call turn, with as many responses as calls; the current turn's
 * first function call carries its thought signature (Gemini 3 refuses it otherwise).
 */
function checkCalls(contents: Json[]): void {
  let lastUserText = -1;
  contents.forEach((c, i) => {
    const parts = c.parts as Json[];
    if (c.role !== 'model' && parts.some((p) => typeof p.text === 'string')) lastUserText = i;
    const responses = parts.filter((p) => p.functionResponse).length;
    if (!responses) return;
    const before = contents[i - 1];
    const calls =
      before?.role === 'model' ? (before.parts as Json[]).filter((p) => p.functionCall).length : 0;
    if (!calls)
      bad('Please ensure that function response turn comes immediately after a function call turn.');
    if (calls !== responses)
      bad(
        'Please ensure that the number of function response parts is equal to the number of function call parts of the function call turn.',
      );
  });
  contents.forEach((c, i) => {
    if (c.role !== 'model' || i < lastUserText) return;
    const first = (c.parts as Json[]).find((p) => p.functionCall);
    if (first && !first.thoughtSignature) {
      bad(
        `Function call is missing a thought_signature in functionCall parts. This is required for tools to work correctly, and missing thought_signature may lead to degraded model performance. Additional data, function call \`default_api:${String((first.functionCall as Json).name)}\` , position ${i + 1}.`,
      );
    }
    if (first && first.thoughtSignature !== THOUGHT_SIGNATURE && first.thoughtSignature !== SKIP)
      bad('Corrupted thought signature.');
  });
}

const FINISH = { end: 'STOP', stop_sequence: 'STOP', tool_use: 'STOP', max_tokens: 'MAX_TOKENS' } as const;

function usage(s: Script, final: boolean): Json {
  const thoughts = s.usage.reasoning;
  const candidates = s.usage.output - thoughts;
  return {
    promptTokenCount: s.usage.input,
    ...(final ? { candidatesTokenCount: candidates } : {}),
    totalTokenCount: s.usage.input + (final ? s.usage.output : 0),
    ...(s.usage.cacheRead ? { cachedContentTokenCount: s.usage.cacheRead } : {}),
    promptTokensDetails: [{ modality: 'TEXT', tokenCount: s.usage.input }],
    ...(final && thoughts ? { thoughtsTokenCount: thoughts } : {}),
  };
}

function callParts(s: Script): Json[] {
  return s.calls.map((c, i) => ({
    functionCall: { name: c.name, args: c.args },
    ...(i === 0 ? { thoughtSignature: THOUGHT_SIGNATURE } : {}),
  }));
}

export function generateJson(s: Script, model: string): Json {
  const parts: Json[] = [];
  if (s.thinking) parts.push({ text: s.thinking, thought: true });
  if (s.text) parts.push({ text: s.text });
  parts.push(...callParts(s));
  return {
    candidates: [{ content: { parts, role: 'model' }, finishReason: FINISH[s.stop], index: 0 }],
    usageMetadata: usage(s, true),
    modelVersion: model,
    responseId: 'mockResponse1',
  };
}

/** The stream's chunks (objects): thoughts and text in pieces, the calls whole, finishReason and usage on the last. */
export function generateChunks(s: Script, model: string): (Json | { error: Json })[] {
  const chunks: (Json | { error: Json })[] = [];
  const chunk = (parts: Json[], last = false) =>
    chunks.push({
      candidates: [
        { content: { parts, role: 'model' }, ...(last ? { finishReason: FINISH[s.stop] } : {}), index: 0 },
      ],
      usageMetadata: usage(s, last),
      modelVersion: model,
      responseId: 'mockResponse2',
    });
  const thoughts = pieces(s.thinking ?? '', 12);
  const texts = pieces(s.text, 12);
  const calls = callParts(s);
  thoughts.forEach((t) => chunk([{ text: t, thought: true }]));
  for (let i = 0; i < texts.length; i++) {
    chunk([{ text: texts[i]! }], !calls.length && i === texts.length - 1);
    if (s.streamFail) {
      chunks.push({
        error: {
          code: 503,
          message: 'The model is overloaded. Please try again later.',
          status: 'UNAVAILABLE',
        },
      });
      return chunks;
    }
  }
  if (calls.length) chunk(calls, true);
  if (!calls.length && !texts.length) chunk([{ text: '' }], true);
  return chunks;
}

export const generateSse = (chunks: unknown[]): string[] =>
  chunks.map((c) => `data: ${JSON.stringify(c)}\r\n\r\n`);

/** The stream without `alt=sse`: one JSON array, its elements written as they come. */
export const generateArray = (chunks: unknown[]): string[] =>
  chunks.map((c, i) => `${i === 0 ? '[' : '\n,\r\n'}${JSON.stringify(c, null, 2)}`).concat('\n]');

const STATUS: Record<number, string> = {
  400: 'INVALID_ARGUMENT',
  401: 'UNAUTHENTICATED',
  403: 'PERMISSION_DENIED',
  404: 'NOT_FOUND',
  429: 'RESOURCE_EXHAUSTED',
  500: 'INTERNAL',
  503: 'UNAVAILABLE',
  504: 'DEADLINE_EXCEEDED',
};

export function generateError(status: number, message: string): Json {
  return { error: { code: status, message, status: STATUS[status] ?? 'UNKNOWN' } };
}
