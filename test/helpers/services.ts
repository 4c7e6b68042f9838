import os from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { deepMerge, loadConfig, type Config } from '../../src/config';
import { createLogger } from '../../src/observability/logger';
import { createServices, closeServices, type Services, type ServiceOverrides } from '../../src/services';
import { buildApp } from '../../src/app';
import { startWorkers } from '../../src/workers';
import { redisUrl, uniquePrefix, dropPrefix } from './redis';

export const ADMIN_TOKEN = 'test-admin-token-0123456789';

export interface TestConfigOptions {
  /** Run the workers in this process, as `genway serve` does (default true). */
  workers?: boolean;
  redis?: boolean;
  /** Share a namespace between several instances (two replicas on one Redis). */
  prefix?: string;
  overlay?: Record<string, unknown>;
}

export function testConfig({ redis = false, prefix, overlay = {} }: TestConfigOptions = {}): Config {
  if (redis && !redisUrl) throw new Error('testConfig({redis: true}) without a Redis: use describeRedis');
  const base: Record<string, unknown> = {
    server: { port: 0 },
    admin: { token: ADMIN_TOKEN },
    log: { level: 'info' },
    store: redis ? { redisUrl, prefix: prefix ?? uniquePrefix() } : {},
    security: redis ? { secretsKey: 'test-secrets-key-0123456789' } : {},
    // Each test's store prefix gets its own subdirectory here (the journal is per store).
    gateway: { chargeJournalDir: path.join(os.tmpdir(), 'genway-test-charges') },
  };
  return loadConfig({ env: {}, overlay: deepMerge(base, overlay) });
}

/** Captures every log line the services write, to check what must never be logged. */
export class LogCapture extends Writable {
  readonly lines: string[] = [];
  override _write(chunk: Buffer, _enc: BufferEncoding, done: () => void): void {
    this.lines.push(...chunk.toString().split('\n').filter(Boolean));
    done();
  }
  get text(): string {
    return this.lines.join('\n');
  }
}

export interface TestHarness {
  services: Services;
  app: ReturnType<typeof buildApp>;
  logs: LogCapture;
  close(): Promise<void>;
}

/** Real services and app (memory or real Redis), logs captured, cleaned up by close(). */
export function createHarness(options: TestConfigOptions & ServiceOverrides = {}): TestHarness {
  const config = testConfig(options);
  const logs = new LogCapture();
  const services = createServices(config, { logger: createLogger(config, logs), clock: options.clock });
  const app = buildApp(services);
  if (options.workers !== false) startWorkers(services);
  return {
    services,
    app,
    logs,
    close: async () => {
      await closeServices(services);
      if (config.store.redisUrl && !options.prefix) await dropPrefix(config.store.prefix);
    },
  };
}

/** The amounts (micro-USD) of an account's charges so far, in order: a reader to poll with `settled`. */
export function chargedMicros(services: Services, accountId: string): () => Promise<number[]> {
  return async () =>
    (await services.accounts.ledger(accountId)).filter((e) => e.kind === 'charge').map((e) => e.amountMicros);
}

/** An account holding `balanceUsd` and a key for it. */
export async function fundedKey(services: Services, balanceUsd = 100, keyOptions = {}) {
  const { accountId } = await services.accounts.createAccount('test', balanceUsd);
  const { key, keyId } = await services.accounts.createKey(accountId, keyOptions);
  return { accountId, key, keyId, auth: `Bearer ${key}` };
}
