import { AccountsService } from './accounts/service';
import { BalanceGuard, BudgetGuard, Budgets } from './accounts/budgets';
import { UsageReports } from './accounts/usage-report';
import { budgetNotifier } from './webhooks/budget-events';
import { BatchService } from './batches/service';
import { createCatalog, type Catalog } from './catalog';
import { systemClock, type Clock } from './clock';
import type { Config } from './config';
import { FileSigner } from './files/signer';
import { join } from 'node:path';
import { GatewayCharges } from './gateway/charges';
import { createGateway, type Gateway } from './gateway/router';
import { createScheduler } from './store';
import { type Scheduler } from './jobs';
import { createMediaProbe } from './media/probe';
import { createLogger, type Logger } from './observability/logger';
import { createMetrics, type Metrics } from './observability/metrics';
import type * as TracingModule from './observability/tracing';
import type { Tracing } from './observability/tracing';
import { publicHttpsUrlProblem } from './outbound/addresses';
import { createOutboundClient } from './outbound/client';
import type { MediaProbe, OutboundClient } from './outbound/types';
import { createStore, type Store } from './store';
import { createProviders } from './providers';
import { TaskService } from './tasks/service';
import { TaskWorker } from './tasks/worker';
import { DeliveryEngine } from './webhooks/deliveries';
import { notifyOnTerminal } from './webhooks/events';
import { WebhookSecrets } from './webhooks/secrets';
import { RecentStats } from './observability/recent-stats';
import { createLogs, type Logs } from './logs';

/** Everything the HTTP layer and the workers depend on, built once per process (the composition root). */
export interface Services {
  config: Config;
  clock: Clock;
  logger: Logger;
  metrics: Metrics;
  store: Store;
  accounts: AccountsService;
  scheduler: Scheduler;
  catalog: Catalog;
  outbound: OutboundClient & { close(): Promise<void> };
  probe: MediaProbe;
  signer: FileSigner;
  tasks: TaskService;
  /** Drives tasks through their providers (registered by startWorkers). */
  taskWorker: TaskWorker;
  batches: BatchService;
  webhookSecrets: WebhookSecrets;
  deliveries: DeliveryEngine;
  gateway: Gateway;
  /** Priced gateway calls' prices, posted as tabs (and journaled, Redis mode): src/gateway/charges.ts. */
  charges: GatewayCharges;
  budgets: Budgets;
  budgetGuard: BudgetGuard;
  usageReports: UsageReports;
  /** Error rate and latency of the last hour (the console's overview), folded from the request metrics. */
  recentStats: RecentStats;
  /** OpenTelemetry traces; undefined (and free) unless `tracing.otlpEndpoint` is set. */
  tracing?: Tracing;
  /** Request logs and the audit trail (PostgreSQL at logs.databaseUrl, else this process's ring). */
  logs: Logs;
}

export interface ServiceOverrides {
  logger?: Logger;
  clock?: Clock;
}

export function createServices(config: Config, overrides: ServiceOverrides = {}): Services {
  const clock = overrides.clock ?? systemClock;
  const logger = overrides.logger ?? createLogger(config);
  const metrics = createMetrics();
  const store = createStore(config);
  const accounts = new AccountsService(store.accounts, clock);
  const scheduler = createScheduler(config, logger);
  const catalog = createCatalog(config.models);
  const allowPrivate = config.security.allowPrivateTargets;
  const outbound = createOutboundClient({ allowPrivateTargets: allowPrivate });
  const probe = createMediaProbe(outbound, {
    timeoutMs: config.media.probeTimeoutMs,
    maxBytes: config.media.maxProbeBytes,
  });
  const signer = new FileSigner(config.security.secretsKey, config.server.publicUrl);
  const urlProblem = (url: string) => publicHttpsUrlProblem(url, allowPrivate);
  const schemeOf = (accountId: string) => accounts.webhookScheme(accountId);
  const webhookSecrets = new WebhookSecrets(
    store.webhookSecrets,
    clock,
    config.security.secretsKey,
    config.webhooks.rotationGraceMs,
    schemeOf,
  );
  const deliveries = new DeliveryEngine({
    scheduler,
    outbound,
    secrets: webhookSecrets,
    clock,
    logger,
    metrics,
    log: store.deliveryLog,
    schemeOf,
    config,
  });
  const providers = createProviders({ signer, clock, sandboxDelayMs: config.sandbox.delayMs });
  const tasks = new TaskService({
    store: store.tasks,
    events: store.taskEvents,
    accounts,
    catalog,
    scheduler,
    clock,
    providers,
    probe,
    logger,
    callbackUrlProblem: urlProblem,
  });
  const taskWorker = new TaskWorker({ store: store.tasks, catalog, scheduler, providers, logger, tasks });
  tasks.onTerminal(notifyOnTerminal(deliveries));
  const batches = new BatchService({
    store: store.batches,
    catalog,
    tasks: {
      prepare: (model, input) => tasks.prepare(model, input),
      create: async (auth, model, prepared, taskId, batch) => {
        await tasks.create(auth, model, prepared, { taskId, batch });
      },
      get: (taskId) => tasks.get(taskId),
    },
    currentSecretVersion: async (accountId) => (await webhookSecrets.current(accountId)).version,
    webhookUrlProblem: urlProblem,
    clock,
    ttlMs: config.batches.ttlMs,
  });
  // OpenTelemetry's modules load only when traces are exported: off, a start does not pay for them.
  const tracing = config.tracing.otlpEndpoint
    ? // eslint-disable-next-line @typescript-eslint/no-require-imports
      (require('./observability/tracing') as typeof TracingModule).createTracing(config.tracing, logger)
    : undefined;
  // Priced gateway calls go on per-key tabs posted every chargeFlushMs; until then they are owed, and the guards
  // below count what is owed as spent. Redis mode journals them locally until the ledger has them (an outage, a
  // crash); the embedded store lives in this process.
  const charges = new GatewayCharges({
    post: ({ accountId, micros, reference, keyId, model, at }, applied) =>
      accounts.chargeAtMost(
        accountId,
        micros,
        reference,
        keyId === undefined ? undefined : { keyId, model: model ?? 'unknown', source: 'gateway' },
        at,
        applied,
      ),
    logger,
    clock,
    flushMs: config.gateway.chargeFlushMs,
    owedGauge: metrics.gatewayChargesOwed,
    journalDir: config.store.redisUrl
      ? join(config.gateway.chargeJournalDir, config.store.prefix)
      : undefined,
  });
  // Reads of a balance, budget or ledger through this process see its calls: their tabs are posted first.
  accounts.settleWith((accountId) => charges.settle(accountId));
  // Each process holds the budgets of active accounts, read again each second: a crossing posted here and a budget
  // set here hold at once (embedded mode: every posting and change is here), other replicas' within the second.
  const budgetGuard = new BudgetGuard(store.accounts, clock, 1000, charges);
  const budgets = new Budgets(store.accounts, clock, budgetGuard, (accountId) => charges.settle(accountId));
  accounts.onBudgetEvent((event) => budgetGuard.note(event));
  accounts.onSpend((accountId, keyId, micros, at) => budgetGuard.spent(accountId, keyId, micros, at));
  // The same for the balance a priced gateway call needs: a balance seen above what is owed admits without a read.
  const balanceGuard = new BalanceGuard(store.accounts, clock, 1000, charges);
  accounts.onBalance((accountId, micros) => balanceGuard.note(accountId, micros));
  accounts.onBudgetEvent(
    budgetNotifier({ accounts, deliveries, logger, defaultUrl: config.budgets.webhookUrl ?? null }),
  );
  const logs = createLogs(config, { metrics, logger });
  const gateway = createGateway({
    requestLog: config.logs.enabled ? logs.requestLog : undefined,
    config,
    accounts,
    store,
    metrics,
    logger,
    tracing,
    budgetGuard,
    balanceGuard,
    charges,
    clock,
  });
  const usageReports = new UsageReports(store.accounts, clock, () => gateway.flushUsage());
  const recentStats = new RecentStats(metrics, store.recentStats, clock, config.stats.stepMs, logger);
  recentStats.start();
  return {
    config,
    clock,
    logger,
    metrics,
    store,
    accounts,
    scheduler,
    catalog,
    outbound,
    probe,
    signer,
    tasks,
    taskWorker,
    batches,
    webhookSecrets,
    deliveries,
    gateway,
    charges,
    budgets,
    budgetGuard,
    usageReports,
    recentStats,
    tracing,
    logs,
  };
}

/**
 * Closes everything; running jobs get up to `jobsGraceMs` to finish (the shutdown grace left after the drain). When
 * some did not, nothing else is closed and `abandoned` is true: the caller exits the process at once, so an abandoned
 * handler can neither finish nor record a failure it did not see (in Redis mode its job runs again elsewhere).
 */
export async function closeServices(
  services: Services,
  jobsGraceMs?: number,
): Promise<{ abandoned: boolean }> {
  await services.gateway.close();
  await services.charges.close();
  await services.recentStats.close();
  // The rows of the calls just ended are written (or spilled) before the process goes.
  await services.logs.close();
  // The spans of the calls just ended go out before the process does.
  await services.tracing
    ?.shutdown()
    .catch((err: unknown) => services.logger.warn({ err }, 'flushing traces at shutdown failed'));
  const { abandoned } = await services.scheduler.close(jobsGraceMs);
  if (abandoned) return { abandoned };
  await services.outbound.close();
  await services.store.close();
  return { abandoned };
}
