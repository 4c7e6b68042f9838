import { spawn } from 'node:child_process';
import path from 'node:path';
import pino from 'pino';
import { BullScheduler } from '../../src/store/redis/scheduler';
import { MemoryScheduler } from '../../src/store/memory/scheduler';
import type { JobContext, Scheduler } from '../../src/jobs';
import {
  clusterTarget,
  describeRedis,
  dropClusterPrefix,
  dropPrefix,
  redisClusterNodes,
  redisUrl,
  uniquePrefix,
} from '../helpers/redis';

const silent = pino({ level: 'silent' });
const jobsConfig = { lockDurationMs: 1000, stalledIntervalMs: 500, concurrency: 4 };

interface Adapter {
  name: string;
  create(prefix: string): Scheduler;
  drop(prefix: string): Promise<void>;
}

const adapters: Adapter[] = [
  { name: 'memory', create: () => new MemoryScheduler(silent), drop: async () => undefined },
];
if (redisUrl)
  adapters.push({
    name: 'bullmq',
    create: (prefix) => new BullScheduler(redisUrl!, prefix, jobsConfig, silent),
    drop: dropPrefix,
  });
if (redisClusterNodes)
  adapters.push({
    name: 'bullmq on a Redis Cluster',
    create: (prefix) => new BullScheduler(clusterTarget(), prefix, jobsConfig, silent),
    drop: (prefix) => dropClusterPrefix(prefix),
  });

/** Resolves with the first `count` calls of a handler. */
function collector<T>(count: number) {
  const calls: { payload: T; context: JobContext; at: number }[] = [];
  let resolve!: () => void;
  const done = new Promise<void>((r) => (resolve = r));
  const handler = async (payload: T, context: JobContext) => {
    calls.push({ payload, context, at: Date.now() });
    if (calls.length === count) resolve();
  };
  return { calls, done, handler };
}

describe.each(adapters.map((a) => [a.name, a] as const))('Scheduler contract (%s)', (_name, adapter) => {
  let prefix: string;
  let scheduler: Scheduler;
  beforeEach(() => {
    prefix = uniquePrefix('jobs');
    scheduler = adapter.create(prefix);
  });
  afterEach(async () => {
    await scheduler.close();
    await adapter.drop(prefix);
  });

  test('a job runs once with its payload', async () => {
    const c = collector<{ n: number }>(1);
    scheduler.work('task-progress', c.handler);
    await scheduler.enqueue('task-progress', { n: 7 });
    await c.done;
    expect(c.calls.map((x) => x.payload)).toEqual([{ n: 7 }]);
    expect(c.calls[0].context.attemptsMade).toBe(0);
  });

  test('a delayed job does not run before its delay', async () => {
    const c = collector<{ n: number }>(1);
    scheduler.work('task-progress', c.handler);
    const start = Date.now();
    await scheduler.enqueue('task-progress', { n: 1 }, { delayMs: 300 });
    await c.done;
    expect(c.calls[0].at - start).toBeGreaterThanOrEqual(290);
  });

  test('a job id already waiting is not added twice', async () => {
    const c = collector<{ n: number }>(1);
    await scheduler.enqueue('task-progress', { n: 1 }, { jobId: 'same:id', delayMs: 100 });
    await scheduler.enqueue('task-progress', { n: 2 }, { jobId: 'same:id', delayMs: 100 });
    await scheduler.enqueue('deliveries', { n: 3 }, { jobId: 'same:id', delayMs: 100 });
    scheduler.work('task-progress', c.handler);
    const other = collector<{ n: number }>(1);
    scheduler.work('deliveries', other.handler);
    await Promise.all([c.done, other.done]);
    await new Promise((r) => setTimeout(r, 300));
    expect(c.calls.map((x) => x.payload)).toEqual([{ n: 1 }]);
    expect(other.calls.map((x) => x.payload)).toEqual([{ n: 3 }]);
  });

  test('a handler that throws is retried with attemptsMade counted', async () => {
    const contexts: number[] = [];
    let resolve!: () => void;
    const done = new Promise<void>((r) => (resolve = r));
    scheduler.work<{ n: number }>('deliveries', async (_payload, context) => {
      contexts.push(context.attemptsMade);
      if (context.attemptsMade === 0) throw new Error('transient');
      resolve();
    });
    await scheduler.enqueue('deliveries', { n: 1 });
    await done;
    expect(contexts).toEqual([0, 1]);
  });
});

describeRedis('BullMQ scheduler durability', () => {
  test('a job whose worker process is killed mid-flight is finished by another worker', async () => {
    const prefix = uniquePrefix('crash');
    const child = spawn(process.execPath, [
      path.join(__dirname, '..', 'fixtures', 'hanging-worker.js'),
      redisUrl!,
      prefix,
    ]);
    let out = '';
    const started = new Promise<void>((resolve) =>
      child.stdout.on('data', (d) => {
        out += d;
        if (out.includes('started')) resolve();
      }),
    );
    const producer = new BullScheduler(redisUrl!, prefix, jobsConfig, silent);
    const survivor = new BullScheduler(redisUrl!, prefix, jobsConfig, silent);
    try {
      await producer.enqueue('task-progress', { taskId: 'task_crash' }, { jobId: 'task_crash:progress' });
      await started;
      child.kill('SIGKILL');
      const c = collector<{ taskId: string }>(1);
      survivor.work('task-progress', c.handler);
      await c.done;
      expect(out).toContain('started {"taskId":"task_crash"}');
      expect(c.calls.map((x) => x.payload)).toEqual([{ taskId: 'task_crash' }]);
    } finally {
      child.kill('SIGKILL');
      await producer.close();
      await survivor.close();
      await dropPrefix(prefix);
    }
  });
});
