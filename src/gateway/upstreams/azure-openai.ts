import { z } from 'zod';
import { distinctKeyIds, keyedFields, upstreamId } from '../../config/fields';
import { openaiFormat, openaiRequest, servesOpenAI } from './openai-paths';
import type { UpstreamType } from './types';

const schema = z
  .strictObject({
    id: upstreamId,
    type: z.literal('azure-openai'),
    /** The resource's endpoint (`https://{resource}.openai.azure.com`). */
    ...keyedFields,
    apiKeys: keyedFields.apiKeys.min(1, 'at least one key (sent as api-key)'),
  })
  .refine(...distinctKeyIds);

/** Azure OpenAI's v1 API: `{endpoint}/openai/v1/...`, the deployment's name as the body's model, the key as `api-key`. */
export const azureOpenAIUpstream: UpstreamType<z.infer<typeof schema>> = {
  type: 'azure-openai',
  schema,
  pool: (config) => config,
  bind: () => ({
    format: openaiFormat,
    serves: servesOpenAI,
    request: (call, model) => openaiRequest(call, model, '/openai/v1'),
    authorize: (_req, key) => [['api-key', key.key]],
    errorShape: 'openai',
  }),
};
