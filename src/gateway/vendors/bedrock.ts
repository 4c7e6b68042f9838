import { post, type VendorDefinition } from '../vendor';

/** Bedrock's error types (`x-amzn-ErrorType`), by status, for Genway's own refusals. */
const ERROR_TYPES: Record<number, string> = {
  400: 'ValidationException',
  401: 'UnrecognizedClientException',
  402: 'AccessDeniedException',
  403: 'AccessDeniedException',
  404: 'ResourceNotFoundException',
  405: 'ValidationException',
  413: 'ValidationException',
  429: 'ThrottlingException',
  502: 'InternalServerException',
  503: 'ServiceUnavailableException',
  504: 'ModelTimeoutException',
  508: 'InternalServerException',
};

export const bedrockErrorType = (status: number): string =>
  ERROR_TYPES[status] ?? (status >= 500 ? 'InternalServerException' : 'ValidationException');

/**
 * Claude on AWS Bedrock, as clients call it (Claude Code with CLAUDE_CODE_USE_BEDROCK=1, @anthropic-ai/bedrock-sdk,
 * AWS's SDK): InvokeModel and InvokeModelWithResponseStream under `/bedrock`, the Genway key as a Bearer token (the
 * clients' `AWS_BEARER_TOKEN_BEDROCK`). The model id in the path is routed like any model name; a stream answers in
 * AWS's event stream, whatever the target answered in.
 */
export const bedrock: VendorDefinition = {
  name: 'bedrock',
  mount: '/bedrock',
  mountOnly: true,
  claims: () => false,
  keyHeaders: ['authorization'],
  keyTo: { header: 'authorization', value: (key) => `Bearer ${key}` },
  errorBody: (_status, message) => ({ message }),
  errorHeaders: (status) => ({
    'x-amzn-ErrorType': `${bedrockErrorType(status)}:http://internal.amazon.com/coral/com.amazon.bedrock/`,
  }),
  usage: {},
  // Model ids hold `:` (`anthropic.claude-sonnet-4-5-20250929-v1:0`), which clients escape.
  routes: [
    post('/model/{model*}/invoke', { model: 'path', call: { format: 'messages', op: 'create' } }),
    post('/model/{model*}/invoke-with-response-stream', {
      model: 'path',
      stream: 'always',
      call: { format: 'messages', op: 'create', streams: true },
    }),
  ],
  catalog: [
    {
      id: 'bedrock-invoke',
      slug: 'bedrock-invoke-model',
      displayName: 'Bedrock InvokeModel format (Claude Code on Bedrock, Anthropic Bedrock SDK)',
      describe: {
        endpoint: 'POST /bedrock/model/{modelId}/invoke, /invoke-with-response-stream',
        key: 'Authorization: Bearer',
        mount: '/bedrock',
      },
    },
  ],
};
