import { z } from 'zod';
import { distinctKeyIds, keyedFields, upstreamId } from '../../config/fields';
import type { ModelCall, UpstreamType } from './types';

const schema = z
  .strictObject({
    id: upstreamId,
    type: z.literal('gemini'),
    ...keyedFields,
    apiKeys: keyedFields.apiKeys.default([]),
  })
  .refine(...distinctKeyIds);

/** A generate call's action, and its query: `alt=sse` for a stream unless the caller's own envelope says otherwise. */
export function generateAction(call: ModelCall): string {
  if (call.op === 'count') return 'countTokens';
  if (!call.stream) return 'generateContent';
  // A caller in this envelope keeps its own query (a stream without alt=sse answers one JSON array).
  const query = call.envelope !== 'native' || call.query === undefined ? 'alt=sse' : call.query;
  return `streamGenerateContent${query ? `?${query}` : ''}`;
}

/** Gemini's API (generativelanguage.googleapis.com) at a base URL: the model in the path, the body as sent. */
export const geminiUpstream: UpstreamType<z.infer<typeof schema>> = {
  type: 'gemini',
  schema,
  pool: (config) => config,
  bind: () => ({
    format: () => 'generate',
    serves: (format) => format === 'generate',
    request: (call, model) => ({
      path: `/v1beta/models/${encodeURIComponent(model)}:${generateAction(call)}`,
      body: Buffer.from(call.text),
      headers: [],
      framing: 'sse',
    }),
    authorize: (_req, key) => [['x-goog-api-key', key.key]],
    errorShape: 'google',
  }),
};
