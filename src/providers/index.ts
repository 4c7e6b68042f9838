import type { ModelRoute } from '../catalog/config';
import type { Clock } from '../clock';
import type { FileSigner } from '../files/signer';
import type { TaskRecord } from '../tasks/types';
import { relayProvider } from './relay';
import { sandboxProvider } from './sandbox';
import type { Provider } from './types';

export * from './types';

/** Every provider a route can name, by its `provider` value. */
export type Providers = Record<ModelRoute['provider'], Provider>;

export function createProviders(deps: {
  signer: FileSigner;
  clock: Clock;
  sandboxDelayMs: number;
}): Providers {
  return {
    sandbox: sandboxProvider({ signer: deps.signer, clock: deps.clock, delayMs: deps.sandboxDelayMs }),
    relay: relayProvider,
  };
}

/**
 * The routes a task tries, in order: `value` cheapest first, `official` the official ones first, `auto` as
 * configured; every strategy fails over to the remaining routes.
 */
export function orderRoutes(routes: readonly ModelRoute[], strategy: TaskRecord['provider']): ModelRoute[] {
  const list = [...routes];
  if (strategy === 'value') return list.sort((a, b) => a.costFactor - b.costFactor);
  if (strategy === 'official') return list.sort((a, b) => Number(b.official) - Number(a.official));
  return list;
}
