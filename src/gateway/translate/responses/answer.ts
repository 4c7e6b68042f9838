import { type AnswerWriter, type WriteContext } from '../answer';
import { REDACTED } from '../ids';
import type { Answer, Part, Stop, Usage } from '../ir';
import { isObj, mintId, nowSeconds, type Obj } from '../shared';
import { STOP_TO } from '../stops';
import { ResponsesStreamWriter } from './stream';

/** `input_tokens` includes cache reads and writes; `output_tokens` includes reasoning. */
export function writeResponsesUsage(u: Usage): Obj {
  const input = u.input + u.cacheRead + u.cacheWrite;
  return {
    input_tokens: input,
    input_tokens_details: { cached_tokens: u.cacheRead, cache_write_tokens: u.cacheWrite },
    output_tokens: u.output,
    output_tokens_details: { reasoning_tokens: u.reasoning ?? 0 },
    total_tokens: input + u.output,
  };
}

/** The request fields a response echoes, kept by the request reader (translate's memo). */
export const ECHOED = [
  'instructions',
  'max_output_tokens',
  'metadata',
  'parallel_tool_calls',
  'reasoning',
  'temperature',
  'text',
  'tool_choice',
  'tools',
  'top_p',
  'user',
  'safety_identifier',
  'prompt_cache_key',
] as const;

/** A response object around `output`, echoing the request (status and usage as the answer ended). */
export function responseObject(
  id: string,
  createdAt: number,
  ctx: WriteContext,
  output: Obj[],
  end?: { stop: Stop; usage?: Usage },
): Obj {
  const memo = ctx.memo;
  const [status, reason] = end ? STOP_TO.responses[end.stop].split(': ') : ['in_progress'];
  return {
    id,
    object: 'response',
    created_at: createdAt,
    status,
    background: false,
    error: null,
    incomplete_details: reason ? { reason } : null,
    instructions: memo.instructions ?? null,
    max_output_tokens: memo.max_output_tokens ?? null,
    metadata: memo.metadata ?? {},
    model: ctx.model,
    output,
    parallel_tool_calls: memo.parallel_tool_calls ?? true,
    previous_response_id: null,
    reasoning: memo.reasoning ?? { effort: null, summary: null },
    service_tier: 'default',
    // The target kept nothing: a response is never stored through a translation (docs/translation.md).
    store: false,
    temperature: memo.temperature ?? 1,
    text: memo.text ?? { format: { type: 'text' } },
    tool_choice: memo.tool_choice ?? 'auto',
    tools: memo.tools ?? [],
    top_p: memo.top_p ?? 1,
    truncation: 'disabled',
    usage: end?.usage ? writeResponsesUsage(end.usage) : null,
    ...(memo.user !== undefined ? { user: memo.user } : {}),
    ...(memo.safety_identifier !== undefined ? { safety_identifier: memo.safety_identifier } : {}),
    ...(memo.prompt_cache_key !== undefined ? { prompt_cache_key: memo.prompt_cache_key } : {}),
    ...(end ? { completed_at: nowSeconds() } : {}),
  };
}

export const responseId = (id: string | undefined): string =>
  id?.startsWith('resp_') ? id : `resp_${mintId('', 32)}`;

/** An answer's parts as output items: consecutive text in one message, each thinking a reasoning item, each call one. */
function outputItems(parts: Part[], custom: ReadonlySet<unknown>, namespaces: Namespaces): Obj[] {
  const items: Obj[] = [];
  let message: Obj[] | undefined;
  for (const part of parts) {
    if (part.type === 'text' || part.type === 'refusal') {
      if (!message) {
        message = [];
        items.push({
          id: mintId('msg_', 32),
          type: 'message',
          status: 'completed',
          role: 'assistant',
          content: message,
        });
      }
      message.push(
        part.type === 'text'
          ? { type: 'output_text', text: part.text, annotations: [], logprobs: [] }
          : { type: 'refusal', refusal: part.text },
      );
      continue;
    }
    message = undefined;
    if (part.type === 'thinking')
      items.push(
        reasoningItem(part.text, part.redacted !== undefined ? REDACTED + part.redacted : part.signature),
      );
    else if (part.type === 'tool_call' && custom.has(part.name)) {
      items.push({
        ...customCall(part.id, part.name, customInput(part.args)),
        ...callName(part.name, namespaces),
      });
    } else if (part.type === 'tool_call') {
      items.push({
        id: mintId('fc_', 32),
        type: 'function_call',
        status: 'completed',
        call_id: part.id,
        ...callName(part.name, namespaces),
        arguments: JSON.stringify(part.args),
      });
    }
  }
  return items;
}

/** A free-form tool's call (translated as a function of one string, `input`), as the caller's item. */
export const customCall = (callId: string, name: string, input: string): Obj => ({
  id: mintId('ctc_', 32),
  type: 'custom_tool_call',
  call_id: callId,
  name,
  input,
});

/** The free-form input of a call's arguments (`{input}`; anything else, as JSON text). */
export const customInput = (args: Record<string, unknown>): string =>
  typeof args.input === 'string' && Object.keys(args).length === 1 ? args.input : JSON.stringify(args);

/** The functions of the caller's namespaces, by the name the target knew them by (translateRequest's memo). */
export type Namespaces = Readonly<Record<string, readonly [string, string]>>;
export const namespacesOf = (memo: Obj): Namespaces =>
  (isObj(memo.namespaces) ? memo.namespaces : {}) as Namespaces;

/** A call's `name`, and its `namespace` when it is a call into one of the caller's namespaces. */
export function callName(name: string, namespaces: Namespaces): { name: string; namespace?: string } {
  const found = Object.hasOwn(namespaces, name) ? namespaces[name] : undefined;
  return found ? { name: found[1], namespace: found[0] } : { name };
}

/** The names of the caller's free-form tools (translateRequest's memo). */
export const customTools = (memo: Obj): ReadonlySet<unknown> =>
  new Set(Array.isArray(memo.customTools) ? memo.customTools : []);

/** A thinking block as a reasoning item: its text as the summary, its signature as `encrypted_content`. */
export const reasoningItem = (text: string, signature: string | undefined, id = mintId('rs_', 32)): Obj => ({
  id,
  type: 'reasoning',
  summary: text ? [{ type: 'summary_text', text }] : [],
  encrypted_content: signature ?? null,
  status: 'completed',
});

export const responsesWriter: AnswerWriter = {
  json(answer: Answer, ctx: WriteContext) {
    return responseObject(
      responseId(answer.id),
      nowSeconds(),
      ctx,
      outputItems(answer.content, customTools(ctx.memo), namespacesOf(ctx.memo)),
      {
        stop: answer.stop,
        ...(answer.usage ? { usage: answer.usage } : {}),
      },
    );
  },
  count: (c) => ({ object: 'response.input_tokens', input_tokens: c.input }),
  stream: (ctx) => new ResponsesStreamWriter(ctx),
};
