import { AccountsService } from './accounts/service';
import { createCatalog, type Catalog } from './catalog';
import { systemClock, type Clock } from './clock';
import type { Config } from './config';
import { createScheduler, type Scheduler } from './jobs';
import { createLogger, type Logger } from './observability/logger';
import { createMetrics, type Metrics } from './observability/metrics';
import { createStore, type Store } from './store';

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
  return { config, clock, logger, metrics, store, accounts, scheduler, catalog };
}

export async function closeServices(services: Services): Promise<void> {
  await services.scheduler.close();
  await services.store.close();
}
