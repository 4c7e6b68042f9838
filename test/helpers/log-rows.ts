import type { RequestLogRow } from '../../src/logs/types';

/**
 * A gateway call's request-log row for the ring's and the COPY encoder's tests: varied by `i` (account, key, model,
 * status), with a non-ASCII user agent, and `over` for the columns a test names.
 */
export const logRow = (i: number, over: Partial<RequestLogRow> = {}): RequestLogRow => ({
  time: 1_800_000_000_000 + i,
  requestId: `r${i}`,
  accountId: `acct_${i % 3}`,
  keyId: `key_${i % 5}`,
  surface: 'gateway',
  method: 'POST',
  route: '/v1/messages',
  model: i % 2 ? 'claude' : 'gpt',
  upstream: 'anthropic',
  upstreamModel: 'claude-x',
  status: i % 7 === 0 ? 429 : 200,
  errorType: null,
  inputTokens: i,
  outputTokens: 2 * i,
  cachedTokens: 0,
  cacheWriteTokens: 0,
  reasoningTokens: null,
  costMicros: 10 * i,
  latencyMs: 1.5,
  ttfbMs: null,
  userAgent: 'agent/1 ü ✓',
  clientIp: '127.0.0.1',
  taskId: null,
  batchId: null,
  requestBytes: null,
  responseBytes: null,
  ...over,
});
