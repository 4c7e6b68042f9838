import type { ComponentChildren } from 'preact';
import { api } from '../api';
import {
  Badge,
  Card,
  Details,
  ErrorNotice,
  InputField,
  Link,
  Loading,
  numeric,
  PageHeader,
  SelectField,
  TableHead,
  TableWrap,
} from '../components';
import { count, ms, usd, when, whenShort } from '../format';
import { useLoad } from '../hooks';
import { FilteredList, IdFilter, PagedList, useCursorPages } from '../lists';

/** A request-log row as GET /api/v1/logs answers it. */
export interface LogRow {
  logId: string;
  requestId: string;
  time: string;
  accountId: string | null;
  keyId: string | null;
  surface: 'gateway' | 'tasks';
  method: string;
  route: string;
  model: string | null;
  upstream: string | null;
  upstreamModel: string | null;
  status: number;
  errorType: string | null;
  inputTokens: number | null;
  outputTokens: number | null;
  cachedTokens: number | null;
  cacheWriteTokens: number | null;
  reasoningTokens: number | null;
  costUsd: number;
  latencyMs: number;
  ttfbMs: number | null;
  userAgent: string | null;
  clientIp: string | null;
  taskId: string | null;
  batchId: string | null;
  requestBytes: number | null;
  responseBytes: number | null;
  bodies?: { request: string | null; response: string | null } | null;
}

const FILTERS = ['model', 'keyId', 'status', 'surface', 'upstream', 'taskId', 'from', 'to'] as const;
type Filters = Record<(typeof FILTERS)[number], string>;
const STATUSES = {
  '2xx': 'Succeeded (2xx)',
  '4xx': 'Refused (4xx)',
  '429': 'Rate limited (429)',
  '5xx': 'Failed (5xx)',
};

/** The badge of a status: its tone from its class. */
function StatusBadge({ row }: { row: Pick<LogRow, 'status' | 'errorType'> }) {
  const tone = row.status >= 500 ? 'bad' : row.status >= 400 ? 'info' : row.errorType ? 'muted' : 'ok';
  return (
    <span class={`badge badge-${tone}`}>
      {row.status}
      {row.errorType ? ` ${row.errorType}` : ''}
    </span>
  );
}

export function Logs(_props: { params: Record<string, string> }) {
  return (
    <div>
      <PageHeader title="Request logs" />
      <p class="lead">
        One row per gateway call and task submission: status, tokens, cost and timing. Newest first.
      </p>
      <FilteredList
        names={FILTERS}
        label="Log filters"
        idPrefix="log-filter"
        days={['From', 'To']}
        fields={(field) => (
          <>
            <InputField
              id="log-filter-model"
              label="Model"
              type="text"
              spellcheck={false}
              {...field('model')}
            />
            <IdFilter id="log-filter-key" label="Key id" {...field('keyId')} />
            <SelectField
              id="log-filter-status"
              label="Status"
              any="Any status"
              options={STATUSES}
              {...field('status')}
            />
            <SelectField
              id="log-filter-surface"
              label="Surface"
              any="Gateway and tasks"
              options={{ gateway: 'Gateway', tasks: 'Tasks' }}
              {...field('surface')}
            />
            <SelectField
              id="log-filter-upstream"
              label="Upstream"
              any="Any upstream"
              options={['anthropic', 'openai', 'gemini', 'sandbox']}
              {...field('upstream')}
            />
            <IdFilter id="log-filter-task" label="Task id" {...field('taskId')} />
          </>
        )}
        list={LogList}
      />
    </div>
  );
}

function LogList({ filters }: { filters: Filters }) {
  const pages = useCursorPages<LogRow>('/api/v1/logs', filters, undefined, ['from', 'to']);
  return (
    <Card title="Calls">
      <PagedList
        pages={pages}
        noun="calls"
        count={(n) => `${n} call${n === 1 ? '' : 's'}`}
        empty={<>No calls yet. Gateway calls and task submissions appear here a moment after they end.</>}
      >
        {(items) => (
          <TableWrap label="Request log">
            <TableHead
              columns={[
                'Time',
                'Call',
                'Model',
                'Status',
                numeric('Tokens in / out'),
                numeric('Cost'),
                numeric('Latency'),
              ]}
            />
            <tbody>
              {items.map((row) => (
                <tr key={row.logId}>
                  <td>
                    <Link to={`/logs/${encodeURIComponent(row.logId)}`}>{whenShort(row.time)}</Link>
                  </td>
                  <td>
                    <div>
                      {row.method} {row.route}
                    </div>
                    <div class="muted small-text">
                      {row.surface}
                      {row.upstream ? ` · ${row.upstream}` : ''}
                      {row.keyId ? ` · ${row.keyId}` : ''}
                    </div>
                  </td>
                  <td>{row.model ?? '—'}</td>
                  <td class="status-cell">
                    <StatusBadge row={row} />
                  </td>
                  <td class="num">
                    {row.inputTokens === null
                      ? '—'
                      : `${count(row.inputTokens)} / ${count(row.outputTokens)}`}
                  </td>
                  <td class="num">{usd(row.costUsd)}</td>
                  <td class="num">{ms(row.latencyMs)}</td>
                </tr>
              ))}
            </tbody>
          </TableWrap>
        )}
      </PagedList>
    </Card>
  );
}

export function LogDetail({ params }: { params: Record<string, string> }) {
  const logId = params.logId;
  const loaded = useLoad(() => api<LogRow>(`/api/v1/logs/${encodeURIComponent(logId)}`), [logId]);
  const row = loaded.data?.logId === logId ? loaded.data : undefined;
  const rows: [string, ComponentChildren][] = row
    ? [
        ['Request id', <code key="r">{row.requestId}</code>],
        ['Time', when(row.time)],
        ['Call', `${row.method} ${row.route} (${row.surface})`],
        ['Status', <StatusBadge key="s" row={row} />],
        ['Key', row.keyId ?? '—'],
        ['Model', row.model ?? '—'],
        [
          'Upstream',
          row.upstream ? `${row.upstream}${row.upstreamModel ? ` · ${row.upstreamModel}` : ''}` : '—',
        ],
        [
          'Tokens',
          row.inputTokens === null
            ? '—'
            : `${count(row.inputTokens)} in, ${count(row.outputTokens)} out, ${count(row.cachedTokens)} cached, ${count(row.cacheWriteTokens)} cache writes, ${count(row.reasoningTokens)} reasoning`,
        ],
        ['Cost', usd(row.costUsd)],
        ['Latency', ms(row.latencyMs)],
        ['Time to first byte', ms(row.ttfbMs)],
        ['Client', `${row.userAgent ?? 'no user agent'} · ${row.clientIp ?? 'no address'}`],
        ...(row.taskId
          ? ([
              [
                'Task',
                <Link key="t" to={`/tasks/${encodeURIComponent(row.taskId)}`}>
                  {row.taskId}
                </Link>,
              ],
            ] as [string, ComponentChildren][])
          : []),
        ...(row.requestBytes !== null || row.responseBytes !== null
          ? ([
              ['Body sizes', `${count(row.requestBytes)} B sent, ${count(row.responseBytes)} B answered`],
            ] as [string, ComponentChildren][])
          : []),
      ]
    : [];
  return (
    <div>
      <PageHeader title="Call">
        <Link class="button secondary" to="/logs">
          All calls
        </Link>
      </PageHeader>
      <ErrorNotice error={loaded.error} />
      {!row ? (
        loaded.loading ? (
          <Loading what="Loading the call" />
        ) : null
      ) : (
        <>
          <Card title="Summary">
            <Details rows={rows} />
          </Card>
          <Card title="Bodies">
            {row.bodies ? (
              <>
                <h3>Request</h3>
                <pre>{row.bodies.request ?? 'Not kept (streamed upload).'}</pre>
                <h3>Response</h3>
                <pre>{row.bodies.response ?? 'Not readable as text.'}</pre>
                <p class="hint">Kept for debugging, with secrets and emails redacted, for a few days.</p>
              </>
            ) : (
              <p class="muted">
                Bodies are not kept for this call. The operator can keep them for a key or an account.
              </p>
            )}
          </Card>
        </>
      )}
    </div>
  );
}

/** The audit trail as GET /admin/v1/audit answers it. */
interface AuditRow {
  auditId: string;
  time: string;
  actor: string;
  action: string;
  target: string;
  accountId: string | null;
  before: Record<string, unknown> | null;
  after: Record<string, unknown> | null;
}

const AUDIT_FILTERS = ['accountId', 'actor', 'action', 'target', 'from', 'to'] as const;
type AuditFilters = Record<(typeof AUDIT_FILTERS)[number], string>;

export function Audit(_props: { params: Record<string, string> }) {
  return (
    <div>
      <PageHeader title="Audit trail" />
      <p class="lead">
        Every change to accounts, keys, budgets, credits and webhook secrets: who, what, before and after.
      </p>
      <FilteredList
        names={AUDIT_FILTERS}
        label="Audit filters"
        idPrefix="audit-filter"
        days={['From', 'To']}
        fields={(field) => (
          <>
            <IdFilter id="audit-filter-account" label="Account id" {...field('accountId')} />
            <IdFilter id="audit-filter-actor" label="Actor" {...field('actor')} />
            <SelectField
              id="audit-filter-action"
              label="Action"
              any="Any action"
              options={['account', 'key', 'budget', 'credit', 'webhook_secret', 'logs']}
              {...field('action')}
            />
            <IdFilter id="audit-filter-target" label="Target" {...field('target')} />
          </>
        )}
        list={AuditList}
      />
    </div>
  );
}

const shown = (value: Record<string, unknown> | null) =>
  value === null
    ? '—'
    : Object.entries(value)
        .map(([k, v]) => `${k}: ${typeof v === 'object' && v !== null ? JSON.stringify(v) : String(v)}`)
        .join(', ');

function AuditList({ filters }: { filters: AuditFilters }) {
  const pages = useCursorPages<AuditRow>('/admin/v1/audit', filters, undefined, ['from', 'to']);
  return (
    <Card title="Changes">
      <PagedList pages={pages} noun="changes" empty={<>No changes recorded yet.</>}>
        {(items) => (
          <TableWrap label="Audit trail">
            <TableHead columns={['Time', 'Actor', 'Action', 'Target', 'Before', 'After']} />
            <tbody>
              {items.map((row) => (
                <tr key={row.auditId}>
                  <td>{whenShort(row.time)}</td>
                  <td class="mono">{row.actor}</td>
                  <td>
                    <Badge status={row.action} />
                  </td>
                  <td class="mono target">{row.target}</td>
                  <td class="small-text">{shown(row.before)}</td>
                  <td class="small-text">{shown(row.after)}</td>
                </tr>
              ))}
            </tbody>
          </TableWrap>
        )}
      </PagedList>
    </Card>
  );
}
