import type { Clock } from '../clock';
import type { Logger } from './logger';
import type { Metrics } from './metrics';

/** The surfaces the console reports on: the LLM gateway and the task API. */
export const SURFACES = ['gateway', 'tasks'] as const;
export type Surface = (typeof SURFACES)[number];

/** One minute of one surface: answered requests, 5xx and 4xx among them, and latency per histogram bucket. */
export interface MinuteCounts {
  requests: number;
  serverErrors: number;
  clientErrors: number;
  /** Per-bucket (not cumulative) counts, the request histogram's buckets plus the overflow slot. */
  buckets: number[];
}

/** Where the folds of every replica meet: per-minute rows (epoch minutes), kept a little over the window. */
export interface RecentStatsStore {
  add(minute: number, counts: Partial<Record<Surface, MinuteCounts>>): Promise<void>;
  /** The rows of these minutes ({} for a minute nobody wrote); `slots` latency buckets each. */
  read(minutes: number[], slots: number): Promise<Partial<Record<Surface, MinuteCounts>>[]>;
}

export const WINDOW_MINUTES = 60;
const MINUTE_MS = 60_000;

const GATEWAY_MOUNTS = ['/v1', '/v1beta', '/v1alpha', '/upload', '/anthropic', '/openai', '/gemini'];

/** The surface of a route label (route templates, see src/http/request-context.ts), or null for the rest. */
export function surfaceOf(route: string): Surface | null {
  if (route.startsWith('/api/v1/') || route === '/api/v1/*') return 'tasks';
  const slash = route.indexOf('/', 1);
  const mount = slash === -1 ? route : route.slice(0, slash);
  return GATEWAY_MOUNTS.includes(mount) ? 'gateway' : null;
}

export function emptyCounts(slots: number): MinuteCounts {
  return { requests: 0, serverErrors: 0, clientErrors: 0, buckets: new Array<number>(slots).fill(0) };
}

export function addCounts(into: MinuteCounts, from: MinuteCounts): void {
  into.requests += from.requests;
  into.serverErrors += from.serverErrors;
  into.clientErrors += from.clientErrors;
  from.buckets.forEach((n, i) => (into.buckets[i] = (into.buckets[i] ?? 0) + n));
}

/**
 * The q-quantile of a bucketed distribution in ms, interpolated inside its bucket as Prometheus'
 * histogram_quantile does; the overflow slot answers its lower bound. Null without observations.
 */
export function quantileMs(buckets: readonly number[], bounds: readonly number[], q: number): number | null {
  const total = buckets.reduce((a, b) => a + b, 0);
  if (total === 0) return null;
  const rank = q * total;
  let seen = 0;
  for (let i = 0; i < buckets.length; i++) {
    if (seen + buckets[i] >= rank && buckets[i] > 0) {
      if (i >= bounds.length) return bounds[bounds.length - 1] * 1000;
      const lower = i === 0 ? 0 : bounds[i - 1];
      const share = (rank - seen) / buckets[i];
      return Math.round((lower + (bounds[i] - lower) * share) * 1000 * 100) / 100;
    }
    seen += buckets[i];
  }
  return bounds[bounds.length - 1] * 1000;
}

export interface SurfaceReport {
  surface: Surface;
  requests: number;
  serverErrors: number;
  clientErrors: number;
  /** 5xx among all answers (a client's mistakes are not the service's errors); null without requests. */
  errorRate: number | null;
  latencyMs: { p50: number; p95: number; p99: number } | null;
  minutes: {
    at: string;
    requests: number;
    serverErrors: number;
    clientErrors: number;
    p95Ms: number | null;
  }[];
}

export interface RecentStatsReport {
  windowMinutes: number;
  stepSeconds: number;
  from: string;
  to: string;
  surfaces: SurfaceReport[];
}

/**
 * Error rate and latency of the last hour, per surface, from Genway's own request histogram: nothing is added to
 * the request path. Every `stepMs` (and before each report) this replica folds what its histogram gained since the
 * last fold into the current minute's row of the store; a report sums the rows of the last hour, so in Redis mode
 * it covers every replica (each one's last partial step excepted).
 */
export class RecentStats {
  private readonly previous = new Map<string, Float64Array>();
  private readonly surfaces = new Map<string, Surface | null>();
  private folding: Promise<void> = Promise.resolve();
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly metrics: Pick<Metrics, 'httpDuration'>,
    private readonly store: RecentStatsStore,
    private readonly clock: Clock,
    private readonly stepMs: number,
    private readonly logger?: Logger,
  ) {}

  start(): void {
    if (this.timer || this.stepMs <= 0) return;
    this.timer = setInterval(() => {
      this.fold().catch((err: unknown) => this.logger?.warn({ err }, 'folding recent request stats failed'));
    }, this.stepMs);
    this.timer.unref();
  }

  async close(): Promise<void> {
    clearInterval(this.timer);
    this.timer = undefined;
    await this.fold().catch(() => undefined);
  }

  /** Adds what the histogram gained since the last fold to the current minute (one fold at a time). */
  fold(): Promise<void> {
    const run = this.folding.then(() => this.foldNow());
    this.folding = run.catch(() => undefined);
    return run;
  }

  private async foldNow(): Promise<void> {
    const histogram = this.metrics.httpDuration;
    const slots = histogram.bounds.length + 1;
    const gained: Partial<Record<Surface, MinuteCounts>> = {};
    const taken: [string, Float64Array][] = [];
    for (const { id, labels, counts } of histogram.entries()) {
      let surface = this.surfaces.get(id);
      if (surface === undefined) this.surfaces.set(id, (surface = surfaceOf(labels.route)));
      if (!surface) continue;
      const before = this.previous.get(id);
      const delta = emptyCounts(slots);
      let any = 0;
      for (let i = 0; i < slots; i++) {
        // Below the last reading: the metrics were reset, so all of it is new.
        const d = before && counts[i] >= before[i] ? counts[i] - before[i] : counts[i];
        delta.buckets[i] = d;
        any += d;
      }
      if (any === 0) continue;
      taken.push([id, Float64Array.from(counts)]);
      delta.requests = any;
      const status = Number(labels.status);
      if (status >= 500) delta.serverErrors = any;
      else if (status >= 400) delta.clientErrors = any;
      addCounts((gained[surface] ??= emptyCounts(slots)), delta);
    }
    if (taken.length === 0) return;
    await this.store.add(Math.floor(this.clock.now() / MINUTE_MS), gained);
    for (const [id, counts] of taken) this.previous.set(id, counts);
  }

  async report(): Promise<RecentStatsReport> {
    await this.fold();
    const bounds = this.metrics.httpDuration.bounds;
    const slots = bounds.length + 1;
    const last = Math.floor(this.clock.now() / MINUTE_MS);
    const minutes = Array.from({ length: WINDOW_MINUTES }, (_, i) => last - WINDOW_MINUTES + 1 + i);
    const rows = await this.store.read(minutes, slots);
    const surfaces = SURFACES.map((surface): SurfaceReport => {
      const total = emptyCounts(slots);
      const perMinute = minutes.map((minute, i) => {
        const counts = rows[i][surface] ?? emptyCounts(slots);
        addCounts(total, counts);
        return {
          at: new Date(minute * MINUTE_MS).toISOString(),
          requests: counts.requests,
          serverErrors: counts.serverErrors,
          clientErrors: counts.clientErrors,
          p95Ms: quantileMs(counts.buckets, bounds, 0.95),
        };
      });
      const p50 = quantileMs(total.buckets, bounds, 0.5);
      return {
        surface,
        requests: total.requests,
        serverErrors: total.serverErrors,
        clientErrors: total.clientErrors,
        errorRate: total.requests ? total.serverErrors / total.requests : null,
        latencyMs:
          p50 === null
            ? null
            : {
                p50,
                p95: quantileMs(total.buckets, bounds, 0.95)!,
                p99: quantileMs(total.buckets, bounds, 0.99)!,
              },
        minutes: perMinute,
      };
    });
    return {
      windowMinutes: WINDOW_MINUTES,
      stepSeconds: this.stepMs / 1000,
      from: new Date(minutes[0] * MINUTE_MS).toISOString(),
      to: new Date((last + 1) * MINUTE_MS).toISOString(),
      surfaces,
    };
  }
}
