import { api } from '../api';
import {
  Badge,
  Card,
  Details,
  Empty,
  ErrorNotice,
  Link,
  Loading,
  numeric,
  PageHeader,
  Stat,
  TableHead,
  TableWrap,
} from '../components';
import { count, when } from '../format';
import { useInterval, useLoad } from '../hooks';
import { FilteredList, PagedList, useCursorPages, type Paged } from '../lists';
import { useLocation } from '../router';
import { ModelSelect } from './tasks/common';

/** What the batch list and a batch's own page both tell of a batch. */
interface BatchHeader {
  batchId: string;
  model: string;
  status: string;
  newlyAcceptedCount: number;
  reusedCount: number;
  rejectedCount: number;
  batchExpiresAt: string;
}

/** A batch in GET /api/v1/batches (src/batches/service.ts). */
interface BatchSummary extends BatchHeader {
  createdAt: number;
  itemCount: number;
  queuedCount: number;
  runningCount: number;
  succeededCount: number;
  failedCount: number;
  webhookUrl?: string;
}

interface BatchItem {
  ordinal: number;
  clientItemId: string;
  taskId: string | null;
  accepted: boolean;
  status: string;
  error?: { code: string; message: string };
  result?: { taskId: string; state: string; failCode?: string; failMsg?: string; resultJson?: string };
}

/** GET /api/v1/generateTask/{model}/batches/{batchId}. */
interface BatchView extends BatchHeader {
  items: BatchItem[];
}

const FILTERS = ['model', 'from', 'to'] as const;
type Filters = Record<(typeof FILTERS)[number], string>;
const activeBatch = (status: string | undefined) => status === 'queued' || status === 'running';

/** Badge's tones, plus the batch words it does not know: a rejected item or a batch with errors reads as bad. */
function BatchBadge({ status }: { status: string }) {
  if (status === 'rejected' || status === 'completed_with_errors')
    return <span class="badge badge-bad">{status}</span>;
  return <Badge status={status} />;
}

const batchPath = (batchId: string, model: string) =>
  `/batches/${encodeURIComponent(batchId)}?model=${encodeURIComponent(model)}`;

/** `YYYY-MM-DDTHH:MM:SS` in UTC (the API's expiry format, without zone) shown like the other times. */
function expiry(value: string): string {
  return when(/Z|[+-]\d\d:\d\d$/.test(value) ? value : `${value}Z`);
}

export function Batches(_props: { params: Record<string, string> }) {
  return (
    <div>
      <PageHeader title="Batches" />
      <p class="muted">
        Batches are submitted through the API (
        <code>POST /api/v1/generateTask/&#123;model&#125;/batches</code>) and kept for 7 days.
      </p>
      <FilteredList
        names={FILTERS}
        label="Batch filters"
        idPrefix="batch-filter"
        fields={(field) => <ModelSelect id="batch-filter-model" {...field('model')} />}
        list={BatchList}
      />
    </div>
  );
}

function BatchList({ filters }: { filters: Filters }) {
  const pages = useCursorPages<BatchSummary>('/api/v1/batches', filters, {
    ms: 3000,
    active: (b) => activeBatch(b.status),
  });
  return (
    <Card title="Batch list">
      <PagedList pages={pages} noun="batches" empty="No batches in the last 7 days.">
        {(items) => (
          <TableWrap label="Batches">
            <TableHead
              columns={[
                'Batch',
                'Model',
                'Status',
                numeric('Items'),
                numeric('Succeeded'),
                numeric('Failed'),
                numeric('Running or queued'),
                numeric('Rejected'),
                'Created',
              ]}
            />
            <tbody>
              {items.map((batch) => (
                <tr key={batch.batchId}>
                  <td class="mono">
                    <Link to={batchPath(batch.batchId, batch.model)}>{batch.batchId}</Link>
                  </td>
                  <td>{batch.model}</td>
                  <td>
                    <BatchBadge status={batch.status} />
                  </td>
                  <td class="num">{count(batch.itemCount)}</td>
                  <td class="num">{count(batch.succeededCount)}</td>
                  <td class="num">{count(batch.failedCount)}</td>
                  <td class="num">{count(batch.runningCount + batch.queuedCount)}</td>
                  <td class="num">{count(batch.rejectedCount)}</td>
                  <td>{when(batch.createdAt)}</td>
                </tr>
              ))}
            </tbody>
          </TableWrap>
        )}
      </PagedList>
    </Card>
  );
}

/** The batch's model when the link did not carry it: found in the batch list (newest first, a few pages). */
async function findModel(batchId: string): Promise<string> {
  let cursor: string | undefined;
  for (let page = 0; page < 10; page++) {
    const found = await api<Paged<BatchSummary>>('/api/v1/batches', { query: { limit: 100, cursor } });
    const batch = found.items.find((b) => b.batchId === batchId);
    if (batch) return batch.model;
    if (!found.nextCursor) break;
    cursor = found.nextCursor;
  }
  throw new Error(`No batch ${batchId} among this account's batches (they are kept for 7 days).`);
}

export function BatchDetail({ params }: { params: Record<string, string> }) {
  const batchId = params.batchId;
  const { query } = useLocation();
  const modelParam = query.get('model') ?? '';
  const loaded = useLoad(async () => {
    const model = modelParam || (await findModel(batchId));
    return api<BatchView>(
      `/api/v1/generateTask/${encodeURIComponent(model)}/batches/${encodeURIComponent(batchId)}`,
    );
  }, [batchId, modelParam]);
  const batch = loaded.data?.batchId === batchId ? loaded.data : undefined;
  useInterval(loaded.reload, 2000, activeBatch(batch?.status));
  const items = batch?.items ?? [];
  const tally = (status: string) => items.filter((i) => i.status === status).length;
  return (
    <div>
      <PageHeader title={`Batch ${batchId}`}>
        <Link class="button secondary" to="/batches">
          All batches
        </Link>
      </PageHeader>
      <ErrorNotice error={loaded.error} />
      {!batch ? (
        loaded.loading ? (
          <Loading what="Loading the batch" />
        ) : null
      ) : (
        <>
          <Card title="Totals">
            <div class="stats stats-tight">
              <Stat label="Status" value={<BatchBadge status={batch.status} />} />
              <Stat label="Items" value={count(items.length)} />
              <Stat label="Succeeded" value={count(tally('succeeded'))} />
              <Stat label="Failed" value={count(tally('failed'))} />
              <Stat label="Running or queued" value={count(tally('running') + tally('queued'))} />
              <Stat label="Rejected" value={count(batch.rejectedCount)} />
            </div>
          </Card>
          <Card title="Batch">
            <Details
              rows={[
                ['Batch id', <code key="b">{batch.batchId}</code>],
                ['Model', <Link to={`/models/${encodeURIComponent(batch.model)}`}>{batch.model}</Link>],
                ['Newly accepted', count(batch.newlyAcceptedCount)],
                ['Reused from earlier submissions', count(batch.reusedCount)],
                ['Expires', expiry(batch.batchExpiresAt)],
                [
                  'Related',
                  <span key="r" class="inline-links">
                    <Link to={`/tasks?batchId=${encodeURIComponent(batch.batchId)}`}>
                      Tasks of this batch
                    </Link>
                    <Link to={`/webhooks?batchId=${encodeURIComponent(batch.batchId)}`}>
                      Webhook deliveries of this batch
                    </Link>
                  </span>,
                ],
              ]}
            />
          </Card>
          <Card title="Items">
            {items.length === 0 ? (
              <Empty>This batch has no items.</Empty>
            ) : (
              <TableWrap label="Batch items">
                <TableHead columns={[numeric('#'), 'client_item_id', 'Task', 'State', 'Detail']} />
                <tbody>
                  {items.map((item) => (
                    <tr key={item.ordinal}>
                      <td class="num">{item.ordinal}</td>
                      <td class="mono">{item.clientItemId}</td>
                      <td class="mono">
                        {item.taskId ? (
                          <Link to={`/tasks/${encodeURIComponent(item.taskId)}`}>{item.taskId}</Link>
                        ) : (
                          '—'
                        )}
                      </td>
                      <td>
                        <BatchBadge status={item.status} />
                      </td>
                      <td class="wrap">{itemDetail(item)}</td>
                    </tr>
                  ))}
                </tbody>
              </TableWrap>
            )}
          </Card>
        </>
      )}
    </div>
  );
}

function itemDetail(item: BatchItem): string {
  if (item.error) return `${item.error.code}: ${item.error.message}`;
  if (item.result?.failCode) return `${item.result.failCode}: ${item.result.failMsg ?? ''}`;
  return '';
}
