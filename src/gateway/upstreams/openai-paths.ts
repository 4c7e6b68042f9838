import { editJson } from '../json-edit';
import type { Format, ModelCall, Op, UpstreamRequest } from './types';

/** The OpenAI formats' paths under `/v1` (counts: only Responses has one, `input_tokens`). */
const PATHS: Partial<Record<Format, Partial<Record<Op, string>>>> = {
  chat: { create: '/chat/completions' },
  responses: { create: '/responses', count: '/responses/input_tokens' },
  embeddings: { create: '/embeddings' },
};

/** Whether an API speaking OpenAI's formats serves `op` in `format`. */
export const servesOpenAI = (format: Format, op: Op): boolean => PATHS[format]?.[op] !== undefined;

/** A call in one of OpenAI's formats to a server at `prefix` (`/v1`, Azure's `/openai/v1`): only the model changes. */
export function openaiRequest(call: ModelCall, model: string, prefix: string): UpstreamRequest {
  const body = call.json.model === model ? call.text : editJson(call.text, { set: { model } });
  return {
    path: prefix + PATHS[call.format]![call.op]!,
    body: Buffer.from(body),
    headers: [],
    framing: 'sse',
  };
}

/** The format a call in `wanted` reaches an OpenAI-format model in: its own, or chat completions. */
export const openaiFormat = (_model: string, wanted: Format): Format =>
  wanted === 'chat' || wanted === 'responses' || wanted === 'embeddings' ? wanted : 'chat';
