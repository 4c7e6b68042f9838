import { buildApp } from './app';
import { runAdminCli } from './admin/cli';
import { ConfigError, loadConfig, type Config } from './config';
import { listen } from './http/server';
import { markStartup, startupMarks } from './observability/startup';
import { markBuildInUse } from './paths';
import { closeServices, createServices, type Services } from './services';
import { startWorkers } from './workers';

const USAGE = `Usage:
  genway serve [--no-worker]   HTTP API (task API, LLM gateway, admin, metrics) and, unless --no-worker, the workers
  genway worker                the workers only (task progress, callbacks, webhook deliveries)
  genway admin <command>       the admin API from a terminal (genway admin help)
`;

/** Creates the dev account and key of embedded mode and prints how to use them. */
async function printDevKey(services: Services, config: Config): Promise<void> {
  const { accountId } = await services.accounts.createAccount('dev', 100);
  const { key } = await services.accounts.createKey(accountId, { name: 'dev' });
  const base = `http://${config.server.host === '0.0.0.0' ? '127.0.0.1' : config.server.host}:${config.server.port}`;
  process.stdout.write(
    [
      '',
      `Genway is running in embedded mode on ${base} (state lives in this process).`,
      `Dev account ${accountId} holds 100 USD. Dev API key (shown once):`,
      `  ${key}`,
      'Try it:',
      `  curl -s ${base}/api/v1/apikeys/current-balance -H "Authorization: Bearer ${key}"`,
      ...(config.console.enabled ? [`Or open ${base}/console/ and sign in with the key.`] : []),
      '',
    ].join('\n') + '\n',
  );
}

/** Past the grace, how long closing connections may take before the process exits regardless. */
const EXIT_AFTER_MS = 2000;

/** Runs `handler` on SIGTERM or SIGINT; the process exits within the grace and EXIT_AFTER_MS whatever is left open. */
function onSignals(graceMs: number, handler: (signal: NodeJS.Signals) => Promise<void>): void {
  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    process.once(signal, (s) => {
      setTimeout(() => process.exit(), graceMs + EXIT_AFTER_MS).unref();
      void handler(s);
    });
  }
}

async function serve(config: Config, withWorker: boolean): Promise<void> {
  markBuildInUse();
  const services = createServices(config);
  markStartup('services');
  const { logger } = services;
  const app = buildApp(services);
  const running = await listen(app, config.server, logger);
  markStartup('listen');
  services.signer.useBoundPort(running.port);
  if (withWorker) startWorkers(services);
  logger.info(
    {
      port: running.port,
      host: config.server.host,
      store: services.store.kind,
      worker: withWorker,
      startupMs: startupMarks(),
    },
    'genway listening',
  );
  if (services.store.kind === 'memory' && config.server.port !== 0) await printDevKey(services, config);

  onSignals(config.server.shutdownGraceMs, async (signal) => {
    logger.info(
      { signal, graceMs: config.server.shutdownGraceMs },
      'shutting down: draining in-flight requests',
    );
    const deadline = Date.now() + config.server.shutdownGraceMs;
    await running.drain(config.server.shutdownGraceMs);
    // One grace for the whole shutdown: jobs get what the drain left.
    const { abandoned } = await closeServices(services, Math.max(0, deadline - Date.now()));
    logger.info('shutdown complete');
    logger.flush();
    if (abandoned) process.exit();
  });
}

async function worker(config: Config): Promise<void> {
  markBuildInUse();
  const services = createServices(config);
  startWorkers(services);
  services.logger.info({ store: services.store.kind }, 'genway worker started');
  onSignals(config.server.shutdownGraceMs, async (signal) => {
    services.logger.info(
      { signal, graceMs: config.server.shutdownGraceMs },
      'shutting down: letting running jobs finish',
    );
    const { abandoned } = await closeServices(services, config.server.shutdownGraceMs);
    services.logger.info('worker stopped');
    services.logger.flush();
    if (abandoned) process.exit();
  });
}

export async function runCli(argv: string[]): Promise<number | undefined> {
  markStartup('modules');
  const [command = 'serve', ...rest] = argv;
  if (command === 'admin') return runAdminCli(rest);
  if (command === 'help' || command === '--help' || command === '-h') {
    process.stdout.write(USAGE);
    return 0;
  }
  let config: Config;
  try {
    config = loadConfig();
    markStartup('config');
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`${err.message}\n`);
      return 1;
    }
    throw err;
  }
  switch (command) {
    case 'serve':
    case 'worker':
      try {
        await (command === 'serve' ? serve(config, !rest.includes('--no-worker')) : worker(config));
      } catch (err) {
        process.stderr.write(`genway ${command}: cannot start: ${(err as Error).message}\n`);
        return 1;
      }
      return undefined;
    default:
      process.stderr.write(`Unknown command: ${command}\n${USAGE}`);
      return 2;
  }
}
