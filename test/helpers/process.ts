import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import path from 'node:path';

export const ROOT = path.join(__dirname, '..', '..');
export const MAIN = path.join(ROOT, 'dist', 'main.js');

export interface GenwayProcess {
  child: ChildProcessWithoutNullStreams;
  stdout: () => string;
  stderr: () => string;
  /** Resolves with the exit code. */
  exited: Promise<number | null>;
  /** Waits until stdout or stderr matches. */
  waitFor(pattern: RegExp, timeoutMs?: number): Promise<RegExpMatchArray>;
  kill(signal?: NodeJS.Signals): void;
}

const running = new Set<ChildProcessWithoutNullStreams>();
// Whatever a test file started dies with it, even when an assertion fails first.
afterAll(() => {
  for (const child of running) child.kill('SIGKILL');
});

/** Runs the built server (`node dist/main.js ...`): what the image and `npm start` run. */
export function startGenway(args: string[], env: Record<string, string | undefined> = {}): GenwayProcess {
  const child = spawn(process.execPath, [MAIN, ...args], {
    cwd: ROOT,
    env: { PATH: process.env.PATH, LOG_LEVEL: 'info', ...env },
  });
  running.add(child);
  child.once('exit', () => running.delete(child));
  let out = '';
  let err = '';
  const waiters: (() => void)[] = [];
  const notify = () => waiters.forEach((w) => w());
  child.stdout.on('data', (d) => {
    out += d;
    notify();
  });
  child.stderr.on('data', (d) => {
    err += d;
    notify();
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return {
    child,
    stdout: () => out,
    stderr: () => err,
    exited,
    kill: (signal = 'SIGTERM') => child.kill(signal),
    waitFor(pattern, timeoutMs = 15000) {
      return new Promise((resolve, reject) => {
        const check = () => {
          const m = (out + err).match(pattern);
          if (m) {
            clearTimeout(timer);
            resolve(m);
            return true;
          }
          return false;
        };
        const timer = setTimeout(
          () => reject(new Error(`timed out waiting for ${pattern}; stdout:\n${out}\nstderr:\n${err}`)),
          timeoutMs,
        );
        if (!check()) waiters.push(() => void check());
        void exited.then(() => {
          if (!check()) {
            clearTimeout(timer);
            reject(new Error(`process exited before ${pattern}; stdout:\n${out}\nstderr:\n${err}`));
          }
        });
      });
    },
  };
}

/** The port a started server logged. */
export async function listeningPort(p: GenwayProcess): Promise<number> {
  const m = await p.waitFor(/"port":(\d+)[^\n]*"msg":"genway listening"/);
  return Number(m[1]);
}
