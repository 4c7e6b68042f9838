import { useState } from 'preact/hooks';
import { api } from '../api';
import {
  Badge,
  Card,
  ConfirmDialog,
  CopyButton,
  Details,
  ErrorNotice,
  Link,
  Loading,
  numeric,
  PageHeader,
  SelectField,
  TableHead,
  TableWrap,
} from '../components';
import { count, ms, when } from '../format';
import { useLoad } from '../hooks';
import { FilteredList, IdFilter, PagedList, useCursorPages } from '../lists';

interface SigningSecret {
  version: number;
  secret: string;
}

/** One attempt in GET /api/v1/webhooks/deliveries (src/webhooks/store.ts, without its body). */
interface Delivery {
  deliveryId: string;
  eventId: string;
  kind: 'callback' | 'webhook' | string;
  url: string;
  taskId?: string;
  batchId?: string;
  attempt: number;
  redelivery?: boolean;
  at: number;
  status: 'delivered' | 'failed' | 'suppressed' | string;
  httpStatus: number | null;
  latencyMs: number | null;
  error: string | null;
}

/** What a secret looks like without giving it away: its prefix and a few characters at each end. */
function masked(secret: string): string {
  const underscore = secret.indexOf('_');
  const prefix = underscore > 0 && underscore < 8 ? secret.slice(0, underscore + 1) : '';
  const body = secret.slice(prefix.length);
  if (body.length <= 8) return `${prefix}${'•'.repeat(8)}`;
  return `${prefix}${body.slice(0, 4)}${'•'.repeat(12)}${body.slice(-4)}`;
}

export function Webhooks(_props: { params: Record<string, string> }) {
  return (
    <div>
      <PageHeader title="Webhooks" />
      <SecretCard />
      <DeliveryLog />
    </div>
  );
}

function SecretCard() {
  const secret = useLoad(() => api<SigningSecret>('/api/v1/webhooks/secret'), []);
  const [dialog, setDialog] = useState<'rotate' | 'revoke' | null>(null);
  /** A secret that came into being by an action on this page: shown in full once. */
  const [fresh, setFresh] = useState<{ secret: SigningSecret; why: string } | null>(null);
  const current = fresh?.secret ?? secret.data;
  const rotate = async () => {
    const next = await api<SigningSecret>('/api/v1/webhooks/secret/rotate', { method: 'POST' });
    setFresh({ secret: next, why: `New secret, version ${next.version}.` });
    secret.reload();
  };
  const revoke = async () => {
    const revoked = await api<{ revoked: boolean; version: number }>('/api/v1/webhooks/secret/revoke', {
      method: 'POST',
    });
    // Reading the secret after a revoke creates the next one: that is the secret receivers need now.
    const next = await api<SigningSecret>('/api/v1/webhooks/secret');
    setFresh({
      secret: next,
      why: `Secrets up to version ${revoked.version} are revoked. New secret, version ${next.version}.`,
    });
    secret.reload();
  };
  return (
    <Card title="Signing secret">
      <p class="muted">
        Genway signs every callback and batch webhook with this account's secret. Receivers verify the
        signature with it. After a rotation the previous secret keeps signing alongside the new one for a
        grace period.
      </p>
      <ErrorNotice error={secret.error} />
      {!current ? (
        secret.loading ? (
          <Loading what="Loading the secret" />
        ) : null
      ) : (
        <Details
          rows={[
            ['Current version', <strong key="v">{current.version}</strong>],
            ['Secret', <code key="s">{masked(current.secret)}</code>],
          ]}
        />
      )}
      {fresh ? (
        <div class="fresh-secret" role="status">
          <p>
            <strong>{fresh.why}</strong> Copy it now: this page does not show it again.
          </p>
          <div class="secret-box">
            <code>{fresh.secret.secret}</code>
            <CopyButton text={fresh.secret.secret} label="Copy secret" />
          </div>
        </div>
      ) : null}
      <div class="actions card-actions">
        <button type="button" class="button" onClick={() => setDialog('rotate')} disabled={!current}>
          Rotate secret
        </button>
        <button type="button" class="button danger" onClick={() => setDialog('revoke')} disabled={!current}>
          Revoke secrets
        </button>
      </div>
      {/* One dialog for both actions: its title is the dialog's name (one id on the page). */}
      <ConfirmDialog
        open={dialog !== null}
        title={dialog === 'revoke' ? 'Revoke every signing secret?' : 'Rotate the signing secret?'}
        confirmLabel={dialog === 'revoke' ? 'Revoke now' : 'Rotate now'}
        danger={dialog === 'revoke'}
        onClose={() => setDialog(null)}
        onConfirm={dialog === 'revoke' ? revoke : rotate}
      >
        {dialog === 'revoke' ? (
          <p>
            Every secret version stops working at once, with no grace period. Deliveries already queued are
            suppressed instead of sent. Use this when a secret has leaked.
          </p>
        ) : (
          <p>
            A new secret becomes current. The old one still signs deliveries during the grace period, so
            update your receivers soon.
          </p>
        )}
      </ConfirmDialog>
    </Card>
  );
}

const FILTERS = ['status', 'kind', 'taskId', 'batchId', 'from', 'to'] as const;
type Filters = Record<(typeof FILTERS)[number], string>;

function DeliveryLog() {
  return (
    <Card title="Delivery log">
      <FilteredList
        names={FILTERS}
        label="Delivery filters"
        idPrefix="dlv-filter"
        days={['From', 'To']}
        fields={(field) => (
          <>
            <SelectField
              id="dlv-filter-status"
              label="Status"
              any="Any status"
              options={['delivered', 'failed', 'suppressed']}
              {...field('status')}
            />
            <SelectField
              id="dlv-filter-kind"
              label="Kind"
              any="Any kind"
              options={['callback', 'webhook']}
              {...field('kind')}
            />
            <IdFilter id="dlv-filter-task" label="Task id" {...field('taskId')} />
            <IdFilter id="dlv-filter-batch" label="Batch id" {...field('batchId')} />
          </>
        )}
        list={DeliveryList}
      />
    </Card>
  );
}

function DeliveryList({ filters }: { filters: Filters }) {
  const pages = useCursorPages<Delivery>('/api/v1/webhooks/deliveries', filters);
  const list = pages.list;
  const [notice, setNotice] = useState<{ ok: boolean; text: string } | null>(null);
  const [pending, setPending] = useState<string | null>(null);
  const redeliver = async (delivery: Delivery) => {
    setPending(delivery.deliveryId);
    setNotice(null);
    try {
      const answer = await api<{ deliveryId: string; eventId: string }>(
        `/api/v1/webhooks/deliveries/${encodeURIComponent(delivery.deliveryId)}/redeliver`,
        { method: 'POST' },
      );
      setNotice({
        ok: true,
        text: `Redelivery of event ${answer.eventId} queued. Its attempts appear at the top of the log.`,
      });
      // The attempt runs in the background: look again shortly.
      setTimeout(list.reload, 1500);
    } catch (err) {
      setNotice({ ok: false, text: (err as Error).message });
    } finally {
      setPending(null);
    }
  };
  return (
    <PagedList
      pages={pages}
      noun="deliveries"
      banner={
        notice ? (
          <p
            class={`notice ${notice.ok ? 'notice-ok' : 'notice-error'}`}
            role={notice.ok ? 'status' : 'alert'}
          >
            {notice.text}
          </p>
        ) : null
      }
      empty={
        <>
          No deliveries yet. Genway sends one when a task submitted with a <code>callback_url</code>, or an
          item of a batch with a <code>webhook_url</code>, ends.
        </>
      }
    >
      {(items) => (
        <TableWrap label="Webhook deliveries">
          <TableHead
            columns={[
              'Time',
              'Event',
              'Target',
              'Status',
              numeric('HTTP'),
              numeric('Attempt'),
              numeric('Latency'),
              { text: <span class="visually-hidden">Actions</span> },
            ]}
          />
          <tbody>
            {items.map((d) => (
              <tr key={d.deliveryId}>
                <td>{when(d.at)}</td>
                <td>
                  <div>{d.kind}</div>
                  {d.taskId ? (
                    <div>
                      <Link class="mono" to={`/tasks/${encodeURIComponent(d.taskId)}`}>
                        {d.taskId}
                      </Link>
                    </div>
                  ) : null}
                  <div class="mono muted">{d.eventId}</div>
                </td>
                <td class="mono target">{d.url}</td>
                <td class="status-cell">
                  <Badge status={d.status} />
                  {d.error && d.error !== `HTTP ${d.httpStatus}` ? (
                    <div class="small-text">{d.error}</div>
                  ) : null}
                </td>
                <td class="num">{d.httpStatus ?? '—'}</td>
                <td class="num">
                  {count(d.attempt)}
                  {d.redelivery ? <span class="muted"> (redelivery)</span> : null}
                </td>
                <td class="num">{ms(d.latencyMs)}</td>
                <td>
                  <button
                    type="button"
                    class="button secondary small"
                    disabled={pending !== null}
                    onClick={() => redeliver(d)}
                  >
                    {pending === d.deliveryId ? 'Redelivering…' : 'Redeliver'}
                    <span class="visually-hidden"> event {d.eventId}</span>
                  </button>
                </td>
              </tr>
            ))}
          </tbody>
        </TableWrap>
      )}
    </PagedList>
  );
}
