import type { Services } from './services';

/**
 * Makes this process a worker of every queue: `genway serve` (unless --no-worker) and `genway worker` call it once.
 * Each domain registers its handlers here; closing the scheduler (closeServices) stops them.
 */
export function startWorkers(services: Services): void {
  services.taskWorker.register();
  services.deliveries.registerWorker();
}
