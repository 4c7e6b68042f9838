import { performance } from 'node:perf_hooks';

/**
 * Where a start's time goes: marks in milliseconds since the process started (performance.now()), logged with
 * `genway listening` as `startupMs` and read by `npm run bench:startup`. `node` is Node's own boot; each other mark
 * is when that step ended: `main` the bundle parsed, `modules` the server's modules loaded, `config` read and
 * checked, `services` built (stores, queues, connections begun), `listen` the port open. A process-wide record:
 * a start happens once per process.
 */
const marks: Record<string, number> = {
  node: round(performance.nodeTiming.bootstrapComplete),
};

function round(ms: number): number {
  return Math.round(ms * 10) / 10;
}

export function markStartup(step: string): void {
  marks[step] = round(performance.now());
}

export function startupMarks(): Readonly<Record<string, number>> {
  return { ...marks };
}
