import type { z } from 'zod';
import type { PoolConfig, VendorKey } from '../key-pool';

/**
 * The wire formats of model calls: what a client speaks (a route's inbound format) and what a model at an upstream
 * speaks. Bedrock's InvokeModel and Vertex's rawPredict speak `messages` in an envelope of their own (the model in
 * the path, the API version in the body); Vertex's Gemini models and Azure speak `generate` and the OpenAI formats
 * at paths of their own.
 */
export type Format = 'messages' | 'chat' | 'responses' | 'generate' | 'embeddings';

/** A generation call, or a count of its prompt's tokens (messages' count_tokens, Gemini's countTokens). */
export type Op = 'create' | 'count';

/** Where a format's fields that are not the request itself travel: the first-party API's way, or a cloud's. */
export type Envelope = 'native' | 'bedrock' | 'vertex';

type Json = Record<string, unknown>;

/**
 * One model call as a route hands it to a target: in the target's format already (translated when the caller's
 * differs), with what the caller's envelope said beside the body.
 */
export interface ModelCall {
  format: Format;
  op: Op;
  /** The body as received (or as translated), and parsed. */
  text: string;
  json: Json;
  /** The envelope `text` is in. */
  envelope: Envelope;
  stream: boolean;
  /** Messages: the API version the caller asked for (a header on Anthropic's API, a body field on the clouds'). */
  version?: string;
  /** Messages: the beta features the caller asked for. */
  betas: readonly string[];
  /** Generate: the caller's query (Gemini's `alt=sse`), kept for a target of the same envelope. */
  query?: string;
}

/** What one try sends: the path after the upstream's base path, its body, and the headers its API needs. */
export interface UpstreamRequest {
  path: string;
  body: Buffer;
  /** Headers this call needs (besides auth), names in lower case: they replace any the client sent. */
  headers: readonly (readonly [string, string])[];
  /** Client headers that must not go up (moved into the body, or the caller's format's own). */
  drop?: readonly string[];
  /** How a streamed answer is framed: server-sent events, or AWS's binary event stream. */
  framing: 'sse' | 'eventstream';
}

/** The shape an upstream's error bodies have (read to answer a caller of another shape in its own). */
export type ErrorShape = 'anthropic' | 'openai' | 'google' | 'aws';

/** The request one try sends, as auth needs it (a signature covers it). */
export interface SignableRequest {
  method: string;
  url: URL;
  headers: readonly (readonly [string, string])[];
  body: Buffer;
}

/** A configured upstream of some type, bound: what routes call it with. */
export interface UpstreamCalls {
  /** The format a call in `wanted` reaches `model` in here: `wanted` when the model takes it, else its own. */
  format(model: string, wanted: Format): Format;
  /** Whether it serves `op` in `format` (a format without a count endpoint does not). */
  serves(format: Format, op: Op): boolean;
  /** The request for a call in a format it speaks, to `model`. */
  request(call: ModelCall, model: string): UpstreamRequest;
  /**
   * Auth headers for one try on `key`: at once when the key travels as a header, a promise when it must be signed
   * (SigV4) or a token fetched (once per token's life, shared by concurrent calls).
   */
  authorize(
    req: SignableRequest,
    key: VendorKey,
  ): (readonly [string, string])[] | Promise<(readonly [string, string])[]>;
  errorShape: ErrorShape;
  /** Stops background work (token refreshes). */
  close?(): void;
}

/** What binding needs: the config's place for error messages, files it may read. */
export interface BindContext {
  /** `gateway.upstreams[i]`: named in a config error. */
  path: string;
}

/** How an upstream type is configured and bound: one module of ./ per type, one entry in ./index.ts. */
export interface UpstreamType<C extends { id: string; type: string } = { id: string; type: string }> {
  readonly type: C['type'];
  /** Its entry of `gateway.upstreams` (with `id` and `type`). */
  readonly schema: z.ZodType<C> & z.core.$ZodTypeDiscriminable;
  /**
   * Its key pool (src/gateway/key-pool.ts): base URL, keys, fallbacks. Where the credential is not a key sent as is
   * (a signing key, a service account), the pool holds one member naming it, and `bind`'s `authorize` applies it.
   */
  pool(config: C): PoolConfig;
  bind(config: C, context: BindContext): UpstreamCalls;
}
