import { CUT_SHORT, type EventWriter, type WriteContext } from '../answer';
import type { Event, Stop, Usage } from '../ir';
import type { Obj } from '../shared';
import { sse } from '../sse';
import { STOP_TO } from '../stops';
import { messageId, STATUS_OF_TYPE, writeMessagesUsage } from './answer';

type BlockKind = 'text' | 'thinking' | 'redacted' | 'tool';

const NO_USAGE: Usage = { input: 0, cacheRead: 0, cacheWrite: 0, output: 0 };

/**
 * Intermediate events as a messages stream: `message_start`, then content blocks (`content_block_start`, deltas,
 * `content_block_stop`) with their indices, `message_delta` with the stop reason and the whole usage, `message_stop`.
 */
export class MessagesStreamWriter implements EventWriter {
  private started = false;
  private closed = false;
  private index = -1;
  private open: BlockKind | undefined;
  /** Tool-use blocks by key: their index. */
  private tools = new Map<number, number>();
  private stop: { stop: Stop; stopSequence?: string } | undefined;
  private usage: Usage | undefined;

  constructor(private readonly ctx: WriteContext) {}

  write(e: Event): string {
    if (this.closed) return '';
    let out = this.started || e.type === 'error' ? '' : this.begin(e.type === 'start' ? e : undefined);
    switch (e.type) {
      case 'text':
      case 'refusal':
        if (!e.delta) return out;
        out += this.ensure('text', { type: 'text', text: '', citations: null });
        return out + this.delta({ type: 'text_delta', text: e.delta });
      case 'thinking':
        if (!e.delta) return out;
        out += this.ensure('thinking', { type: 'thinking', thinking: '', signature: '' });
        return out + this.delta({ type: 'thinking_delta', thinking: e.delta });
      case 'signature':
        out += this.ensure('thinking', { type: 'thinking', thinking: '', signature: '' });
        out += this.delta({ type: 'signature_delta', signature: e.signature });
        return out + this.closeBlock();
      case 'redacted':
        out += this.closeBlock() + this.startBlock({ type: 'redacted_thinking', data: e.data }, 'redacted');
        return out + this.closeBlock();
      case 'tool_start':
      case 'tool_call':
        out += this.closeBlock();
        out += this.startBlock(
          { type: 'tool_use', id: e.id, name: e.name, input: {}, caller: { type: 'direct' } },
          'tool',
        );
        this.tools.set(e.key, this.index);
        if (e.type === 'tool_call')
          out += this.delta({ type: 'input_json_delta', partial_json: JSON.stringify(e.args) });
        return out;
      case 'tool_args': {
        // A call's arguments after another block began (a server interleaving parallel calls) go to its own index.
        const index = this.tools.get(e.key) ?? this.index;
        return out + this.delta({ type: 'input_json_delta', partial_json: e.delta }, index);
      }
      case 'finish':
        this.stop = { stop: e.stop, ...(e.stopSequence ? { stopSequence: e.stopSequence } : {}) };
        return out + this.closeBlock();
      case 'usage':
        this.usage = e.usage;
        return out;
      case 'done':
        return out + this.close();
      case 'error':
        this.closed = true;
        return sse('error', { type: 'error', error: { type: errorType(e.status), message: e.message } });
      default:
        return out;
    }
  }

  end(): string {
    if (this.closed) return '';
    if (this.stop) return this.close();
    return this.write({ type: 'error', status: 502, message: CUT_SHORT });
  }

  private begin(start: { id?: string; usage?: Usage } | undefined): string {
    this.started = true;
    if (start?.usage) this.usage = start.usage;
    const usage = writeMessagesUsage({ ...(start?.usage ?? NO_USAGE), output: 0 });
    const message = {
      id: messageId(start?.id),
      type: 'message',
      role: 'assistant',
      model: this.ctx.model,
      content: [],
      stop_reason: null,
      stop_sequence: null,
      stop_details: null,
      container: null,
      diagnostics: null,
      usage,
    };
    return sse('message_start', { type: 'message_start', message });
  }

  /** The open block if it is of this kind, else a new one. */
  private ensure(kind: 'text' | 'thinking', block: Obj): string {
    if (this.open === kind) return '';
    return this.closeBlock() + this.startBlock(block, kind);
  }

  private startBlock(block: Obj, kind: BlockKind): string {
    this.index++;
    this.open = kind;
    return sse('content_block_start', {
      type: 'content_block_start',
      index: this.index,
      content_block: block,
    });
  }

  private closeBlock(): string {
    if (this.open === undefined) return '';
    this.open = undefined;
    return sse('content_block_stop', { type: 'content_block_stop', index: this.index });
  }

  private delta(delta: Obj, index = this.index): string {
    return sse('content_block_delta', { type: 'content_block_delta', index, delta });
  }

  private close(): string {
    this.closed = true;
    const stop = this.stop ?? { stop: 'end' as const };
    const usage = this.usage ?? NO_USAGE;
    const delta = {
      stop_reason: STOP_TO.messages[stop.stop],
      stop_sequence: stop.stopSequence ?? null,
      stop_details: null,
      container: null,
    };
    return (
      this.closeBlock() +
      sse('message_delta', { type: 'message_delta', delta, usage: writeMessagesUsage(usage) }) +
      sse('message_stop', { type: 'message_stop' })
    );
  }
}

function errorType(status: number): string {
  for (const type in STATUS_OF_TYPE) if (STATUS_OF_TYPE[type] === status) return type;
  return status >= 500 ? 'api_error' : 'invalid_request_error';
}
