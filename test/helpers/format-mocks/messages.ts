/**
 * An Anthropic messages upstream, as api.anthropic.com answers at API version 2026-10-21 (the version
 * @anthropic-ai/sdk 1.x sends): its request checks (no sampling parameters, tool results right after their calls,
 * ids and media types), JSON answers, named-event streams with block indices, signed thinking, and errors in
 * Anthropic's shape.
 */
import { MockError, pieces, type Ask, type Json, type Script } from './script';

const FIELDS = new Set([
  'model',
  'max_tokens',
  'messages',
  'cache_control',
  'container',
  'context_management',
  'diagnostics',
  'inference_geo',
  'mcp_servers',
  'metadata',
  'output_config',
  'service_tier',
  'speed',
  'stop_sequences',
  'stream',
  'system',
  'thinking',
  'tool_choice',
  'tools',
]);
/** Removed by API version 2026-10-21 ("Extra inputs are not permitted"); 2023-06-01 still takes them. */
const SAMPLING = new Set(['temperature', 'top_p', 'top_k']);
const USER_BLOCKS = new Set(['text', 'image', 'document', 'search_result', 'tool_result']);
const ASSISTANT_BLOCKS = new Set(['text', 'thinking', 'redacted_thinking', 'tool_use', 'server_tool_use']);
const IMAGE_TYPES = new Set(['image/jpeg', 'image/png', 'image/gif', 'image/webp']);
const ID = /^[a-zA-Z0-9_-]+$/;
const TOOL_NAME = /^[a-zA-Z0-9_-]{1,128}$/;

export const SIGNATURE = 'EqQBCkgIBxABGAIiQL1mock+signature/of+the+thinking==';

const bad = (message: string): never => {
  throw new MockError(400, message, 'invalid_request_error');
};

export function messagesAsk(body: Json, size: number, version: string, count = false): Ask {
  for (const key in body) {
    if (SAMPLING.has(key) && version !== '2023-06-01') bad(`${key}: Extra inputs are not permitted`);
    if (!FIELDS.has(key) && !SAMPLING.has(key)) bad(`${key}: Extra inputs are not permitted`);
  }
  if (typeof body.model !== 'string') bad('model: Field required');
  if (!count && typeof body.max_tokens !== 'number') bad('max_tokens: Field required');
  const messages = body.messages as Json[];
  if (!Array.isArray(messages) || !messages.length) bad('messages: at least one message is required');
  const blocks = messages.map((m, i) => checkMessage(m, i));
  checkToolPairs(messages, blocks);
  const thinking = body.thinking as Json | undefined;
  if (thinking?.type === 'enabled') {
    const budget = thinking.budget_tokens as number;
    if (!(budget >= 1024))
      bad('thinking.enabled.budget_tokens: Input should be greater than or equal to 1024');
    if (!count && !(budget < (body.max_tokens as number)))
      bad('`max_tokens` must be greater than `thinking.budget_tokens`');
  }
  const tools = ((body.tools as Json[] | undefined) ?? []).map((t, i) => {
    if (!TOOL_NAME.test(String(t.name)))
      bad(`tools.${i}.custom.name: String should match pattern '^[a-zA-Z0-9_-]{1,128}$'`);
    if ((t.input_schema as Json | undefined)?.type !== 'object')
      bad(`tools.${i}.custom.input_schema.type: Input should be 'object'`);
    return { name: String(t.name), schema: t.input_schema as Json };
  });
  const choice = body.tool_choice as Json | undefined;
  if (choice && !['auto', 'any', 'tool', 'none'].includes(choice.type as string))
    bad('tool_choice: invalid type');
  const format = (body.output_config as Json | undefined)?.format as Json | undefined;
  if (format && format.type !== 'json_schema') bad('output_config.format.type: Input should be json_schema');
  const last = messages[messages.length - 1]!;
  const lastBlocks = blocks[blocks.length - 1]!;
  const results = last.role === 'user' ? lastBlocks.filter((b) => b.type === 'tool_result') : [];
  return {
    lastUserText:
      last.role === 'user'
        ? lastBlocks
            .filter((b) => b.type === 'text')
            .map((b) => b.text)
            .join(' ')
        : '',
    toolResults: results.map((r) =>
      typeof r.content === 'string'
        ? r.content
        : ((r.content as Json[]) ?? [])
            .filter((c) => c.type === 'text')
            .map((c) => c.text)
            .join(''),
    ),
    tools,
    ...(choice?.type === 'none' ? { toolChoice: 'none' as const } : {}),
    ...(choice?.type === 'any' ? { toolChoice: 'required' as const } : {}),
    ...(choice?.type === 'tool' ? { toolChoice: { name: String(choice.name) } } : {}),
    ...(format ? { schema: format.schema as Json } : {}),
    thinking: thinking?.type === 'enabled' || thinking?.type === 'adaptive',
    ...(typeof body.max_tokens === 'number' ? { maxTokens: body.max_tokens } : {}),
    ...(Array.isArray(body.stop_sequences) ? { stop: body.stop_sequences as string[] } : {}),
    images: lastBlocks.filter((b) => b.type === 'image').length,
    documents: lastBlocks.filter((b) => b.type === 'document').length,
    size,
  };
}

function checkMessage(m: Json, i: number): Json[] {
  const role = m.role;
  if (role !== 'user' && role !== 'assistant' && role !== 'system')
    bad(`messages.${i}.role: Input should be 'user', 'assistant' or 'system'`);
  if (typeof m.content === 'string') {
    if (!m.content && role !== 'assistant') bad(`messages.${i}: user messages must have non-empty content`);
    return [{ type: 'text', text: m.content }];
  }
  if (!Array.isArray(m.content)) bad(`messages.${i}.content: Input should be a valid list`);
  const blocks = m.content as Json[];
  if (!blocks.length && !(role === 'assistant' && i === -1))
    bad(`messages.${i}: all messages must have non-empty content`);
  const allowed =
    role === 'assistant' ? ASSISTANT_BLOCKS : role === 'system' ? new Set(['text']) : USER_BLOCKS;
  blocks.forEach((b, j) => {
    const where = `messages.${i}.content.${j}`;
    if (!allowed.has(b.type as string)) {
      bad(
        b.type === 'document'
          ? `${where}: document blocks are not accepted in assistant messages`
          : `${where}.type: Input tag '${String(b.type)}' is not expected here`,
      );
    }
    if (b.type === 'text' && (typeof b.text !== 'string' || !b.text))
      bad(`${where}: text content blocks must be non-empty`);
    if (b.type === 'text' && Array.isArray(b.citations) && b.citations.length && role === 'user')
      bad(`${where}.citations: not accepted in user messages`);
    if (b.type === 'tool_use' && !ID.test(String(b.id)))
      bad(`${where}.id: String should match pattern '^[a-zA-Z0-9_-]+$'`);
    if (b.type === 'tool_result' && !ID.test(String(b.tool_use_id)))
      bad(`${where}.tool_use_id: String should match pattern '^[a-zA-Z0-9_-]+$'`);
    if (b.type === 'thinking' && (typeof b.signature !== 'string' || !b.signature))
      bad(`${where}.signature: Field required`);
    if (b.type === 'image') {
      const source = b.source as Json;
      if (source?.type === 'base64' && !IMAGE_TYPES.has(source.media_type as string))
        bad(
          `${where}.source.base64.media_type: Input should be 'image/jpeg', 'image/png', 'image/gif' or 'image/webp'`,
        );
      if (source?.type !== 'base64' && source?.type !== 'url' && source?.type !== 'file')
        bad(`${where}.source: invalid source`);
    }
  });
  // Tool results open a user message.
  const firstOther = blocks.findIndex((b) => b.type !== 'tool_result');
  if (firstOther !== -1 && blocks.slice(firstOther).some((b) => b.type === 'tool_result')) {
    bad(`messages.${i}: tool_result blocks must come first in the content of a user message`);
  }
  return blocks;
}

function checkToolPairs(messages: Json[], blocks: Json[][]): void {
  let open: string[] = [];
  messages.forEach((m, i) => {
    const results = blocks[i]!.filter((b) => b.type === 'tool_result').map((b) => String(b.tool_use_id));
    for (const id of results) {
      if (!open.includes(id)) {
        bad(
          `messages.${i}.content: unexpected \`tool_use_id\` found in \`tool_result\` blocks: ${id}. Each \`tool_result\` block must have a corresponding \`tool_use\` block in the previous message.`,
        );
      }
    }
    const missing = open.filter((id) => !results.includes(id));
    if (missing.length)
      bad(
        `messages.${i - 1}: \`tool_use\` ids were found without \`tool_result\` blocks immediately after: ${missing.join(', ')}`,
      );
    open =
      m.role === 'assistant' ? blocks[i]!.filter((b) => b.type === 'tool_use').map((b) => String(b.id)) : [];
  });
}

const STOP = {
  end: 'end_turn',
  max_tokens: 'max_tokens',
  tool_use: 'tool_use',
  stop_sequence: 'stop_sequence',
} as const;

const toolId = (i: number) => `toolu_01Mock${i}Xyz`;

function usage(s: Script, final = true): Json {
  return {
    input_tokens: s.usage.input - s.usage.cacheRead,
    cache_creation_input_tokens: s.usage.cacheWrite,
    cache_read_input_tokens: s.usage.cacheRead,
    cache_creation: { ephemeral_5m_input_tokens: s.usage.cacheWrite, ephemeral_1h_input_tokens: 0 },
    output_tokens: final ? s.usage.output : 1,
    output_tokens_details: final ? { thinking_tokens: s.usage.reasoning } : null,
    server_tool_use: null,
    service_tier: 'standard',
    inference_geo: 'global',
    speed: 'standard',
  };
}

export function messagesJson(s: Script, model: string): Json {
  const content: Json[] = [];
  if (s.thinking) content.push({ type: 'thinking', thinking: s.thinking, signature: SIGNATURE });
  if (s.text) content.push({ type: 'text', text: s.text, citations: null });
  s.calls.forEach((c, i) =>
    content.push({
      type: 'tool_use',
      id: toolId(i),
      name: c.name,
      input: c.args,
      caller: { type: 'direct' },
    }),
  );
  return {
    id: 'msg_01MockMessage',
    type: 'message',
    role: 'assistant',
    model,
    content,
    stop_reason: STOP[s.stop],
    stop_sequence: s.stopSequence ?? null,
    stop_details: null,
    container: null,
    diagnostics: null,
    usage: usage(s),
  };
}

/** The stream's SSE frames, as the API sends them (a ping after message_start, each block's start, deltas, stop). */
export function messagesStream(s: Script, model: string): string[] {
  const frames: string[] = [];
  const event = (type: string, data: Json) =>
    frames.push(`event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`);
  event('message_start', {
    message: {
      id: 'msg_01MockStream',
      type: 'message',
      role: 'assistant',
      model,
      content: [],
      stop_reason: null,
      stop_sequence: null,
      stop_details: null,
      container: null,
      diagnostics: null,
      usage: usage(s, false),
    },
  });
  event('ping', {});
  let index = 0;
  if (s.thinking) {
    event('content_block_start', { index, content_block: { type: 'thinking', thinking: '', signature: '' } });
    for (const piece of pieces(s.thinking))
      event('content_block_delta', { index, delta: { type: 'thinking_delta', thinking: piece } });
    event('content_block_delta', { index, delta: { type: 'signature_delta', signature: SIGNATURE } });
    event('content_block_stop', { index: index++ });
  }
  if (s.text) {
    event('content_block_start', { index, content_block: { type: 'text', text: '', citations: null } });
    let first = true;
    for (const piece of pieces(s.text)) {
      event('content_block_delta', { index, delta: { type: 'text_delta', text: piece } });
      if (first && s.streamFail) {
        event('error', {
          error: { type: 'overloaded_error', message: 'Overloaded' },
          request_id: 'req_mock',
        });
        return frames;
      }
      first = false;
    }
    event('content_block_stop', { index: index++ });
  }
  s.calls.forEach((c, i) => {
    event('content_block_start', {
      index,
      content_block: { type: 'tool_use', id: toolId(i), name: c.name, input: {}, caller: { type: 'direct' } },
    });
    event('content_block_delta', { index, delta: { type: 'input_json_delta', partial_json: '' } });
    for (const piece of pieces(JSON.stringify(c.args), 6))
      event('content_block_delta', { index, delta: { type: 'input_json_delta', partial_json: piece } });
    event('content_block_stop', { index: index++ });
  });
  const final = usage(s);
  event('message_delta', {
    delta: {
      stop_reason: STOP[s.stop],
      stop_sequence: s.stopSequence ?? null,
      stop_details: null,
      container: null,
    },
    usage: {
      input_tokens: final.input_tokens,
      cache_creation_input_tokens: final.cache_creation_input_tokens,
      cache_read_input_tokens: final.cache_read_input_tokens,
      output_tokens: final.output_tokens,
      output_tokens_details: final.output_tokens_details,
      server_tool_use: null,
    },
  });
  event('message_stop', {});
  return frames;
}

const ERROR_TYPES: Record<number, string> = {
  400: 'invalid_request_error',
  401: 'authentication_error',
  402: 'billing_error',
  403: 'permission_error',
  404: 'not_found_error',
  413: 'request_too_large',
  429: 'rate_limit_error',
  500: 'api_error',
  504: 'timeout_error',
  529: 'overloaded_error',
};

export function messagesError(status: number, message: string): Json {
  return {
    type: 'error',
    error: { type: ERROR_TYPES[status] ?? 'api_error', message },
    request_id: 'req_011Mock',
  };
}
