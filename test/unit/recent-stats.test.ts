import { createMetrics } from '../../src/observability/metrics';
import { quantileMs, RecentStats, surfaceOf } from '../../src/observability/recent-stats';
import { MemoryRecentStats } from '../../src/store/memory/recent-stats';

describe('recent request stats', () => {
  test('surfaces by route template: the gateway mounts and the task API; the rest is neither', () => {
    expect(surfaceOf('/v1/messages')).toBe('gateway');
    expect(surfaceOf('/v1beta/models/:model\\:generateContent')).toBe('gateway');
    expect(surfaceOf('/openai/*')).toBe('gateway');
    expect(surfaceOf('/v1/*')).toBe('gateway');
    expect(surfaceOf('/api/v1/generateTask/:model')).toBe('tasks');
    expect(surfaceOf('/api/v1/*')).toBe('tasks');
    expect(surfaceOf('/admin/v1/accounts')).toBeNull();
    expect(surfaceOf('/console')).toBeNull();
    expect(surfaceOf('/healthz')).toBeNull();
    expect(surfaceOf('/v1x/messages')).toBeNull();
    expect(surfaceOf('unmatched')).toBeNull();
  });

  test('quantiles interpolate inside the bucket, as histogram_quantile does', () => {
    const bounds = [0.01, 0.1, 1];
    expect(quantileMs([0, 0, 0, 0], bounds, 0.5)).toBeNull();
    expect(quantileMs([10, 0, 0, 0], bounds, 0.5)).toBe(5);
    expect(quantileMs([0, 10, 0, 0], bounds, 0.5)).toBe(55);
    expect(quantileMs([50, 50, 0, 0], bounds, 0.99)).toBe(98.2);
    expect(quantileMs([0, 0, 0, 3], bounds, 0.5)).toBe(1000);
  });

  test('a fold takes only what the histogram gained since the last one, and survives a metrics reset', async () => {
    const metrics = createMetrics();
    const now = 1_800_000_000_000;
    const stats = new RecentStats(metrics, new MemoryRecentStats(), { now: () => now }, 0);
    const observe = (route: string, status: string, seconds: number) =>
      metrics.httpDuration.observe({ route, method: 'POST', status }, seconds);
    observe('/v1/messages', '200', 0.004);
    observe('/v1/messages', '502', 0.2);
    observe('/api/v1/tasks', '404', 0.001);
    observe('/admin/v1/accounts', '200', 0.001);
    let report = await stats.report();
    expect(report.surfaces.map((s) => [s.surface, s.requests, s.serverErrors, s.clientErrors])).toEqual([
      ['gateway', 2, 1, 0],
      ['tasks', 1, 0, 1],
    ]);
    expect(report.to).toBe(new Date(Math.floor(now / 60_000) * 60_000 + 60_000).toISOString());

    observe('/v1/messages', '200', 0.004);
    report = await stats.report();
    expect(report.surfaces[0]).toMatchObject({ requests: 3, serverErrors: 1, errorRate: 1 / 3 });
    expect((await stats.report()).surfaces[0].requests).toBe(3); // nothing new: nothing added

    metrics.httpDuration.reset();
    observe('/v1/messages', '200', 0.004);
    expect((await stats.report()).surfaces[0].requests).toBe(4);
  });
});
