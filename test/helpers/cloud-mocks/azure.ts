import { chatAnswer, embeddingsAnswer, readMarkers, responsesAnswer, type Markers } from './answers';
import {
  header,
  jsonBody,
  LoopbackService,
  sendJson,
  writeInPieces,
  type CloudReceived,
  type MockReply,
  type Verdict,
} from './loopback';

export interface MockAzureOpenAIOptions {
  /** The resource's keys (Azure gives two, KEY1 and KEY2); default two fixed ones. */
  apiKeys?: string[];
  /** Deployment name → the model it serves (answers name the model, as Azure does); another name gets 404. Default: any name, answered under its own name. */
  deployments?: Record<string, string>;
  /** The region Azure names in x-ms-region (default Sweden Central). */
  region?: string;
}

export const DEFAULT_AZURE_KEYS = ['0123456789abcdef0123456789abcdef', 'fedcba9876543210fedcba9876543210'];

const ACCESS_DENIED =
  'Access denied due to invalid subscription key or wrong API endpoint. Make sure to provide a valid key for an active subscription and use a correct regional API endpoint for your resource.';

const OPERATIONS: Record<string, string> = {
  '/openai/v1/chat/completions': 'ChatCompletions_Create',
  '/openai/v1/responses': 'Responses_Create',
  '/openai/v1/embeddings': 'Embeddings_Create',
};

/** Azure OpenAI errors by status, `{"error":{...}}` as the v1 API answers them. */
function azureError(status: number, operation: string): Record<string, unknown> {
  if (status === 429) {
    return {
      code: '429',
      message: `Requests to the ${operation} Operation under Azure OpenAI API version v1 have exceeded token rate limit of your current OpenAI S0 pricing tier. Please retry after 1 second. Please contact Azure support service if you would like to further increase the default rate limit.`,
    };
  }
  if (status === 400) {
    return { message: 'Invalid request.', type: 'invalid_request_error', param: null, code: null };
  }
  if (status >= 500) {
    return {
      message: 'The server had an error while processing your request. Sorry about that!',
      type: 'server_error',
      param: null,
      code: null,
    };
  }
  return { code: String(status), message: `mock status ${status}` };
}

/**
 * Azure OpenAI's v1 API (`/openai/v1/...`, the deployment named by `model` in the body) on loopback. A request must
 * carry one of the resource's keys, as `api-key` or (as the OpenAI client sends it) `Authorization: Bearer <key>`;
 * any key it carries that the resource does not know gets Azure's 401.
 */
export class MockAzureOpenAI extends LoopbackService {
  readonly apiKeys: readonly string[];
  readonly region: string;
  private readonly deployments?: Readonly<Record<string, string>>;
  private requests = 0;

  constructor(options: MockAzureOpenAIOptions = {}) {
    super();
    this.apiKeys = options.apiKeys ?? DEFAULT_AZURE_KEYS;
    this.deployments = options.deployments;
    this.region = options.region ?? 'Sweden Central';
  }

  /** The resource's first key. */
  get apiKey(): string {
    return this.apiKeys[0];
  }

  protected authenticate(req: CloudReceived): Verdict {
    const apiKey = header(req, 'api-key');
    const bearer = header(req, 'authorization')?.match(/^Bearer (.+)$/i)?.[1];
    const presented = [apiKey, bearer].filter((k): k is string => k !== undefined);
    if (presented.length > 0 && presented.every((k) => this.apiKeys.includes(k))) {
      return { ok: true, auth: apiKey !== undefined ? 'api-key' : 'bearer' };
    }
    return {
      ok: false,
      auth: apiKey !== undefined ? 'api-key' : bearer !== undefined ? 'bearer' : null,
      reason: ACCESS_DENIED,
      reject: (res) => sendJson(res, 401, { error: { code: '401', message: ACCESS_DENIED } }, this.ids()),
    };
  }

  protected async answer(req: CloudReceived, res: MockReply): Promise<void> {
    const operation = OPERATIONS[req.path];
    if (req.method !== 'POST' || !operation) {
      return sendJson(res, 404, { error: { code: '404', message: 'Resource not found' } }, this.ids());
    }
    const body = jsonBody(req);
    if (!body) return sendJson(res, 400, { error: azureError(400, operation) }, this.ids());
    const deployment = typeof body.model === 'string' ? body.model : '';
    const model = this.deployments ? this.deployments[deployment] : deployment;
    if (!model) {
      return sendJson(
        res,
        404,
        {
          error: {
            code: 'DeploymentNotFound',
            message:
              'The API deployment for this resource does not exist. If you created the deployment within the last 5 minutes, please wait a moment and try again.',
          },
        },
        this.ids(),
      );
    }
    const markers = readMarkers(req.body.toString('utf8'));
    const headers = { ...this.ids(), 'x-ms-deployment-name': deployment };
    if (markers.status) {
      return sendJson(
        res,
        markers.status,
        { error: azureError(markers.status, operation) },
        {
          ...headers,
          ...(markers.status === 429 ? { 'retry-after': 1, 'retry-after-ms': 1000 } : {}),
        },
      );
    }
    const n = this.nextSequence();
    const ids = {
      model,
      body,
      markers,
      callId: `call_Mock${String(n).padStart(20, '0')}`,
    };
    if (operation === 'Embeddings_Create') return sendJson(res, 200, embeddingsAnswer(body, model), headers);
    if (operation === 'ChatCompletions_Create') {
      const answer = chatAnswer({ ...ids, id: `chatcmpl-Mock${String(n).padStart(20, '0')}` });
      if (body.stream !== true) return sendJson(res, 200, answer.completion, headers);
      const includeUsage =
        (body.stream_options as { include_usage?: unknown } | undefined)?.include_usage === true;
      const frames = answer.chunks(includeUsage).map((chunk) => `data: ${JSON.stringify(chunk)}\n\n`);
      return this.stream(res, headers, frames.concat('data: [DONE]\n\n'), markers);
    }
    const answer = responsesAnswer({ ...ids, id: `resp_Mock${String(n).padStart(40, '0')}` });
    if (body.stream !== true) return sendJson(res, 200, answer.response, headers);
    const frames = answer
      .events()
      .map(([event, data]) => `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
    return this.stream(res, headers, frames, markers);
  }

  private async stream(
    res: MockReply,
    headers: Record<string, string>,
    frames: string[],
    markers: Markers,
  ): Promise<void> {
    res.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache',
      ...headers,
    });
    if (!markers.streamError) {
      await writeInPieces(res, frames);
      return void res.end();
    }
    await writeInPieces(res, frames.slice(0, 3));
    if (markers.streamError === 'drop') return void res.destroy();
    const error = {
      message: 'The server had an error while processing your request. Sorry about that!',
      type: markers.streamError,
      param: null,
      code: null,
    };
    res.end(`data: ${JSON.stringify({ error })}\n\n`);
  }

  private ids(): Record<string, string> {
    const n = String(++this.requests).padStart(12, '0');
    return {
      'apim-request-id': `00000000-0000-4000-a000-${n}`,
      'x-request-id': `00000000-0000-4000-b000-${n}`,
      'x-ms-region': this.region,
      'x-ratelimit-remaining-requests': '99',
      'x-ratelimit-remaining-tokens': '99000',
    };
  }
}
