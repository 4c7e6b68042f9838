/**
 * "This task is terminal now", heard by every replica: what `Prefer: wait=N` waits on, so no waiter polls.
 * Best effort: a waiter that misses the event (a replica crashed between the write and the publish) answers when its
 * wait ends, with the task as stored.
 */
export interface TaskEvents {
  publish(taskId: string): Promise<void>;
  /** Calls `listener` when `taskId` is published, until the returned function is called. */
  subscribe(taskId: string, listener: () => void): () => void;
  close(): Promise<void>;
}

/** Listeners by task id, for the adapters: each process holds its own waiters. */
export class TaskWaiters {
  private readonly byTask = new Map<string, Set<() => void>>();

  add(taskId: string, listener: () => void): () => void {
    let set = this.byTask.get(taskId);
    if (!set) this.byTask.set(taskId, (set = new Set()));
    set.add(listener);
    return () => {
      set.delete(listener);
      if (!set.size && this.byTask.get(taskId) === set) this.byTask.delete(taskId);
    };
  }

  get size(): number {
    return this.byTask.size;
  }

  wake(taskId: string): void {
    const set = this.byTask.get(taskId);
    if (set) for (const listener of [...set]) listener();
  }
}
