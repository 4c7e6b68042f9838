import { useState } from 'preact/hooks';
import { api } from '../api';
import {
  ActionForm,
  Badge,
  Card,
  ConfirmDialog,
  Empty,
  ErrorNotice,
  InputField,
  Loading,
  PageHeader,
  TableHead,
  TableWrap,
} from '../components';
import { whenShort } from '../format';
import { useLoad, useSubmit } from '../hooks';
import { accountInView, session } from '../session';
import { NewKeyPanel, type NewKey } from './keys/new-key';

/** A key as the API lists it (src/accounts/service.ts keyView); never the secret. */
export interface KeyView {
  keyId: string;
  name: string;
  prefix: string | null;
  models: string[] | null;
  rateLimit: { ratePerSec: number; burst: number } | null;
  metadata: Record<string, unknown> | null;
  createdAt: number;
  status: 'active' | 'expired' | 'revoked';
  revoked: boolean;
  expiresAt: string | null;
  lastUsedAt: string | null;
  rotatedFrom: string | null;
}

interface RotateResult {
  keyId: string;
  key: string;
  rotatedFrom: string;
  oldKeyExpiresAt: string | number | null;
}

const DEFAULT_GRACE = '86400';
const MAX_GRACE = 30 * 86_400;

/** "gpt-4o, claude" or one per line → a list; empty → undefined (every model). */
export function parseModels(text: string): string[] | undefined {
  const models = text
    .split(/[\n,]/)
    .map((m) => m.trim())
    .filter(Boolean);
  return models.length ? [...new Set(models)] : undefined;
}

/** A local date-time from an <input type="datetime-local"> as ISO 8601 UTC; empty → undefined. */
export function parseLocalTime(text: string, field: string): string | undefined {
  if (!text) return undefined;
  const date = new Date(text);
  if (Number.isNaN(date.getTime())) throw new Error(`${field}: not a valid date and time`);
  if (date.getTime() <= Date.now()) throw new Error(`${field}: must be in the future`);
  return date.toISOString();
}

function parseMetadata(text: string): Record<string, string> | undefined {
  const metadata: Record<string, string> = {};
  for (const line of text.split('\n').map((l) => l.trim())) {
    if (!line) continue;
    const at = line.indexOf('=');
    if (at <= 0) throw new Error(`Metadata: "${line}" is not key=value`);
    metadata[line.slice(0, at).trim()] = line.slice(at + 1).trim();
  }
  return Object.keys(metadata).length ? metadata : undefined;
}

function metadataText(metadata: Record<string, unknown> | null): string {
  if (!metadata) return '';
  return Object.entries(metadata)
    .map(([k, v]) => `${k}=${Array.isArray(v) ? v.join('|') : String(v)}`)
    .join(', ');
}

function CreateKeyForm({ disabled, onCreated }: { disabled: boolean; onCreated(created: NewKey): void }) {
  const [name, setName] = useState('');
  const [models, setModels] = useState('');
  const [expires, setExpires] = useState('');
  const [metadata, setMetadata] = useState('');
  const create = useSubmit(async () => {
    const body = {
      name: name.trim() || undefined,
      models: parseModels(models),
      expiresAt: parseLocalTime(expires, 'Expires'),
      metadata: parseMetadata(metadata),
    };
    const created = await api<KeyView & { key: string }>('/api/v1/keys', { method: 'POST', body });
    onCreated({ keyId: created.keyId, key: created.key, name: created.name });
    setName('');
    setModels('');
    setExpires('');
    setMetadata('');
  });
  return (
    <Card title="Create a key">
      <ActionForm submit={create} label="Create key" busy="Creating…" disabled={disabled}>
        <div class="form-row form-row-top">
          <InputField
            id="key-name"
            label="Name"
            hint="What the key is for, e.g. ci or laptop."
            name="name"
            maxLength={200}
            autocomplete="off"
            value={name}
            onValue={setName}
          />
          <InputField
            id="key-expires"
            label="Expires (optional)"
            hint="Your local time. Empty: never expires."
            name="expiresAt"
            type="datetime-local"
            value={expires}
            onValue={setExpires}
          />
        </div>
        <div class="form-row form-row-top">
          <InputField
            id="key-models"
            label="Allowed models (optional)"
            hint="One per line or separated by commas. Empty: every model."
            name="models"
            rows={3}
            spellcheck={false}
            value={models}
            onValue={setModels}
          />
          <InputField
            id="key-metadata"
            label="Metadata (optional)"
            hint="Labels, one key=value per line."
            name="metadata"
            rows={3}
            spellcheck={false}
            value={metadata}
            onValue={setMetadata}
          />
        </div>
      </ActionForm>
    </Card>
  );
}

type Pending = { kind: 'revoke' | 'rotate'; key: KeyView } | null;

export function Keys(_props: { params: Record<string, string> }) {
  const s = session();
  const accountId = accountInView(s);
  const keys = useLoad(() => api<{ keys: KeyView[] }>('/api/v1/keys'), [accountId]);
  const [created, setCreated] = useState<NewKey | null>(null);
  const [pending, setPending] = useState<Pending>(null);
  const [grace, setGrace] = useState(DEFAULT_GRACE);
  const [rotateExpires, setRotateExpires] = useState('');
  const ownKeyId = s?.kind === 'key' ? s.keyId : null;
  const list = [...(keys.data?.keys ?? [])].sort((a, b) => b.createdAt - a.createdAt);
  const own = list.find((k) => k.keyId === ownKeyId);
  // A key with a model allow-list may not manage keys (the API answers 403); the admin always may.
  const restricted = !!own?.models;
  const nameOf = (k: KeyView) => k.name || k.keyId;
  const revokeButton = (k: KeyView) => (
    <button
      type="button"
      aria-label={`Revoke ${nameOf(k)}`}
      class="button danger small"
      disabled={restricted}
      onClick={() => setPending({ kind: 'revoke', key: k })}
    >
      Revoke
    </button>
  );

  const rotate = async (key: KeyView) => {
    const seconds = Number(grace);
    if (!Number.isInteger(seconds) || seconds < 0 || seconds > MAX_GRACE)
      throw new Error(`Grace period: a whole number of seconds from 0 to ${MAX_GRACE}`);
    const result = await api<RotateResult>(`/api/v1/keys/${encodeURIComponent(key.keyId)}/rotate`, {
      method: 'POST',
      body: { graceSeconds: seconds, expiresAt: parseLocalTime(rotateExpires, 'New key expires') },
    });
    setCreated({ ...result, name: key.name });
    keys.reload();
  };
  const revoke = async (key: KeyView) => {
    await api(`/api/v1/keys/${encodeURIComponent(key.keyId)}`, { method: 'DELETE' });
    keys.reload();
  };

  return (
    <>
      <PageHeader title="Keys" />
      {restricted ? (
        <p class="notice notice-info">
          You are signed in with a key that has a model allow-list: it cannot create, rotate or revoke keys.
          Sign in with a key without one, or as the admin.
        </p>
      ) : null}
      {created ? <NewKeyPanel created={created} onDone={() => setCreated(null)} /> : null}
      <Card title="API keys">
        <ErrorNotice error={keys.error} />
        {!keys.data && keys.loading ? <Loading what="Loading keys" /> : null}
        {keys.data && list.length === 0 ? <Empty>No keys yet. Create one below.</Empty> : null}
        {list.length > 0 ? (
          <TableWrap label="Key list">
            <TableHead
              columns={[
                'Name',
                'Prefix',
                'Status',
                'Models',
                'Rate limit',
                'Expires',
                'Last used',
                'Actions',
              ]}
            />
            <tbody>
              {list.map((k) => (
                <tr key={k.keyId}>
                  <td class="key-cell">
                    <div class="key-name">
                      {k.name || <span class="muted">(no name)</span>}
                      {k.keyId === ownKeyId ? <span class="badge badge-info">signed in</span> : null}
                    </div>
                    {k.name !== k.keyId ? <div class="mono muted small">{k.keyId}</div> : null}
                    <div class="muted small">
                      created {whenShort(k.createdAt)}
                      {k.rotatedFrom ? (
                        <>
                          {' '}
                          · rotated from <span class="mono">{k.rotatedFrom}</span>
                        </>
                      ) : null}
                    </div>
                    {k.metadata ? <div class="muted small wrap">{metadataText(k.metadata)}</div> : null}
                  </td>
                  <td class="mono">{k.prefix ? `${k.prefix}…` : '—'}</td>
                  <td>
                    <Badge status={k.status} />
                  </td>
                  <td class="wrap">
                    {k.models ? k.models.join(', ') : <span class="muted">All models</span>}
                  </td>
                  <td>
                    {k.rateLimit ? (
                      `${k.rateLimit.ratePerSec}/s, burst ${k.rateLimit.burst}`
                    ) : (
                      <span class="muted">Default</span>
                    )}
                  </td>
                  <td>{k.expiresAt ? whenShort(k.expiresAt) : <span class="muted">Never</span>}</td>
                  <td>{k.lastUsedAt ? whenShort(k.lastUsedAt) : <span class="muted">Never</span>}</td>
                  <td>
                    {k.status === 'active' ? (
                      <div class="row-actions">
                        <button
                          type="button"
                          aria-label={`Rotate ${nameOf(k)}`}
                          class="button secondary small"
                          disabled={restricted}
                          onClick={() => {
                            setGrace(DEFAULT_GRACE);
                            setRotateExpires('');
                            setPending({ kind: 'rotate', key: k });
                          }}
                        >
                          Rotate
                        </button>
                        {revokeButton(k)}
                      </div>
                    ) : k.status === 'expired' ? (
                      revokeButton(k)
                    ) : (
                      <span class="muted">—</span>
                    )}
                  </td>
                </tr>
              ))}
            </tbody>
          </TableWrap>
        ) : null}
      </Card>
      <CreateKeyForm
        disabled={restricted}
        onCreated={(key) => {
          setCreated(key);
          keys.reload();
        }}
      />
      <ConfirmDialog
        open={pending !== null}
        title={
          pending?.kind === 'rotate'
            ? `Rotate key ${pending ? nameOf(pending.key) : ''}`
            : `Revoke key ${pending ? nameOf(pending.key) : ''}?`
        }
        confirmLabel={pending?.kind === 'rotate' ? 'Rotate now' : 'Revoke now'}
        danger={pending?.kind !== 'rotate'}
        onConfirm={() => (pending?.kind === 'rotate' ? rotate(pending.key) : revoke(pending!.key))}
        onClose={() => setPending(null)}
      >
        {pending?.kind === 'rotate' ? (
          <>
            <p>
              A new key with the same name, allow-list, rate limit, metadata and budget is made now. The old
              key keeps working for the grace period, then is refused.
            </p>
            <InputField
              id="rotate-grace"
              label="Grace period (seconds)"
              hint="86400 is one day; 0 refuses the old key at once; at most 30 days."
              type="number"
              inputMode="numeric"
              min={0}
              max={MAX_GRACE}
              step={1}
              required
              value={grace}
              onValue={setGrace}
            />
            <InputField
              id="rotate-expires"
              label="New key expires (optional)"
              hint="Your local time. Empty: never."
              type="datetime-local"
              value={rotateExpires}
              onValue={setRotateExpires}
            />
          </>
        ) : pending ? (
          <>
            <p>
              Calls with{' '}
              <span class="mono">{pending.key.prefix ? `${pending.key.prefix}…` : pending.key.keyId}</span>{' '}
              are refused from now on. This cannot be undone.
            </p>
            {pending.key.keyId === ownKeyId ? (
              <p class="notice notice-error">
                This is the key you are signed in with: the console stops working until you sign in with
                another.
              </p>
            ) : null}
          </>
        ) : null}
      </ConfirmDialog>
    </>
  );
}
