import { api } from '../api';
import { Card, ErrorNotice, Link, Loading, PageHeader, Stat } from '../components';
import { count, isoDay, usd } from '../format';
import { useInterval, useLoad } from '../hooks';
import { accountInView, session } from '../session';
import { BudgetMeter } from './overview/budgets';
import {
  monthStart,
  type AccountSummary,
  type BudgetView,
  type UsageReport,
  type UsageRow,
} from './overview/data';
import { ServiceHealth } from './overview/health';
import { UsageChart } from './overview/usage-chart';

interface AccountSelf {
  accountId: string;
  name: string;
  keyId: string;
  balanceUsd: number;
}

/** Spend of today and of this month from a by-day report of this month. */
function spendOf(report: UsageReport | undefined) {
  if (!report) return undefined;
  const today = isoDay();
  const todayRow: UsageRow | undefined = report.rows.find((r) => r.day === today);
  return { today: todayRow, month: report.totals };
}

function splitNote(row: UsageRow | undefined) {
  if (!row) return 'Nothing spent';
  return `Gateway ${usd(row.gateway.spendUsd)} · tasks ${usd(row.tasks.spendUsd)}`;
}

function useMonthUsage(path: string, scope: string) {
  const report = useLoad(
    () => api<UsageReport>(path, { query: { from: monthStart(), to: isoDay(), groupBy: 'day' } }),
    [path, scope],
  );
  useInterval(report.reload, 60_000);
  return report;
}

function PeriodBudgets({
  budgets,
  period,
  id,
}: {
  budgets: BudgetView[];
  period: 'day' | 'month';
  id: string;
}) {
  const matching = budgets.filter((b) => b.period === period);
  if (matching.length === 0)
    return <p class="hint">No {period === 'day' ? 'daily' : 'monthly'} budget is set.</p>;
  return (
    <>
      {matching.map((b, i) => (
        <BudgetMeter key={`${b.scope}-${b.keyId ?? ''}`} budget={b} id={`${id}-${i}`} />
      ))}
    </>
  );
}

/** The account in view: balance, spend against budgets, usage by day and model, the service's last hour. */
function AccountOverview({ accountId, asAdmin }: { accountId: string; asAdmin: boolean }) {
  const account = useLoad(() => api<AccountSelf>('/api/v1/account'), [accountId]);
  // The admin sees every budget of the account (its keys' too); a key sees its own and the account's.
  const budgetsPath = asAdmin
    ? `/admin/v1/accounts/${encodeURIComponent(accountId)}/budgets`
    : '/api/v1/budgets';
  const budgets = useLoad(() => api<{ budgets: BudgetView[] }>(budgetsPath), [budgetsPath]);
  const usage = useMonthUsage('/api/v1/usage', accountId);
  useInterval(account.reload, 60_000);
  useInterval(budgets.reload, 60_000);
  const spend = spendOf(usage.data);
  const list = budgets.data?.budgets ?? [];
  const windows = list.filter((b) => b.period === 'window');
  return (
    <>
      <PageHeader title="Overview" />
      {asAdmin ? (
        <p class="lead muted">
          Account <strong>{account.data?.name ?? accountId}</strong> <span class="mono">({accountId})</span>,
          as the admin. <Link to={`/admin/accounts/${encodeURIComponent(accountId)}`}>Account settings</Link>
        </p>
      ) : null}
      <Card title="Balance and spend">
        <ErrorNotice error={account.error} />
        <ErrorNotice error={usage.error} />
        <ErrorNotice error={budgets.error} />
        <div class="spend-grid">
          <div class="spend-col">
            <Stat
              label="Balance"
              value={account.data ? usd(account.data.balanceUsd) : account.loading ? '…' : '—'}
              note={account.data ? account.data.name : undefined}
            />
          </div>
          <div class="spend-col">
            <Stat
              label="Spend today (UTC)"
              value={spend ? usd(spend.today?.spendUsd ?? 0) : usage.loading ? '…' : '—'}
              note={spend ? splitNote(spend.today) : undefined}
            />
            {budgets.data ? <PeriodBudgets budgets={list} period="day" id="budget-day" /> : null}
          </div>
          <div class="spend-col">
            <Stat
              label="Spend this month (UTC)"
              value={spend ? usd(spend.month.spendUsd) : usage.loading ? '…' : '—'}
              note={spend ? splitNote(spend.month) : undefined}
            />
            {budgets.data ? <PeriodBudgets budgets={list} period="month" id="budget-month" /> : null}
          </div>
        </div>
        {windows.length > 0 ? (
          <div class="budget-windows">
            <h3>Budget windows</h3>
            {windows.map((b, i) => (
              <BudgetMeter key={`${b.scope}-${b.keyId ?? ''}-${i}`} budget={b} id={`budget-window-${i}`} />
            ))}
          </div>
        ) : null}
        {budgets.loading && !budgets.data ? <Loading what="Loading budgets" /> : null}
      </Card>
      <UsageChart path="/api/v1/usage" scope={accountId} />
      <ServiceHealth path="/api/v1/stats" scope={accountId} />
    </>
  );
}

/** The admin with no account picked: every account together. */
function ServiceOverview() {
  const accounts = useLoad(() => api<{ accounts: AccountSummary[] }>('/admin/v1/accounts'), []);
  const usage = useMonthUsage('/admin/v1/usage', '*');
  useInterval(accounts.reload, 60_000);
  const spend = spendOf(usage.data);
  const list = accounts.data?.accounts;
  return (
    <>
      <PageHeader title="Overview" />
      <p class="lead muted">
        All accounts together. To see one account&apos;s budgets, keys and tasks, pick it in the{' '}
        <Link to="/admin">list of accounts</Link>.
      </p>
      <Card title="All accounts">
        <ErrorNotice error={accounts.error} />
        <ErrorNotice error={usage.error} />
        <div class="stats">
          <Stat label="Accounts" value={list ? count(list.length) : '…'} />
          <Stat
            label="Total balance"
            value={list ? usd(list.reduce((sum, a) => sum + a.balanceUsd, 0)) : '…'}
          />
          <Stat
            label="Spend today (UTC)"
            value={spend ? usd(spend.today?.spendUsd ?? 0) : usage.loading ? '…' : '—'}
            note={spend ? splitNote(spend.today) : undefined}
          />
          <Stat
            label="Spend this month (UTC)"
            value={spend ? usd(spend.month.spendUsd) : usage.loading ? '…' : '—'}
            note={spend ? splitNote(spend.month) : undefined}
          />
        </div>
      </Card>
      <UsageChart path="/admin/v1/usage" scope="*" />
      <ServiceHealth path="/admin/v1/stats" scope="*" />
    </>
  );
}

export function Overview(_props: { params: Record<string, string> }) {
  const s = session();
  const accountId = accountInView(s);
  if (accountId)
    return <AccountOverview key={accountId} accountId={accountId} asAdmin={s?.kind === 'admin'} />;
  return <ServiceOverview />;
}
