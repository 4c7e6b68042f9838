import { CUT_SHORT, type EventWriter, type WriteContext } from '../answer';
import type { Event, Stop, Usage } from '../ir';
import type { Obj } from '../shared';
import { STOP_TO } from '../stops';
import { writeGenerateUsage, writePart } from './answer';

const STATUS: Record<number, string> = {
  400: 'INVALID_ARGUMENT',
  401: 'UNAUTHENTICATED',
  403: 'PERMISSION_DENIED',
  404: 'NOT_FOUND',
  429: 'RESOURCE_EXHAUSTED',
  500: 'INTERNAL',
  502: 'UNAVAILABLE',
  503: 'UNAVAILABLE',
  504: 'DEADLINE_EXCEEDED',
};
export const rpcStatus = (status: number): string =>
  STATUS[status] ?? (status < 500 ? 'INVALID_ARGUMENT' : 'INTERNAL');

/**
 * Intermediate events as Gemini stream chunks: one chunk per text or thought delta, one per function call (its
 * arguments whole, as Gemini sends them: a call streamed by the target is held until its arguments are complete),
 * and a last chunk with the finish reason and the usage. Framed as SSE (`alt=sse`) or as the elements of one JSON
 * array, written as they come.
 */
export class GenerateStreamWriter implements EventWriter {
  private closed = false;
  private elements = 0;
  private responseId: string | undefined;
  private stop: Stop | undefined;
  private usage: Usage | undefined;
  /** Calls whose arguments are still streaming, by key. */
  private pending = new Map<number, { id: string; name: string; args: string }>();

  constructor(private readonly ctx: WriteContext) {}

  write(e: Event): string {
    if (this.closed) return '';
    if (e.type === 'tool_args') {
      const call = this.pending.get(e.key);
      if (call) call.args += e.delta;
      return '';
    }
    const out = this.flush();
    switch (e.type) {
      case 'start':
        this.responseId = e.id;
        if (e.usage) this.usage = e.usage;
        return out;
      case 'text':
      case 'refusal':
        return e.delta ? out + this.chunk([{ text: e.delta }]) : out;
      case 'thinking':
        return e.delta ? out + this.chunk([{ text: e.delta, thought: true }]) : out;
      case 'signature':
        return out + this.chunk([{ text: '', thought: true, thoughtSignature: e.signature }]);
      case 'redacted':
        return out + this.chunk([writePart({ type: 'thinking', text: '', redacted: e.data })!]);
      case 'tool_start':
        this.pending.set(e.key, { id: e.id, name: e.name, args: '' });
        return out;
      case 'tool_call':
        return out + this.chunk([{ functionCall: { id: e.id, name: e.name, args: e.args } }]);
      case 'finish':
        this.stop = e.stop;
        return out;
      case 'usage':
        this.usage = e.usage;
        return out;
      case 'done':
        return out + this.close();
      case 'error':
        this.closed = true;
        return (
          out +
          this.element({ error: { code: e.status, message: e.message, status: rpcStatus(e.status) } }) +
          this.tail()
        );
    }
  }

  end(): string {
    if (this.closed) return '';
    if (this.stop) return this.close();
    return this.write({ type: 'error', status: 502, message: CUT_SHORT });
  }

  /** The calls held for their arguments, now whole. */
  private flush(): string {
    if (!this.pending.size) return '';
    let out = '';
    for (const call of this.pending.values()) {
      let args: unknown;
      try {
        args = call.args.trim() ? JSON.parse(call.args) : {};
      } catch {
        args = undefined;
      }
      if (typeof args !== 'object' || args === null || Array.isArray(args)) {
        this.pending.clear();
        this.closed = true;
        const message = `the upstream streamed arguments for ${call.name} that are not a JSON object`;
        return out + this.element({ error: { code: 502, message, status: rpcStatus(502) } }) + this.tail();
      }
      out += this.chunk([{ functionCall: { id: call.id, name: call.name, args } }]);
    }
    this.pending.clear();
    return out;
  }

  private close(): string {
    const out = this.flush();
    if (this.closed) return out;
    this.closed = true;
    const last = this.chunk([{ text: '' }], {
      finishReason: STOP_TO.generate[this.stop ?? 'end'],
      usage: writeGenerateUsage(this.usage ?? { input: 0, cacheRead: 0, cacheWrite: 0, output: 0 }),
    });
    return out + last + this.tail();
  }

  /**
   * One chunk: a candidate with these parts (never none: the SDK's chat keeps a streamed answer in its history only
   * when every chunk has a part).
   */
  private chunk(parts: Obj[], final?: { finishReason: string; usage: Obj }): string {
    const candidate: Obj = { content: { parts, role: 'model' }, index: 0 };
    if (final) candidate.finishReason = final.finishReason;
    const chunk: Obj = { candidates: [candidate] };
    if (final) chunk.usageMetadata = final.usage;
    chunk.modelVersion = this.ctx.model;
    if (this.responseId) chunk.responseId = this.responseId;
    return this.element(chunk);
  }

  private element(value: Obj): string {
    const json = JSON.stringify(value);
    if (this.ctx.geminiSse) return `data: ${json}\r\n\r\n`;
    return `${this.elements++ === 0 ? '[' : ',\r\n'}${json}`;
  }

  /** What ends a JSON array stream (SSE needs nothing). */
  private tail(): string {
    if (this.ctx.geminiSse) return '';
    return this.elements === 0 ? '[]' : ']';
  }
}
