/** What the gateway benches share: pinning processes to a CPU, the bench's own servers, and throughput in turns. */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import autocannon from 'autocannon';
import { benchKey, procCpuSeconds, type Server } from './lib';
import type { HOT_ROUTES } from './upstream-data';

type Route = (typeof HOT_ROUTES)[number];

export interface Target {
  name: string;
  base: string;
  /** The proxy process (none for direct). */
  pid?: number;
  headers: Record<string, string>;
}

let allPinned = true;

/** Whether every pin took (taskset present): the tables say how the processes were placed. */
export const pinned = () => allPinned;

/**
 * Pins a process (all its threads) to one CPU: the proxies under test get CPU 1, while the load generator and the
 * vendor stand-in share CPU 0. Throughput then measures the proxy's own cost, not who won the scheduler. No-op where
 * taskset is missing.
 */
export function pin(pid: number, cpu: number): void {
  try {
    execFileSync('taskset', ['-a', '-p', '-c', String(cpu), String(pid)], { stdio: 'ignore' });
  } catch {
    allPinned = false;
  }
}

/** A Genway process as a target, with a bench key of its own. */
export async function genwayTarget(name: string, server: Server): Promise<Target> {
  const key = await benchKey(server.base);
  return { name, base: server.base, pid: server.child.pid, headers: { 'x-api-key': key } };
}

/** The bare pipe as a target: it swaps in the vendor's key itself, whatever key the client sends. */
export function bareTarget(bare: { port: number; child: ChildProcess }): Target {
  return {
    name: 'bare',
    base: `http://127.0.0.1:${bare.port}`,
    pid: bare.child.pid,
    headers: { 'x-api-key': 'gwk' },
  };
}

/** Starts a bench script that prints its port on its first stdout line. */
export function startScript(
  name: string,
  args: string[] = [],
): Promise<{ port: number; child: ChildProcess }> {
  const child = spawn(process.execPath, [path.join(__dirname, `${name}.js`), ...args], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  return new Promise((resolve, reject) => {
    child.stdout!.once('data', (d: Buffer) => resolve({ port: Number(d.toString().trim()), child }));
    child.once('exit', (code) => reject(new Error(`${name} exited with ${code}`)));
  });
}

/**
 * A route's headers as its vendor's SDK sends them: the anthropic SDK puts the key in `x-api-key`, the openai SDK in
 * `Authorization: Bearer` (Genway tells the vendors of the shared `/v1` paths apart by that header).
 */
export function routeHeaders(target: Target, route: { name: string }): Record<string, string> {
  if (route.name !== 'chat') return target.headers;
  const { 'x-api-key': key, ...rest } = target.headers;
  return { ...rest, authorization: `Bearer ${key}` };
}

/** A closed loop at 32 connections on one route of the target, as its vendor's SDK sends it. */
export function closedLoop(target: Target, route: Route, seconds: number) {
  return autocannon({
    url: `${target.base}${route.path}`,
    method: 'POST',
    headers: routeHeaders(target, route),
    body: route.body,
    connections: 32,
    duration: seconds,
  });
}

/** One slice of closed loop: what it answered, in how long, and the proxy's CPU seconds meanwhile. */
async function slice(target: Target, route: Route, seconds: number) {
  const cpuBefore = target.pid ? procCpuSeconds(target.pid) : 0;
  const result = await closedLoop(target, route, seconds);
  return {
    done: result['2xx'],
    seconds: result.duration,
    cpu: target.pid ? procCpuSeconds(target.pid) - cpuBefore : NaN,
    errors: result.non2xx + result.errors,
  };
}

/**
 * Requests/s at 32 connections for every target, `seconds` each in `slices` slices taken in turns (A B C A B C ...):
 * noise on this shared machine comes in bursts of seconds, which a run of each target after the other meets in one
 * target's run only, and turns spread over all of them alike. The caller keeps every proxy pinned to CPU 1 (an idle
 * one's timers take a fraction of a per cent of it), so none is measured on caches just moved. CPU is the proxy's
 * user+system time from /proc over its slices divided by the requests it answered.
 */
export async function throughputs(targets: Target[], route: Route, seconds: number, slices: number) {
  const sums = targets.map(() => ({ done: 0, seconds: 0, cpu: 0, errors: 0 }));
  for (let i = 0; i < slices; i++) {
    for (const [t, target] of targets.entries()) {
      const r = await slice(target, route, seconds / slices);
      sums[t].done += r.done;
      sums[t].seconds += r.seconds;
      sums[t].cpu += r.cpu;
      sums[t].errors += r.errors;
    }
  }
  return sums.map((sum) => ({
    rps: sum.done / sum.seconds,
    cpuUsPerReq: (sum.cpu * 1e6) / sum.done,
    errors: sum.errors,
  }));
}
