/**
 * Translation between the gateway's formats, used only when a route's target speaks another format than the call:
 * OpenAI chat completions, Anthropic messages, Gemini generateContent (callers and targets) and OpenAI Responses
 * (callers). Each format has a reader into one intermediate form (./ir.ts) and a writer out of it, requests and
 * answers alike (docs/decisions.md says why); every request field is checked against the mapping table (./table.ts),
 * which docs/translation.md is rendered from.
 */
import { UnreadableAnswer, type AnswerReader, type AnswerWriter, type WriteContext } from './answer';
import { chatReader, chatWriter } from './chat/answer';
import { CHAT_FIELDS } from './chat/fields';
import { readChatRequest } from './chat/read';
import { writeChatRequest } from './chat/write';
import { translateError } from './errors';
import { GENERATE_FIELDS } from './generate/fields';
import { generateReader, generateWriter } from './generate/answer';
import { camelKeys } from './generate/normalize';
import { readGenerateRequest } from './generate/read';
import { writeGenerateRequest } from './generate/write';
import type { Request } from './ir';
import { messagesReader, messagesWriter } from './messages/answer';
import { MESSAGES_FIELDS } from './messages/fields';
import { readMessagesRequest } from './messages/read';
import { writeMessagesRequest } from './messages/write';
import { ECHOED, responsesWriter } from './responses/answer';
import { RESPONSES_FIELDS } from './responses/fields';
import { namespacedName, readResponsesRequest } from './responses/read';
import { isObj, type Obj } from './shared';
import { parseJson, SseReader } from './sse';
import {
  formatName,
  Guard,
  TranslationError,
  type CallFormat,
  type FieldTable,
  type TargetFormat,
} from './table';

export { TranslationError, type CallFormat, type TargetFormat } from './table';
export { UnreadableAnswer } from './answer';
/** The caller's error body for a status and message (a TranslationError's 400, an UnreadableAnswer's 502). */
export { errorBody } from './errors';

/** A generation call, or a token count (messages `/v1/messages/count_tokens`, Gemini `:countTokens`, Responses `/v1/responses/input_tokens`). */
export type Op = 'create' | 'count';

export interface TranslatedRequest {
  /** The target's JSON body: `model` is the target model for chat and messages targets; generate's is the path's. */
  body: Record<string, unknown>;
  /** Whether the target is asked to stream (Gemini: `:streamGenerateContent?alt=sse`). */
  stream: boolean;
  /** What the answer's translation needs from the request: pass it to `responseTranslator` as `ctx.memo`. */
  memo: Record<string, unknown>;
}

/** Every caller format's field table, for the docs and their test. */
export const FIELD_TABLES: Readonly<Record<CallFormat, FieldTable>> = {
  chat: CHAT_FIELDS,
  messages: MESSAGES_FIELDS,
  generate: GENERATE_FIELDS,
  responses: RESPONSES_FIELDS,
};

const READERS: Record<CallFormat, (body: Obj, g: Guard, stream: boolean) => Request> = {
  chat: readChatRequest,
  messages: readMessagesRequest,
  generate: readGenerateRequest,
  responses: readResponsesRequest,
};

const ANSWER_READERS: Record<TargetFormat, AnswerReader> = {
  chat: chatReader,
  messages: messagesReader,
  generate: generateReader,
};

const ANSWER_WRITERS: Record<CallFormat, AnswerWriter> = {
  chat: chatWriter,
  messages: messagesWriter,
  generate: generateWriter,
  responses: responsesWriter,
};

/**
 * A call's body in the target's format. Throws TranslationError (answer it as a 400 in the caller's error shape,
 * naming `field`) for what the target cannot express; `from` and `to` must differ.
 */
export function translateRequest(
  from: CallFormat,
  to: TargetFormat,
  op: Op,
  body: Record<string, unknown>,
  ctx: { targetModel: string; stream: boolean },
): TranslatedRequest {
  if ((from as string) === to)
    throw new Error(`a ${from} call to a ${to} target passes through untranslated`);
  const stream = op === 'create' && ctx.stream;
  const memo: Obj = {};
  if (from === 'responses') {
    for (const key of ECHOED) if (body[key] !== undefined) memo[key] = body[key];
    // Free-form tools travel as functions: their calls go back to the caller as custom_tool_call items. A namespace's
    // tools travel as functions named `<namespace>__<name>`: their calls go back as calls into the namespace.
    const custom: unknown[] = [];
    const namespaces: Record<string, [string, string]> = {};
    for (const t of Array.isArray(body.tools) ? body.tools : []) {
      if (!isObj(t)) continue;
      if (t.type === 'custom') custom.push(t.name);
      if (t.type !== 'namespace' || typeof t.name !== 'string' || !Array.isArray(t.tools)) continue;
      for (const inner of t.tools) {
        if (!isObj(inner) || typeof inner.name !== 'string') continue;
        const flat = namespacedName(t.name, inner.name);
        namespaces[flat] = [t.name, inner.name];
        if (inner.type === 'custom') custom.push(flat);
      }
    }
    if (custom.length) memo.customTools = custom;
    if (Object.keys(namespaces).length) memo.namespaces = namespaces;
  }
  let source = body;
  if (from === 'generate' && op === 'count') {
    // countTokens takes `{contents}` or a whole `{generateContentRequest}`.
    const request = obj(camelKeys(body)).generateContentRequest;
    if (isObj(request)) source = request;
  }
  const req = READERS[from](source, new Guard(FIELD_TABLES[from], to), stream);
  // Gemini cannot be asked for one call at most: the answer is held to it (oneToolCall).
  if (to === 'generate' && req.parallelToolCalls === false) memo.oneToolCall = true;
  if (op === 'count') return { body: countBody(req, from, to, ctx.targetModel), stream: false, memo };
  const written =
    to === 'chat'
      ? writeChatRequest(req, ctx.targetModel)
      : to === 'messages'
        ? writeMessagesRequest(req, ctx.targetModel)
        : writeGenerateRequest(req);
  return { body: written, stream, memo };
}

const obj = (v: unknown): Obj => (isObj(v) ? v : {});

/** The fields of a messages body that `count_tokens` takes. */
const COUNTED = ['model', 'messages', 'system', 'tools', 'tool_choice', 'thinking', 'output_config'];

function countBody(req: Request, from: CallFormat, to: TargetFormat, model: string): Obj {
  if (to === 'chat') {
    throw new TranslationError(
      '(token count)',
      `a token count has no equivalent in the chat completions format (it counts nothing): ${formatName(from)} token ` +
        'counts reach messages and generateContent targets only',
    );
  }
  if (to === 'messages') {
    const body = writeMessagesRequest(req, model);
    const out: Obj = {};
    for (const key of COUNTED) if (body[key] !== undefined) out[key] = body[key];
    return out;
  }
  const body = writeGenerateRequest(req);
  const { contents, ...rest } = body;
  // `{contents}` alone when that is all; else the whole request, which names its model.
  return Object.keys(rest).length
    ? { generateContentRequest: { model: `models/${model}`, ...body } }
    : { contents };
}

export interface ResponseTranslator {
  /** The target's whole 2xx JSON answer (parsed, or its bytes), as the caller's JSON answer. Throws UnreadableAnswer. */
  json(body: unknown): unknown;
  /** A stream: the target's SSE bytes in (split anywhere), the caller's bytes out, event by event. */
  stream(): { write(chunk: Buffer): Buffer; end(): Buffer };
  /** A non-2xx answer of the target (its error body, maybe not JSON), as the caller's error body; the status stays. */
  error(status: number, body: Buffer): Buffer;
}

export interface AnswerContext {
  /** The model name the client called (a route's name): every caller format is shown this name. */
  model: string;
  stream: boolean;
  /** A chat caller asked `stream_options.include_usage`: only then its stream ends with the usage chunk. */
  includeUsage?: boolean;
  /** A Gemini caller streams with `alt=sse` (else the answer is one JSON array, streamed element by element). */
  geminiSse?: boolean;
  /** `TranslatedRequest.memo`. */
  memo?: Record<string, unknown>;
}

export function responseTranslator(
  from: TargetFormat,
  to: CallFormat,
  op: Op,
  ctx: AnswerContext,
): ResponseTranslator {
  const reader = ctx.memo?.oneToolCall ? firstCallOnly(ANSWER_READERS[from]) : ANSWER_READERS[from];
  const writer = ANSWER_WRITERS[to];
  const wctx: WriteContext = {
    model: ctx.model,
    includeUsage: ctx.includeUsage === true,
    geminiSse: ctx.geminiSse === true,
    memo: ctx.memo ?? {},
  };
  return {
    json(body) {
      const parsed = Buffer.isBuffer(body) || typeof body === 'string' ? parseJson(body.toString()) : body;
      if (!isObj(parsed))
        throw new UnreadableAnswer(`the upstream's answer is not a ${formatName(from)} JSON object`);
      return op === 'count' ? writer.count(reader.count(parsed)) : writer.json(reader.json(parsed), wctx);
    },
    stream() {
      const sse = new SseReader();
      const events = reader.stream();
      const out = writer.stream(wctx);
      const pass = (list: ReturnType<SseReader['push']>): string => {
        let text = '';
        for (const e of list) for (const ir of events.event(e)) text += out.write(ir);
        return text;
      };
      return {
        write: (chunk) => Buffer.from(pass(sse.push(chunk))),
        end: () => Buffer.from(pass(sse.end()) + out.end()),
      };
    },
    error: (status, body) => translateError(from, to, status, body),
  };
}

/** A reader whose answers keep their first tool call only (the caller asked for one call at most). */
function firstCallOnly(reader: AnswerReader): AnswerReader {
  return {
    json(body) {
      const answer = reader.json(body);
      const first = answer.content.findIndex((p) => p.type === 'tool_call');
      return { ...answer, content: answer.content.filter((p, i) => p.type !== 'tool_call' || i === first) };
    },
    count: (body) => reader.count(body),
    stream() {
      const events = reader.stream();
      let kept: number | undefined;
      return {
        event(e) {
          return events.event(e).filter((ir) => {
            if (ir.type !== 'tool_start' && ir.type !== 'tool_call' && ir.type !== 'tool_args') return true;
            kept ??= ir.key;
            return ir.key === kept;
          });
        },
      };
    },
  };
}

/** The Content-Type of the caller's answer. */
export function contentType(to: CallFormat, stream: boolean, geminiSse = false): string {
  if (!stream) return 'application/json';
  return to === 'generate' && !geminiSse ? 'application/json' : 'text/event-stream';
}
