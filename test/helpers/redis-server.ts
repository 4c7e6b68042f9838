import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { freePort } from './gateway';

/**
 * A Redis of a test's own (Debian's redis-server on a loopback port), to kill and restart without touching the
 * shared one. AOF with fsync on every write: what was acknowledged before a SIGKILL is there after the restart.
 */
export interface OwnRedis {
  url: string;
  port: number;
  /** Starts it (again, on the same port and data directory). */
  start(): Promise<void>;
  /** Sends `signal` and waits for the process to exit. */
  kill(signal?: NodeJS.Signals): Promise<void>;
  /** Kills it and removes its data. */
  stop(): Promise<void>;
}

export async function ownRedis(extraArgs: string[] = []): Promise<OwnRedis> {
  const port = await freePort();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'genway-redis-'));
  let child: ChildProcess | undefined;
  let exited: Promise<void> = Promise.resolve();

  const start = () =>
    new Promise<void>((resolve, reject) => {
      const args = [
        '--port',
        String(port),
        '--bind',
        '127.0.0.1',
        '--dir',
        dir,
        '--appendonly',
        'yes',
        '--appendfsync',
        'always',
        '--save',
        '',
        ...extraArgs,
      ];
      const proc = spawn('redis-server', args, { stdio: ['ignore', 'pipe', 'pipe'] });
      child = proc;
      exited = new Promise((r) => proc.once('exit', () => r()));
      let out = '';
      const timer = setTimeout(() => reject(new Error(`redis-server did not start:\n${out}`)), 10_000);
      proc.stdout!.on('data', (d: Buffer) => {
        out += d.toString();
        if (out.includes('Ready to accept connections')) {
          clearTimeout(timer);
          resolve();
        }
      });
      proc.once('exit', (code) => {
        clearTimeout(timer);
        reject(new Error(`redis-server exited (${code}):\n${out}`));
      });
    });

  const kill = async (signal: NodeJS.Signals = 'SIGKILL') => {
    if (child && child.exitCode === null && child.signalCode === null) child.kill(signal);
    await exited;
  };

  await start();
  return {
    url: `redis://127.0.0.1:${port}`,
    port,
    start,
    kill,
    stop: async () => {
      await kill();
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** A Redis Sentinel of a test's own (redis-server --sentinel) watching `mymaster` at 127.0.0.1:`masterPort`. */
export interface OwnSentinel {
  address: string;
  port: number;
  stop(): Promise<void>;
}

export async function ownSentinel(masterPort: number, quorum = 1): Promise<OwnSentinel> {
  const port = await freePort();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'genway-sentinel-'));
  const conf = path.join(dir, 'sentinel.conf');
  fs.writeFileSync(
    conf,
    [
      `port ${port}`,
      'bind 127.0.0.1',
      `dir ${dir}`,
      `sentinel monitor mymaster 127.0.0.1 ${masterPort} ${quorum}`,
      'sentinel down-after-milliseconds mymaster 1000',
      'sentinel failover-timeout mymaster 5000',
      'sentinel parallel-syncs mymaster 1',
      '',
    ].join('\n'),
  );
  const proc = spawn('redis-server', [conf, '--sentinel'], { stdio: ['ignore', 'pipe', 'pipe'] });
  const exited = new Promise<void>((r) => proc.once('exit', () => r()));
  await new Promise<void>((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => reject(new Error(`redis sentinel did not start:\n${out}`)), 10_000);
    proc.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      if (out.includes('+monitor master')) {
        clearTimeout(timer);
        resolve();
      }
    });
    proc.once('exit', (code) => reject(new Error(`redis sentinel exited (${code}):\n${out}`)));
  });
  return {
    address: `127.0.0.1:${port}`,
    port,
    stop: async () => {
      if (proc.exitCode === null && proc.signalCode === null) proc.kill('SIGKILL');
      await exited;
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}
