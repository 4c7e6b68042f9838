import { z } from 'zod';
import { distinctKeyIds, keyedFields, upstreamId } from '../../config/fields';
import { messagesIn, MESSAGES_VERSION } from './envelopes';
import type { UpstreamType } from './types';

const schema = z
  .strictObject({
    id: upstreamId,
    type: z.literal('anthropic'),
    ...keyedFields,
    apiKeys: keyedFields.apiKeys.default([]),
    /** The `anthropic-version` sent when the caller names none. */
    defaultVersion: z.string().min(1).optional(),
  })
  .refine(...distinctKeyIds);

/** Anthropic's Messages API at a base URL: Anthropic itself, or any server that speaks it. */
export const anthropicUpstream: UpstreamType<z.infer<typeof schema>> = {
  type: 'anthropic',
  schema,
  pool: (config) => config,
  bind: (config) => ({
    format: () => 'messages',
    serves: (format) => format === 'messages',
    request(call, model) {
      const { body, headers, drop } = messagesIn(call, 'native', model);
      if (!headers.some(([name]) => name === 'anthropic-version')) {
        headers.push(['anthropic-version', config.defaultVersion ?? MESSAGES_VERSION]);
      }
      return {
        path: call.op === 'count' ? '/v1/messages/count_tokens' : '/v1/messages',
        body: Buffer.from(body),
        headers,
        drop,
        framing: 'sse',
      };
    },
    authorize: (_req, key) => [['x-api-key', key.key]],
    errorShape: 'anthropic',
  }),
};
