import {
  UnreadableAnswer,
  type AnswerReader,
  type AnswerWriter,
  type EventReader,
  type WriteContext,
} from '../answer';
import { idWithSignature, REDACTED } from '../ids';
import type { Answer, Event, Part, Stop, Usage } from '../ir';
import { count, isObj, obj, str, type Obj } from '../shared';
import { parseJson, type SseEvent } from '../sse';
import { STOP_TO, stopFrom } from '../stops';
import { GenerateStreamWriter } from './stream';

/**
 * `promptTokenCount` includes cached tokens (`cachedContentTokenCount`), tool-use prompts are counted apart;
 * `candidatesTokenCount` excludes thinking (`thoughtsTokenCount`).
 */
export function readGenerateUsage(u: Obj): Usage {
  const cacheRead = count(u.cachedContentTokenCount);
  const thoughts = count(u.thoughtsTokenCount);
  return {
    input: Math.max(0, count(u.promptTokenCount) - cacheRead) + count(u.toolUsePromptTokenCount),
    cacheRead,
    cacheWrite: 0,
    output: count(u.candidatesTokenCount) + thoughts,
    ...(u.thoughtsTokenCount !== undefined ? { reasoning: thoughts } : {}),
  };
}

export function writeGenerateUsage(u: Usage): Obj {
  const prompt = u.input + u.cacheRead + u.cacheWrite;
  const thoughts = u.reasoning ?? 0;
  return {
    promptTokenCount: prompt,
    candidatesTokenCount: Math.max(0, u.output - thoughts),
    totalTokenCount: prompt + u.output,
    ...(u.cacheRead ? { cachedContentTokenCount: u.cacheRead } : {}),
    ...(thoughts ? { thoughtsTokenCount: thoughts } : {}),
  };
}

/** A candidate's stop: STOP with function calls is tool use. */
function candidateStop(reason: unknown, calls: boolean): Stop {
  const stop = stopFrom('generate', reason);
  return stop === 'end' && calls ? 'tool_use' : stop;
}

/**
 * One part of an answer. A function call's id (minted when Gemini gave none) carries its thought signature
 * (ids.ts); a thought's signature is the thinking's.
 */
function partOf(p: Obj): Part | undefined {
  if (isObj(p.functionCall)) {
    const call = p.functionCall;
    return {
      type: 'tool_call',
      id: idWithSignature(str(call.id), str(p.thoughtSignature)),
      name: str(call.name) ?? '',
      args: obj(call.args),
    };
  }
  if (typeof p.text === 'string') {
    if (p.thought === true) return { type: 'thinking', text: p.text, ...signatureOf(p) };
    return { type: 'text', text: p.text };
  }
  if (p.thought === true && typeof p.thoughtSignature === 'string')
    return { type: 'thinking', text: '', ...signatureOf(p) };
  return undefined;
}

const signatureOf = (p: Obj): { signature?: string } =>
  typeof p.thoughtSignature === 'string' ? { signature: p.thoughtSignature } : {};

export const generateReader: AnswerReader = {
  json(body) {
    const candidate = Array.isArray(body.candidates) ? obj(body.candidates[0]) : undefined;
    if (!candidate) {
      if (isObj(body.promptFeedback)) {
        return {
          id: str(body.responseId),
          model: str(body.modelVersion),
          content: [],
          stop: 'content_filter',
          ...(isObj(body.usageMetadata) ? { usage: readGenerateUsage(body.usageMetadata) } : {}),
        };
      }
      throw new UnreadableAnswer('the answer has no candidates');
    }
    const parts = Array.isArray(obj(candidate.content).parts)
      ? (obj(candidate.content).parts as unknown[])
      : [];
    const content = mergeThoughts(parts.map((p) => partOf(obj(p))).filter((p): p is Part => p !== undefined));
    return {
      id: str(body.responseId),
      model: str(body.modelVersion),
      content,
      stop: candidateStop(
        candidate.finishReason,
        content.some((p) => p.type === 'tool_call'),
      ),
      ...(isObj(body.usageMetadata) ? { usage: readGenerateUsage(body.usageMetadata) } : {}),
    };
  },
  count(body) {
    if (typeof body.totalTokens !== 'number')
      throw new UnreadableAnswer('the token count has no totalTokens');
    return { input: count(body.totalTokens) };
  },
  stream: () => new GenerateEventReader(),
};

/** Consecutive thought parts as one thinking part (a signature comes on the last). */
function mergeThoughts(parts: Part[]): Part[] {
  const out: Part[] = [];
  for (const part of parts) {
    const last = out[out.length - 1];
    if (part.type === 'thinking' && last?.type === 'thinking' && !last.signature) {
      out[out.length - 1] = {
        ...last,
        text: last.text + part.text,
        ...(part.signature ? { signature: part.signature } : {}),
      };
    } else out.push(part);
  }
  return out;
}

/** A Gemini stream (`alt=sse`), chunk by chunk: each chunk's parts, its running usage, the last one's finish. */
class GenerateEventReader implements EventReader {
  private started = false;
  private calls = 0;
  private done = false;

  event(e: SseEvent): Event[] {
    if (this.done) return [];
    const chunk = parseJson(e.data);
    if (!isObj(chunk)) return [];
    if (isObj(chunk.error)) {
      this.done = true;
      const code = chunk.error.code;
      return [
        {
          type: 'error',
          status: typeof code === 'number' ? code : 500,
          message: str(chunk.error.message) ?? e.data,
        },
      ];
    }
    const out: Event[] = [];
    const usage = isObj(chunk.usageMetadata) ? readGenerateUsage(chunk.usageMetadata) : undefined;
    if (!this.started) {
      this.started = true;
      out.push({
        type: 'start',
        id: str(chunk.responseId),
        model: str(chunk.modelVersion),
        ...(usage ? { usage } : {}),
      });
    }
    const candidate = Array.isArray(chunk.candidates) ? obj(chunk.candidates[0]) : undefined;
    const parts =
      candidate && Array.isArray(obj(candidate.content).parts)
        ? (obj(candidate.content).parts as unknown[])
        : [];
    for (const raw of parts) this.part(obj(raw), out);
    if (usage) out.push({ type: 'usage', usage });
    const reason = candidate?.finishReason;
    const blocked = !candidate && isObj(chunk.promptFeedback);
    if ((typeof reason === 'string' && reason !== 'FINISH_REASON_UNSPECIFIED') || blocked) {
      this.done = true;
      out.push(
        { type: 'finish', stop: blocked ? 'content_filter' : candidateStop(reason, this.calls > 0) },
        { type: 'done' },
      );
    }
    return out;
  }

  private part(p: Obj, out: Event[]): void {
    if (isObj(p.functionCall)) {
      const call = p.functionCall;
      out.push({
        type: 'tool_call',
        key: this.calls++,
        id: idWithSignature(str(call.id), str(p.thoughtSignature)),
        name: str(call.name) ?? '',
        args: obj(call.args),
      });
      return;
    }
    if (p.thought === true) {
      if (typeof p.text === 'string' && p.text) out.push({ type: 'thinking', delta: p.text });
      if (typeof p.thoughtSignature === 'string')
        out.push({ type: 'signature', signature: p.thoughtSignature });
      return;
    }
    if (typeof p.text === 'string' && p.text) out.push({ type: 'text', delta: p.text });
  }
}

export const generateWriter: AnswerWriter = {
  json(answer: Answer, ctx: WriteContext) {
    const parts: Obj[] = [];
    for (const part of answer.content) {
      const written = writePart(part);
      if (written) parts.push(written);
    }
    return {
      candidates: [
        {
          content: { parts: parts.length ? parts : [{ text: '' }], role: 'model' },
          finishReason: STOP_TO.generate[answer.stop],
          index: 0,
        },
      ],
      usageMetadata: writeGenerateUsage(answer.usage ?? { input: 0, cacheRead: 0, cacheWrite: 0, output: 0 }),
      modelVersion: ctx.model,
      ...(answer.id ? { responseId: answer.id } : {}),
    };
  },
  count: (c) => ({ totalTokens: c.input }),
  stream: (ctx) => new GenerateStreamWriter(ctx),
};

/** An answer's part as a Gemini part (a redacted thinking travels as a thought signature with a marker). */
export function writePart(part: Part): Obj | undefined {
  switch (part.type) {
    case 'text':
    case 'refusal':
      return { text: part.text };
    case 'thinking':
      if (part.redacted !== undefined)
        return { text: '', thought: true, thoughtSignature: REDACTED + part.redacted };
      return {
        text: part.text,
        thought: true,
        ...(part.signature ? { thoughtSignature: part.signature } : {}),
      };
    case 'tool_call':
      return { functionCall: { id: part.id, name: part.name, args: part.args } };
    default:
      return undefined;
  }
}
