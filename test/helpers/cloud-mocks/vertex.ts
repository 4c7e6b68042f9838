import {
  createHash,
  createPrivateKey,
  createPublicKey,
  generateKeyPairSync,
  randomBytes,
  verify,
} from 'node:crypto';
import type { KeyObject } from 'node:crypto';
import { JWT } from 'google-auth-library';
import { claudeAnswer, geminiAnswer, mockPromptTokens, readMarkers, type Markers } from './answers';
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

/** The token URL google-auth-library 10.x posts every JWT-bearer grant to, and the `aud` it signs into the JWT. */
export const GOOGLE_TOKEN_URL = 'https://oauth2.googleapis.com/token';
export const CLOUD_PLATFORM_SCOPE = 'https://www.googleapis.com/auth/cloud-platform';
const JWT_BEARER = 'urn:ietf:params:oauth:grant-type:jwt-bearer';

/** A service account key as a team downloads it from the Google Cloud console. */
export interface ServiceAccountKey {
  type: 'service_account';
  project_id: string;
  private_key_id: string;
  private_key: string;
  client_email: string;
  client_id: string;
  auth_uri: string;
  token_uri: string;
  auth_provider_x509_cert_url: string;
  client_x509_cert_url: string;
  universe_domain: string;
}

export interface MockVertexOptions {
  /** The project in every API path (default genway-mock). */
  project?: string;
  /** The location in every API path (default us-east5). */
  region?: string;
  /** Lifetime of the access tokens it issues, in seconds (default 3599, as Google). */
  expiresIn?: number;
  /** The service account's RSA private key (PEM); generated when absent. */
  privateKey?: string;
  /** The service account's email (default genway-mock@<project>.iam.gserviceaccount.com). */
  clientEmail?: string;
  /** Known model ids per publisher; another gets 404 NOT_FOUND. Default: any. */
  models?: { anthropic?: string[]; google?: string[] };
  /**
   * `anthropic_version` values accepted in Claude bodies. Default `vertex-2023-10-16` (Google's documented value) and
   * `2026-10-21`, which @anthropic-ai/vertex-sdk 1.x copies into the body from the base SDK's anthropic-version header.
   */
  anthropicVersions?: string[];
}

/** One access token grant: the JWT's claims and the token issued for them. */
export interface TokenGrant {
  claims: Record<string, unknown>;
  token: string;
  scopes: string[];
  expiresAt: number;
}

const GOOGLE_STATUS: Record<number, [string, string]> = {
  400: ['INVALID_ARGUMENT', 'Request contains an invalid argument.'],
  401: [
    'UNAUTHENTICATED',
    'Request had invalid authentication credentials. Expected OAuth 2 access token, login cookie or other valid authentication credential. See https://developers.google.com/identity/sign-in/web/devconsole-project.',
  ],
  403: ['PERMISSION_DENIED', 'Permission denied on resource (or it may not exist).'],
  404: ['NOT_FOUND', 'Requested entity was not found.'],
  429: [
    'RESOURCE_EXHAUSTED',
    'Resource exhausted. Please try again later. Please refer to https://cloud.google.com/vertex-ai/generative-ai/docs/error-code-429 for more details.',
  ],
  499: ['CANCELLED', 'The operation was cancelled.'],
  500: ['INTERNAL', 'Internal error encountered.'],
  503: ['UNAVAILABLE', 'The service is currently unavailable.'],
  504: ['DEADLINE_EXCEEDED', 'Deadline expired before operation could complete.'],
};
const GOOGLE_CODE_BY_STATUS = Object.fromEntries(
  Object.entries(GOOGLE_STATUS).map(([code, [s]]) => [s, +code]),
);

/** Claude on Vertex answers these in Anthropic's error shape; the rest come from Vertex in Google's. */
const ANTHROPIC_ERRORS: Record<number, [string, string]> = {
  400: ['invalid_request_error', 'Invalid request.'],
  500: ['api_error', 'Internal server error'],
  529: ['overloaded_error', 'Overloaded'],
};
const ANTHROPIC_STREAM_ERRORS: Record<string, string> = {
  overloaded_error: 'Overloaded',
  api_error: 'Internal server error',
  rate_limit_error: 'Rate limited',
};

const base64url = (text: string) => Buffer.from(text, 'base64url');

/**
 * Google Vertex AI on loopback: an OAuth 2.0 token endpoint that takes JWT-bearer grants signed with the service
 * account's key (verified with its public key), and the Vertex API for Claude (rawPredict, streamRawPredict, count
 * tokens) and Gemini (generateContent, streamGenerateContent, countTokens), which takes only live tokens it issued.
 */
export class MockVertex extends LoopbackService {
  readonly project: string;
  readonly region: string;
  /** Seconds a new token lives; change it between calls to see refreshes. */
  expiresIn: number;
  readonly grants: TokenGrant[] = [];
  readonly clientEmail: string;
  private readonly privateKeyPem: string;
  private readonly publicKey: KeyObject;
  private readonly tokens = new Map<string, TokenGrant>();
  private readonly models: { anthropic?: ReadonlySet<string>; google?: ReadonlySet<string> };
  private readonly anthropicVersions: ReadonlySet<string>;

  constructor(options: MockVertexOptions = {}) {
    super();
    this.project = options.project ?? 'genway-mock';
    this.region = options.region ?? 'us-east5';
    this.expiresIn = options.expiresIn ?? 3599;
    this.clientEmail = options.clientEmail ?? `genway-mock@${this.project}.iam.gserviceaccount.com`;
    const privateKey = options.privateKey
      ? createPrivateKey(options.privateKey)
      : generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey;
    this.privateKeyPem = privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
    this.publicKey = createPublicKey(privateKey);
    this.models = {
      anthropic: options.models?.anthropic && new Set(options.models.anthropic),
      google: options.models?.google && new Set(options.models.google),
    };
    this.anthropicVersions = new Set(options.anthropicVersions ?? ['vertex-2023-10-16', '2026-10-21']);
  }

  /** Successful token grants so far. */
  get tokenGrants(): number {
    return this.grants.length;
  }

  /** The mock's own token endpoint (the key's token_uri). */
  get tokenUri(): string {
    if (!this.url) throw new Error('start() the MockVertex first: the key names its token URL');
    return `${this.url}/token`;
  }

  /** The service account key JSON, its token_uri this mock's /token. */
  serviceAccount(): ServiceAccountKey {
    const der = this.publicKey.export({ type: 'spki', format: 'der' });
    const digest = createHash('sha256').update(der).digest();
    return {
      type: 'service_account',
      project_id: this.project,
      private_key_id: createHash('sha1').update(der).digest('hex'),
      private_key: this.privateKeyPem,
      client_email: this.clientEmail,
      client_id: `1${BigInt(`0x${digest.subarray(0, 8).toString('hex')}`)
        .toString()
        .padStart(20, '0')}`,
      auth_uri: 'https://accounts.google.com/o/oauth2/auth',
      token_uri: this.tokenUri,
      auth_provider_x509_cert_url: 'https://www.googleapis.com/oauth2/v1/certs',
      client_x509_cert_url: `https://www.googleapis.com/robot/v1/metadata/x509/${encodeURIComponent(this.clientEmail)}`,
      universe_domain: 'googleapis.com',
    };
  }

  /** Ends every token issued so far: the next API call with one gets 401. */
  expireTokens(): void {
    for (const grant of this.tokens.values()) grant.expiresAt = 0;
  }

  protected override async handle(req: CloudReceived, res: MockReply): Promise<void> {
    if (req.path === '/token') return this.grant(req, res);
    return super.handle(req, res);
  }

  /** POST /token: the JWT-bearer grant, as oauth2.googleapis.com checks it. */
  private grant(req: CloudReceived, res: MockReply): void {
    req.auth = 'jwt-bearer';
    const refuse = (status: number, error: string, description: string) => {
      req.authError = description;
      sendJson(
        res,
        status,
        { error, error_description: description },
        { 'content-type': 'application/json; charset=utf-8' },
      );
    };
    if (req.method !== 'POST') return refuse(405, 'invalid_request', 'Method not allowed.');
    const form = new URLSearchParams(req.body.toString('utf8'));
    const grantType = form.get('grant_type');
    if (grantType !== JWT_BEARER)
      return refuse(400, 'unsupported_grant_type', `Invalid grant_type: ${grantType ?? ''}`);
    const parts = (form.get('assertion') ?? '').split('.');
    let claims: Record<string, unknown>;
    try {
      const head = JSON.parse(base64url(parts[0]).toString('utf8')) as { alg?: string };
      claims = JSON.parse(base64url(parts[1]).toString('utf8')) as Record<string, unknown>;
      const signed = Buffer.from(`${parts[0]}.${parts[1]}`);
      if (
        parts.length !== 3 ||
        head.alg !== 'RS256' ||
        !verify('RSA-SHA256', signed, this.publicKey, base64url(parts[2]))
      ) {
        return refuse(400, 'invalid_grant', 'Invalid JWT Signature.');
      }
    } catch {
      return refuse(400, 'invalid_grant', 'Invalid JWT Signature.');
    }
    if (claims.iss !== this.clientEmail)
      return refuse(400, 'invalid_grant', 'Invalid grant: account not found');
    if (claims.aud !== GOOGLE_TOKEN_URL) {
      return refuse(
        400,
        'invalid_grant',
        `Invalid JWT: Failed audience check. The expected value was ${GOOGLE_TOKEN_URL}`,
      );
    }
    const now = Math.floor(Date.now() / 1000);
    const iat = Number(claims.iat);
    const exp = Number(claims.exp);
    if (!(iat <= now + 60 && exp > now && exp > iat && exp - iat <= 3600)) {
      return refuse(
        400,
        'invalid_grant',
        'Invalid JWT: Token must be a short-lived token (60 minutes) and in a reasonable timeframe. Check your iat and exp values in the JWT claim.',
      );
    }
    const scopes = typeof claims.scope === 'string' ? claims.scope.split(' ').filter(Boolean) : [];
    if (scopes.length === 0)
      return refuse(400, 'invalid_scope', 'Invalid OAuth scope or ID token audience provided.');
    const token = `ya29.c.${randomBytes(48).toString('base64url')}`;
    const grant: TokenGrant = { claims, token, scopes, expiresAt: Date.now() + this.expiresIn * 1000 };
    this.grants.push(grant);
    this.tokens.set(token, grant);
    req.verified = true;
    sendJson(
      res,
      200,
      { access_token: token, expires_in: this.expiresIn, token_type: 'Bearer' },
      {
        'content-type': 'application/json; charset=utf-8',
        'cache-control': 'no-cache, no-store, max-age=0, must-revalidate',
      },
    );
  }

  protected authenticate(req: CloudReceived): Verdict {
    const authorization = header(req, 'authorization') ?? '';
    const token = authorization.match(/^Bearer (\S+)$/i)?.[1];
    const grant = token ? this.tokens.get(token) : undefined;
    if (!grant || Date.now() >= grant.expiresAt) {
      const reason = token
        ? 'Request had invalid authentication credentials. Expected OAuth 2 access token, login cookie or other valid authentication credential. See https://developers.google.com/identity/sign-in/web/devconsole-project.'
        : 'Request is missing required authentication credential. Expected OAuth 2 access token, login cookie or other valid authentication credential. See https://developers.google.com/identity/sign-in/web/devconsole-project.';
      return {
        ok: false,
        auth: token ? 'oauth' : null,
        reason,
        reject: (res) =>
          sendJson(
            res,
            401,
            { error: { code: 401, message: reason, status: 'UNAUTHENTICATED' } },
            { 'www-authenticate': 'Bearer realm="https://accounts.google.com/"' },
          ),
      };
    }
    if (!grant.scopes.includes(CLOUD_PLATFORM_SCOPE)) {
      const reason = 'Request had insufficient authentication scopes.';
      return {
        ok: false,
        auth: 'oauth',
        reason,
        reject: (res) =>
          sendJson(res, 403, {
            error: {
              code: 403,
              message: reason,
              status: 'PERMISSION_DENIED',
              details: [
                {
                  '@type': 'type.googleapis.com/google.rpc.ErrorInfo',
                  reason: 'ACCESS_TOKEN_SCOPE_INSUFFICIENT',
                  domain: 'googleapis.com',
                  metadata: {
                    service: 'aiplatform.googleapis.com',
                    method: 'google.cloud.aiplatform.v1.PredictionService.RawPredict',
                  },
                },
              ],
            },
          }),
      };
    }
    return { ok: true, auth: 'oauth' };
  }

  protected async answer(req: CloudReceived, res: MockReply): Promise<void> {
    const route = req.path.match(
      /^\/(v1|v1beta1)\/projects\/([^/]+)\/locations\/([^/]+)\/publishers\/(anthropic|google)\/models\/([^/]+)$/,
    );
    const tail = route ? decodeURIComponent(route[5]) : '';
    const colon = tail.lastIndexOf(':');
    if (req.method !== 'POST' || !route || colon < 0) {
      return googleError(res, 404, `The requested URL ${req.path} was not found on this server.`);
    }
    const [, , project, region, publisher] = route;
    const model = tail.slice(0, colon);
    const method = tail.slice(colon + 1);
    if (project !== this.project || region !== this.region) {
      return googleError(
        res,
        404,
        `Publisher Model \`projects/${project}/locations/${region}/publishers/${publisher}/models/${model}\` not found.`,
      );
    }
    const body = jsonBody(req);
    const markers = readMarkers(req.body.toString('utf8'));
    if (publisher === 'anthropic') return this.claude(res, model, method, body, markers);
    return this.gemini(req, res, model, method, body, markers);
  }

  private async claude(
    res: MockReply,
    model: string,
    method: string,
    body: Record<string, unknown> | undefined,
    markers: Markers,
  ): Promise<void> {
    if (model === 'count-tokens' && method === 'rawPredict') {
      if (!body || typeof body.model !== 'string' || !Array.isArray(body.messages)) {
        return anthropicError(res, 400, 'messages: Field required');
      }
      return sendJson(res, 200, {
        input_tokens: mockPromptTokens({ system: body.system, messages: body.messages }),
      });
    }
    if (method !== 'rawPredict' && method !== 'streamRawPredict') {
      return googleError(res, 404, `Method ${method} is not found for publisher model ${model}.`);
    }
    if (this.models.anthropic && !this.models.anthropic.has(model))
      return this.unknownModel(res, 'anthropic', model);
    const invalid = this.invalidClaudeBody(body);
    if (invalid || !body) return anthropicError(res, 400, invalid ?? 'Invalid request.');
    if (markers.status) {
      return ANTHROPIC_ERRORS[markers.status]
        ? anthropicError(res, markers.status)
        : googleError(res, markers.status);
    }
    const n = this.nextSequence();
    const answer = claudeAnswer({
      id: `msg_vrtx_01Mock${String(n).padStart(18, '0')}`,
      toolUseId: `toolu_vrtx_01Mock${String(n).padStart(16, '0')}`,
      model,
      body,
      markers,
    });
    if (method === 'rawPredict' && body.stream !== true) {
      return sendJson(res, 200, answer.message, { 'content-type': 'application/json; charset=UTF-8' });
    }
    // As Anthropic's API streams: named events, a ping after message_start.
    const events = answer.events();
    events.splice(1, 0, { type: 'ping' });
    const frames = events.map((event) => `event: ${String(event.type)}\ndata: ${JSON.stringify(event)}\n\n`);
    res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache' });
    if (!markers.streamError) {
      await writeInPieces(res, frames);
      return void res.end();
    }
    await writeInPieces(res, frames.slice(0, 4));
    if (markers.streamError === 'drop') return void res.destroy();
    const error = {
      type: 'error',
      error: {
        type: markers.streamError,
        message: ANTHROPIC_STREAM_ERRORS[markers.streamError] ?? `mock ${markers.streamError}`,
      },
    };
    res.end(`event: error\ndata: ${JSON.stringify(error)}\n\n`);
  }

  /** What Claude on Vertex says of a body it refuses (Anthropic's error shape), or undefined. */
  private invalidClaudeBody(body: Record<string, unknown> | undefined): string | undefined {
    if (!body) return 'Invalid JSON body.';
    if ('model' in body) return 'model: Extra inputs are not permitted';
    if (typeof body.anthropic_version !== 'string' || !this.anthropicVersions.has(body.anthropic_version)) {
      return `anthropic_version: Input should be ${[...this.anthropicVersions].map((v) => `'${v}'`).join(' or ')}`;
    }
    if (!('max_tokens' in body)) return 'max_tokens: Field required';
    if (!Array.isArray(body.messages)) return 'messages: Field required';
    return undefined;
  }

  private async gemini(
    req: CloudReceived,
    res: MockReply,
    model: string,
    method: string,
    body: Record<string, unknown> | undefined,
    markers: Markers,
  ): Promise<void> {
    if (!['generateContent', 'streamGenerateContent', 'countTokens'].includes(method)) {
      return googleError(res, 404, `Method ${method} is not found for publisher model ${model}.`);
    }
    if (this.models.google && !this.models.google.has(model)) return this.unknownModel(res, 'google', model);
    if (!body || !Array.isArray(body.contents) || body.contents.length === 0) {
      return googleError(res, 400, 'Unable to submit request because it has an empty contents field.');
    }
    if (method === 'countTokens') {
      const totalTokens = mockPromptTokens({
        contents: body.contents,
        systemInstruction: body.systemInstruction,
      });
      const characters = JSON.stringify(body.contents).length;
      return sendJson(res, 200, {
        totalTokens,
        totalBillableCharacters: characters,
        promptTokensDetails: [{ modality: 'TEXT', tokenCount: totalTokens }],
      });
    }
    if (markers.status) return googleError(res, markers.status);
    const n = this.nextSequence();
    const answer = geminiAnswer({
      model,
      responseId: `mockResponse${String(n).padStart(10, '0')}`,
      body,
      markers,
    });
    if (method === 'generateContent') {
      return sendJson(res, 200, answer.response, { 'content-type': 'application/json; charset=UTF-8' });
    }
    const chunks = answer.chunks();
    const sse = new URL(req.url, 'http://mock').searchParams.get('alt') === 'sse';
    // Vertex frames SSE events with CRLF pairs; without alt=sse it streams one JSON array.
    const frames = sse
      ? chunks.map((chunk) => `data: ${JSON.stringify(chunk)}\r\n\r\n`)
      : chunks.map((chunk, i) => `${i === 0 ? '[' : ',\r\n'}${JSON.stringify(chunk)}`).concat(']');
    res.writeHead(200, {
      'content-type': sse ? 'text/event-stream' : 'application/json; charset=UTF-8',
      'content-disposition': 'attachment',
    });
    if (!markers.streamError) {
      await writeInPieces(res, frames);
      return void res.end();
    }
    await writeInPieces(res, frames.slice(0, 1));
    if (markers.streamError === 'drop') return void res.destroy();
    const code = GOOGLE_CODE_BY_STATUS[markers.streamError] ?? 500;
    const [status, message] = GOOGLE_STATUS[code] ?? GOOGLE_STATUS[500];
    const error = JSON.stringify({ error: { code, message, status } });
    res.end(sse ? `data: ${error}\r\n\r\n` : `,\r\n${error}]`);
  }

  private unknownModel(res: MockReply, publisher: string, model: string): void {
    googleError(
      res,
      404,
      `Publisher Model \`projects/${this.project}/locations/${this.region}/publishers/${publisher}/models/${model}\` was not found or your project does not have access to it. Please ensure you are using a valid model version. For more information, see: https://cloud.google.com/vertex-ai/generative-ai/docs/learn/model-versions`,
    );
  }
}

/** An error in Google's shape: `{"error":{"code","message","status"}}`. */
function googleError(res: MockReply, code: number, message?: string): void {
  const [status, text] = GOOGLE_STATUS[code] ?? ['UNKNOWN', `mock status ${code}`];
  sendJson(
    res,
    code,
    { error: { code, message: message ?? text, status } },
    { 'content-type': 'application/json; charset=UTF-8' },
  );
}

/** An error in Anthropic's shape, as Claude on Vertex answers what reaches the model. */
function anthropicError(res: MockReply, status: number, message?: string): void {
  const [type, text] = ANTHROPIC_ERRORS[status] ?? ['api_error', `mock status ${status}`];
  sendJson(res, status, { type: 'error', error: { type, message: message ?? text } });
}

export interface VertexAuthClientOptions {
  /** Refresh a token this long before it expires (google-auth-library's default: 5 minutes). */
  eagerRefreshThresholdMillis?: number;
}

/**
 * google-auth-library's own JWT client for a service account key, its grants sent to the key's token_uri.
 *
 * google-auth-library 10.x posts every JWT-bearer grant to the hardcoded https://oauth2.googleapis.com/token (and
 * signs that URL as the JWT's `aud`), ignoring the key's token_uri. The client's gaxios transporter runs request
 * interceptors on the prepared request just before it is sent; one interceptor moves that one URL to token_uri and
 * leaves every other request alone. The grant itself (JWT claims, RS256 signature, form body, caching, refresh,
 * sharing one grant between concurrent callers) stays the library's. The transporter fetches with Node's fetch.
 */
export function vertexAuthClient(key: ServiceAccountKey, options: VertexAuthClientOptions = {}): JWT {
  // Node's own fetch: gaxios otherwise loads node-fetch with a dynamic import(), which jest's CommonJS VM refuses.
  const client = new JWT({
    scopes: [CLOUD_PLATFORM_SCOPE],
    transporterOptions: { fetchImplementation: fetch },
  });
  client.fromJSON(key);
  // Set directly: the constructor ignores a threshold of 0 (it tests the option for truthiness).
  if (options.eagerRefreshThresholdMillis !== undefined) {
    client.eagerRefreshThresholdMillis = options.eagerRefreshThresholdMillis;
  }
  const tokenUri = new URL(key.token_uri);
  if (tokenUri.href !== GOOGLE_TOKEN_URL) {
    client.transporter.interceptors.request.add({
      resolved: async (request) => {
        if (request.url.href === GOOGLE_TOKEN_URL) request.url = new URL(tokenUri);
        return request;
      },
    });
  }
  return client;
}
