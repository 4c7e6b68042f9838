import { TaskWaiters, type TaskEvents } from '../../tasks/events';
import type { RedisClient } from './connection';

/**
 * Redis pub/sub on one channel: every replica subscribes once (on a connection of its own, opened with the first
 * waiter) and wakes its own waiters by task id. In a cluster, PUBLISH reaches the subscribers on every node.
 */
export class RedisTaskEvents implements TaskEvents {
  private readonly waiters = new TaskWaiters();
  private subscriber: RedisClient | undefined;

  constructor(
    private readonly redis: RedisClient,
    private readonly channel: string,
    private readonly connect: () => RedisClient,
  ) {}

  async publish(taskId: string): Promise<void> {
    await this.redis.publish(this.channel, taskId);
  }

  subscribe(taskId: string, listener: () => void): () => void {
    if (!this.subscriber) {
      const subscriber = (this.subscriber = this.connect());
      subscriber.on('message', (_channel: string, id: string) => this.waiters.wake(id));
      // A failed subscribe leaves waiters to their timeouts; ioredis re-subscribes after a reconnect.
      subscriber.subscribe(this.channel).catch(() => undefined);
    }
    return this.waiters.add(taskId, listener);
  }

  async close(): Promise<void> {
    const subscriber = this.subscriber;
    this.subscriber = undefined;
    if (subscriber) await subscriber.quit().catch(() => subscriber.disconnect());
  }
}
