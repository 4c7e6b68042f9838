import { readFileSync } from 'node:fs';
import type { JWT } from 'google-auth-library';
import type * as GoogleAuth from 'google-auth-library';
import { z } from 'zod';
import { upstreamId, url } from '../../config/fields';
import { ConfigError } from '../../config/config-error';
import { messagesIn } from './envelopes';
import { generateAction } from './gemini';
import type { UpstreamType } from './types';

/** A service account's key, as Google Cloud hands it out (the JSON file). */
const serviceAccountSchema = z.looseObject({
  type: z.literal('service_account'),
  client_email: z.string().min(1),
  private_key: z.string().includes('PRIVATE KEY', { message: 'a PEM private key' }),
  private_key_id: z.string().optional(),
  token_uri: url.default('https://oauth2.googleapis.com/token'),
});
export type ServiceAccount = z.infer<typeof serviceAccountSchema>;

const schema = z
  .strictObject({
    id: upstreamId,
    type: z.literal('vertex'),
    projectId: z.string().regex(/^[a-z][a-z0-9-]{4,28}[a-z0-9]$/, 'a Google Cloud project id'),
    /** A Vertex AI location (`us-east5`, `europe-west1`, `global`). */
    region: z.string().regex(/^[a-z0-9-]+$/, 'a Vertex AI location, e.g. us-east5'),
    /** Default `https://{region}-aiplatform.googleapis.com` (`https://aiplatform.googleapis.com` for `global`). */
    baseUrl: url.optional(),
    credentials: serviceAccountSchema.optional(),
    credentialsFile: z.string().min(1).optional(),
  })
  .refine((c) => (c.credentials === undefined) !== (c.credentialsFile === undefined), {
    message: 'required: credentials (a service-account key) or credentialsFile (its path), one of the two',
    path: ['credentials'],
  });

type VertexConfig = z.infer<typeof schema>;

const baseUrlOf = (c: VertexConfig) =>
  c.baseUrl ??
  (c.region === 'global'
    ? 'https://aiplatform.googleapis.com'
    : `https://${c.region}-aiplatform.googleapis.com`);

/** The URL google-auth-library sends every service-account grant to (its own constant). */
const GOOGLE_TOKEN_URL = 'https://oauth2.googleapis.com/token';
const SCOPE = 'https://www.googleapis.com/auth/cloud-platform';
/** A token with less than this left is replaced in the background; calls use it meanwhile. */
const REFRESH_AHEAD_MS = 5 * 60_000;
/** A token with less than this left is not used: the call waits for the new one. */
const USABLE_MS = 30_000;

/** The key of `credentialsFile` or `credentials`: a bad file stops start-up with a line naming the key. */
function serviceAccountOf(config: VertexConfig, path: string): ServiceAccount {
  if (config.credentials) return config.credentials;
  let text: string;
  try {
    text = readFileSync(config.credentialsFile!, 'utf8');
  } catch (err) {
    throw new ConfigError(
      `config: ${path}.credentialsFile: cannot read ${config.credentialsFile} (${(err as NodeJS.ErrnoException).code ?? 'error'})`,
    );
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new ConfigError(`config: ${path}.credentialsFile: ${config.credentialsFile} is not JSON`);
  }
  const result = serviceAccountSchema.safeParse(parsed);
  if (!result.success) {
    const issue = result.error.issues[0];
    throw new ConfigError(
      `config: ${path}.credentialsFile: ${issue.path.join('.') || 'key'}: ${issue.message}`,
    );
  }
  return result.data;
}

/**
 * OAuth access tokens of one service account, obtained and refreshed by Google's own auth library (a JWT-bearer
 * grant signed with the key, sent to the key's `token_uri`). Every call shares the one token; a new one is fetched
 * once, by whichever call first finds the old one near its end, and the others go on with the old one meanwhile.
 */
export class ServiceAccountTokens {
  private readonly client: JWT;
  private token: { value: string; expires: number } | undefined;
  private pending: Promise<string> | undefined;

  constructor(account: ServiceAccount) {
    // Google's auth library loads with the first service account, not at every start.
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    this.client = new (require('google-auth-library') as typeof GoogleAuth).JWT({
      email: account.client_email,
      key: account.private_key,
      keyId: account.private_key_id,
      scopes: [SCOPE],
      eagerRefreshThresholdMillis: REFRESH_AHEAD_MS,
      // Node's own fetch: otherwise gaxios loads node-fetch with a dynamic import, which some runtimes refuse.
      transporterOptions: { fetchImplementation: fetch },
    });
    // google-auth-library sends the grant to Google's token URL whatever the key says; the key's own (a private
    // endpoint, a test's) is where it goes.
    const tokenUri = account.token_uri;
    if (tokenUri !== GOOGLE_TOKEN_URL) {
      this.client.transporter.interceptors.request.add({
        resolved: async (options) => {
          if (options.url.href === GOOGLE_TOKEN_URL) options.url = new URL(tokenUri);
          return options;
        },
      });
    }
  }

  /** The current token at once, or the promise of the next one. */
  get(): string | Promise<string> {
    const token = this.token;
    const left = token ? token.expires - Date.now() : 0;
    if (token && left > REFRESH_AHEAD_MS) return token.value;
    const next = (this.pending ??= this.fetch().finally(() => (this.pending = undefined)));
    if (token && left > USABLE_MS) {
      next.catch(() => undefined); // the next call that needs it sees the failure
      return token.value;
    }
    return next;
  }

  private async fetch(): Promise<string> {
    const { token } = await this.client.getAccessToken();
    if (!token) throw new Error('the token endpoint answered no access_token');
    const expires = this.client.credentials.expiry_date ?? Date.now() + 3_600_000;
    this.token = { value: token, expires };
    return token;
  }
}

/**
 * Google Vertex AI: Claude models through rawPredict and streamRawPredict (publisher `anthropic`), Gemini models
 * through generateContent and streamGenerateContent (publisher `google`), with a service account's OAuth token.
 */
export const vertexUpstream: UpstreamType<VertexConfig> = {
  type: 'vertex',
  schema,
  // One member: the service account (its email; never the key), for cooldowns and metrics.
  pool: (c) => ({ baseUrl: baseUrlOf(c), apiKeys: [c.credentials?.client_email ?? c.credentialsFile!] }),
  bind(config, context) {
    const tokens = new ServiceAccountTokens(serviceAccountOf(config, context.path));
    const at = `/v1/projects/${config.projectId}/locations/${config.region}/publishers`;
    // Vertex's model versions are named with `@` (`claude-sonnet-4-5@20250929`), which a path segment takes as is.
    const segment = (model: string) => encodeURIComponent(model).replace(/%40/g, '@');
    return {
      format: (model) => (/^claude/.test(model) ? 'messages' : 'generate'),
      serves: (format) => format === 'messages' || format === 'generate',
      request(call, model) {
        if (call.format === 'generate') {
          return {
            path: `${at}/google/models/${segment(model)}:${generateAction(call)}`,
            body: Buffer.from(call.text),
            headers: [],
            framing: 'sse',
          };
        }
        const { body, headers, drop } = messagesIn(call, 'vertex', model);
        const action =
          call.op === 'count'
            ? 'count-tokens:rawPredict'
            : `${segment(model)}:${call.stream ? 'streamRawPredict' : 'rawPredict'}`;
        return {
          path: `${at}/anthropic/models/${action}`,
          body: Buffer.from(body),
          headers,
          drop,
          framing: 'sse',
        };
      },
      authorize() {
        const token = tokens.get();
        return typeof token === 'string'
          ? [['authorization', `Bearer ${token}`]]
          : token.then((value) => [['authorization', `Bearer ${value}`] as const]);
      },
      errorShape: 'google',
    };
  },
};
