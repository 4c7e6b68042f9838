import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client } from 'pg';

function pgBin(): string {
  const versions = fs.readdirSync('/usr/lib/postgresql').sort((a, b) => Number(b) - Number(a));
  return path.join('/usr/lib/postgresql', versions[0], 'bin');
}

/**
 * A PostgreSQL of the bench's own: initdb into a temp dir as the postgres user (PostgreSQL refuses root), started
 * on a free port, default settings but `shared_buffers` 512 MB; `cpu` pins the server and every backend it forks to
 * one CPU (the vendor stand-in's and the load generator's, so the proxies under test keep theirs). The machine's
 * shared server is never touched.
 */
export function ownServer(cpu?: number): { url: string; cpuSeconds(): number; stop(): void } {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'genway-bench-pg-'));
  const asPostgres = process.getuid?.() === 0 ? ['runuser', '-u', 'postgres', '--'] : [];
  if (asPostgres.length) execFileSync('chown', ['postgres', dir]);
  const sh = (args: string[]) => {
    const [cmd, ...rest] = [...asPostgres, ...args];
    const out = spawnSync(cmd, rest, { encoding: 'utf8' });
    if (out.status !== 0) throw new Error(`${args.join(' ')}: ${out.stdout}${out.stderr}`);
  };
  const port = 20000 + Math.floor(Math.random() * 5000);
  sh([path.join(pgBin(), 'initdb'), '-D', `${dir}/data`, '-U', 'postgres', '--auth=trust', '-E', 'UTF8']);
  sh([
    path.join(pgBin(), 'pg_ctl'),
    '-D',
    `${dir}/data`,
    '-l',
    `${dir}/server.log`,
    '-w',
    '-o',
    `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c shared_buffers=512MB -c max_wal_size=4GB`,
    'start',
  ]);
  if (cpu !== undefined) {
    const pid = fs.readFileSync(`${dir}/data/postmaster.pid`, 'utf8').split('\n')[0].trim();
    const children = spawnSync('pgrep', ['-P', pid], { encoding: 'utf8' }).stdout.split('\n').filter(Boolean);
    for (const p of [pid, ...children]) spawnSync('taskset', ['-a', '-p', '-c', String(cpu), p]);
  }
  const postmaster = fs.readFileSync(`${dir}/data/postmaster.pid`, 'utf8').split('\n')[0].trim();
  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    /** CPU seconds (user + system) of the server and of its processes alive now (a backend that exited is not in it). */
    cpuSeconds: () => {
      const tick = 100; // USER_HZ
      let ticks = 0;
      for (const entry of fs.readdirSync('/proc')) {
        if (!/^\d+$/.test(entry)) continue;
        let stat: string;
        try {
          stat = fs.readFileSync(`/proc/${entry}/stat`, 'utf8');
        } catch {
          continue; // gone meanwhile
        }
        const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
        if (entry === postmaster || fields[1] === postmaster)
          ticks += Number(fields[11]) + Number(fields[12]);
      }
      return ticks / tick;
    },
    stop: () => {
      sh([path.join(pgBin(), 'pg_ctl'), '-D', `${dir}/data`, '-m', 'immediate', '-w', 'stop']);
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** A database of one bench run, and the server it is on. */
export interface BenchDatabase {
  url: string;
  /** The run's own server, when it started one (BENCH_DATABASE_URL and `server` name another). */
  own: ReturnType<typeof ownServer> | undefined;
  /** Drops the database, and stops the run's own server. */
  drop(): Promise<void>;
}

/**
 * A database named `<prefix>_<time>`, created for one run on BENCH_DATABASE_URL's server, else on `server`, else on a
 * PostgreSQL of the run's own (ownServer, pinned to `cpu` when given).
 */
export async function benchDatabase(
  prefix: string,
  options: { server?: string; cpu?: number } = {},
): Promise<BenchDatabase> {
  const given = process.env.BENCH_DATABASE_URL ?? options.server;
  const own = given ? undefined : ownServer(options.cpu);
  const server = given ?? own!.url;
  const name = `${prefix}_${Date.now()}`;
  const admin = new Client({ connectionString: server });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  const url = new URL(server);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    own,
    drop: async () => {
      await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`).catch(() => undefined);
      await admin.end();
      own?.stop();
    },
  };
}
