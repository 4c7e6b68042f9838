import { request } from 'undici';
import type { ModelRoute } from '../catalog/config';
import type { TaskRecord } from '../tasks/types';

/** Why a relay call failed: `retryable` (5xx, timeout, network) moves on to the next route; the rest end the task. */
export class RelayError extends Error {
  constructor(
    message: string,
    readonly retryable: boolean,
  ) {
    super(message);
  }
}

interface Envelope<T> {
  code: number;
  message: string;
  data: T;
}

export interface UpstreamStatus {
  taskId: string;
  state: 'pending' | 'processing' | 'success' | 'failed';
  resultJson?: string;
  failCode?: string;
  failMsg?: string;
  billing?: { outputVideoSeconds: number };
}

/**
 * The routes a task tries, in order: `value` cheapest first, `official` the official ones first, `auto` as
 * configured; every strategy fails over to the remaining routes.
 */
export function orderRoutes(routes: readonly ModelRoute[], strategy: TaskRecord['provider']): ModelRoute[] {
  const list = [...routes];
  if (strategy === 'value') return list.sort((a, b) => a.costFactor - b.costFactor);
  if (strategy === 'official') return list.sort((a, b) => Number(b.official) - Number(a.official));
  return list;
}

/**
 * Calls an upstream that speaks this same task API. The upstream is operator configuration (not client input), so
 * it is reached directly, private addresses included, with the route's own timeout.
 */
async function call<T>(route: ModelRoute, method: 'GET' | 'POST', path: string, body?: unknown): Promise<T> {
  const base = route.baseUrl!.replace(/\/+$/, '');
  let res;
  try {
    res = await request(`${base}/api/v1${path}`, {
      method,
      headers: {
        authorization: `Bearer ${route.apiKey ?? ''}`,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: AbortSignal.timeout(route.timeoutMs),
    });
  } catch (err) {
    throw new RelayError(
      `route ${route.id}: ${(err as Error).name === 'TimeoutError' ? 'timed out' : (err as Error).message}`,
      true,
    );
  }
  const text = await res.body.text();
  if (res.statusCode >= 500)
    throw new RelayError(`route ${route.id}: upstream answered ${res.statusCode}`, true);
  let envelope: Envelope<T>;
  try {
    envelope = JSON.parse(text) as Envelope<T>;
  } catch {
    throw new RelayError(`route ${route.id}: upstream answered ${res.statusCode} without an envelope`, true);
  }
  if (res.statusCode !== 200 || envelope.code !== 200) {
    throw new RelayError(
      `route ${route.id}: upstream refused (${envelope.code}): ${envelope.message}`,
      res.statusCode === 429,
    );
  }
  return envelope.data;
}

export function submitUpstream(
  route: ModelRoute,
  model: string,
  input: Record<string, unknown>,
): Promise<{ taskId: string }> {
  return call(route, 'POST', `/generateTask/${encodeURIComponent(route.upstreamModel ?? model)}`, { input });
}

export function pollUpstream(route: ModelRoute, model: string, taskId: string): Promise<UpstreamStatus> {
  const name = encodeURIComponent(route.upstreamModel ?? model);
  return call(route, 'GET', `/statusTask/${name}?taskId=${encodeURIComponent(taskId)}`);
}

/** Asks the upstream to cancel its task (the upstream speaks this API, so it has the same cancel route). */
export async function cancelUpstream(route: ModelRoute, taskId: string): Promise<void> {
  await call(route, 'POST', `/tasks/${encodeURIComponent(taskId)}/cancel`, {});
}
