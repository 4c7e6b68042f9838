import { Pool, type PoolClient, type QueryResultRow } from 'pg';
import { from as copyFrom } from 'pg-copy-streams';
import { COPY_COLUMNS, CopyRows } from '../copy-rows';
import type { Logger } from '../../observability/logger';
import type { BodyMode } from '../bodies';
import { logIdOf, positionOfId } from '../position';
import type {
  AuditFilter,
  AuditRow,
  LogStore,
  PageOf,
  Position,
  RequestBodies,
  RequestLogFilter,
  RequestLogRow,
  StoredAuditRow,
  StoredRequestLog,
} from '../types';
import { ignoreDropped, migrate, underLock } from './migrations';

const DAY_MS = 86_400_000;
/** The tables partitioned by day, and which retention drops their days. */
const PARTITIONED = [
  { table: 'request_logs', retention: 'requests' },
  { table: 'request_log_bodies', retention: 'bodies' },
  { table: 'audit_log', retention: 'audit' },
] as const;
/** Partition maintenance is one process at a time (concurrent CREATE ... PARTITION OF can collide). */
const PARTITION_LOCK = 0x67776c02;

export interface PostgresRetention {
  requestDays: number;
  bodyDays: number;
  auditDays: number;
}

const dayOf = (ms: number) => Math.floor(ms / DAY_MS) * DAY_MS;
const stamp = (day: number) => new Date(day).toISOString().slice(0, 10);
const partitionName = (table: string, day: number) => `${table}_p${stamp(day).replace(/-/g, '')}`;

/** Whether an error says a row's day has no partition (23514, "no partition of relation ... found for row"). */
function noPartition(err: unknown): boolean {
  return (err as { code?: string }).code === '23514' && /no partition/i.test((err as Error).message);
}

/** The batch was taken before (its id is in log_batches): a replay of a batch whose reply was lost. */
function duplicateBatch(err: unknown): boolean {
  return (
    (err as { code?: string }).code === '23505' &&
    (err as { constraint?: string }).constraint === 'log_batches_pkey'
  );
}

const REQUEST_COLUMNS = `time, id, request_id, account_id, key_id, surface, method, route, model, upstream,
  upstream_model, status, error_type, input_tokens, output_tokens, cached_tokens, cache_write_tokens,
  reasoning_tokens, cost_micros, latency_ms, ttfb_ms, user_agent, client_ip, task_id, batch_id, request_bytes,
  response_bytes`;
const SELECT_REQUEST = `SELECT round(extract(epoch FROM time) * 1000)::float8 AS t, ${REQUEST_COLUMNS.replace('time, ', '')}`;

/** A batch's request rows, by COPY in the binary format (../copy-rows.ts). */
const COPY_REQUESTS = `COPY request_logs (${COPY_COLUMNS}) FROM STDIN (FORMAT binary)`;

/** Kept bodies (the few calls whose mode is `full`), as one JSON array of arrays read back with jsonb_array_elements. */
const INSERT_BODIES = `INSERT INTO request_log_bodies (time, request_id, account_id, request_body, response_body)
SELECT to_timestamp((e->>0)::float8 / 1000.0), e->>1, e->>2, e->>3, e->>4
FROM jsonb_array_elements($1::jsonb) AS e`;

const INSERT_AUDIT = `WITH batch AS (INSERT INTO log_batches (id) VALUES ($1))
INSERT INTO audit_log (time, actor, action, target, account_id, before, after, request_id, client_ip)
SELECT to_timestamp((e->>0)::float8 / 1000.0), e->>1, e->>2, e->>3, e->>4, e->5, e->6, e->>7, e->>8
FROM jsonb_array_elements($2::jsonb) AS e`;

/** Drops every `\u0000` escape of a JSON text (one whose backslash is not itself escaped). */
function withoutNul(json: string): string {
  return json.replace(/(?<!\\)((?:\\\\)*)\\u0000/g, '$1');
}

/**
 * A batch as the JSON the insert reads. PostgreSQL text cannot hold NUL, so a `\u0000` escape (a client may put one
 * in a model name) is dropped, and only a real escape: one preceded by an even run of backslashes.
 */
function batchJson(rows: readonly unknown[]): string {
  const json = JSON.stringify(rows);
  return json.includes('\\u0000') ? withoutNul(json) : json;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** `text` as a dollar-quoted literal, its tag one the text does not hold. */
function dollarQuoted(text: string): string {
  let tag = '$b$';
  for (let n = 1; text.includes(tag); n++) tag = `$b${n}$`;
  return `${tag}${text}${tag}`;
}

/**
 * Sends `data` as the whole input of the `COPY ... FROM STDIN` that ends `sql`; resolves once the server has run every
 * statement of it.
 */
function copyIn(client: PoolClient, sql: string, data: Buffer): Promise<void> {
  return new Promise((resolve, reject) => {
    const stream = client.query(copyFrom(sql));
    stream.once('error', reject);
    stream.once('finish', resolve);
    stream.end(data);
  });
}

/** A WHERE clause built from the filters, with its parameters numbered from 1. */
class Where {
  readonly parts: string[] = [];
  readonly params: unknown[] = [];

  add(sql: (n: (value: unknown) => string) => string): void {
    this.parts.push(sql((value) => `$${this.params.push(value)}`));
  }

  get sql(): string {
    return this.parts.length ? `WHERE ${this.parts.join(' AND ')}` : '';
  }
}

function timeBounds(w: Where, filter: { from?: number; to?: number }, after?: Position): void {
  if (filter.from !== undefined) w.add((n) => `time >= to_timestamp(${n(filter.from! / 1000)})`);
  if (filter.to !== undefined) w.add((n) => `time < to_timestamp(${n(filter.to! / 1000)})`);
  if (after) w.add((n) => `(time, id) < (to_timestamp(${n(after.time / 1000)}), ${n(after.seq)}::bigint)`);
}

/** A page of the request log: `limit` rows and one more (is there a next page), newest first, ties by id. */
export function requestsQuery(
  filter: RequestLogFilter,
  limit: number,
  after?: Position,
): { text: string; values: unknown[] } {
  const w = new Where();
  if (filter.accountId !== undefined) w.add((n) => `account_id = ${n(filter.accountId)}`);
  if (filter.keyId !== undefined) w.add((n) => `key_id = ${n(filter.keyId)}`);
  if (filter.model !== undefined) w.add((n) => `model = ${n(filter.model)}`);
  if (filter.status !== undefined) {
    const [low, high] = filter.status;
    w.add((n) => (low === high ? `status = ${n(low)}` : `status BETWEEN ${n(low)} AND ${n(high)}`));
    // Said in the partial index's own words (migration 002): a plan made without the values takes that index too.
    if (low > 200 || high < 200) w.add(() => 'status <> 200');
  }
  if (filter.upstream !== undefined) w.add((n) => `upstream = ${n(filter.upstream)}`);
  if (filter.surface !== undefined) w.add((n) => `surface = ${n(filter.surface)}`);
  if (filter.requestId !== undefined) w.add((n) => `request_id = ${n(filter.requestId)}`);
  if (filter.taskId !== undefined) w.add((n) => `task_id = ${n(filter.taskId)}`);
  timeBounds(w, filter, after);
  return {
    text: `${SELECT_REQUEST} FROM request_logs ${w.sql} ORDER BY time DESC, id DESC LIMIT ${limit + 1}`,
    values: w.params,
  };
}

const num = (value: unknown) => (value === null || value === undefined ? null : Number(value));

function requestRow(r: QueryResultRow): StoredRequestLog {
  return {
    logId: logIdOf(r.t as number, r.id as string),
    time: r.t as number,
    requestId: r.request_id,
    accountId: r.account_id,
    keyId: r.key_id,
    surface: r.surface,
    method: r.method,
    route: r.route,
    model: r.model,
    upstream: r.upstream,
    upstreamModel: r.upstream_model,
    status: r.status,
    errorType: r.error_type,
    inputTokens: r.input_tokens,
    outputTokens: r.output_tokens,
    cachedTokens: r.cached_tokens,
    cacheWriteTokens: r.cache_write_tokens,
    reasoningTokens: r.reasoning_tokens,
    costMicros: Number(r.cost_micros),
    latencyMs: r.latency_ms,
    ttfbMs: r.ttfb_ms,
    userAgent: r.user_agent,
    clientIp: r.client_ip,
    taskId: r.task_id,
    batchId: r.batch_id,
    requestBytes: num(r.request_bytes),
    responseBytes: num(r.response_bytes),
  };
}

/**
 * The request log and audit trail on PostgreSQL (`logs.databaseUrl`): migrated on start, partitioned by UTC day,
 * written in multi-row inserts by the writer, read newest first by keyset over indexes that lead with the filter.
 * Every replica writes; any replica answers for all.
 */
export class PostgresLogStore implements LogStore {
  readonly kind = 'postgres' as const;
  private readonly pool: Pool;
  private ready: Promise<void> | undefined;
  /** Days whose partitions this process made or saw (no catalog round trip per batch). */
  private readonly days = new Set<string>();

  constructor(
    url: string,
    private readonly logger: Logger,
    private readonly retention: PostgresRetention = { requestDays: 30, bodyDays: 3, auditDays: 400 },
  ) {
    this.pool = new Pool({
      connectionString: url,
      max: 4,
      connectionTimeoutMillis: 5000,
      // A write or read the database does not answer within this fails (the writer then spills).
      query_timeout: 15_000,
      idleTimeoutMillis: 30_000,
      application_name: 'genway-logs',
    });
    // An idle connection that breaks (the database restarting) must not take the process with it.
    this.pool.on('error', (err) => this.logger.warn({ err }, 'log database connection lost'));
  }

  /** Migrates and makes today's partitions once; a failure is retried on the next use. */
  private whenReady(): Promise<void> {
    this.ready ??= (async () => {
      const applied = await migrate(this.pool);
      if (applied.length) this.logger.info({ versions: applied }, 'log database migrated');
      await this.ensureDays(Date.now(), [-1, 0, 1, 2]);
    })().catch((err: unknown) => {
      this.ready = undefined;
      throw err;
    });
    return this.ready;
  }

  /** Partitions for the days around `at`, every partitioned table. */
  private async ensureDays(at: number, offsets: number[]): Promise<void> {
    const days = offsets.map((o) => dayOf(at) + o * DAY_MS).filter((d) => !this.days.has(stamp(d)));
    if (!days.length) return;
    await this.withLock(async (client) => {
      for (const day of days) {
        for (const { table } of PARTITIONED) {
          await client.query(
            `CREATE TABLE IF NOT EXISTS ${partitionName(table, day)} PARTITION OF ${table}
             FOR VALUES FROM ('${stamp(day)}') TO ('${stamp(day + DAY_MS)}')`,
          );
        }
      }
    });
    for (const day of days) this.days.add(stamp(day));
  }

  private withLock<T>(work: (client: PoolClient) => Promise<T>): Promise<T> {
    return underLock(this.pool, PARTITION_LOCK, work);
  }

  /** Runs an insert; a row whose day has no partition yet gets it, and the insert runs again. */
  private async inserting(times: readonly number[], run: () => Promise<unknown>): Promise<void> {
    await this.whenReady();
    try {
      await run();
    } catch (err) {
      if (duplicateBatch(err)) return;
      if (!noPartition(err)) throw err;
      const days = [...new Set(times.map(dayOf))];
      for (const day of days) this.days.delete(stamp(day));
      for (const day of days) await this.ensureDays(day, [0]);
      try {
        await run();
      } catch (again) {
        if (!duplicateBatch(again)) throw again;
      }
    }
  }

  async insertRequests(batchId: string, rows: RequestLogRow[], bodies: RequestBodies[]): Promise<void> {
    await this.insertCopy(batchId, CopyRows.ofRows(rows), bodies);
  }

  /**
   * One simple query of two or three statements, which PostgreSQL runs as one implicit transaction, in one round trip:
   * the batch's id into log_batches (a batch replayed after a lost reply is refused whole), its kept bodies, then its
   * rows by COPY. A simple query takes no parameters: the id is a UUID (checked) and the bodies' JSON is dollar-quoted.
   * Each statement of its own cost the client a round trip of some 0.4 ms of CPU on this host, more than the rows.
   */
  async insertCopy(batchId: string, rows: CopyRows, bodies: RequestBodies[]): Promise<void> {
    if (!UUID.test(batchId)) throw Object.assign(new Error('a batch id is not a UUID'), { code: '22P02' });
    const statements = [`INSERT INTO log_batches (id) VALUES ('${batchId}')`];
    if (bodies.length) {
      const json = batchJson(
        bodies.map((b) => [b.time, b.requestId, b.accountId, b.requestBody, b.responseBody]),
      );
      statements.push(INSERT_BODIES.replace('$1', () => dollarQuoted(json))); // a function: `$$` in the text stays
    }
    statements.push(COPY_REQUESTS);
    const sql = statements.join(';\n');
    await this.inserting(rows.times, async () => {
      const client = await this.pool.connect();
      // A connection that drops mid-COPY errors on the client as well as on the COPY (see underLock).
      client.on('error', ignoreDropped);
      let failed: Error | undefined;
      try {
        await copyIn(client, sql, rows.copy());
      } catch (err) {
        // The server rolled the statements back; the connection is not trusted again.
        failed = err as Error;
        throw err;
      } finally {
        client.off('error', ignoreDropped);
        client.release(failed);
      }
    });
  }

  async insertAudit(batchId: string, rows: AuditRow[]): Promise<void> {
    const params = [
      batchId,
      batchJson(
        rows.map((r) => [
          r.time,
          r.actor,
          r.action,
          r.target,
          r.accountId,
          r.before,
          r.after,
          r.requestId,
          r.clientIp,
        ]),
      ),
    ];
    await this.inserting(
      rows.map((r) => r.time),
      () => this.pool.query(INSERT_AUDIT, params),
    );
  }

  async requests(
    filter: RequestLogFilter,
    limit: number,
    after?: Position,
  ): Promise<PageOf<StoredRequestLog>> {
    await this.whenReady();
    const { text, values } = requestsQuery(filter, limit, after);
    const { rows } = await this.pool.query(text, values);
    return this.paged(rows.map(requestRow), limit, (r) => r.logId);
  }

  async request(logId: string) {
    const at = positionOfId(logId);
    if (!at) return null;
    await this.whenReady();
    const { rows } = await this.pool.query(
      `${SELECT_REQUEST} FROM request_logs WHERE time = to_timestamp($1) AND id = $2`,
      [at.time / 1000, at.seq],
    );
    if (!rows.length) return null;
    const row = requestRow(rows[0]);
    const found = await this.pool.query(
      `SELECT request_body, response_body FROM request_log_bodies
       WHERE request_id = $1 AND time = to_timestamp($2) LIMIT 1`,
      [row.requestId, at.time / 1000],
    );
    const b = found.rows[0];
    return {
      ...row,
      bodies: b
        ? {
            time: row.time,
            requestId: row.requestId,
            accountId: row.accountId,
            requestBody: b.request_body,
            responseBody: b.response_body,
          }
        : null,
    };
  }

  async audit(filter: AuditFilter, limit: number, after?: Position): Promise<PageOf<StoredAuditRow>> {
    await this.whenReady();
    const w = new Where();
    if (filter.accountId !== undefined) w.add((n) => `account_id = ${n(filter.accountId)}`);
    if (filter.actor !== undefined) w.add((n) => `actor = ${n(filter.actor)}`);
    if (filter.target !== undefined) w.add((n) => `target = ${n(filter.target)}`);
    if (filter.action !== undefined)
      w.add(
        (n) =>
          `(action = ${n(filter.action)} OR action LIKE ${n(`${filter.action!.replace(/[\\%_]/g, '\\$&')}.%`)})`,
      );
    timeBounds(w, filter, after);
    const { rows } = await this.pool.query(
      `SELECT round(extract(epoch FROM time) * 1000)::float8 AS t, id, actor, action, target, account_id, before,
         after, request_id, client_ip
       FROM audit_log ${w.sql} ORDER BY time DESC, id DESC LIMIT ${limit + 1}`,
      w.params,
    );
    return this.paged(
      rows.map(
        (r): StoredAuditRow => ({
          auditId: logIdOf(r.t, r.id),
          time: r.t,
          actor: r.actor,
          action: r.action,
          target: r.target,
          accountId: r.account_id,
          before: r.before,
          after: r.after,
          requestId: r.request_id,
          clientIp: r.client_ip,
        }),
      ),
      limit,
      (r) => r.auditId,
    );
  }

  private paged<T extends { time: number }>(rows: T[], limit: number, idOf: (row: T) => string): PageOf<T> {
    if (rows.length <= limit) return { rows, next: null };
    const page = rows.slice(0, limit);
    const last = positionOfId(idOf(page[page.length - 1]))!;
    return { rows: page, next: last };
  }

  async bodySettings(): Promise<Map<string, BodyMode>> {
    await this.whenReady();
    const { rows } = await this.pool.query<{ scope: string; mode: BodyMode }>(
      'SELECT scope, mode FROM log_body_settings',
    );
    return new Map(rows.map((r) => [r.scope, r.mode]));
  }

  async setBodySetting(scope: string, mode: BodyMode | null): Promise<void> {
    await this.whenReady();
    if (mode === null) await this.pool.query('DELETE FROM log_body_settings WHERE scope = $1', [scope]);
    else
      await this.pool.query(
        `INSERT INTO log_body_settings (scope, mode) VALUES ($1, $2)
         ON CONFLICT (scope) DO UPDATE SET mode = EXCLUDED.mode, updated_at = now()`,
        [scope, mode],
      );
  }

  /** Makes the next days' partitions and drops the days past each table's retention (whole partitions). */
  async maintain(now: number): Promise<void> {
    await this.whenReady();
    await this.ensureDays(now, [-1, 0, 1, 2]);
    const days = {
      requests: this.retention.requestDays,
      bodies: this.retention.bodyDays,
      audit: this.retention.auditDays,
    };
    await this.withLock(async (client) => {
      for (const { table, retention } of PARTITIONED) {
        // A partition goes once its whole day is older than the retention.
        const keepFrom = dayOf(now - days[retention] * DAY_MS);
        const { rows } = await client.query<{ name: string }>(
          `SELECT c.relname AS name FROM pg_inherits i
           JOIN pg_class c ON c.oid = i.inhrelid JOIN pg_class p ON p.oid = i.inhparent
           WHERE p.relname = $1`,
          [table],
        );
        for (const { name } of rows) {
          const m = /_p(\d{4})(\d{2})(\d{2})$/.exec(name);
          if (!m) continue;
          const day = Date.parse(`${m[1]}-${m[2]}-${m[3]}T00:00:00Z`);
          if (day < keepFrom) {
            await client.query(`DROP TABLE ${name}`);
            this.days.delete(stamp(day));
          }
        }
      }
      await client.query(`DELETE FROM log_batches WHERE at < now() - make_interval(days => $1)`, [
        Math.max(days.requests, days.audit),
      ]);
    });
  }

  async ping(): Promise<void> {
    await this.pool.query('SELECT 1');
  }

  async close(): Promise<void> {
    await this.pool.end();
  }
}
