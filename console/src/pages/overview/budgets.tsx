import { Badge, Empty } from '../../components';
import { usd, when } from '../../format';
import type { BudgetView } from './data';

const PERIOD: Record<BudgetView['period'], string> = { day: 'per day', month: 'per month', window: 'window' };

/** "Account budget, per day" / "Key key_… budget, window". */
export function budgetTitle(budget: BudgetView): string {
  return `${budget.scope === 'account' ? 'Account' : 'Key'} budget, ${PERIOD[budget.period]}`;
}

function share(budget: BudgetView): number {
  if (budget.limitUsd <= 0) return budget.spentUsd > 0 ? 1 : 0;
  return budget.spentUsd / budget.limitUsd;
}

/** A progress bar of spent against limit, with its numbers as text too. */
export function BudgetMeter({ budget, id }: { budget: BudgetView; id: string }) {
  const ratio = share(budget);
  const pct = Math.round(ratio * 1000) / 10;
  const tone = budget.exceeded
    ? 'bad'
    : budget.softPercent !== null && pct >= budget.softPercent
      ? 'warn'
      : 'ok';
  return (
    <div class="budget">
      <div class="budget-head">
        <span id={`${id}-label`} class="budget-title">
          {budgetTitle(budget)}
        </span>
        {budget.keyId ? <span class="mono muted small">{budget.keyId}</span> : null}
        {budget.exceeded ? <span class="badge badge-bad">exceeded</span> : null}
        {budget.period === 'window' && !budget.active ? <Badge status="not open" /> : null}
      </div>
      <div
        class={`meter meter-${tone}`}
        role="progressbar"
        aria-labelledby={`${id}-label`}
        aria-valuemin={0}
        aria-valuemax={100}
        aria-valuenow={Math.min(100, pct)}
        aria-valuetext={`${pct} % of ${usd(budget.limitUsd)} spent`}
      >
        <div class="meter-fill" style={{ width: `${Math.min(100, pct)}%` }} />
        {budget.softPercent !== null ? (
          <div class="meter-mark" style={{ left: `${budget.softPercent}%` }} aria-hidden="true" />
        ) : null}
      </div>
      <div class="budget-numbers">
        <span>
          {usd(budget.spentUsd)} of {usd(budget.limitUsd)} ({pct} %)
        </span>
        <span class="muted">{usd(budget.remainingUsd)} left</span>
      </div>
      <div class="muted budget-period">
        {budget.period === 'window'
          ? `${when(budget.periodStart)} to ${when(budget.periodEnd)}`
          : `Period ${budget.periodStart} (UTC)`}
        {budget.softPercent !== null ? ` · alert at ${budget.softPercent} %` : ''}
      </div>
    </div>
  );
}

/** Every budget of an account (and of the calling key). */
export function BudgetList({ budgets, idPrefix = 'budget' }: { budgets: BudgetView[]; idPrefix?: string }) {
  if (budgets.length === 0)
    return (
      <Empty>
        No budgets are set. An operator sets them with <code>genway admin budgets set</code>.
      </Empty>
    );
  return (
    <div class="budgets">
      {budgets.map((b, i) => (
        <BudgetMeter key={`${b.scope}-${b.keyId ?? ''}-${b.period}`} budget={b} id={`${idPrefix}-${i}`} />
      ))}
    </div>
  );
}
