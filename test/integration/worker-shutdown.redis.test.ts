import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import {
  adminAccount,
  listeningPort,
  redisProcessEnv,
  startGenway,
  type GenwayProcess,
} from '../helpers/process';
import { describeRedis, dropPrefix, redisUrl, uniquePrefix } from '../helpers/redis';

const GRACE_MS = 1000;

/** A callback receiver that holds the first request open forever and answers 200 to the ones after it. */
async function stuckReceiver() {
  const arrivals: { at: number; body: string }[] = [];
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      arrivals.push({ at: Date.now(), body });
      if (arrivals.length > 1) res.end('ok');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    arrivals,
    url: `http://127.0.0.1:${(server.address() as { port: number }).port}/cb`,
    async waitFor(count: number, timeoutMs: number) {
      const start = Date.now();
      while (arrivals.length < count) {
        if (Date.now() - start > timeoutMs) throw new Error(`receiver got ${arrivals.length} of ${count}`);
        await new Promise((r) => setTimeout(r, 20));
      }
    },
    close: () => {
      server.closeAllConnections();
      return new Promise((r) => server.close(r));
    },
  };
}

describeRedis('worker shutdown (genway worker, Redis)', () => {
  const prefix = uniquePrefix('worker-shutdown');
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'genway-worker-'));
  const configPath = path.join(dir, 'config.json');
  fs.writeFileSync(
    configPath,
    JSON.stringify({
      server: { shutdownGraceMs: GRACE_MS },
      store: { prefix },
      sandbox: { delayMs: 0 },
      security: { allowPrivateTargets: true },
      callbacks: { timeoutMs: 120_000 },
      jobs: { lockDurationMs: 2000, stalledIntervalMs: 1000 },
    }),
  );
  const env = redisProcessEnv(redisUrl!, configPath);

  afterAll(async () => {
    await dropPrefix(prefix);
    fs.rmSync(dir, { recursive: true, force: true });
  });

  test('SIGTERM with a delivery stuck on a receiver exits at the grace; another worker delivers it again', async () => {
    const receiver = await stuckReceiver();
    const processes: GenwayProcess[] = [];
    try {
      const api = startGenway(['serve', '--no-worker'], env);
      processes.push(api);
      const base = `http://127.0.0.1:${await listeningPort(api)}`;
      const { key } = await adminAccount(base, 10);

      const first = startGenway(['worker'], env);
      processes.push(first);
      await first.waitFor(/genway worker started/);
      const submitted = (await (
        await fetch(`${base}/api/v1/generateTask/image-gen`, {
          method: 'POST',
          headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
          body: JSON.stringify({
            request_type: 'callback',
            callback_url: receiver.url,
            input: { mode: 'text-to-image', prompt: 'a lighthouse' },
          }),
        })
      ).json()) as { code: number; data: { taskId: string } };
      expect(submitted.code).toBe(200);
      await receiver.waitFor(1, 15_000); // the callback is in flight, held by the receiver

      const signalled = Date.now();
      first.kill('SIGTERM');
      expect(await first.exited).toBe(0);
      const exitMs = Date.now() - signalled;
      // The grace, plus closing connections; without the cap it waits for the callback timeout (120 s). The bound is
      // far from both, for a loaded machine; the log line below says which ended it.
      expect(exitMs).toBeGreaterThanOrEqual(GRACE_MS - 50);
      expect(exitMs).toBeLessThan(30_000);
      expect(first.stdout()).toContain('jobs still running at the end of the shutdown grace');
      expect(first.stdout()).toContain('"msg":"worker stopped"');

      // At-least-once: the abandoned delivery's lock lapses and the next worker delivers it.
      const second = startGenway(['worker'], env);
      processes.push(second);
      await receiver.waitFor(2, 20_000);
      const [a, b] = receiver.arrivals.map((r) => JSON.parse(r.body));
      expect(b.data.taskId).toBe(submitted.data.taskId);
      expect(b).toEqual(a);
    } finally {
      for (const p of processes) p.kill('SIGKILL');
      await Promise.all(processes.map((p) => p.exited));
      await receiver.close();
    }
  }, 60_000);
});
