import { request } from 'undici';
import type { ModelRoute } from '../catalog/config';
import type { TaskModel } from '../catalog/types';
import type { TaskRecord } from '../tasks/types';
import { ProviderError, upstreamFailCode, type JobProgress, type Provider, type StartedJob } from './types';

interface Envelope<T> {
  code: number;
  message: string;
  data: T;
}

interface UpstreamStatus {
  taskId: string;
  state: 'pending' | 'processing' | 'success' | 'failed';
  resultJson?: string;
  failCode?: string;
  failMsg?: string;
  billing?: { outputVideoSeconds: number };
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
    throw new ProviderError(
      `route ${route.id}: ${(err as Error).name === 'TimeoutError' ? 'timed out' : (err as Error).message}`,
      true,
    );
  }
  const text = await res.body.text();
  if (res.statusCode >= 500)
    throw new ProviderError(`route ${route.id}: upstream answered ${res.statusCode}`, true);
  let envelope: Envelope<T>;
  try {
    envelope = JSON.parse(text) as Envelope<T>;
  } catch {
    throw new ProviderError(
      `route ${route.id}: upstream answered ${res.statusCode} without an envelope`,
      true,
    );
  }
  if (res.statusCode !== 200 || envelope.code !== 200) {
    throw new ProviderError(
      `route ${route.id}: upstream refused (${envelope.code}): ${envelope.message}`,
      res.statusCode === 429,
    );
  }
  return envelope.data;
}

/** The relay: a route whose upstream speaks this same task API (another Genway, or a compatible service). */
export const relayProvider: Provider = {
  startsInline: false,

  async start(task: TaskRecord, model: TaskModel, route: ModelRoute): Promise<StartedJob> {
    const name = encodeURIComponent(route.upstreamModel ?? model.id);
    const { taskId } = await call<{ taskId: string }>(route, 'POST', `/generateTask/${name}`, {
      input: task.prepared.input,
    });
    return {
      upstreamTaskId: taskId,
      firstCheckMs: route.firstPollMs ?? task.prepared.polling.firstPollSeconds * 1000,
    };
  },

  async check(task: TaskRecord, model: TaskModel, route: ModelRoute): Promise<JobProgress> {
    const name = encodeURIComponent(route.upstreamModel ?? model.id);
    const id = encodeURIComponent(task.route!.upstreamTaskId!);
    const upstream = await call<UpstreamStatus>(route, 'GET', `/statusTask/${name}?taskId=${id}`);
    if (upstream.state === 'success') {
      const { resultUrls } = JSON.parse(upstream.resultJson ?? '{"resultUrls":[]}') as {
        resultUrls: string[];
      };
      return {
        state: 'success',
        resultUrls,
        outputSeconds: upstream.billing?.outputVideoSeconds ?? task.prepared.output.seconds,
      };
    }
    if (upstream.state === 'failed') {
      return {
        state: 'failed',
        failCode: upstream.failCode ?? upstreamFailCode(model),
        failMsg: upstream.failMsg ?? 'Upstream failure',
      };
    }
    return { state: 'running' };
  },

  /** The upstream speaks this API, so it has the same cancel route. */
  async cancel(task: TaskRecord, route: ModelRoute): Promise<void> {
    if (!task.route?.upstreamTaskId) return;
    await call(route, 'POST', `/tasks/${encodeURIComponent(task.route.upstreamTaskId)}/cancel`, {});
  },

  checkIntervalMs(task: TaskRecord, route: ModelRoute): number {
    return route.pollIntervalMs ?? task.prepared.polling.intervalSeconds * 1000;
  },
};
