import {
  UnreadableAnswer,
  type AnswerReader,
  type AnswerWriter,
  type EventReader,
  type WriteContext,
} from '../answer';
import type { Answer, Event, Part, Usage } from '../ir';
import { count, isObj, mintId, nowSeconds, obj, str, type Obj } from '../shared';
import { parseJson, type SseEvent } from '../sse';
import { STOP_TO, stopFrom } from '../stops';
import { ChatStreamWriter } from './stream';

/** `prompt_tokens` includes cache reads and writes; `completion_tokens` includes reasoning. */
export function readChatUsage(u: Obj): Usage {
  const prompt = obj(u.prompt_tokens_details);
  const completion = obj(u.completion_tokens_details);
  const cacheRead = count(prompt.cached_tokens);
  const cacheWrite = count(prompt.cache_write_tokens);
  return {
    input: Math.max(0, count(u.prompt_tokens) - cacheRead - cacheWrite),
    cacheRead,
    cacheWrite,
    output: count(u.completion_tokens),
    ...(completion.reasoning_tokens !== undefined ? { reasoning: count(completion.reasoning_tokens) } : {}),
  };
}

export function writeChatUsage(u: Usage): Obj {
  const prompt = u.input + u.cacheRead + u.cacheWrite;
  return {
    prompt_tokens: prompt,
    completion_tokens: u.output,
    total_tokens: prompt + u.output,
    prompt_tokens_details: {
      cached_tokens: u.cacheRead,
      ...(u.cacheWrite ? { cache_write_tokens: u.cacheWrite } : {}),
    },
    completion_tokens_details: { reasoning_tokens: u.reasoning ?? 0 },
  };
}

/** Reasoning text as OpenAI-compatible servers stream it (`reasoning_content`; OpenRouter says `reasoning`). */
const reasoningOf = (m: Obj): string | undefined => str(m.reasoning_content) ?? str(m.reasoning);

function toolArgs(text: string): Record<string, unknown> {
  if (text.trim() === '') return {};
  const value = parseJson(text);
  if (!isObj(value))
    throw new UnreadableAnswer(`a tool call's arguments are not a JSON object: ${text.slice(0, 200)}`);
  return value;
}

export const chatReader: AnswerReader = {
  json(body) {
    const choice = Array.isArray(body.choices) ? obj(body.choices[0]) : undefined;
    if (!choice || !isObj(choice.message))
      throw new UnreadableAnswer('the chat completion has no choices[0].message');
    const message = choice.message;
    const content: Part[] = [];
    const reasoning = reasoningOf(message);
    if (reasoning) content.push({ type: 'thinking', text: reasoning });
    if (typeof message.content === 'string' && message.content)
      content.push({ type: 'text', text: message.content });
    if (typeof message.refusal === 'string' && message.refusal)
      content.push({ type: 'refusal', text: message.refusal });
    if (Array.isArray(message.tool_calls)) {
      for (const call of message.tool_calls) {
        const fn = obj(obj(call).function);
        content.push({
          type: 'tool_call',
          id: str(obj(call).id) || mintId('call_'),
          name: str(fn.name) ?? '',
          args: toolArgs(str(fn.arguments) ?? ''),
        });
      }
    }
    return {
      id: str(body.id),
      model: str(body.model),
      content,
      stop: stopFrom('chat', choice.finish_reason),
      ...(isObj(body.usage) ? { usage: readChatUsage(body.usage) } : {}),
    };
  },
  count() {
    throw new UnreadableAnswer('the chat completions format has no token count');
  },
  stream: () => new ChatEventReader(),
};

/** A chat completions stream, chunk by chunk, as intermediate events. */
class ChatEventReader implements EventReader {
  private started = false;
  private finished = false;
  private done = false;
  /** Tool calls by the chunk's `index`: their key, or the id and arguments held until the name arrives. */
  private tools = new Map<number, { key: number; name?: string; id: string; held: string }>();
  private keys = 0;

  event(e: SseEvent): Event[] {
    if (this.done) return [];
    if (e.data === '[DONE]') {
      this.done = true;
      return [{ type: 'done' }];
    }
    const chunk = parseJson(e.data);
    if (!isObj(chunk)) return [];
    const out: Event[] = [];
    if (isObj(chunk.error)) {
      this.done = true;
      return [
        { type: 'error', status: errorStatus(chunk.error), message: str(chunk.error.message) ?? e.data },
      ];
    }
    if (!this.started) {
      this.started = true;
      out.push({ type: 'start', id: str(chunk.id), model: str(chunk.model) });
    }
    const choice = Array.isArray(chunk.choices) ? obj(chunk.choices[0]) : {};
    const delta = obj(choice.delta);
    const reasoning = reasoningOf(delta);
    if (reasoning) out.push({ type: 'thinking', delta: reasoning });
    if (typeof delta.content === 'string' && delta.content) out.push({ type: 'text', delta: delta.content });
    if (typeof delta.refusal === 'string' && delta.refusal)
      out.push({ type: 'refusal', delta: delta.refusal });
    if (Array.isArray(delta.tool_calls)) for (const call of delta.tool_calls) this.toolDelta(obj(call), out);
    if (typeof choice.finish_reason === 'string') {
      this.finished = true;
      out.push({ type: 'finish', stop: stopFrom('chat', choice.finish_reason) });
    }
    if (isObj(chunk.usage)) {
      out.push({ type: 'usage', usage: readChatUsage(chunk.usage) });
      // Usage comes last (with include_usage), after the finish reason.
      if (this.finished) {
        this.done = true;
        out.push({ type: 'done' });
      }
    }
    return out;
  }

  private toolDelta(call: Obj, out: Event[]): void {
    const index = typeof call.index === 'number' ? call.index : 0;
    const fn = obj(call.function);
    let tool = this.tools.get(index);
    if (!tool) {
      tool = { key: this.keys++, id: str(call.id) || mintId('call_'), held: '' };
      this.tools.set(index, tool);
    }
    const args = str(fn.arguments) ?? '';
    if (tool.name === undefined) {
      const name = str(fn.name);
      if (!name) {
        tool.held += args;
        return;
      }
      tool.name = name;
      out.push({ type: 'tool_start', key: tool.key, id: tool.id, name });
      if (tool.held) out.push({ type: 'tool_args', key: tool.key, delta: tool.held });
    }
    if (args) out.push({ type: 'tool_args', key: tool.key, delta: args });
  }
}

function errorStatus(error: Obj): number {
  const code = error.code;
  if (typeof code === 'number' && code >= 400 && code < 600) return code;
  return error.type === 'invalid_request_error' ? 400 : 500;
}

export const chatWriter: AnswerWriter = {
  json(answer: Answer, ctx: WriteContext) {
    const texts: string[] = [];
    const refusals: string[] = [];
    const reasoning: string[] = [];
    const blocks: Obj[] = [];
    const calls: Obj[] = [];
    for (const part of answer.content) {
      if (part.type === 'text') texts.push(part.text);
      else if (part.type === 'refusal') refusals.push(part.text);
      else if (part.type === 'thinking') {
        if (part.text) reasoning.push(part.text);
        if (part.redacted !== undefined) blocks.push({ type: 'redacted_thinking', data: part.redacted });
        else if (part.signature)
          blocks.push({ type: 'thinking', thinking: part.text, signature: part.signature });
      } else if (part.type === 'tool_call') {
        calls.push({
          id: part.id,
          type: 'function',
          function: { name: part.name, arguments: JSON.stringify(part.args) },
        });
      }
    }
    const message: Obj = {
      role: 'assistant',
      content: texts.length ? texts.join('') : null,
      refusal: refusals.length ? refusals.join('') : null,
      ...(calls.length ? { tool_calls: calls } : {}),
      ...(reasoning.length ? { reasoning_content: reasoning.join('') } : {}),
      ...(blocks.length ? { thinking_blocks: blocks } : {}),
    };
    return {
      id: chatId(answer.id),
      object: 'chat.completion',
      created: nowSeconds(),
      model: ctx.model,
      choices: [{ index: 0, message, logprobs: null, finish_reason: STOP_TO.chat[answer.stop] }],
      ...(answer.usage ? { usage: writeChatUsage(answer.usage) } : {}),
    };
  },
  count() {
    throw new UnreadableAnswer('the chat completions format has no token count');
  },
  stream: (ctx) => new ChatStreamWriter(ctx),
};

export const chatId = (id: string | undefined): string =>
  id?.startsWith('chatcmpl-') ? id : `chatcmpl-${id ?? mintId('', 29)}`;
