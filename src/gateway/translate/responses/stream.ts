import { CUT_SHORT, type EventWriter, type WriteContext } from '../answer';
import { REDACTED } from '../ids';
import type { Event, Stop, Usage } from '../ir';
import { mintId, nowSeconds, type Obj } from '../shared';
import {
  callName,
  customCall,
  customInput,
  customTools,
  namespacesOf,
  reasoningItem,
  responseId,
  responseObject,
  type Namespaces,
} from './answer';

/** The item being written: a message (its current part), a reasoning item, or a function call. */
type Open =
  | { kind: 'message'; item: Obj; index: number; parts: Obj[]; part: 'output_text' | 'refusal'; text: string }
  | { kind: 'reasoning'; item: Obj; index: number; text: string }
  | { kind: 'call'; item: Obj; index: number; key: number }
  /** A free-form tool's call: its arguments (`{"input": ...}`) held until whole, then written as its input. */
  | { kind: 'custom'; key: number; id: string; name: string; args: string };

/**
 * Intermediate events as a Responses stream: `response.created` and `response.in_progress`, then output items
 * (added, their content parts and deltas, done) with `sequence_number`s, then `response.completed` (or
 * `response.incomplete`) holding the whole response and its usage.
 */
export class ResponsesStreamWriter implements EventWriter {
  private seq = 0;
  private id = '';
  private createdAt = 0;
  private started = false;
  private closed = false;
  private output: Obj[] = [];
  private open: Open | undefined;
  /** Function calls by key: their item and output index (arguments may come after another item began). */
  private calls = new Map<number, { item: Obj; index: number }>();
  private stop: Stop | undefined;
  private usage: Usage | undefined;

  /** The caller's free-form tools, by name. */
  private readonly custom: ReadonlySet<unknown>;
  private readonly namespaces: Namespaces;

  constructor(private readonly ctx: WriteContext) {
    this.custom = customTools(ctx.memo);
    this.namespaces = namespacesOf(ctx.memo);
  }

  write(e: Event): string {
    if (this.closed) return '';
    let out = this.started || e.type === 'error' ? '' : this.begin(e.type === 'start' ? e.id : undefined);
    switch (e.type) {
      case 'text':
      case 'refusal':
        return e.delta ? out + this.text(e.type === 'text' ? 'output_text' : 'refusal', e.delta) : out;
      case 'thinking': {
        if (!e.delta) return out;
        if (this.open?.kind !== 'reasoning') out += this.closeItem() + this.openReasoning();
        const open = this.open as Open & { kind: 'reasoning' };
        open.text += e.delta;
        return (
          out +
          this.emit('response.reasoning_summary_text.delta', {
            item_id: open.item.id,
            output_index: open.index,
            summary_index: 0,
            delta: e.delta,
          })
        );
      }
      case 'signature':
        if (this.open?.kind !== 'reasoning') out += this.closeItem() + this.openReasoning();
        (this.open as Open & { kind: 'reasoning' }).item.encrypted_content = e.signature;
        return out + this.closeItem();
      case 'redacted':
        out += this.closeItem() + this.openReasoning();
        (this.open as Open & { kind: 'reasoning' }).item.encrypted_content = REDACTED + e.data;
        return out + this.closeItem();
      case 'tool_start':
      case 'tool_call': {
        out += this.closeItem();
        if (this.custom.has(e.name)) {
          const args = e.type === 'tool_call' ? JSON.stringify(e.args) : '';
          this.open = { kind: 'custom', key: e.key, id: e.id, name: e.name, args };
          return e.type === 'tool_call' ? out + this.closeItem() : out;
        }
        const item: Obj = {
          id: mintId('fc_', 32),
          type: 'function_call',
          status: 'in_progress',
          call_id: e.id,
          ...callName(e.name, this.namespaces),
          arguments: '',
        };
        const index = this.add(item);
        this.calls.set(e.key, { item, index });
        this.open = { kind: 'call', item, index, key: e.key };
        out += this.emit('response.output_item.added', { output_index: index, item: { ...item } });
        if (e.type === 'tool_call') out += this.args(e.key, JSON.stringify(e.args)) + this.closeItem();
        return out;
      }
      case 'tool_args':
        return out + this.args(e.key, e.delta);
      case 'finish':
        this.stop = e.stop;
        return out + this.closeItem();
      case 'usage':
        this.usage = e.usage;
        return out;
      case 'done':
        return out + this.close();
      case 'error': {
        this.closed = true;
        const code =
          e.status === 429 ? 'rate_limit_exceeded' : e.status >= 500 ? 'server_error' : 'invalid_request';
        out += this.emit('error', { code, message: e.message, param: null });
        if (!this.started) return out;
        const response = {
          ...responseObject(this.id, this.createdAt, this.ctx, this.output),
          status: 'failed',
          error: { code: e.status >= 500 ? 'server_error' : 'invalid_prompt', message: e.message },
        };
        return out + this.emit('response.failed', { response });
      }
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
    this.id = responseId(id);
    this.createdAt = nowSeconds();
    const response = responseObject(this.id, this.createdAt, this.ctx, []);
    return this.emit('response.created', { response }) + this.emit('response.in_progress', { response });
  }

  private text(part: 'output_text' | 'refusal', delta: string): string {
    let out = '';
    if (this.open?.kind !== 'message') {
      out += this.closeItem();
      const item: Obj = {
        id: mintId('msg_', 32),
        type: 'message',
        status: 'in_progress',
        role: 'assistant',
        content: [],
      };
      const index = this.add(item);
      this.open = { kind: 'message', item, index, parts: [], part, text: '' };
      out += this.emit('response.output_item.added', { output_index: index, item: { ...item, content: [] } });
      out += this.openPart(part);
    } else if (this.open.part !== part) {
      out += this.closePart();
      out += this.openPart(part);
    }
    const open = this.open as Open & { kind: 'message' };
    open.text += delta;
    const where = { item_id: open.item.id, output_index: open.index, content_index: open.parts.length };
    return (
      out +
      (part === 'output_text'
        ? this.emit('response.output_text.delta', { ...where, delta, logprobs: [] })
        : this.emit('response.refusal.delta', { ...where, delta }))
    );
  }

  private openPart(part: 'output_text' | 'refusal'): string {
    const open = this.open as Open & { kind: 'message' };
    open.part = part;
    open.text = '';
    const empty =
      part === 'output_text'
        ? { type: 'output_text', text: '', annotations: [], logprobs: [] }
        : { type: 'refusal', refusal: '' };
    return this.emit('response.content_part.added', {
      item_id: open.item.id,
      output_index: open.index,
      content_index: open.parts.length,
      part: empty,
    });
  }

  private closePart(open = this.open as Open & { kind: 'message' }): string {
    const where = { item_id: open.item.id, output_index: open.index, content_index: open.parts.length };
    const done =
      open.part === 'output_text'
        ? { type: 'output_text', text: open.text, annotations: [], logprobs: [] }
        : { type: 'refusal', refusal: open.text };
    const out =
      open.part === 'output_text'
        ? this.emit('response.output_text.done', { ...where, text: open.text, logprobs: [] })
        : this.emit('response.refusal.done', { ...where, refusal: open.text });
    open.parts.push(done);
    return out + this.emit('response.content_part.done', { ...where, part: done });
  }

  private openReasoning(): string {
    const item: Obj = { ...reasoningItem('', undefined), status: 'in_progress' };
    const index = this.add(item);
    this.open = { kind: 'reasoning', item, index, text: '' };
    return (
      this.emit('response.output_item.added', { output_index: index, item: { ...item, summary: [] } }) +
      this.emit('response.reasoning_summary_part.added', {
        item_id: item.id,
        output_index: index,
        summary_index: 0,
        part: { type: 'summary_text', text: '' },
      })
    );
  }

  private args(key: number, delta: string): string {
    if (this.open?.kind === 'custom' && this.open.key === key) {
      this.open.args += delta;
      return '';
    }
    const call = this.calls.get(key);
    if (!call || !delta) return '';
    call.item.arguments = String(call.item.arguments) + delta;
    return this.emit('response.function_call_arguments.delta', {
      item_id: call.item.id,
      output_index: call.index,
      delta,
    });
  }

  /** Ends the open item: its closing events, then `output_item.done` with the item whole. */
  private closeItem(): string {
    const open = this.open;
    if (!open) return '';
    this.open = undefined;
    if (open.kind === 'custom') return this.customItem(open);
    let out = '';
    if (open.kind === 'message') {
      out += this.closePart(open);
      open.item.content = open.parts;
    } else if (open.kind === 'reasoning') {
      const part = { type: 'summary_text', text: open.text };
      const where = { item_id: open.item.id, output_index: open.index, summary_index: 0 };
      out += this.emit('response.reasoning_summary_text.done', { ...where, text: open.text });
      out += this.emit('response.reasoning_summary_part.done', { ...where, part });
      open.item.summary = open.text ? [part] : [];
    } else {
      out += this.emit('response.function_call_arguments.done', {
        item_id: open.item.id,
        output_index: open.index,
        name: open.item.name,
        arguments: open.item.arguments,
      });
    }
    open.item.status = 'completed';
    return out + this.emit('response.output_item.done', { output_index: open.index, item: open.item });
  }

  /** A free-form tool's call, whole: added, its input as one delta, done. */
  private customItem(open: Open & { kind: 'custom' }): string {
    let args: Record<string, unknown>;
    try {
      args = open.args.trim() ? (JSON.parse(open.args) as Record<string, unknown>) : {};
    } catch {
      args = { input: open.args };
    }
    const input = customInput(args);
    const item: Obj = { ...customCall(open.id, open.name, ''), ...callName(open.name, this.namespaces) };
    const index = this.add(item);
    const where = { item_id: item.id, output_index: index };
    let out = this.emit('response.output_item.added', { output_index: index, item: { ...item } });
    out += this.emit('response.custom_tool_call_input.delta', { ...where, delta: input });
    out += this.emit('response.custom_tool_call_input.done', { ...where, input });
    item.input = input;
    return out + this.emit('response.output_item.done', { output_index: index, item });
  }

  private add(item: Obj): number {
    this.output.push(item);
    return this.output.length - 1;
  }

  private close(): string {
    this.closed = true;
    const out = this.closeItem();
    const stop = this.stop ?? 'end';
    const response = responseObject(this.id, this.createdAt, this.ctx, this.output, {
      stop,
      ...(this.usage ? { usage: this.usage } : {}),
    });
    const type = response.status === 'incomplete' ? 'response.incomplete' : 'response.completed';
    return out + this.emit(type, { response });
  }

  private emit(type: string, payload: Obj): string {
    return `event: ${type}\ndata: ${JSON.stringify({ type, ...payload, sequence_number: this.seq++ })}\n\n`;
  }
}
