import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import autocannon from 'autocannon';
import { Redis } from 'ioredis';

export const ROOT = path.join(__dirname, '..', '..');
const MAIN = path.join(ROOT, 'dist', 'main.js');
export const ADMIN = 'bench-admin-token-0123456789';
export const REDIS_URL = process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379';

export interface Server {
  base: string;
  child: ChildProcess;
  stop(): Promise<void>;
}

async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as net.AddressInfo).port;
  await new Promise((r) => server.close(r));
  return port;
}

/** Starts `node dist/main.js <args>` (access logs at warn, as a busy deployment would) and waits for /healthz. */
export async function startServer(args: string[], env: Record<string, string> = {}): Promise<Server> {
  const port = await freePort();
  const child = spawn(process.execPath, [MAIN, ...args], {
    env: { PATH: process.env.PATH, PORT: String(port), LOG_LEVEL: 'warn', GENWAY_ADMIN_TOKEN: ADMIN, ...env },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const base = `http://127.0.0.1:${port}`;
  for (let i = 0; ; i++) {
    if (i > 150) throw new Error(`server ${args.join(' ')} did not start`);
    try {
      if ((await fetch(`${base}/healthz`)).ok) break;
    } catch {
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  return {
    base,
    child,
    stop: () =>
      new Promise((r) => {
        if (child.exitCode !== null || child.signalCode !== null) return r();
        child.once('exit', () => r());
        child.kill('SIGTERM');
      }),
  };
}

/** An account with plenty of money and a key without a practical rate limit. */
export async function benchKey(base: string): Promise<string> {
  const headers = { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' };
  const acct = (await (
    await fetch(`${base}/admin/v1/accounts`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ name: 'bench', balanceUsd: 1_000_000 }),
    })
  ).json()) as { data: { accountId: string } };
  const key = (await (
    await fetch(`${base}/admin/v1/accounts/${acct.data.accountId}/keys`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ rateLimit: { ratePerSec: 1_000_000, burst: 1_000_000 } }),
    })
  ).json()) as { data: { key: string } };
  return key.data.key;
}

export interface LoadResult {
  rps: number;
  p50: number;
  p99: number;
  ok: number;
  errors: number;
}

/**
 * Closed-loop load for `seconds` (bounded) with `connections` concurrent clients. `setupRequest` rewrites every
 * request before it is sent (e.g. a fresh Idempotency-Key each time); `onResponse` sees every answer.
 */
export async function load(opts: {
  url: string;
  method?: 'GET' | 'POST';
  headers?: Record<string, string>;
  body?: string;
  connections: number;
  seconds: number;
  setupRequest?: (request: autocannon.Request) => autocannon.Request;
  onResponse?: (status: number, body: string) => void;
}): Promise<LoadResult> {
  const hooks = opts.setupRequest || opts.onResponse;
  const result = await autocannon({
    url: opts.url,
    method: opts.method ?? 'GET',
    headers: opts.headers,
    body: opts.body,
    connections: opts.connections,
    duration: opts.seconds,
    ...(hooks
      ? {
          requests: [
            {
              ...(opts.setupRequest ? { setupRequest: opts.setupRequest } : {}),
              ...(opts.onResponse ? { onResponse: opts.onResponse } : {}),
            },
          ],
        }
      : {}),
  });
  return {
    rps: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    ok: result['2xx'],
    errors: result.non2xx + result.errors + result.timeouts,
  };
}

/** Deletes every key under `prefix` (SCAN + UNLINK): what a bench run wrote on the shared Redis. */
export async function dropPrefix(prefix: string): Promise<number> {
  if (!/^genway-bench-/.test(prefix)) throw new Error(`refusing to drop ${prefix}: not a bench prefix`);
  const redis = new Redis(REDIS_URL, { maxRetriesPerRequest: 3 });
  let dropped = 0;
  try {
    let cursor = '0';
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 1000);
      cursor = next;
      if (keys.length) dropped += await redis.unlink(...keys);
    } while (cursor !== '0');
  } finally {
    redis.disconnect();
  }
  return dropped;
}

/** Call at the start of a run; the returned note says how busy this (shared) machine was at start and at end. */
export function machineNote(): () => string {
  const start = os.loadavg()[0];
  return () =>
    `${os.cpus().length} CPUs, Node ${process.versions.node}, 1-min load average ${start.toFixed(1)} at start and ${os.loadavg()[0].toFixed(1)} at end`;
}

export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

/** Replaces (or appends) one `## <title>` section of docs/performance.md. */
export function writeSection(title: string, body: string): void {
  const file = path.join(ROOT, 'docs', 'performance.md');
  const header =
    '# Performance\n\nEvery table is measured in one run against a baseline from the same run (this machine is shared and noisy: compare rows, not absolute numbers across runs).\n';
  let text = fs.existsSync(file) ? fs.readFileSync(file, 'utf8') : header;
  const section = `## ${title}\n\n${body.trim()}\n`;
  const re = new RegExp(`## ${title.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\n[\\s\\S]*?(?=\\n## |$)`);
  text = re.test(text) ? text.replace(re, section) : `${text.trimEnd()}\n\n${section}`;
  fs.writeFileSync(file, text);
}
