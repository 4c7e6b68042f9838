/**
 * Token counts of one LLM call, by how each is priced. Every field is a whole number of tokens; the kinds do not
 * overlap (whatever the vendor's own sums include).
 */
export interface TokenUsage {
  /** Prompt tokens at the input price: neither read from nor written to the vendor's cache. */
  input: number;
  /** Output tokens at the output price, reasoning apart. */
  output: number;
  /** Prompt tokens served from the vendor's cache. */
  cacheRead: number;
  /** Prompt tokens written to the vendor's cache. */
  cacheWrite: number;
  /** Reasoning (thinking) tokens, where the vendor reports them apart. */
  reasoning: number;
  /**
   * Of `cacheWrite`, the tokens written to be kept an hour (Anthropic's `ttl: "1h"`), which cost more than the
   * default five minutes: priced apart, counted in `cacheWrite` in usage records.
   */
  cacheWrite1h?: number;
  /**
   * Calls of the vendor's server-side tools it bills per call (web searches), by the vendor's name for them:
   * priced per call (`toolCallUsd`), not recorded in usage records.
   */
  tools?: Record<string, number>;
  /**
   * The service tier the vendor says it ran the call at (OpenAI's `service_tier`: `flex`, `priority`): the tokens
   * cost the model's prices times the tier's factor (`serviceTierFactor`). Not recorded in usage records.
   */
  tier?: string;
}

/** Cumulative gateway usage of one key for one model. */
export interface ModelUsage extends TokenUsage {
  requests: number;
}

export interface UsageStore {
  /** Adds calls and their tokens to the key's record for a model (one round trip in Redis). */
  add(keyId: string, model: string, totals: ModelUsage): Promise<void>;
  /** Model name -> totals; empty when the key has made no gateway call. */
  get(keyId: string): Promise<Record<string, ModelUsage>>;
}

export const USAGE_FIELDS = ['requests', 'input', 'output', 'cacheRead', 'cacheWrite', 'reasoning'] as const;

/** A usage record with every count at zero. */
export function emptyUsage(): ModelUsage {
  return { requests: 0, input: 0, output: 0, cacheRead: 0, cacheWrite: 0, reasoning: 0 };
}
