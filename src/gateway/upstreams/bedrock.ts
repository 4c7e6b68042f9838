import type * as HashNode from '@smithy/hash-node';
import type * as Signing from '@smithy/signature-v4';
import { z } from 'zod';
import { upstreamId, url } from '../../config/fields';
import { messagesIn } from './envelopes';
import type { UpstreamType } from './types';

const schema = z
  .strictObject({
    id: upstreamId,
    type: z.literal('bedrock'),
    region: z.string().regex(/^[a-z]{2}(-[a-z0-9]+)+-\d+$/, 'an AWS region, e.g. us-east-1'),
    /** Default `https://bedrock-runtime.{region}.amazonaws.com`. */
    baseUrl: url.optional(),
    accessKeyId: z.string().min(1).optional(),
    secretAccessKey: z.string().min(1).optional(),
    sessionToken: z.string().min(1).optional(),
    /** A Bedrock API key, sent as `Authorization: Bearer` instead of a SigV4 signature. */
    apiKey: z.string().min(1).optional(),
  })
  .superRefine((c, ctx) => {
    const signing = c.accessKeyId !== undefined || c.secretAccessKey !== undefined;
    if (c.apiKey !== undefined && signing) {
      ctx.addIssue({
        code: 'custom',
        path: ['apiKey'],
        message: 'set apiKey or accessKeyId + secretAccessKey, not both',
      });
    } else if (c.apiKey === undefined && (c.accessKeyId === undefined || c.secretAccessKey === undefined)) {
      ctx.addIssue({
        code: 'custom',
        path: [c.accessKeyId === undefined ? 'accessKeyId' : 'secretAccessKey'],
        message: 'required: a Bedrock credential (accessKeyId and secretAccessKey, or apiKey)',
      });
    }
  });

type BedrockConfig = z.infer<typeof schema>;

const baseUrlOf = (c: BedrockConfig) => c.baseUrl ?? `https://bedrock-runtime.${c.region}.amazonaws.com`;

/**
 * AWS Bedrock's runtime: Anthropic models through InvokeModel (`/model/{id}/invoke`) and
 * InvokeModelWithResponseStream (`/invoke-with-response-stream`, an AWS event stream), signed with SigV4 by AWS's own
 * signer (service `bedrock`; it derives the signing key once a day and caches it), or with a Bedrock API key.
 */
export const bedrockUpstream: UpstreamType<BedrockConfig> = {
  type: 'bedrock',
  schema,
  // One member: the access key id (not secret) or the API key, which the pool's metrics name by a hash.
  pool: (c) => ({ baseUrl: baseUrlOf(c), apiKeys: [c.apiKey ?? c.accessKeyId!] }),
  bind(config) {
    const signer =
      config.apiKey === undefined
        ? // AWS's signer loads with the first Bedrock upstream that signs, not at every start.
          // eslint-disable-next-line @typescript-eslint/no-require-imports
          new (require('@smithy/signature-v4') as typeof Signing).SignatureV4({
            service: 'bedrock',
            region: config.region,
            credentials: {
              accessKeyId: config.accessKeyId!,
              secretAccessKey: config.secretAccessKey!,
              sessionToken: config.sessionToken,
            },
            // eslint-disable-next-line @typescript-eslint/no-require-imports
            sha256: (require('@smithy/hash-node') as typeof HashNode).Hash.bind(null, 'sha256'),
          })
        : undefined;
    return {
      format: () => 'messages',
      serves: (format, op) => format === 'messages' && op === 'create',
      request(call, model) {
        const { body, headers, drop } = messagesIn(call, 'bedrock', model);
        const action = call.stream ? 'invoke-with-response-stream' : 'invoke';
        return {
          // As AWS's SDK writes it: the model id escaped (`:` too), then signed over that path.
          path: `/model/${encodeURIComponent(model)}/${action}`,
          body: Buffer.from(body),
          headers: [
            ...headers,
            ['accept', call.stream ? 'application/vnd.amazon.eventstream' : 'application/json'],
          ],
          drop,
          framing: call.stream ? 'eventstream' : 'sse',
        };
      },
      authorize(req, key) {
        if (!signer) return [['authorization', `Bearer ${key.key}`]];
        const { url: target } = req;
        // What is signed: the host, the body's type and what it accepts; other headers travel unsigned.
        const headers: Record<string, string> = { host: target.host };
        for (const [name, value] of req.headers) {
          if (name === 'content-type' || name === 'accept') headers[name] = value;
        }
        return signer
          .sign({
            method: req.method,
            protocol: target.protocol,
            hostname: target.hostname,
            port: target.port ? Number(target.port) : undefined,
            path: target.pathname,
            query: {},
            headers,
            body: req.body,
          })
          .then((signed) =>
            Object.entries(signed.headers).filter(
              ([name]) => name !== 'host' && name !== 'content-type' && name !== 'accept',
            ),
          );
      },
      errorShape: 'aws',
    };
  },
};
