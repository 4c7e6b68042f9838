/**
 * npm run bench:routing — what a route costs a call, in one run.
 *
 * 1. The routing step alone, in process: CPU per call of finding a call's targets (`ModelRoutes.plan`), reading the call
 *    from its envelope and building one target's request (the model's name changed in the body, or Bedrock's envelope),
 *    against a baseline measured in the same loop: JSON.parse of the same body, which every metered call pays already.
 * 2. Through Genway (embedded, its own process pinned to CPU 1, the vendor stand-in of bench/upstream.ts): the process's
 *    CPU per call of `POST /v1/messages` naming (a) a model no route names on a Genway with no routes, (b) the same on a
 *    Genway with 100 routes, (c) a route to the same vendor under another name. Taken in turns, 32 connections.
 * Targets (issue 33): no route pays nothing new (b against a); routing costs under 5 µs of CPU (part 1; c against a).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { loadConfig } from '../src/config';
import { ROOT } from './lib';
import { ModelRoutes } from '../src/gateway/model-routes';
import { readModelCall } from '../src/gateway/routed';
import { bindUpstreams } from '../src/gateway/upstream';
import { VENDOR_BY_NAME } from '../src/gateway/vendors';
import type { RouteSpec } from '../src/gateway/vendor';
import { benchKey, machineNote, median, startServer, writeSection } from './lib';
import { pin, pinned, startScript, throughputs, type Target } from './proxies';
import { HOT_ROUTES } from './upstream-data';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const CALLS = Number(process.env.BENCH_CALLS ?? 200_000);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 6);
const VENDOR_KEY = 'sk-bench-vendor';

/** CPU µs per iteration of `work`, `n` times (user + system). */
function cpuPerCall(n: number, work: () => unknown): number {
  const before = process.cpuUsage();
  for (let i = 0; i < n; i++) work();
  const used = process.cpuUsage(before);
  return (used.user + used.system) / n;
}

function inProcess(): string[] {
  const config = loadConfig({
    env: {},
    defaultsFile: path.join(ROOT, 'config', 'default.yaml'),
    overlay: {
      gateway: {
        upstreams: [
          {
            id: 'aws',
            type: 'bedrock',
            region: 'us-east-1',
            accessKeyId: 'AKIABENCH',
            secretAccessKey: 'secret',
          },
        ],
        routes: [
          ...Array.from({ length: 100 }, (_, i) => ({
            model: `route-${i}`,
            targets: [{ upstream: 'anthropic' }],
          })),
          { model: 'claude-routed', targets: [{ upstream: 'anthropic', model: 'claude-bench' }] },
          {
            model: 'claude-bedrock',
            targets: [{ upstream: 'aws', model: 'anthropic.claude-sonnet-4-5-20250929-v1:0' }],
          },
        ],
      },
    },
  });
  const upstreams = bindUpstreams(config.gateway);
  const routes = new ModelRoutes(config.gateway.routes, upstreams.byId);
  const spec = VENDOR_BY_NAME.anthropic.routes.find((r) => r.path === '/v1/messages') as RouteSpec & {
    call: NonNullable<RouteSpec['call']>;
  };
  const body = HOT_ROUTES[0].body;
  const headers = { 'anthropic-version': '2023-06-01', 'x-api-key': 'gwk_x' };
  const step = (model: string) => () => {
    const text = body.replace('claude-bench', model);
    const json = JSON.parse(text) as Record<string, unknown>;
    const [target] = routes.plan(model)!;
    const call = readModelCall(VENDOR_BY_NAME.anthropic, spec, text, json, headers, '');
    return target.upstream.calls.request(call, target.model);
  };
  const rows = {
    'baseline: JSON.parse of the body (paid by every metered call)': [] as number[],
    'a model no route names: plan() finds none': [] as number[],
    'route to Anthropic’s API under another name: plan + read + request': [] as number[],
    'route to Bedrock: plan + read + the envelope changed': [] as number[],
  };
  const [baseline, miss, renamed, bedrock] = Object.values(rows);
  for (let round = 0; round < ROUNDS; round++) {
    baseline.push(cpuPerCall(CALLS, () => JSON.parse(body)));
    miss.push(cpuPerCall(CALLS, () => routes.plan('claude-bench')));
    // What routing adds to a call is its own work, without the parse the baseline stands for.
    renamed.push(cpuPerCall(CALLS, step('claude-routed')) - baseline[round]);
    bedrock.push(cpuPerCall(CALLS, step('claude-bedrock')) - baseline[round]);
  }
  upstreams.close();
  return [
    `In process, ${ROUNDS} rounds of ${CALLS} calls each, medians (per round in brackets). A routed call's rows are its routing work beyond the baseline's parse, measured in the same round; the ${HOT_ROUTES[0].body.length}-byte body of bench:gateway's messages route; 102 routes configured.`,
    '',
    '| step | CPU µs per call |',
    '| - | - |',
    ...Object.entries(rows).map(
      ([name, values]) =>
        `| ${name} | ${median(values).toFixed(2)} (${values.map((v) => v.toFixed(2)).join(' / ')}) |`,
    ),
  ];
}

async function throughGenway(): Promise<string[]> {
  const upstream = await startScript('upstream');
  const vendorEnv = {
    GENWAY_ANTHROPIC_BASE_URL: `http://127.0.0.1:${upstream.port}`,
    ANTHROPIC_API_KEY: VENDOR_KEY,
  };
  const file = path.join(os.tmpdir(), `genway-bench-routing-${process.pid}.json`);
  fs.writeFileSync(
    file,
    JSON.stringify({
      gateway: {
        routes: [
          ...Array.from({ length: 100 }, (_, i) => ({
            model: `route-${i}`,
            targets: [{ upstream: 'anthropic' }],
          })),
          { model: 'claude-routed', targets: [{ upstream: 'anthropic', model: 'claude-bench' }] },
        ],
      },
    }),
  );
  const plain = await startServer(['serve'], vendorEnv);
  const routed = await startServer(['serve'], { ...vendorEnv, GENWAY_CONFIG: file });
  try {
    for (const s of [plain, routed]) pin(s.child.pid!, 1);
    pin(upstream.child.pid!, 0);
    pin(process.pid, 0);
    const json = { 'content-type': 'application/json', 'anthropic-version': '2023-06-01' };
    const target = (name: string, base: string, pid: number, key: string): Target => ({
      name,
      base,
      pid,
      headers: { ...json, 'x-api-key': key },
    });
    const targets = [
      target('no routes, model unrouted', plain.base, plain.child.pid!, await benchKey(plain.base)),
      target('100 routes, model unrouted', routed.base, routed.child.pid!, await benchKey(routed.base)),
    ];
    const routedKey = await benchKey(routed.base);
    const messages = HOT_ROUTES[0];
    const renamed = { ...messages, body: messages.body.replace('claude-bench', 'claude-routed') };
    const rows: { name: string; rps: number[]; cpu: number[] }[] = [
      ...targets.map((t) => t.name),
      'routed to the same vendor',
    ].map((name) => ({ name, rps: [], cpu: [] }));
    // Warm up every path once.
    await throughputs(targets, messages, 2, 1);
    for (let round = 0; round < 3; round++) {
      const [a, b] = await throughputs(targets, messages, SECONDS, 3);
      const [c] = await throughputs(
        [target('routed', routed.base, routed.child.pid!, routedKey)],
        renamed as never,
        SECONDS / 2,
        3,
      );
      for (const [i, r] of [a, b, c].entries()) {
        rows[i].rps.push(r.rps);
        rows[i].cpu.push(r.cpuUsPerReq);
      }
    }
    const base = median(rows[0].cpu);
    return [
      `Through Genway embedded (pinned to CPU 1${pinned() ? '' : ': taskset missing, not pinned'}), \`POST /v1/messages\` at 32 connections, 3 rounds in turns, medians.`,
      '',
      '| call | requests/s | CPU µs per call | against no routes |',
      '| - | - | - | - |',
      ...rows.map(
        (r) =>
          `| ${r.name} | ${median(r.rps).toFixed(0)} | ${median(r.cpu).toFixed(1)} (${r.cpu.map((v) => v.toFixed(0)).join(' / ')}) | ${(median(r.cpu) / base).toFixed(3)}x |`,
      ),
    ];
  } finally {
    await Promise.all([plain.stop(), routed.stop()]);
    upstream.child.kill();
    fs.rmSync(file, { force: true });
  }
}

async function main(): Promise<void> {
  const lines = [machineNote(), '', ...inProcess(), ''];
  if (process.env.BENCH_IN_PROCESS_ONLY !== '1') lines.push(...(await throughGenway()));
  const text = lines.join('\n');
  process.stdout.write(`${text}\n`);
  writeSection('Routing (issue 33)', text);
}

void main().then(
  () => process.exit(0),
  (err: unknown) => {
    console.error(err);
    process.exit(1);
  },
);
