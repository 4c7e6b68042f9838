import { execFileSync, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client } from 'pg';
import { freePort } from './ports';

/**
 * The PostgreSQL the log tests use: GENWAY_TEST_DATABASE_URL (.ci/run creates a database per run and passes it), or
 * the machine's own on 127.0.0.1:5432. Each test file makes a database of its own on that server and drops it after;
 * outage and restart tests start a private server (ownPostgres) and never touch the shared one.
 */
export const postgresUrl =
  process.env.GENWAY_TEST_DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/postgres';

function answers(url: string): boolean {
  const { hostname, port } = new URL(url);
  try {
    execFileSync('pg_isready', ['-q', '-h', hostname, '-p', port || '5432', '-t', '3'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

const available = answers(postgresUrl);
if (!available) {
  if (process.env.GENWAY_REQUIRE_POSTGRES === '1')
    throw new Error(`GENWAY_REQUIRE_POSTGRES=1 but no PostgreSQL answers at ${new URL(postgresUrl).host}`);
  process.stderr.write(
    `\n!! NO POSTGRESQL at ${new URL(postgresUrl).host}: the PostgreSQL log tests are SKIPPED.\n\n`,
  );
}

/** `describe` for suites that need PostgreSQL: runs when one answers, announced skip otherwise. */
export const describePostgres: jest.Describe = available ? describe : describe.skip;
export const postgresAvailable = available;

/** The URL of database `name` on the server of `base`. */
export function databaseUrl(base: string, name: string): string {
  const url = new URL(base);
  url.pathname = `/${name}`;
  return url.toString();
}

export interface TestDatabase {
  url: string;
  name: string;
  drop(): Promise<void>;
}

/** A database of this test's own on the server of `base` (the shared one by default), dropped by `drop()`. */
export async function createTestDatabase(label = 't', base = postgresUrl): Promise<TestDatabase> {
  const name = `genway_${label.replace(/[^a-z0-9_]/g, '_')}_${randomBytes(5).toString('hex')}`;
  const admin = new Client({ connectionString: base });
  admin.on('error', () => undefined);
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE ${name}`);
  } finally {
    await admin.end();
  }
  return {
    url: databaseUrl(base, name),
    name,
    drop: async () => {
      const c = new Client({ connectionString: base });
      c.on('error', () => undefined);
      await c.connect();
      try {
        await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      } finally {
        await c.end();
      }
    },
  };
}

/** Runs SQL on a database and returns its rows. */
export async function sql<T = Record<string, unknown>>(
  url: string,
  text: string,
  params: unknown[] = [],
): Promise<T[]> {
  const c = new Client({ connectionString: url });
  c.on('error', () => undefined); // a database dropped (WITH FORCE) under it: the query fails, the test sees that
  await c.connect();
  try {
    return (await c.query(text, params)).rows as T[];
  } finally {
    await c.end();
  }
}

/** A PostgreSQL server of a test's own (initdb + pg_ctl into a temp dir, on a free loopback port): to stop and restart. */
export interface OwnPostgres {
  /** The `postgres` database of this server. */
  url: string;
  port: number;
  start(): Promise<void>;
  /** Stops it (`immediate`: as a crash would, no checkpoint). */
  stop(mode?: 'fast' | 'immediate'): Promise<void>;
  /** Stops it and removes its data. */
  destroy(): Promise<void>;
}

function binDir(): string {
  const versions = fs.readdirSync('/usr/lib/postgresql').sort((a, b) => Number(b) - Number(a));
  return path.join('/usr/lib/postgresql', versions[0], 'bin');
}

/** The owner of the data directory: PostgreSQL refuses to run as root. */
function postgresUser(): { uid: number; gid: number } | undefined {
  if (process.getuid?.() !== 0) return undefined;
  const line = fs
    .readFileSync('/etc/passwd', 'utf8')
    .split('\n')
    .find((l) => l.startsWith('postgres:'));
  if (!line) throw new Error('running as root, and no postgres user to run a private PostgreSQL as');
  const [, , uid, gid] = line.split(':');
  return { uid: Number(uid), gid: Number(gid) };
}

function run(file: string, args: string[], user: { uid: number; gid: number } | undefined): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(file, args, { ...(user ?? {}), stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (out += d));
    child.once('error', reject);
    child.once('exit', (code) =>
      code === 0 ? resolve(out) : reject(new Error(`${file} ${args.join(' ')}: ${out}`)),
    );
  });
}

export async function ownPostgres(): Promise<OwnPostgres> {
  const bin = binDir();
  const user = postgresUser();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'genway-pg-'));
  const data = path.join(dir, 'data');
  if (user) fs.chownSync(dir, user.uid, user.gid);
  await run(
    path.join(bin, 'initdb'),
    ['-D', data, '-U', 'postgres', '--auth=trust', '-E', 'UTF8', '--no-sync'],
    user,
  );
  let port = await freePort();
  const start = async () => {
    await run(
      path.join(bin, 'pg_ctl'),
      [
        '-D',
        data,
        '-l',
        path.join(dir, 'server.log'),
        '-w',
        '-t',
        '30',
        '-o',
        `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off -c shared_buffers=32MB -c max_connections=50`,
        'start',
      ],
      user,
    );
  };
  for (let attempt = 1; ; attempt++) {
    try {
      await start();
      break;
    } catch (err) {
      if (attempt >= 5) throw err;
      port = await freePort();
    }
  }
  const stop = async (mode: 'fast' | 'immediate' = 'fast') => {
    await run(path.join(bin, 'pg_ctl'), ['-D', data, '-m', mode, '-w', 'stop'], user).catch(() => undefined);
  };
  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    port,
    start,
    stop,
    destroy: async () => {
      await stop('immediate');
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}
