import type { IncomingMessage } from 'node:http';
import { clientIpOf } from './client';
import type { LogWriter } from './writer';
import type { AuditRow } from './types';

/** Who made a change: `admin` for the admin token (never the token), else the key id. */
export interface AuditContext {
  actor: string;
  requestId: string | null;
  clientIp: string | null;
}

export interface AuditChange {
  action: string;
  target: string;
  accountId: string | null;
  before?: Record<string, unknown> | null;
  after?: Record<string, unknown> | null;
}

/** Fields that must never reach a row, whatever a caller hands in: a key or a secret is shown by prefix or version. */
const SECRET_FIELDS = new Set(['key', 'secret', 'token', 'apiKey', 'password', 'hash']);

function scrubbed(value: Record<string, unknown> | null | undefined): Record<string, unknown> | null {
  if (!value) return null;
  const out: Record<string, unknown> = {};
  for (const [name, v] of Object.entries(value)) {
    if (v === undefined || SECRET_FIELDS.has(name)) continue;
    out[name] = v;
  }
  return out;
}

/**
 * The audit trail: one row per control-plane change, through the same writer as the request log (off the request
 * path, spilled and replayed when the database is away). Append-only: nothing here, nor any route, changes or
 * removes a row; only retention drops whole days.
 */
export class AuditTrail {
  constructor(
    private readonly writer: LogWriter,
    private readonly trustProxy: boolean,
  ) {}

  /** The actor of a request: the admin token, or the key the task API admitted. */
  context(req: IncomingMessage, requestId: string | undefined, keyId?: string): AuditContext {
    return {
      actor: keyId ?? 'admin',
      requestId: requestId ?? null,
      clientIp: clientIpOf(req, this.trustProxy),
    };
  }

  record(context: AuditContext, change: AuditChange): void {
    const row: AuditRow = {
      time: Date.now(),
      actor: context.actor,
      action: change.action,
      target: change.target,
      accountId: change.accountId,
      before: scrubbed(change.before),
      after: scrubbed(change.after),
      requestId: context.requestId,
      clientIp: context.clientIp,
    };
    this.writer.pushAudit(row);
  }
}

/** A key as an audit row shows it: its prefix and settings, never the key. */
export function auditedKey(key: {
  keyId: string;
  name?: string;
  prefix?: string | null;
  models?: readonly string[] | null;
  rateLimit?: unknown;
  expiresAt?: string | number | null;
  metadata?: unknown;
  status?: string;
}): Record<string, unknown> {
  return {
    keyId: key.keyId,
    name: key.name,
    prefix: key.prefix ?? null,
    models: key.models ?? null,
    rateLimit: key.rateLimit ?? null,
    expiresAt: key.expiresAt ?? null,
    metadata: key.metadata ?? null,
    status: key.status,
  };
}

/**
 * The audit rows of a rotation: the old key rotated (naming the new key by id and prefix), its expiry moved to the end
 * of the grace, and the new key created. Never a key: the new one is named by its first characters only.
 */
export function rotationChanges(
  before: { keyId: string; accountId: string; prefix: string | null; expiresAt: string | null; name: string },
  rotated: { keyId: string; key: string; oldKeyExpiresAt: string },
): AuditChange[] {
  const newPrefix = rotated.key.slice(0, before.prefix?.length ?? 12);
  const { accountId } = before;
  return [
    {
      action: 'key.rotate',
      target: `key:${before.keyId}`,
      accountId,
      before: { prefix: before.prefix },
      after: { newKeyId: rotated.keyId, newPrefix, oldKeyExpiresAt: rotated.oldKeyExpiresAt },
    },
    {
      action: 'key.expire',
      target: `key:${before.keyId}`,
      accountId,
      before: { expiresAt: before.expiresAt },
      after: { expiresAt: rotated.oldKeyExpiresAt },
    },
    {
      action: 'key.create',
      target: `key:${rotated.keyId}`,
      accountId,
      after: { keyId: rotated.keyId, name: before.name, prefix: newPrefix, rotatedFrom: before.keyId },
    },
  ];
}
