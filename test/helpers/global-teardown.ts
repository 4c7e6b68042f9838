import type { OwnCluster } from './redis-server';

/** Stops the Redis Cluster global-setup started. */
export default async function globalTeardown(): Promise<void> {
  const holder = globalThis as { genwayTestCluster?: OwnCluster };
  await holder.genwayTestCluster?.stop();
  delete holder.genwayTestCluster;
}
