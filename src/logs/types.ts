import type { BodySettingsStore } from './bodies';
import type { CopyRows } from './copy-rows';

/**
 * The request log and the audit trail: what a row holds, how it is asked for, and the port each store implements
 * (the in-process ring, ./memory.ts; PostgreSQL, ./postgres/store.ts). ./index.ts picks one.
 */

export type Surface = 'gateway' | 'tasks';

/** One gateway call or task submission. Times are epoch ms; money is integer micro-USD. */
export interface RequestLogRow {
  time: number;
  /** The `genway-request-id` (X-Request-Id on the task API). */
  requestId: string;
  /** Null when the call was refused before a key was recognised (401): only the admin sees those. */
  accountId: string | null;
  keyId: string | null;
  surface: Surface;
  method: string;
  /** The route template (`/v1/messages`, `/api/v1/generateTask/:model`). */
  route: string;
  model: string | null;
  upstream: string | null;
  upstreamModel: string | null;
  /** The status the client got. */
  status: number;
  /** Genway's own error code when it refused (`rate_limited`), `upstream_<status>` or `response_cut`; else null. */
  errorType: string | null;
  inputTokens: number | null;
  outputTokens: number | null;
  /** Cache reads. */
  cachedTokens: number | null;
  cacheWriteTokens: number | null;
  reasoningTokens: number | null;
  costMicros: number;
  latencyMs: number;
  /** From the request's arrival to the upstream's response head; null without one. */
  ttfbMs: number | null;
  userAgent: string | null;
  clientIp: string | null;
  /** A task submission's task (and batch). */
  taskId: string | null;
  batchId: string | null;
  /** Request and response body sizes, when bodies are kept (`metadata` or `full`). */
  requestBytes: number | null;
  responseBytes: number | null;
}

/** A kept body pair (`logs.bodies: full`), stored apart with its own retention. */
export interface RequestBodies {
  time: number;
  requestId: string;
  accountId: string | null;
  requestBody: string | null;
  responseBody: string | null;
}

/** A row as read back: with its id (opaque, also the cursor of a page that ends on it). */
export type StoredRequestLog = RequestLogRow & { logId: string };

/** One control-plane change. `before` and `after` never hold a secret (keys as prefixes, secrets as versions). */
export interface AuditRow {
  time: number;
  /** `admin` (the admin token, never the token itself) or the key id that made the change. */
  actor: string;
  /** `account.create`, `key.revoke`, `budget.set`, `credit.add`, `webhook_secret.rotate`, ... */
  action: string;
  /** What changed: `account:<id>`, `key:<id>`, `budget:key:<id>`, ... */
  target: string;
  /** The account the target belongs to (filters; an account reads only its own). */
  accountId: string | null;
  before: Record<string, unknown> | null;
  after: Record<string, unknown> | null;
  requestId: string | null;
  clientIp: string | null;
}

export type StoredAuditRow = AuditRow & { auditId: string };

/** Where a page starts: the position of the last row of the previous page (newest first). */
export interface Position {
  time: number;
  seq: string;
}

export interface RequestLogFilter {
  /** Inclusive from, exclusive to (epoch ms). */
  from?: number;
  to?: number;
  accountId?: string;
  keyId?: string;
  model?: string;
  /** An exact status, or a class: 200 or `5xx` as [500, 599]. */
  status?: [number, number];
  upstream?: string;
  surface?: Surface;
  requestId?: string;
  taskId?: string;
}

export interface AuditFilter {
  from?: number;
  to?: number;
  accountId?: string;
  actor?: string;
  action?: string;
  target?: string;
}

export interface PageOf<T> {
  rows: T[];
  /** Position of the last row when more may follow, else null. */
  next: Position | null;
}

/** The port: where rows go and how they are read. Writes come in batches from the writer (./writer.ts). */
export interface LogStore extends BodySettingsStore {
  readonly kind: 'memory' | 'postgres';
  /**
   * Inserts a batch once: a batch written again under the same `batchId` (a replay after a reply was lost) is a
   * no-op. Throws when the store cannot take it now.
   */
  insertRequests(batchId: string, rows: RequestLogRow[], bodies: RequestBodies[]): Promise<void>;
  /** The same, the rows as their COPY tuples (./copy-rows.ts): how the writer sends them. */
  insertCopy(batchId: string, copy: CopyRows, bodies: RequestBodies[]): Promise<void>;
  /**
   * A store in this process takes each row as its call ends, without a queue or a batch (the writer's batching is
   * for a database): a row then never waits long enough for the garbage collector to promote it.
   */
  take?(row: RequestLogRow, bodies?: RequestBodies): void;
  insertAudit(batchId: string, rows: AuditRow[]): Promise<void>;
  /** Newest first, after `after` (exclusive), at most `limit`. */
  requests(filter: RequestLogFilter, limit: number, after?: Position): Promise<PageOf<StoredRequestLog>>;
  /** One row with its kept bodies (null when none), by its id. */
  request(logId: string): Promise<(StoredRequestLog & { bodies: RequestBodies | null }) | null>;
  audit(filter: AuditFilter, limit: number, after?: Position): Promise<PageOf<StoredAuditRow>>;
  /** Creates what the next days need and drops what retention let go (partitions). */
  maintain(now: number): Promise<void>;
  /** Resolves when the store answers. */
  ping(): Promise<void>;
  close(): Promise<void>;
}
