import { messagesId } from '../ids';
import type { Message, Part, Reasoning, Request, Source } from '../ir';
import type { Obj } from '../shared';
import { mergeTurns } from '../write-common';

/** The messages format needs `max_tokens`: this, when the caller's format left it out. */
export const DEFAULT_MAX_TOKENS = 8192;
/** The smallest thinking budget the messages format takes. */
const MIN_BUDGET = 1024;

/**
 * An intermediate request as a messages-format body, for `model`: valid at Genway's default API version (2023-06-01)
 * and, but for sampling parameters the caller sent, at 2026-10-21.
 */
export function writeMessagesRequest(req: Request, model: string): Obj {
  const body: Obj = { model, max_tokens: req.maxTokens ?? DEFAULT_MAX_TOKENS };
  if (req.system.length) body.system = req.system.map((t) => ({ type: 'text', text: t.text }));
  body.messages = mergeTurns(req.messages)
    .map((m) => ({ role: m.role, content: blocks(m) }))
    .filter((m) => m.content.length > 0);
  if (req.temperature !== undefined) body.temperature = req.temperature;
  if (req.topP !== undefined) body.top_p = req.topP;
  if (req.topK !== undefined) body.top_k = req.topK;
  if (req.stop?.length) body.stop_sequences = req.stop;
  if (req.tools?.length) {
    body.tools = req.tools.map((t) => ({
      name: t.name,
      ...(t.description ? { description: t.description } : {}),
      input_schema: t.parameters.type === undefined ? { type: 'object', ...t.parameters } : t.parameters,
      ...(t.strict !== undefined ? { strict: t.strict } : {}),
    }));
  }
  const choice = toolChoice(req);
  if (choice) body.tool_choice = choice;
  const outputConfig: Obj = {};
  if (req.output?.kind === 'json_schema')
    outputConfig.format = { type: 'json_schema', schema: req.output.schema };
  if (req.reasoning) thinking(req.reasoning, body, outputConfig);
  if (unsignedToolTurn(body)) body.thinking = { type: 'disabled' };
  if (Object.keys(outputConfig).length) body.output_config = outputConfig;
  if (req.user) body.metadata = { user_id: req.user };
  if (req.stream) body.stream = true;
  return body;
}

function toolChoice(req: Request): Obj | undefined {
  const single = req.parallelToolCalls === false ? { disable_parallel_tool_use: true } : {};
  const choice = req.toolChoice;
  if (!choice)
    return req.parallelToolCalls === false && req.tools?.length ? { type: 'auto', ...single } : undefined;
  if (choice.mode === 'tool') return { type: 'tool', name: choice.name, ...single };
  if (choice.mode === 'none') return { type: 'none' };
  return { type: choice.mode === 'auto' ? 'auto' : 'any', ...single };
}

/**
 * Thinking: a budget as manual thinking (at least 1024 tokens, and `max_tokens` raised above it, as the format
 * requires), a level as adaptive thinking with that effort, no thinking as `disabled`.
 */
function thinking(r: Reasoning, body: Obj, outputConfig: Obj): void {
  if (r.effort === 'none' || r.budget === 0) {
    body.thinking = { type: 'disabled' };
  } else if (r.budget !== undefined && r.budget > 0) {
    const budget = Math.max(MIN_BUDGET, Math.floor(r.budget));
    body.thinking = { type: 'enabled', budget_tokens: budget };
    if ((body.max_tokens as number) <= budget) body.max_tokens = budget + (body.max_tokens as number);
  } else {
    body.thinking = { type: 'adaptive' };
    if (r.effort) outputConfig.effort = r.effort === 'minimal' ? 'low' : r.effort;
  }
  const config = body.thinking as Obj;
  if (r.show === false && config.type !== 'disabled') config.display = 'omitted';
}

/**
 * Whether thinking must be off: the format requires the thinking blocks of the tool-use turn being continued, and a
 * caller whose format has no place for them (chat completions without `thinking_blocks`, a Responses caller without
 * encrypted reasoning) did not send them. That one request runs without thinking (docs/translation.md).
 */
function unsignedToolTurn(body: Obj): boolean {
  const type = (body.thinking as Obj | undefined)?.type;
  if (type !== 'enabled' && type !== 'adaptive') return false;
  const messages = body.messages as { role: string; content: Obj[] }[];
  const last = messages[messages.length - 1];
  const call = messages[messages.length - 2];
  // Only a tool-use loop being continued: its results are the last message.
  if (
    last?.role !== 'user' ||
    !last.content.some((b) => b.type === 'tool_result') ||
    call?.role !== 'assistant'
  ) {
    return false;
  }
  return !call.content.some((b) => b.type === 'thinking' || b.type === 'redacted_thinking');
}

function blocks(m: Message): Obj[] {
  const out: Obj[] = [];
  // Tool results open a user turn, as the format requires.
  const ordered = m.role === 'user' ? [...m.content].sort((a, b) => rank(a) - rank(b)) : m.content;
  for (const part of ordered) {
    const block = blockOf(part);
    if (block) out.push(block);
  }
  return out;
}

const rank = (p: Part) => (p.type === 'tool_result' ? 0 : 1);

function blockOf(part: Part): Obj | undefined {
  switch (part.type) {
    case 'text':
    case 'refusal':
      return part.text ? { type: 'text', text: part.text } : undefined;
    case 'image':
      return { type: 'image', source: source(part.source) };
    case 'document':
      return { type: 'document', source: source(part.source), ...(part.title ? { title: part.title } : {}) };
    case 'tool_call':
      return { type: 'tool_use', id: messagesId(part.id), name: part.name, input: part.args };
    case 'tool_result':
      return {
        type: 'tool_result',
        tool_use_id: messagesId(part.id),
        content: part.content.map((c) => blockOf(c)).filter((b): b is Obj => b !== undefined),
        ...(part.isError ? { is_error: true } : {}),
      };
    case 'thinking':
      if (part.redacted !== undefined) return { type: 'redacted_thinking', data: part.redacted };
      return part.signature
        ? { type: 'thinking', thinking: part.text, signature: part.signature }
        : undefined;
  }
}

function source(s: Source): Obj {
  if (s.kind === 'base64') return { type: 'base64', media_type: s.mediaType, data: s.data };
  if (s.kind === 'url') return { type: 'url', url: s.url };
  return { type: 'text', media_type: 'text/plain', data: s.text };
}
