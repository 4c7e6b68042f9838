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

/** The admin token the Redis-mode process tests give Genway. */
export const PROCESS_ADMIN = 'admin-token-0123456789';

/** The environment of a Genway process in Redis mode: `configPath` merged over the defaults, any free port. */
export function redisProcessEnv(redisUrl: string, configPath: string): Record<string, string> {
  return {
    GENWAY_CONFIG: configPath,
    REDIS_URL: redisUrl,
    GENWAY_SECRETS_KEY: 'test-secrets-key-0123456789',
    GENWAY_ADMIN_TOKEN: PROCESS_ADMIN,
    PORT: '0',
  };
}

/** An account holding `balanceUsd` and a key for it, made through the admin API of the Genway at `base`. */
export async function adminAccount(
  base: string,
  balanceUsd: number,
  adminToken = PROCESS_ADMIN,
): Promise<{ accountId: string; key: string }> {
  const headers = { authorization: `Bearer ${adminToken}`, 'content-type': 'application/json' };
  const post = async (path: string, body: unknown) => {
    const res = await fetch(`${base}${path}`, { method: 'POST', headers, body: JSON.stringify(body) });
    if (!res.ok) throw new Error(`${path}: HTTP ${res.status} ${await res.text()}`);
    return ((await res.json()) as { data: Record<string, string> }).data;
  };
  const { accountId } = await post('/admin/v1/accounts', { name: 'test', balanceUsd });
  const { key } = await post(`/admin/v1/accounts/${accountId}/keys`, { name: 'test' });
  return { accountId, key };
}
