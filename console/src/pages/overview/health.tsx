import { api } from '../../api';
import { Sparkline } from '../../chart';
import { Card, Empty, ErrorNotice, Loading } from '../../components';
import { count, ms, percent } from '../../format';
import { useInterval, useLoad } from '../../hooks';
import type { ServiceStats, SurfaceStats } from './data';

const SURFACE: Record<string, string> = { gateway: 'LLM gateway', tasks: 'Task API' };

function Surface({ stats, window }: { stats: SurfaceStats; window: number }) {
  const name = SURFACE[stats.surface] ?? stats.surface;
  const perMinute = stats.minutes.map((m) => m.requests);
  const peak = Math.max(0, ...perMinute);
  const rate = stats.errorRate ?? (stats.requests > 0 ? stats.serverErrors / stats.requests : null);
  return (
    <section class="surface" aria-labelledby={`surface-${stats.surface}`}>
      <h3 id={`surface-${stats.surface}`}>{name}</h3>
      <dl class="surface-figures">
        <div>
          <dt>Requests</dt>
          <dd>{count(stats.requests)}</dd>
        </div>
        <div>
          <dt>Error rate</dt>
          <dd class={rate !== null && rate >= 0.05 ? 'text-bad' : undefined}>{percent(rate)}</dd>
        </div>
        <div>
          <dt>5xx / 4xx</dt>
          <dd>
            {count(stats.serverErrors)} / {count(stats.clientErrors)}
          </dd>
        </div>
        <div>
          <dt>p50</dt>
          <dd>{ms(stats.latencyMs?.p50)}</dd>
        </div>
        <div>
          <dt>p95</dt>
          <dd>{ms(stats.latencyMs?.p95)}</dd>
        </div>
        <div>
          <dt>p99</dt>
          <dd>{ms(stats.latencyMs?.p99)}</dd>
        </div>
      </dl>
      {perMinute.length > 1 ? (
        <div class="spark">
          <Sparkline
            label={`${name}: requests per minute over the last ${window} minutes, peak ${count(peak)} a minute`}
            values={perMinute}
          />
          <div class="spark-scale muted" aria-hidden="true">
            <span>{window} min ago</span>
            <span>peak {count(peak)}/min</span>
            <span>now</span>
          </div>
        </div>
      ) : null}
    </section>
  );
}

/** Error rate and latency of the last hour per surface, from Genway's own request metrics; refreshed every 30 s. */
export function ServiceHealth({ path, scope }: { path: string; scope: string }) {
  const stats = useLoad(() => api<ServiceStats>(path), [path, scope]);
  useInterval(stats.reload, 30_000);
  const window = stats.data?.windowMinutes ?? 60;
  return (
    <Card title={`Service, last ${window === 60 ? 'hour' : `${window} minutes`}`}>
      <p class="hint">
        Error rate: server errors (5xx) among all answers; a client's mistakes (4xx) are counted apart.
        Latency: how long Genway took to answer a request.
      </p>
      <ErrorNotice error={stats.error} />
      {!stats.data && stats.loading ? <Loading what="Loading service stats" /> : null}
      {stats.data ? (
        stats.data.surfaces.length === 0 ? (
          <Empty>No requests in the last hour.</Empty>
        ) : (
          <div class="surfaces">
            {stats.data.surfaces.map((s) => (
              <Surface key={s.surface} stats={s} window={window} />
            ))}
          </div>
        )
      ) : null}
    </Card>
  );
}
