import {
  UnreadableAnswer,
  type AnswerReader,
  type AnswerWriter,
  type EventReader,
  type WriteContext,
} from '../answer';
import type { Answer, Event, Part, Usage } from '../ir';
import { count, isObj, mintId, obj, str, type Obj } from '../shared';
import { parseJson, type SseEvent } from '../sse';
import { STOP_TO, stopFrom } from '../stops';
import { MessagesStreamWriter } from './stream';

/** `input_tokens` excludes cache reads and writes; `output_tokens` includes thinking (`output_tokens_details`). */
export function readMessagesUsage(u: Obj, into?: Usage): Usage {
  const usage: Usage = into ? { ...into } : { input: 0, cacheRead: 0, cacheWrite: 0, output: 0 };
  if (u.input_tokens != null) usage.input = count(u.input_tokens);
  if (u.cache_read_input_tokens != null) usage.cacheRead = count(u.cache_read_input_tokens);
  if (u.cache_creation_input_tokens != null) usage.cacheWrite = count(u.cache_creation_input_tokens);
  if (u.output_tokens != null) usage.output = count(u.output_tokens);
  const details = u.output_tokens_details;
  if (isObj(details) && details.thinking_tokens != null) usage.reasoning = count(details.thinking_tokens);
  return usage;
}

export function writeMessagesUsage(u: Usage): Obj {
  return {
    input_tokens: u.input,
    cache_creation_input_tokens: u.cacheWrite,
    cache_read_input_tokens: u.cacheRead,
    cache_creation: null,
    output_tokens: u.output,
    output_tokens_details: u.reasoning !== undefined ? { thinking_tokens: u.reasoning } : null,
    server_tool_use: null,
    service_tier: null,
    inference_geo: null,
    speed: null,
  };
}

/** HTTP statuses of the messages format's error types (a stream's `error` event carries only the type). */
export const STATUS_OF_TYPE: Record<string, number> = {
  invalid_request_error: 400,
  authentication_error: 401,
  billing_error: 402,
  permission_error: 403,
  not_found_error: 404,
  request_too_large: 413,
  rate_limit_error: 429,
  api_error: 500,
  timeout_error: 504,
  overloaded_error: 529,
};

function blockPart(b: Obj): Part | undefined {
  switch (b.type) {
    case 'text':
      return { type: 'text', text: str(b.text) ?? '' };
    case 'thinking':
      return { type: 'thinking', text: str(b.thinking) ?? '', signature: str(b.signature) };
    case 'redacted_thinking':
      return { type: 'thinking', text: '', redacted: str(b.data) ?? '' };
    case 'tool_use':
      return {
        type: 'tool_call',
        id: str(b.id) ?? mintId('toolu_'),
        name: str(b.name) ?? '',
        args: obj(b.input),
      };
    default:
      // Server tools are refused in requests: their blocks cannot come back.
      return undefined;
  }
}

export const messagesReader: AnswerReader = {
  json(body) {
    if (body.type !== 'message' || !Array.isArray(body.content))
      throw new UnreadableAnswer('the answer is not a message');
    const content = body.content.map((b) => blockPart(obj(b))).filter((p): p is Part => p !== undefined);
    return {
      id: str(body.id),
      model: str(body.model),
      content,
      stop: stopFrom('messages', body.stop_reason),
      ...(typeof body.stop_sequence === 'string' ? { stopSequence: body.stop_sequence } : {}),
      ...(isObj(body.usage) ? { usage: readMessagesUsage(body.usage) } : {}),
    };
  },
  count(body) {
    if (typeof body.input_tokens !== 'number')
      throw new UnreadableAnswer('the token count has no input_tokens');
    return { input: count(body.input_tokens) };
  },
  stream: () => new MessagesEventReader(),
};

/** A messages stream, event by event, as intermediate events. */
class MessagesEventReader implements EventReader {
  private usage: Usage | undefined;

  event(e: SseEvent): Event[] {
    const event = parseJson(e.data);
    if (!isObj(event)) return [];
    switch (event.type) {
      case 'message_start': {
        const message = obj(event.message);
        this.usage = isObj(message.usage) ? readMessagesUsage(message.usage) : undefined;
        return [
          {
            type: 'start',
            id: str(message.id),
            model: str(message.model),
            ...(this.usage ? { usage: this.usage } : {}),
          },
        ];
      }
      case 'content_block_start':
        return this.blockStart(obj(event.content_block), typeof event.index === 'number' ? event.index : 0);
      case 'content_block_delta':
        return this.delta(obj(event.delta), typeof event.index === 'number' ? event.index : 0);
      case 'message_delta': {
        const out: Event[] = [];
        const delta = obj(event.delta);
        if (typeof delta.stop_reason === 'string') {
          const stopSequence = str(delta.stop_sequence);
          out.push({
            type: 'finish',
            stop: stopFrom('messages', delta.stop_reason),
            ...(stopSequence ? { stopSequence } : {}),
          });
        }
        if (isObj(event.usage)) {
          this.usage = readMessagesUsage(event.usage, this.usage);
          out.push({ type: 'usage', usage: this.usage });
        }
        return out;
      }
      case 'message_stop':
        return [{ type: 'done' }];
      case 'error': {
        const error = obj(event.error);
        const type = str(error.type) ?? 'api_error';
        return [
          { type: 'error', status: STATUS_OF_TYPE[type] ?? 500, message: str(error.message) ?? e.data },
        ];
      }
      default:
        return [];
    }
  }

  private blockStart(block: Obj, index: number): Event[] {
    switch (block.type) {
      // A block starts empty, as a rule: its text comes in deltas, which open it in the caller's format.
      case 'text':
        return block.text ? [{ type: 'text', delta: String(block.text) }] : [];
      case 'thinking':
        return block.thinking ? [{ type: 'thinking', delta: String(block.thinking) }] : [];
      case 'redacted_thinking':
        return [{ type: 'redacted', data: str(block.data) ?? '' }];
      case 'tool_use': {
        const out: Event[] = [
          {
            type: 'tool_start',
            key: index,
            id: str(block.id) ?? mintId('toolu_'),
            name: str(block.name) ?? '',
          },
        ];
        const input = obj(block.input);
        if (Object.keys(input).length)
          out.push({ type: 'tool_args', key: index, delta: JSON.stringify(input) });
        return out;
      }
      default:
        return [];
    }
  }

  private delta(delta: Obj, index: number): Event[] {
    switch (delta.type) {
      case 'text_delta':
        return [{ type: 'text', delta: str(delta.text) ?? '' }];
      case 'thinking_delta':
        return [{ type: 'thinking', delta: str(delta.thinking) ?? '' }];
      case 'signature_delta':
        return [{ type: 'signature', signature: str(delta.signature) ?? '' }];
      case 'input_json_delta':
        return [{ type: 'tool_args', key: index, delta: str(delta.partial_json) ?? '' }];
      default:
        return [];
    }
  }
}

export const messagesWriter: AnswerWriter = {
  json(answer: Answer, ctx: WriteContext) {
    const content: Obj[] = [];
    for (const part of answer.content) {
      if (part.type === 'text' || part.type === 'refusal') {
        if (part.text) content.push({ type: 'text', text: part.text, citations: null });
      } else if (part.type === 'thinking') {
        content.push(
          part.redacted !== undefined
            ? { type: 'redacted_thinking', data: part.redacted }
            : { type: 'thinking', thinking: part.text, signature: part.signature ?? '' },
        );
      } else if (part.type === 'tool_call') {
        content.push({
          type: 'tool_use',
          id: part.id,
          name: part.name,
          input: part.args,
          caller: { type: 'direct' },
        });
      }
    }
    return {
      id: messageId(answer.id),
      type: 'message',
      role: 'assistant',
      model: ctx.model,
      content,
      stop_reason: STOP_TO.messages[answer.stop],
      stop_sequence: answer.stopSequence ?? null,
      stop_details: null,
      container: null,
      diagnostics: null,
      usage: writeMessagesUsage(answer.usage ?? { input: 0, cacheRead: 0, cacheWrite: 0, output: 0 }),
    };
  },
  count: (c) => ({ input_tokens: c.input }),
  stream: (ctx) => new MessagesStreamWriter(ctx),
};

export const messageId = (id: string | undefined): string =>
  id?.startsWith('msg_') ? id : `msg_${id ?? mintId('')}`;
