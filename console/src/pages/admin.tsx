import { useState } from 'preact/hooks';
import { api } from '../api';
import {
  ActionForm,
  Card,
  Details,
  Empty,
  ErrorNotice,
  InputField,
  Link,
  Loading,
  numeric,
  PageHeader,
  Stat,
  TableHead,
  TableWrap,
} from '../components';
import { count, isoDay, usd, when } from '../format';
import { useLoad, useSubmit } from '../hooks';
import { navigate } from '../router';
import { actAs } from '../session';
import { BudgetList } from './overview/budgets';
import { monthStart, type AccountSummary, type BudgetView, type UsageReport } from './overview/data';
import type { KeyView } from './keys';

interface AccountDetail extends AccountSummary {
  createdAt: number;
  webhookScheme: string;
  budgetWebhookUrl: string | null;
  keys: KeyView[];
}

/** Looks into one account: the console's account pages then show it. */
function openAs(accountId: string, path: string): void {
  actAs(accountId);
  navigate(path);
}

const accountPath = (accountId: string) => `/admin/accounts/${encodeURIComponent(accountId)}`;

function CreateAccount({ onCreated }: { onCreated(): void }) {
  const [name, setName] = useState('');
  const [balance, setBalance] = useState('');
  const [created, setCreated] = useState<{ accountId: string; name: string } | null>(null);
  const create = useSubmit(async () => {
    setCreated(null);
    const balanceUsd = balance.trim() === '' ? undefined : Number(balance);
    if (balanceUsd !== undefined && !(balanceUsd >= 0))
      throw new Error('Starting balance: a number of USD, 0 or more');
    const { accountId } = await api<{ accountId: string }>('/admin/v1/accounts', {
      method: 'POST',
      body: { name: name.trim(), balanceUsd },
    });
    setCreated({ accountId, name: name.trim() });
    setName('');
    setBalance('');
    onCreated();
  });
  return (
    <Card title="Create an account">
      <ActionForm
        submit={create}
        label="Create account"
        busy="Creating…"
        done={
          created ? (
            <>
              Created account <Link to={accountPath(created.accountId)}>{created.name}</Link> (
              <span class="mono">{created.accountId}</span>).
            </>
          ) : null
        }
      >
        <div class="form-row form-row-top">
          <InputField
            id="account-name"
            label="Account name"
            name="name"
            required
            maxLength={200}
            autocomplete="off"
            value={name}
            onValue={setName}
          />
          <InputField
            id="account-balance"
            label="Starting balance (USD, optional)"
            name="balanceUsd"
            type="number"
            inputMode="decimal"
            min={0}
            step="any"
            value={balance}
            onValue={setBalance}
          />
        </div>
      </ActionForm>
    </Card>
  );
}

/** Every account with its balance and this month's spend (one usage call grouped by account). */
export function Admin(_props: { params: Record<string, string> }) {
  const accounts = useLoad(() => api<{ accounts: AccountSummary[] }>('/admin/v1/accounts'), []);
  const usage = useLoad(
    () =>
      api<UsageReport>('/admin/v1/usage', {
        query: { groupBy: 'account', from: monthStart(), to: isoDay() },
      }),
    [],
  );
  const spend = new Map((usage.data?.rows ?? []).map((r) => [r.accountId, r.spendUsd]));
  const list = [...(accounts.data?.accounts ?? [])].sort((a, b) => a.name.localeCompare(b.name));
  return (
    <>
      <PageHeader title="Accounts" />
      <Card title="All accounts">
        <ErrorNotice error={accounts.error} />
        <ErrorNotice error={usage.error} />
        {accounts.data ? (
          <div class="stats stats-compact">
            <Stat label="Accounts" value={count(list.length)} />
            <Stat label="Total balance" value={usd(list.reduce((sum, a) => sum + a.balanceUsd, 0))} />
            <Stat
              label="Spend this month (UTC)"
              value={usage.data ? usd(usage.data.totals.spendUsd) : usage.loading ? '…' : '—'}
            />
          </div>
        ) : null}
        {!accounts.data && accounts.loading ? <Loading what="Loading accounts" /> : null}
        {accounts.data && list.length === 0 ? <Empty>No accounts yet. Create one below.</Empty> : null}
        {list.length > 0 ? (
          <TableWrap label="Accounts">
            <TableHead
              columns={['Name', 'Account ID', numeric('Balance'), numeric('Spend this month'), 'Actions']}
            />
            <tbody>
              {list.map((a) => (
                <tr key={a.accountId}>
                  <td class="wrap">
                    <Link to={accountPath(a.accountId)}>{a.name}</Link>
                  </td>
                  <td class="mono">{a.accountId}</td>
                  <td class="num">{usd(a.balanceUsd)}</td>
                  <td class="num">{usage.data ? usd(spend.get(a.accountId) ?? 0) : '—'}</td>
                  <td>
                    <button
                      type="button"
                      aria-label={`View ${a.name}`}
                      class="button secondary small"
                      onClick={() => openAs(a.accountId, '/')}
                    >
                      View
                    </button>
                  </td>
                </tr>
              ))}
            </tbody>
          </TableWrap>
        ) : null}
      </Card>
      <CreateAccount onCreated={accounts.reload} />
    </>
  );
}

function AddCredits({ accountId, onAdded }: { accountId: string; onAdded(): void }) {
  const [amount, setAmount] = useState('');
  const [reference, setReference] = useState('');
  const [result, setResult] = useState<{ amountUsd: number; balanceUsd: number } | null>(null);
  const add = useSubmit(async () => {
    setResult(null);
    const amountUsd = Number(amount);
    if (!(amountUsd > 0)) throw new Error('Amount: a number of USD above 0');
    const answer = await api<{ balanceUsd: number }>(
      `/admin/v1/accounts/${encodeURIComponent(accountId)}/credits`,
      { method: 'POST', body: { amountUsd, reference: reference.trim() || undefined } },
    );
    setResult({ amountUsd, balanceUsd: answer.balanceUsd });
    setAmount('');
    setReference('');
    onAdded();
  });
  return (
    <Card title="Add credits">
      <ActionForm
        submit={add}
        label="Add credits"
        busy="Adding…"
        done={
          result ? (
            <>
              Added {usd(result.amountUsd)}. The balance is now {usd(result.balanceUsd)}.
            </>
          ) : null
        }
      >
        <div class="form-row form-row-top">
          <InputField
            id="credit-amount"
            label="Amount (USD)"
            name="amountUsd"
            type="number"
            inputMode="decimal"
            min={0}
            step="any"
            required
            value={amount}
            onValue={setAmount}
          />
          <InputField
            id="credit-reference"
            label="Reference (optional)"
            hint="An invoice number, say. A credit sent again with the same reference is added once."
            name="reference"
            maxLength={200}
            autocomplete="off"
            value={reference}
            onValue={setReference}
          />
        </div>
      </ActionForm>
    </Card>
  );
}

/** One account for the admin: its settings, credits, budgets, and the way into its own pages. */
export function AdminAccount({ params }: { params: Record<string, string> }) {
  const accountId = params.accountId;
  const base = `/admin/v1/accounts/${encodeURIComponent(accountId)}`;
  const account = useLoad(() => api<AccountDetail>(base), [accountId]);
  const a = account.data;
  return (
    <>
      <PageHeader title={a ? a.name : accountId}>
        <button type="button" class="button secondary" onClick={() => openAs(accountId, '/')}>
          Open overview
        </button>
        <button type="button" class="button secondary" onClick={() => openAs(accountId, '/keys')}>
          Open keys
        </button>
        <button type="button" class="button secondary" onClick={() => openAs(accountId, '/tasks')}>
          Open tasks
        </button>
        <button type="button" class="button secondary" onClick={() => openAs(accountId, '/webhooks')}>
          Open webhooks
        </button>
      </PageHeader>
      <p class="lead">
        <Link to="/admin">← All accounts</Link>
      </p>
      <ErrorNotice error={account.error} />
      {!a && account.loading ? <Loading what="Loading the account" /> : null}
      {!a && account.error ? null : <AccountBody accountId={accountId} account={a} reload={account.reload} />}
    </>
  );
}

function AccountBody({
  accountId,
  account: a,
  reload,
}: {
  accountId: string;
  account: AccountDetail | undefined;
  reload(): void;
}) {
  const base = `/admin/v1/accounts/${encodeURIComponent(accountId)}`;
  const budgets = useLoad(() => api<{ budgets: BudgetView[] }>(`${base}/budgets`), [accountId]);
  const usage = useLoad(
    () =>
      api<UsageReport>('/admin/v1/usage', {
        query: { accountId, groupBy: 'day', from: monthStart(), to: isoDay() },
      }),
    [accountId],
  );
  const keys = a?.keys ?? [];
  const today = usage.data?.rows.find((r) => r.day === isoDay());
  return (
    <>
      <div class="grid">
        <Card title="Account">
          {a ? (
            <Details
              rows={[
                ['Name', a.name],
                ['Account ID', <span class="mono">{a.accountId}</span>],
                ['Balance', usd(a.balanceUsd)],
                ['Created', when(a.createdAt)],
                ['Webhook signing', a.webhookScheme],
                [
                  'Budget webhook',
                  a.budgetWebhookUrl ? (
                    <span class="mono">{a.budgetWebhookUrl}</span>
                  ) : (
                    <span class="muted">The default</span>
                  ),
                ],
                [
                  'Keys',
                  `${count(keys.filter((k) => k.status === 'active').length)} active, ${count(keys.length)} in all`,
                ],
              ]}
            />
          ) : null}
        </Card>
        <Card title="Spend">
          <ErrorNotice error={usage.error} />
          <div class="stats">
            <Stat
              label="Today (UTC)"
              value={usage.data ? usd(today?.spendUsd ?? 0) : usage.loading ? '…' : '—'}
            />
            <Stat
              label="This month (UTC)"
              value={usage.data ? usd(usage.data.totals.spendUsd) : usage.loading ? '…' : '—'}
              note={
                usage.data
                  ? `Gateway ${usd(usage.data.totals.gateway.spendUsd)} · tasks ${usd(usage.data.totals.tasks.spendUsd)}`
                  : undefined
              }
            />
          </div>
        </Card>
      </div>
      <AddCredits accountId={accountId} onAdded={reload} />
      <Card title="Budgets">
        <ErrorNotice error={budgets.error} />
        {!budgets.data && budgets.loading ? <Loading what="Loading budgets" /> : null}
        {budgets.data ? <BudgetList budgets={budgets.data.budgets} idPrefix="account-budget" /> : null}
      </Card>
    </>
  );
}
