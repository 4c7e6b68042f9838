import { Pool, type PoolClient, type QueryResultRow } from 'pg';
import type { Logger } from '../../observability/logger';
import type { BodyMode } from '../bodies';
import { logIdOf, positionOfId } from '../memory';
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
import { migrate } from './migrations';

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

/**
 * One multi-row insert of a batch (arrays unnested server-side: one statement, one round trip), with its id in
 * log_batches in the same statement, so a batch replayed after a lost reply is refused whole. Kept bodies go in the
 * same statement.
 */
const INSERT_REQUESTS = `WITH batch AS (INSERT INTO log_batches (id) VALUES ($1)),
bodies AS (
  INSERT INTO request_log_bodies (time, request_id, account_id, request_body, response_body)
  SELECT to_timestamp(t / 1000.0), r, a, q, s
  FROM unnest($28::float8[], $29::text[], $30::text[], $31::text[], $32::text[]) AS b(t, r, a, q, s)
)
INSERT INTO request_logs (time, request_id, account_id, key_id, surface, method, route, model, upstream,
  upstream_model, status, error_type, input_tokens, output_tokens, cached_tokens, cache_write_tokens,
  reasoning_tokens, cost_micros, latency_ms, ttfb_ms, user_agent, client_ip, task_id, batch_id, request_bytes,
  response_bytes)
SELECT to_timestamp(t / 1000.0), r, a, k, s, m, rt, mo, u, um, st, e, it, ot, ct, cw, rs, c, l, tf, ua, ip, ti, bi,
  rb, sb
FROM unnest($2::float8[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[], $9::text[],
  $10::text[], $11::text[], $12::int2[], $13::text[], $14::int4[], $15::int4[], $16::int4[], $17::int4[], $18::int4[],
  $19::int8[], $20::float4[], $21::float4[], $22::text[], $23::text[], $24::text[], $25::text[], $26::int8[],
  $27::int8[])
  AS x(t, r, a, k, s, m, rt, mo, u, um, st, e, it, ot, ct, cw, rs, c, l, tf, ua, ip, ti, bi, rb, sb)`;

const INSERT_AUDIT = `WITH batch AS (INSERT INTO log_batches (id) VALUES ($1))
INSERT INTO audit_log (time, actor, action, target, account_id, before, after, request_id, client_ip)
SELECT to_timestamp(t / 1000.0), ac, an, tg, a, b::jsonb, af::jsonb, r, ip
FROM unnest($2::float8[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[], $9::text[],
  $10::text[]) AS x(t, ac, an, tg, a, b, af, r, ip)`;

/** NUL cannot be stored in a PostgreSQL text value: a client may send one (a user agent). */
const clean = (text: string | null | undefined) =>
  text && text.includes('\u0000') ? text.replaceAll('\u0000', '') : (text ?? null);

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

  private async withLock<T>(work: (client: PoolClient) => Promise<T>): Promise<T> {
    const client = await this.pool.connect();
    try {
      await client.query('BEGIN');
      await client.query('SELECT pg_advisory_xact_lock($1)', [PARTITION_LOCK]);
      const result = await work(client);
      await client.query('COMMIT');
      return result;
    } catch (err) {
      await client.query('ROLLBACK').catch(() => undefined);
      throw err;
    } finally {
      client.release();
    }
  }

  /** Runs an insert; a row whose day has no partition yet gets it, and the insert runs again. */
  private async inserting(times: number[], run: () => Promise<unknown>): Promise<void> {
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
    const cols: unknown[][] = Array.from({ length: 26 }, () => new Array(rows.length));
    for (let i = 0; i < rows.length; i++) {
      const r = rows[i];
      cols[0][i] = r.time;
      cols[1][i] = clean(r.requestId);
      cols[2][i] = r.accountId;
      cols[3][i] = r.keyId;
      cols[4][i] = r.surface;
      cols[5][i] = r.method;
      cols[6][i] = clean(r.route);
      cols[7][i] = clean(r.model);
      cols[8][i] = r.upstream;
      cols[9][i] = clean(r.upstreamModel);
      cols[10][i] = r.status;
      cols[11][i] = r.errorType;
      cols[12][i] = r.inputTokens;
      cols[13][i] = r.outputTokens;
      cols[14][i] = r.cachedTokens;
      cols[15][i] = r.cacheWriteTokens;
      cols[16][i] = r.reasoningTokens;
      cols[17][i] = r.costMicros;
      cols[18][i] = r.latencyMs;
      cols[19][i] = r.ttfbMs;
      cols[20][i] = clean(r.userAgent);
      cols[21][i] = r.clientIp;
      cols[22][i] = r.taskId;
      cols[23][i] = r.batchId;
      cols[24][i] = r.requestBytes;
      cols[25][i] = r.responseBytes;
    }
    const b = [
      bodies.map((x) => x.time),
      bodies.map((x) => clean(x.requestId)),
      bodies.map((x) => x.accountId),
      bodies.map((x) => clean(x.requestBody)),
      bodies.map((x) => clean(x.responseBody)),
    ];
    const times = rows.map((r) => r.time);
    await this.inserting(times, () => this.pool.query(INSERT_REQUESTS, [batchId, ...cols, ...b]));
  }

  async insertAudit(batchId: string, rows: AuditRow[]): Promise<void> {
    const params = [
      batchId,
      rows.map((r) => r.time),
      rows.map((r) => r.actor),
      rows.map((r) => r.action),
      rows.map((r) => r.target),
      rows.map((r) => r.accountId),
      rows.map((r) => (r.before === null ? null : JSON.stringify(r.before))),
      rows.map((r) => (r.after === null ? null : JSON.stringify(r.after))),
      rows.map((r) => r.requestId),
      rows.map((r) => r.clientIp),
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
    const w = new Where();
    if (filter.accountId !== undefined) w.add((n) => `account_id = ${n(filter.accountId)}`);
    if (filter.keyId !== undefined) w.add((n) => `key_id = ${n(filter.keyId)}`);
    if (filter.model !== undefined) w.add((n) => `model = ${n(filter.model)}`);
    if (filter.status !== undefined) {
      const [low, high] = filter.status;
      w.add((n) => (low === high ? `status = ${n(low)}` : `status BETWEEN ${n(low)} AND ${n(high)}`));
    }
    if (filter.upstream !== undefined) w.add((n) => `upstream = ${n(filter.upstream)}`);
    if (filter.surface !== undefined) w.add((n) => `surface = ${n(filter.surface)}`);
    if (filter.requestId !== undefined) w.add((n) => `request_id = ${n(filter.requestId)}`);
    if (filter.taskId !== undefined) w.add((n) => `task_id = ${n(filter.taskId)}`);
    timeBounds(w, filter, after);
    const { rows } = await this.pool.query(
      `${SELECT_REQUEST} FROM request_logs ${w.sql} ORDER BY time DESC, id DESC LIMIT ${limit + 1}`,
      w.params,
    );
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
