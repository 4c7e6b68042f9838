import { z } from 'zod';
import { distinctKeyIds, keyedFields, upstreamId } from '../../config/fields';
import { openaiFormat, openaiRequest, servesOpenAI } from './openai-paths';
import type { UpstreamType } from './types';

const schema = z
  .strictObject({
    id: upstreamId,
    type: z.literal('openai'),
    ...keyedFields,
    apiKeys: keyedFields.apiKeys.default([]),
    /**
     * The formats the server speaks (default all three): a server without Responses (most of vLLM's and Ollama's) gets
     * Responses calls translated into chat completions.
     */
    speaks: z
      .array(z.enum(['chat', 'responses', 'embeddings']))
      .min(1)
      .optional(),
  })
  .refine(...distinctKeyIds);

/**
 * OpenAI's API at a base URL: OpenAI itself, or a server that speaks it (vLLM, Ollama, LM Studio, OpenRouter,
 * DeepSeek, Groq, Together), the client's path (`/v1/chat/completions`) appended to it. No key: none is sent.
 */
export const openaiUpstream: UpstreamType<z.infer<typeof schema>> = {
  type: 'openai',
  schema,
  pool: (config) => config,
  bind: (config) => ({
    format: (model, wanted) => {
      const format = openaiFormat(model, wanted);
      return !config.speaks || (config.speaks as string[]).includes(format) ? format : 'chat';
    },
    serves: servesOpenAI,
    request: (call, model) => openaiRequest(call, model, '/v1'),
    authorize: (_req, key) => [['authorization', `Bearer ${key.key}`]],
    errorShape: 'openai',
  }),
};
