import { TaskWaiters, type TaskEvents } from '../../tasks/events';

/** Embedded mode: one process, so its waiters are all there are. */
export class MemoryTaskEvents implements TaskEvents {
  private readonly waiters = new TaskWaiters();

  async publish(taskId: string): Promise<void> {
    this.waiters.wake(taskId);
  }

  subscribe(taskId: string, listener: () => void): () => void {
    return this.waiters.add(taskId, listener);
  }

  async close(): Promise<void> {}
}
