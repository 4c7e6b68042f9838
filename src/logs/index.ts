import path from 'node:path';
import type { Config } from '../config';
import type { Logger } from '../observability/logger';
import type { Metrics } from '../observability/metrics';
import { AuditTrail } from './audit';
import { BodyModes } from './bodies';
import { MemoryLogStore } from './memory';
import type * as PostgresModule from './postgres/store';
import { RequestLog } from './request-log';
import { LogSpill } from './spill';
import type { LogStore } from './types';
import { LogWriter } from './writer';

export type { RequestLog, GatewayCallLog, SubmissionLog, BatchItemOutcome } from './request-log';
export type { AuditTrail, AuditContext } from './audit';
export { auditedKey, rotationChanges } from './audit';

const DAY_MS = 86_400_000;
/** Partitions ahead are made, and retention applied, this often. */
const MAINTAIN_MS = 3_600_000;

/** The request log, the audit trail and where they go: built once per process (services.ts). */
export interface Logs {
  readonly store: LogStore;
  readonly requestLog: RequestLog;
  readonly audit: AuditTrail;
  readonly bodies: BodyModes;
  readonly writer: LogWriter;
  /** Writes what this process holds (read-your-writes before a query). */
  flush(): Promise<void>;
  close(): Promise<void>;
}

/**
 * The one place that picks the log store: PostgreSQL when `logs.databaseUrl` (DATABASE_URL) is set, every replica
 * writing and any answering for all; otherwise this process's ring (embedded and Redis mode alike: docs/decisions.md).
 */
export function createLogs(config: Config, deps: { metrics: Metrics; logger: Logger }): Logs {
  const { logs, audit } = config;
  const logger = deps.logger;
  const store: LogStore = logs.databaseUrl
    ? // pg loads only with a database: a start without one does not pay for it.
      // eslint-disable-next-line @typescript-eslint/no-require-imports
      new (require('./postgres/store') as typeof PostgresModule).PostgresLogStore(logs.databaseUrl, logger, {
        requestDays: logs.retentionDays,
        bodyDays: logs.bodyRetentionDays,
        auditDays: audit.retentionDays,
      })
    : new MemoryLogStore({
        requestRows: logs.memoryRows,
        auditRows: audit.memoryRows,
        retentionDays: logs.retentionDays,
        auditRetentionDays: audit.retentionDays,
        bodyRetentionDays: logs.bodyRetentionDays,
      });
  // Only a database can be away: the ring takes every batch at once.
  const spill = logs.databaseUrl
    ? new LogSpill(path.join(logs.spillDir, config.store.prefix), logs.spillMaxBytes)
    : undefined;
  const writer = new LogWriter(
    store,
    spill,
    {
      bufferRows: logs.bufferRows,
      batchRows: logs.batchRows,
      flushMs: logs.flushMs,
      // A row older than its table's retention has no day left to go in (its partition is dropped, or about to be).
      oldestKept: (table) =>
        Date.now() - (table === 'audit' ? audit.retentionDays : logs.retentionDays) * DAY_MS + 60_000,
    },
    deps.metrics,
    logger,
  );
  const bodies = new BodyModes(logs.bodies, logs.bodyMaxBytes, logs.redact, store, logger);
  void bodies.refresh();
  const maintain = () =>
    store
      .maintain(Date.now())
      .catch((err: unknown) => logger.warn({ err }, 'log retention and partitions: failed'));
  void maintain();
  const timer = setInterval(() => void maintain(), MAINTAIN_MS);
  timer.unref();
  return {
    store,
    writer,
    bodies,
    requestLog: new RequestLog(writer, config.server.trustProxy, bodies),
    audit: new AuditTrail(writer, config.server.trustProxy),
    flush: () => writer.flush(),
    close: async () => {
      clearInterval(timer);
      bodies.close();
      await writer.close();
      await store.close();
    },
  };
}
