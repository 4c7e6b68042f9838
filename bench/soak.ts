/**
 * npm run bench:soak — memory over a long run: RSS and heap of an embedded Genway before, during and after
 * BENCH_SOAK_TASKS sandbox tasks and as many gateway calls (default 20,000 each), with task retention short enough
 * that every task and ledger entry expires within the run. "After" is measured once retention is over, after a full GC in the server:
 * what stays is what the server retains. Bounded: the count, and BENCH_SOAK_MAX_SECONDS (600) for the whole run.
 */
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { benchKey, machineNote, startServer, writeSection } from './lib';

const TASKS = Number(process.env.BENCH_SOAK_TASKS ?? 20_000);
const CALLS = Number(process.env.BENCH_SOAK_CALLS ?? TASKS);
const MAX_SECONDS = Number(process.env.BENCH_SOAK_MAX_SECONDS ?? 600);
const RETENTION_MS = 5_000;
const CONCURRENCY = 32;
const MiB = 1024 * 1024;

const CHAT = JSON.stringify({
  id: 'chatcmpl-soak',
  object: 'chat.completion',
  model: 'gpt-soak',
  choices: [{ index: 0, message: { role: 'assistant', content: 'ok' }, finish_reason: 'stop' }],
  usage: { prompt_tokens: 12, completion_tokens: 3, total_tokens: 15 },
});

interface Sample {
  rss: number;
  heap: number;
}

async function memory(base: string): Promise<Sample> {
  const text = await (await fetch(`${base}/metrics`)).text();
  const read = (name: string) => Number(new RegExp(`^${name} (\\S+)$`, 'm').exec(text)?.[1] ?? NaN);
  return { rss: read('process_resident_memory_bytes'), heap: read('nodejs_heap_size_used_bytes') };
}

async function collected(base: string, pid: number): Promise<Sample> {
  for (let i = 0; i < 3; i++) {
    process.kill(pid, 'SIGUSR2');
    await new Promise((r) => setTimeout(r, 300));
  }
  return memory(base);
}

async function pool(count: number, work: (i: number) => Promise<void>, deadline: number): Promise<number> {
  let next = 0;
  let done = 0;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < count && Date.now() < deadline) {
        await work(next++);
        done++;
      }
    }),
  );
  return done;
}

async function main(): Promise<void> {
  const started = Date.now();
  const deadline = started + MAX_SECONDS * 1000;
  const upstream = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => res.writeHead(200, { 'content-type': 'application/json' }).end(CHAT));
  });
  await new Promise<void>((r) => upstream.listen(0, '127.0.0.1', r));
  const upstreamUrl = `http://127.0.0.1:${(upstream.address() as { port: number }).port}`;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'genway-soak-'));
  const config = path.join(dir, 'config.json');
  fs.writeFileSync(
    config,
    JSON.stringify({
      sandbox: { delayMs: 0 },
      tasks: { retentionMs: RETENTION_MS },
      // BENCH_SOAK_KEEP_LEDGER=1 keeps the default ledger retention (400 days): what the ledger alone retains.
      ...(process.env.BENCH_SOAK_KEEP_LEDGER ? {} : { accounts: { ledgerRetentionMs: RETENTION_MS } }),
      gateway: { prices: { 'gpt-soak': { inputPerMTokUsd: 1, outputPerMTokUsd: 2 } } },
    }),
  );
  const preload = path.join(__dirname, 'gc-on-signal.js');
  const server = await startServer(['serve'], {
    GENWAY_CONFIG: config,
    GENWAY_OPENAI_BASE_URL: upstreamUrl,
    OPENAI_API_KEY: 'sk-soak',
    NODE_OPTIONS: `--expose-gc --require ${preload}`,
  });
  const pid = server.child.pid!;
  const samples: Sample[] = [];
  try {
    const key = await benchKey(server.base);
    const auth = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
    const task = async () => {
      const res = await fetch(`${server.base}/api/v1/generateTask/image-gen`, {
        method: 'POST',
        headers: auth,
        body: JSON.stringify({ input: { mode: 'text-to-image', prompt: 'a lighthouse at dusk' } }),
      });
      if (res.status !== 200) throw new Error(`submit: HTTP ${res.status} ${await res.text()}`);
      await res.arrayBuffer();
    };
    const call = async () => {
      const res = await fetch(`${server.base}/v1/chat/completions`, {
        method: 'POST',
        headers: auth,
        body: JSON.stringify({ model: 'gpt-soak', messages: [{ role: 'user', content: 'hi' }] }),
      });
      if (res.status !== 200) throw new Error(`gateway: HTTP ${res.status} ${await res.text()}`);
      await res.arrayBuffer();
    };

    // Warm-up: code paths compiled, pools and caches filled; then the baseline.
    await pool(500, task, deadline);
    await pool(500, call, deadline);
    await new Promise((r) => setTimeout(r, RETENTION_MS + 1000));
    await task(); // tasks are swept as tasks are written
    const before = await collected(server.base, pid);

    const sampler = setInterval(() => void memory(server.base).then((s) => samples.push(s)), 1000);
    const loadStart = Date.now();
    const [tasksDone, callsDone] = await Promise.all([
      pool(TASKS, task, deadline),
      pool(CALLS, call, deadline),
    ]);
    const loadSeconds = (Date.now() - loadStart) / 1000;
    clearInterval(sampler);
    const peak = samples.reduce(
      (m, s) => ({ rss: Math.max(m.rss, s.rss), heap: Math.max(m.heap, s.heap) }),
      before,
    );

    // Every task finished and its retention over; one write sweeps the store.
    await new Promise((r) => setTimeout(r, RETENTION_MS + 2000));
    await task();
    const after = await collected(server.base, pid);

    const mib = (n: number) => (n / MiB).toFixed(1);
    const table = [
      `${machineNote()}`,
      '',
      `${tasksDone} sandbox tasks and ${callsDone} priced gateway calls in ${loadSeconds.toFixed(0)} s (${CONCURRENCY} + ${CONCURRENCY} concurrent), embedded store, task retention ${RETENTION_MS / 1000} s, ledger retention ${process.env.BENCH_SOAK_KEEP_LEDGER ? 'the default (400 days: BENCH_SOAK_KEEP_LEDGER)' : `${RETENTION_MS / 1000} s`}; "after" is after retention ended and a full GC.`,
      '',
      '| | RSS (MiB) | heap used (MiB) |',
      '| - | - | - |',
      `| before (after warm-up, GC) | ${mib(before.rss)} | ${mib(before.heap)} |`,
      `| peak during the load | ${mib(peak.rss)} | ${mib(peak.heap)} |`,
      `| after (retention over, GC) | ${mib(after.rss)} | ${mib(after.heap)} |`,
      `| retained (after − before) | ${mib(after.rss - before.rss)} | ${mib(after.heap - before.heap)} |`,
    ].join('\n');
    process.stdout.write(`${table}\n`);
    writeSection('Memory over a soak (bench:soak)', `Command: \`npm run bench:soak\`.\n\n${table}`);
  } finally {
    await server.stop();
    upstream.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`${(err as Error).stack ?? String(err)}\n`);
  process.exit(1);
});
