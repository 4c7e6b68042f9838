import { useState } from 'preact/hooks';
import { api } from '../../api';
import { PALETTE, StackedBars, type Series } from '../../chart';
import {
  Card,
  Empty,
  Link,
  ErrorNotice,
  Loading,
  numeric,
  SelectField,
  Stat,
  TableHead,
  TableWrap,
} from '../../components';
import { count, usd } from '../../format';
import { useLoad } from '../../hooks';
import { navigate } from '../../router';
import { lastDays, tokensOf, type UsageReport, type UsageRow } from './data';

type Measure = 'spend' | 'tokens' | 'requests';
type Source = 'all' | 'gateway' | 'tasks';

const RANGES: Record<string, string> = { 14: 'Last 14 days', 30: 'Last 30 days' };
const MEASURES: Record<Measure, string> = { spend: 'Spend (USD)', tokens: 'Tokens', requests: 'Requests' };
const SOURCES: Record<Source, string> = { all: 'Gateway and tasks', gateway: 'LLM gateway', tasks: 'Tasks' };
/** Models drawn in their own colour; the rest are summed as "Other models". */
const TOP_MODELS = 7;

function valueOf(row: UsageRow, measure: Measure, source: Source): number {
  if (measure === 'tokens') return tokensOf(row);
  const field = measure === 'spend' ? 'spendUsd' : 'requests';
  return source === 'all' ? row[field] : row[source][field];
}

function dayLabel(day: string): string {
  const date = new Date(`${day}T00:00:00Z`);
  return Number.isNaN(date.getTime())
    ? day
    : date.toLocaleDateString('en-GB', { day: 'numeric', month: 'short', timeZone: 'UTC' });
}

/** Days × models of one measure: the series (top models and "Other"), the values and the totals. */
function pivot(rows: UsageRow[], days: string[], measure: Measure, source: Source) {
  const byModel = new Map<string, number>();
  for (const row of rows) {
    const model = row.model ?? 'unknown';
    byModel.set(model, (byModel.get(model) ?? 0) + valueOf(row, measure, source));
  }
  const ranked = [...byModel.entries()].filter(([, v]) => v > 0).sort((a, b) => b[1] - a[1]);
  const shown = ranked.length > TOP_MODELS + 1 ? ranked.slice(0, TOP_MODELS) : ranked;
  const series: Series[] = shown.map(([model], i) => ({ key: model, label: model, color: PALETTE[i] }));
  const hasOther = shown.length < ranked.length;
  if (hasOther)
    series.push({ key: '\u0000other', label: 'Other models', color: PALETTE[PALETTE.length - 1] });
  const index = new Map(series.map((s, i) => [s.key, i]));
  const dayIndex = new Map(days.map((d, i) => [d, i]));
  const values = series.map(() => days.map(() => 0));
  for (const row of rows) {
    const c = row.day === undefined ? undefined : dayIndex.get(row.day);
    if (c === undefined) continue;
    const s = index.get(row.model ?? 'unknown') ?? (hasOther ? series.length - 1 : undefined);
    if (s === undefined) continue;
    values[s][c] += valueOf(row, measure, source);
  }
  const dayTotals = days.map((_, c) => values.reduce((sum, v) => sum + v[c], 0));
  return { series, values, dayTotals, total: dayTotals.reduce((a, b) => a + b, 0) };
}

/**
 * Spend, tokens or requests per day by model for the last 14 or 30 days, gateway and tasks together or apart;
 * from `path` (/api/v1/usage for an account, /admin/v1/usage for the whole service).
 */
export function UsageChart({ path, scope }: { path: string; scope: string }) {
  const [range, setRange] = useState(14);
  const [measure, setMeasure] = useState<Measure>('spend');
  const [source, setSource] = useState<Source>('all');
  const days = lastDays(range);
  const from = days[0];
  const to = days[days.length - 1];
  const report = useLoad(
    () => api<UsageReport>(path, { query: { from, to, groupBy: 'day,model' } }),
    [path, scope, from, to],
  );
  const effectiveSource = measure === 'tokens' ? 'all' : source;
  const format = measure === 'spend' ? usd : count;
  const data = report.data ? pivot(report.data.rows, days, measure, effectiveSource) : undefined;
  /** The request log of one model's calls on one day (none for "Other models"). */
  const callsOf = (day: string, model: string): string | undefined =>
    model.startsWith('\u0000')
      ? undefined
      : `/logs?${new URLSearchParams({
          model,
          ...(effectiveSource === 'all' ? {} : { surface: effectiveSource }),
          from: day,
          to: day,
        }).toString()}`;
  const what = measure === 'spend' ? 'Spend' : MEASURES[measure];
  const sourceText =
    measure === 'tokens' ? '' : effectiveSource === 'all' ? '' : `, ${SOURCES[effectiveSource]} only`;
  const label = data
    ? `${what} per day by model${sourceText}, ${from} to ${to} (UTC): ${format(data.total)} in all. ` +
      data.series.map((s, i) => `${s.label} ${format(data.values[i].reduce((a, b) => a + b, 0))}`).join(', ')
    : '';
  const totals = report.data?.totals;
  return (
    <Card title="Usage by day and model">
      <div class="filters">
        <SelectField
          id="chart-range"
          label="Days"
          options={RANGES}
          value={range}
          onValue={(value) => setRange(Number(value))}
        />
        <SelectField
          id="chart-measure"
          label="Show"
          options={MEASURES}
          value={measure}
          onValue={setMeasure}
        />
        {measure === 'tokens' ? (
          <p class="hint filters-note">Tokens are counted on LLM gateway calls (input and output).</p>
        ) : (
          <SelectField
            id="chart-source"
            label="Source"
            options={SOURCES}
            value={source}
            onValue={setSource}
          />
        )}
      </div>
      <ErrorNotice error={report.error} />
      {!report.data && report.loading ? <Loading what="Loading usage" /> : null}
      {data && totals ? (
        <>
          <div class="stats stats-compact">
            <Stat
              label={`Gateway spend, ${range} days`}
              value={usd(totals.gateway.spendUsd)}
              note={`${count(totals.gateway.requests)} calls`}
            />
            <Stat
              label={`Task spend, ${range} days`}
              value={usd(totals.tasks.spendUsd)}
              note={`${count(totals.tasks.requests)} tasks`}
            />
            <Stat
              label={`Tokens, ${range} days`}
              value={count(tokensOf(totals))}
              note={`${count(totals.inputTokens)} in · ${count(totals.outputTokens)} out`}
            />
          </div>
          {data.total > 0 ? (
            <>
              <StackedBars
                label={label}
                categories={days}
                series={data.series}
                values={data.values}
                format={format}
                categoryLabel={dayLabel}
                onSegment={(day, model) => {
                  const to = callsOf(day, model);
                  if (to) navigate(to);
                }}
              />
              <details class="chart-data">
                <summary>Show the numbers as a table</summary>
                <TableWrap label={`${what} per day by model`}>
                  <caption class="visually-hidden">
                    {what} per day by model{sourceText}
                  </caption>
                  <TableHead
                    columns={['Day (UTC)', ...data.series.map((s) => numeric(s.label)), numeric('Total')]}
                  />
                  <tbody>
                    {days.map((day, c) => (
                      <tr key={day}>
                        <th scope="row">{day}</th>
                        {data.series.map((s, i) => (
                          <td class="num" key={s.key}>
                            {callsOf(day, s.key) && data.values[i][c] > 0 ? (
                              <Link to={callsOf(day, s.key)!} aria-label={`${s.label} on ${day}: its calls`}>
                                {format(data.values[i][c])}
                              </Link>
                            ) : (
                              format(data.values[i][c])
                            )}
                          </td>
                        ))}
                        <td class="num">{format(data.dayTotals[c])}</td>
                      </tr>
                    ))}
                  </tbody>
                </TableWrap>
              </details>
            </>
          ) : (
            <Empty>
              No {what.toLowerCase()}
              {sourceText} in the last {range} days.
            </Empty>
          )}
        </>
      ) : null}
    </Card>
  );
}
