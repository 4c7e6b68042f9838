import { CUT_SHORT, type EventWriter, type WriteContext } from '../answer';
import type { Event, Stop, Usage } from '../ir';
import { nowSeconds, type Obj } from '../shared';
import { STOP_TO } from '../stops';
import { chatId, writeChatUsage } from './answer';

/**
 * Intermediate events as chat completion chunks: the role first, then content, reasoning (`reasoning_content`) and
 * tool-call deltas (`tool_calls[i]`, id and name in the first), the finish reason, then (when the caller asked
 * `include_usage`) the usage chunk, and `[DONE]`.
 */
export class ChatStreamWriter implements EventWriter {
  private id = '';
  private created = 0;
  private started = false;
  private closed = false;
  private stop: Stop | undefined;
  private usage: Usage | undefined;
  /** Tool calls by key: their index among this answer's calls. */
  private tools = new Map<number, number>();
  /** The text of the open thinking block (for `thinking_blocks`, once its signature comes). */
  private thinking = '';

  constructor(private readonly ctx: WriteContext) {}

  write(e: Event): string {
    if (this.closed) return '';
    const out = this.started || e.type === 'error' ? '' : this.begin(e.type === 'start' ? e.id : undefined);
    switch (e.type) {
      case 'text':
        return out + this.chunk({ content: e.delta });
      case 'thinking':
        this.thinking += e.delta;
        return out + this.chunk({ reasoning_content: e.delta });
      case 'signature': {
        // The whole block, signed, for a client that sends it back (a LiteLLM extension).
        const block = { type: 'thinking', thinking: this.thinking, signature: e.signature };
        this.thinking = '';
        return out + this.chunk({ thinking_blocks: [block] });
      }
      case 'redacted':
        return out + this.chunk({ thinking_blocks: [{ type: 'redacted_thinking', data: e.data }] });
      case 'refusal':
        return out + this.chunk({ refusal: e.delta });
      case 'tool_start':
      case 'tool_call': {
        const index = this.tools.size;
        this.tools.set(e.key, index);
        const args = e.type === 'tool_call' ? JSON.stringify(e.args) : '';
        return (
          out +
          this.chunk({
            tool_calls: [{ index, id: e.id, type: 'function', function: { name: e.name, arguments: args } }],
          })
        );
      }
      case 'tool_args':
        return (
          out +
          this.chunk({
            tool_calls: [{ index: this.tools.get(e.key) ?? 0, function: { arguments: e.delta } }],
          })
        );
      case 'finish':
        this.stop = e.stop;
        return out + this.chunk({}, STOP_TO.chat[e.stop]);
      case 'usage':
        this.usage = e.usage;
        return out;
      case 'done':
        return out + this.close();
      case 'error':
        this.closed = true;
        return `data: ${JSON.stringify({ error: { message: e.message, type: errorType(e.status), param: null, code: null } })}\n\n`;
      default:
        return out;
    }
  }

  end(): string {
    if (this.closed) return '';
    if (this.stop) return this.close();
    return this.write({ type: 'error', status: 502, message: CUT_SHORT });
  }

  private begin(id: string | undefined): string {
    this.started = true;
    this.id = chatId(id);
    this.created = nowSeconds();
    return this.chunk({ role: 'assistant', content: '', refusal: null });
  }

  private close(): string {
    this.closed = true;
    let out = '';
    if (this.ctx.includeUsage && this.usage) {
      out += `data: ${JSON.stringify({ ...this.base(), choices: [], usage: writeChatUsage(this.usage) })}\n\n`;
    }
    return `${out}data: [DONE]\n\n`;
  }

  private base(): Obj {
    return { id: this.id, object: 'chat.completion.chunk', created: this.created, model: this.ctx.model };
  }

  private chunk(delta: Obj, finish: string | null = null): string {
    const choice = { index: 0, delta, logprobs: null, finish_reason: finish };
    const chunk: Obj = { ...this.base(), choices: [choice] };
    if (this.ctx.includeUsage) chunk.usage = null;
    return `data: ${JSON.stringify(chunk)}\n\n`;
  }
}

function errorType(status: number): string {
  if (status === 429) return 'rate_limit_exceeded';
  return status < 500 ? 'invalid_request_error' : 'server_error';
}
