/**
 * npm run bench:tracing — what OpenTelemetry tracing costs a gateway request, off and on, in one run.
 *
 * Three Genway processes (`node dist/main.js serve`, embedded store), each in front of the bench vendor stand-in
 * (bench/upstream.ts, its own process):
 *   off-A  tracing off (no `tracing.otlpEndpoint`): the baseline
 *   off-B  tracing off, an identical second process: its delta from off-A is the method's own noise
 *   on     tracing on (OTEL_EXPORTER_OTLP_TRACES_ENDPOINT), every request sampled and exported over OTLP/HTTP JSON
 *          to a sink in this process
 * Per round, each target gets N sequential keep-alive requests on each hot route (`POST /v1/messages`, `POST
 * /v1/chat/completions`), the targets in a rotating order. Reported per target: medians over rounds of the wall
 * time per request seen by the client and of the gateway process's CPU time per request (/proc, user + system),
 * with the delta from off-A. A last line times, in a tight loop, the statements tracing adds to a request while it
 * is off (one `if (tracing)` and five `call.span?.` calls). Bounded: BENCH_ROUNDS x BENCH_REQUESTS per route.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { Client } from 'undici';
import { benchKey, machineNote, median, startServer, type Server } from './lib';
import { HOT_ROUTES } from './upstream-data';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const REQUESTS = Number(process.env.BENCH_REQUESTS ?? 2500);
const WARMUP = Number(process.env.BENCH_WARMUP ?? 1000);
const CLK_TCK = 100; // Linux USER_HZ: /proc/<pid>/stat counts CPU time in 1/100 s
const TARGETS = ['off-A', 'off-B', 'on'] as const;
type Target = (typeof TARGETS)[number];

interface Gateway {
  target: Target;
  server: Server;
  client: Client;
  key: string;
}

/** user + system CPU seconds of a process so far. */
function cpuSeconds(pid: number): number {
  const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / CLK_TCK;
}

/** N sequential requests of one route; returns the wall time in µs. Every answer must be the vendor's, unchanged. */
async function drive(g: Gateway, route: (typeof HOT_ROUTES)[number], n: number): Promise<number> {
  const headers =
    route.name === 'messages'
      ? { 'content-type': 'application/json', 'x-api-key': g.key, 'anthropic-version': '2023-06-01' }
      : { 'content-type': 'application/json', authorization: `Bearer ${g.key}` };
  const start = process.hrtime.bigint();
  for (let i = 0; i < n; i++) {
    const res = await g.client.request({ method: 'POST', path: route.path, headers, body: route.body });
    const body = Buffer.from(await res.body.arrayBuffer());
    if (res.statusCode !== 200 || !body.equals(route.answer))
      throw new Error(`${g.target} ${route.path}: ${res.statusCode} ${body.toString().slice(0, 200)}`);
  }
  return Number(process.hrtime.bigint() - start) / 1000;
}

/** A loopback OTLP/HTTP sink: counts the spans it is sent (by their `"spanId"` fields), answers 200 at once. */
async function startSink(): Promise<{ url: string; spans: () => number; close(): Promise<void> }> {
  let spans = 0;
  const marker = Buffer.from('"spanId"');
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      for (let at = body.indexOf(marker); at !== -1; at = body.indexOf(marker, at + 1)) spans++;
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1/traces`,
    spans: () => spans,
    close: () =>
      new Promise((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

function startVendor(): Promise<{ url: string; child: ChildProcess }> {
  const child = spawn(process.execPath, [path.join(__dirname, 'upstream.js')], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  return new Promise((resolve, reject) => {
    child.stdout!.once('data', (d: Buffer) =>
      resolve({ url: `http://127.0.0.1:${d.toString().trim()}`, child }),
    );
    child.once('exit', (code) => reject(new Error(`upstream exited with ${code}`)));
  });
}

/**
 * The statements tracing adds to a request while it is off, in a tight loop, against the same loop without them:
 * nanoseconds per request (the JIT sees `undefined` every time, as it does in a server with tracing off).
 */
function offPathNanos(): number {
  interface SpanLike {
    request(a: unknown, m: unknown): void;
    usage(r: unknown): void;
    upstream(e: unknown): void;
    refused(c: string): void;
    end(s: number, f: boolean): void;
  }
  const tracing = (process.env.BENCH_NEVER_SET ? {} : undefined) as object | undefined;
  const calls: { n: number; span?: SpanLike }[] = Array.from({ length: 1024 }, (_, n) => ({ n }));
  const loops = 20_000_000;
  const time = (guarded: boolean) => {
    let sum = 0;
    const start = process.hrtime.bigint();
    for (let i = 0; i < loops; i++) {
      const call = calls[i & 1023];
      sum += call.n;
      if (guarded) {
        if (tracing) call.span = undefined;
        call.span?.request(call, sum);
        call.span?.usage(call);
        call.span?.upstream(call);
        call.span?.refused('x');
        call.span?.end(200, true);
      }
    }
    if (sum === -1) process.stdout.write(''); // keeps `sum` alive
    return Number(process.hrtime.bigint() - start) / loops;
  };
  const runs = { guarded: [] as number[], bare: [] as number[] };
  for (let r = 0; r < 7; r++) {
    runs.bare.push(time(false));
    runs.guarded.push(time(true));
  }
  return median(runs.guarded) - median(runs.bare);
}

async function main(): Promise<void> {
  const note = machineNote();
  const vendor = await startVendor();
  const sink = await startSink();
  // Batches leave every 200 ms (not the default 5 s), so the sink's count is complete soon after the last round.
  const overlay = path.join(os.tmpdir(), `genway-bench-tracing-${process.pid}.yaml`);
  fs.writeFileSync(overlay, 'tracing:\n  exportDelayMs: 200\n');
  const env = {
    GENWAY_CONFIG: overlay,
    GENWAY_ANTHROPIC_BASE_URL: vendor.url,
    ANTHROPIC_API_KEY: 'sk-bench-vendor',
    GENWAY_OPENAI_BASE_URL: vendor.url,
    OPENAI_API_KEY: 'sk-bench-vendor',
  };
  const gateways: Gateway[] = [];
  try {
    for (const target of TARGETS) {
      const server = await startServer(
        ['serve', '--no-worker'],
        target === 'on' ? { ...env, OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: sink.url } : env,
      );
      const client = new Client(server.base, { pipelining: 1 });
      gateways.push({ target, server, client, key: await benchKey(server.base) });
    }
    for (const g of gateways) for (const route of HOT_ROUTES) await drive(g, route, WARMUP / 2);
    const wall: Record<Target, number[]> = { 'off-A': [], 'off-B': [], on: [] };
    const cpu: Record<Target, number[]> = { 'off-A': [], 'off-B': [], on: [] };
    const perRound = REQUESTS * HOT_ROUTES.length;
    for (let round = 0; round < ROUNDS; round++) {
      // A rotating order: no target always runs first, or always right after another's export work.
      const order = gateways.map((_, i) => gateways[(i + round) % gateways.length]);
      for (const g of order) {
        const before = cpuSeconds(g.server.child.pid!);
        let micros = 0;
        for (const route of HOT_ROUTES) micros += await drive(g, route, REQUESTS);
        const after = cpuSeconds(g.server.child.pid!);
        wall[g.target].push(micros / perRound);
        cpu[g.target].push(((after - before) * 1e6) / perRound);
      }
    }
    const sent = WARMUP + ROUNDS * perRound;
    const deadline = Date.now() + 10_000;
    while (sink.spans() < sent && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    const offNs = offPathNanos();

    const base = { wall: median(wall['off-A']), cpu: median(cpu['off-A']) };
    const signed = (x: number) => (x >= 0 ? `+${x.toFixed(1)}` : x.toFixed(1));
    const delta = (t: Target, x: number, b: number) =>
      t === 'off-A' ? 'baseline' : `${signed(x - b)} (${signed((100 * (x - b)) / b)} %)`;
    const rows = TARGETS.map((t) => {
      const w = median(wall[t]);
      const c = median(cpu[t]);
      return `| ${t} | ${w.toFixed(1)} | ${delta(t, w, base.wall)} | ${c.toFixed(1)} | ${delta(t, c, base.cpu)} |`;
    });
    process.stdout.write(
      [
        '',
        `${ROUNDS} rounds x ${REQUESTS} sequential requests per hot route (messages, chat) per target, keep-alive, ` +
          `loopback; ${WARMUP} warm-up requests per target. ${note}; ` +
          `${os.loadavg()[0].toFixed(1)} 1-min load average after the run.`,
        '',
        '| target | wall µs/request | vs off-A | gateway CPU µs/request | vs off-A |',
        '| - | - | - | - | - |',
        ...rows,
        '',
        `Spans the OTLP sink received from \`on\`: ${sink.spans()} of the ${sent} requests it served.`,
        `The off path's added statements (one \`if (tracing)\`, five \`call.span?.\` calls) in a tight loop: ` +
          `${offNs.toFixed(2)} ns per request.`,
        '',
      ].join('\n'),
    );
  } finally {
    for (const g of gateways) {
      await g.client.close();
      await g.server.stop();
    }
    vendor.child.kill('SIGTERM');
    await sink.close();
    fs.rmSync(overlay, { force: true });
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(1);
});
