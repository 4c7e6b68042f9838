/**
 * Mock cloud upstreams that check what the real services check, for Genway's `bedrock`, `vertex` and `azure-openai`
 * upstream types. Each is one loopback port (HTTP/1.1, and cleartext HTTP/2 for the AWS SDK's default handler) that
 * records every request exactly, as MockVendor does, plus whether and how its credentials verified.
 *
 *   MockBedrock      SigV4 recomputed with AWS's signer (@smithy/signature-v4) over the request as received, or a
 *                    Bedrock API key as `Authorization: Bearer`; InvokeModel, InvokeModelWithResponseStream (frames by
 *                    AWS's EventStreamCodec), CountTokens.
 *   MockVertex       POST /token: JWT-bearer grants verified with the service account's public key; the Vertex API
 *                    takes only live tokens it issued. Claude (rawPredict, streamRawPredict, count-tokens:rawPredict)
 *                    and Gemini (generateContent, streamGenerateContent, countTokens) under /v1 and /v1beta1.
 *   MockAzureOpenAI  /openai/v1/chat/completions, /responses, /embeddings; `api-key` (or Bearer) one of its keys.
 *
 * Every request passes the credential check first; then a handler queued with `next(handler)` answers it, or the
 * mock's default answer below. `received[i]` has method, url, path (as on the wire), headers, rawHeaders, body
 * (Buffer), closed, httpVersion, verified, auth ('sigv4' | 'apiKey' | 'oauth' | 'jwt-bearer' | 'api-key' | 'bearer'),
 * authError.
 *
 * Default answers (deterministic; the constants are exported from ./cloud-mocks/answers):
 *   - text MOCK_TEXT "Hello there from the mock.", streamed as MOCK_TEXT_DELTAS 'Hello', ' there', ' from', ' the mock.'
 *   - prompt tokens mockPromptTokens(body): 8 + the words in every string under text/content/system/instructions/
 *     input/prompt keys (one user message "Hello there" = 10); output tokens MOCK_OUTPUT_TOKENS = 9 (a tool call:
 *     MOCK_TOOL_OUTPUT_TOKENS = 31); Gemini also thoughtsTokenCount GEMINI_THOUGHTS_TOKENS = 6 (in totalTokenCount)
 *   - Claude: usage {input_tokens, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, output_tokens};
 *     message ids msg_bdrk_01Mock… / msg_vrtx_01Mock…, `model` the model id of the path
 *   - Bedrock: headers x-amzn-requestid, x-amzn-bedrock-input-token-count, -output-token-count, -invocation-latency
 *     (321); the stream's message_stop carries amazon-bedrock-invocationMetrics {inputTokenCount, outputTokenCount,
 *     invocationLatency: 321, firstByteLatency: 123}; each chunk frame's body {"bytes": base64, "p": padding}
 *   - Vertex Claude streams as Anthropic's API does (a ping after message_start); Gemini SSE is `data: {...}\r\n\r\n`
 *     with usageMetadata in the last chunk only
 *   - Azure chat streams start with Azure's prompt-filter chunk (no choices, empty id) and end with `data: [DONE]`;
 *     with stream_options.include_usage every chunk has "usage":null and a last chunk carries it
 *
 * Markers anywhere in the prompt text:
 *   [mock:status=429]        that status in the service's error shape (Bedrock 429 ThrottlingException, 500
 *                            InternalServerException, 503 ServiceUnavailableException, 400 ValidationException...;
 *                            Vertex Google's {"error":{code,message,status}} e.g. RESOURCE_EXHAUSTED, Claude's 400,
 *                            500 and 529 in Anthropic's shape; Azure {"error":{...}} with retry-after on 429)
 *   [mock:stream-error=X]    the stream starts, then fails: Bedrock an exception frame `:exception-type: X`
 *                            (throttlingException, modelStreamErrorException, internalServerException, ...); Vertex
 *                            Claude `event: error` of type X (overloaded_error, api_error); Gemini a `{"error":...}`
 *                            chunk of status X (INTERNAL, RESOURCE_EXHAUSTED); Azure a `{"error":...}` chunk;
 *                            X = drop cuts the connection mid-stream everywhere
 *   [mock:tool]              when the request offers tools: a call of the first one (or the one tool_choice names),
 *                            arguments from its schema (strings "mock", numbers 42, booleans true, enums the first)
 *   [mock:cache-read=N]      N more prompt tokens read from cache (Claude cache_read_input_tokens, Gemini
 *                            cachedContentTokenCount within promptTokenCount, OpenAI cached_tokens within prompt_tokens)
 *   [mock:cache-write=N]     N cache_creation_input_tokens (Claude)
 *   [mock:delay=MS]          answer after MS milliseconds
 */
export {
  LoopbackService,
  type CloudHandler,
  type CloudReceived,
  type MockReply,
  type Verdict,
} from './cloud-mocks/loopback';
export {
  BEDROCK_LATENCY,
  chunkFrame,
  DEFAULT_AWS_CREDENTIALS,
  DEFAULT_BEDROCK_API_KEY,
  exceptionFrame,
  MockBedrock,
  type MockBedrockOptions,
} from './cloud-mocks/bedrock';
export { verifySigV4, type AwsCredentials } from './cloud-mocks/sigv4';
export {
  CLOUD_PLATFORM_SCOPE,
  GOOGLE_TOKEN_URL,
  MockVertex,
  vertexAuthClient,
  type MockVertexOptions,
  type ServiceAccountKey,
  type TokenGrant,
  type VertexAuthClientOptions,
} from './cloud-mocks/vertex';
export { DEFAULT_AZURE_KEYS, MockAzureOpenAI, type MockAzureOpenAIOptions } from './cloud-mocks/azure';
export {
  GEMINI_THOUGHTS_TOKENS,
  MOCK_EMBEDDING,
  MOCK_OUTPUT_TOKENS,
  MOCK_TEXT,
  MOCK_TEXT_DELTAS,
  MOCK_TOOL_OUTPUT_TOKENS,
  mockPromptTokens,
  readMarkers,
  sampleArguments,
  toolPreamble,
  type Markers,
} from './cloud-mocks/answers';
