import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { freePort } from './ports';

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
  let port = await freePort();
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

  // A free port is free when read, not when bound: another process may take it first. The first start takes
  // another port then; a restart keeps its own (the test's clients and replicas point at it).
  for (let attempt = 1; ; attempt++) {
    try {
      await start();
      break;
    } catch (err) {
      if (attempt >= 5 || !String((err as Error).message).includes('Address already in use')) throw err;
      port = await freePort();
    }
  }
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

/** A Redis Cluster of a test's own: `masters` masters, each with one replica, on loopback ports. */
export interface OwnCluster {
  /** `host:port` of every node (what store.clusterNodes takes; ioredis needs only some of them). */
  nodes: string[];
  /** The nodes, masters first as created (a replica's master may change after a failover). */
  servers: OwnRedis[];
  /** The nodes created as masters (before any failover). */
  masters: OwnRedis[];
  /** The node serving `slot` as master now, asked of the cluster. */
  masterOf(slot: number): Promise<OwnRedis>;
  stop(): Promise<void>;
}

function redisCli(args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    const proc = spawn('redis-cli', args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    proc.stdout!.on('data', (d: Buffer) => (out += d.toString()));
    proc.stderr!.on('data', (d: Buffer) => (out += d.toString()));
    proc.once('exit', (code) =>
      code === 0 ? resolve(out) : reject(new Error(`redis-cli ${args.join(' ')}:\n${out}`)),
    );
  });
}

/**
 * Starts 2 × `masters` redis-servers in cluster mode and joins them with `redis-cli --cluster create` (one replica
 * per master). A master that stops answering is replaced by its replica after `nodeTimeoutMs`.
 */
export async function ownCluster(masters = 3, nodeTimeoutMs = 1000): Promise<OwnCluster> {
  const servers: OwnRedis[] = [];
  try {
    for (let i = 0; i < masters * 2; i++) {
      const bus = await freePort();
      servers.push(
        await ownRedis([
          '--cluster-enabled',
          'yes',
          '--cluster-config-file',
          'nodes.conf',
          '--cluster-node-timeout',
          String(nodeTimeoutMs),
          '--cluster-port',
          String(bus),
        ]),
      );
    }
    const nodes = servers.map((s) => `127.0.0.1:${s.port}`);
    await redisCli(['--cluster', 'create', ...nodes, '--cluster-replicas', '1', '--cluster-yes']);
    // Every node agrees the cluster is whole, and every replica has its master's data.
    const deadline = Date.now() + 20_000;
    for (const s of servers) {
      for (;;) {
        const info = await redisCli(['-p', String(s.port), 'cluster', 'info']);
        const replication = await redisCli(['-p', String(s.port), 'info', 'replication']);
        if (info.includes('cluster_state:ok') && !replication.includes('master_link_status:down')) break;
        if (Date.now() > deadline) throw new Error(`cluster node ${s.port} not ready:\n${info}`);
        await new Promise((r) => setTimeout(r, 100));
      }
    }
    return {
      nodes,
      servers,
      masters: servers.slice(0, masters),
      masterOf: async (slot) => {
        for (const asked of servers) {
          const slots = await redisCli(['-p', String(asked.port), '--json', 'cluster', 'slots']).catch(
            () => '',
          );
          if (!slots.startsWith('[')) continue; // that node is down
          const ranges = JSON.parse(slots) as [number, number, [string, number, string]][];
          const range = ranges.find(([from, to]) => slot >= from && slot <= to);
          if (!range) throw new Error(`no master serves slot ${slot}`);
          return servers.find((s) => s.port === range[2][1])!;
        }
        throw new Error('no cluster node answers');
      },
      stop: async () => {
        await Promise.all(servers.map((s) => s.stop()));
      },
    };
  } catch (err) {
    await Promise.all(servers.map((s) => s.stop()));
    throw err;
  }
}
