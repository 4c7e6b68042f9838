import { post, type RouteOptions, type VendorDefinition } from '../vendor';
import { googleError } from './gemini';

const AT = '/(v1|v1beta1)/projects/{project}/locations/{region}/publishers';
const claude = (action: string, options: RouteOptions) =>
  post(`${AT}/anthropic/models/{model}:${action}`, { model: 'path', ...options });
const gemini = (action: string, options: RouteOptions) =>
  post(`${AT}/google/models/{model}:${action}`, { model: 'path', ...options });

/**
 * Models on Google Vertex AI, as clients call them (Claude Code with CLAUDE_CODE_USE_VERTEX=1,
 * @anthropic-ai/vertex-sdk, @google/genai in Vertex mode): Claude's rawPredict and streamRawPredict, Gemini's
 * generateContent, under `/vertex`, the Genway key as a Bearer token. The project and location in the path are the
 * client's; where the call runs is the route's.
 */
export const vertex: VendorDefinition = {
  name: 'vertex',
  mount: '/vertex',
  mountOnly: true,
  claims: () => false,
  keyHeaders: ['authorization'],
  keyTo: { header: 'authorization', value: (key) => `Bearer ${key}` },
  errorBody: googleError,
  usage: {},
  routes: [
    // Counting names the model in the body (before `{model}`, which `count-tokens` would match too).
    post(`${AT}/anthropic/models/count-tokens:rawPredict`, {
      model: 'body',
      call: { format: 'messages', op: 'count' },
    }),
    claude('rawPredict', { call: { format: 'messages', op: 'create' } }),
    claude('streamRawPredict', {
      stream: 'always',
      call: { format: 'messages', op: 'create', streams: true },
    }),
    gemini('generateContent', { call: { format: 'generate', op: 'create' } }),
    gemini('streamGenerateContent', {
      stream: 'alt=sse',
      call: { format: 'generate', op: 'create', streams: true },
    }),
    gemini('countTokens', { call: { format: 'generate', op: 'count' } }),
  ],
  catalog: [
    {
      id: 'vertex-predict',
      slug: 'vertex-raw-predict',
      displayName: 'Vertex AI format (Claude Code on Vertex, Anthropic Vertex SDK, Google GenAI SDK)',
      describe: {
        endpoint:
          'POST /vertex/v1/projects/{project}/locations/{region}/publishers/{anthropic|google}/models/{model}:{action}',
        key: 'Authorization: Bearer',
        mount: '/vertex',
      },
    },
  ],
};
