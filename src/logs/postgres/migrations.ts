import fs from 'node:fs';
import { hostname } from 'node:os';
import path from 'node:path';
import type { Pool, PoolClient } from 'pg';
import { assetPath } from '../../paths';

/**
 * The one place Genway reads files of its own at run time for the log store: the versioned migrations, SQL files
 * `NNN_name.sql` in ./migrations beside this module (scripts/build.js copies them into the build).
 */
export const MIGRATIONS_DIR = assetPath('logs', 'postgres', 'migrations');

export interface Migration {
  version: number;
  name: string;
  sql: string;
}

export function readMigrations(dir = MIGRATIONS_DIR): Migration[] {
  return fs
    .readdirSync(dir)
    .filter((file) => /^\d{3}_[a-z0-9_]+\.sql$/.test(file))
    .sort()
    .map((file) => ({
      version: Number(file.slice(0, 3)),
      name: file.slice(4, -4),
      sql: fs.readFileSync(path.join(dir, file), 'utf8'),
    }));
}

/** What a checked-out connection's own error is met with: the query it was running (or the next) fails instead. */
export const ignoreDropped = (): void => undefined;

/**
 * Runs `work` in one transaction holding the advisory lock `lock` (replicas doing the same work wait for each other).
 * A connection that drops between two queries errors on the client, not on a query: without a listener that would end
 * the process (a database restart must cost a log write, never the gateway).
 */
export async function underLock<T>(
  pool: Pool,
  lock: number,
  work: (client: PoolClient) => Promise<T>,
): Promise<T> {
  const client = await pool.connect();
  client.on('error', ignoreDropped);
  try {
    await client.query('BEGIN');
    await client.query('SELECT pg_advisory_xact_lock($1)', [lock]);
    const result = await work(client);
    await client.query('COMMIT');
    return result;
  } catch (err) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw err;
  } finally {
    client.off('error', ignoreDropped);
    client.release();
  }
}

/** The advisory lock every replica takes to migrate: the first one migrates, the others wait and find it done. */
const MIGRATION_LOCK = 0x67776c01;

/**
 * Applies the migrations not yet applied, in order, in one transaction under an advisory lock: two replicas
 * starting at once migrate once (the second waits for the first, then finds every version recorded).
 * Returns the versions this call applied.
 */
export function migrate(pool: Pool, migrations = readMigrations()): Promise<number[]> {
  return underLock(pool, MIGRATION_LOCK, async (client) => {
    const applied: number[] = [];
    await client.query(`CREATE TABLE IF NOT EXISTS genway_schema_migrations (
      version integer PRIMARY KEY,
      name text NOT NULL,
      applied_at timestamptz NOT NULL DEFAULT now(),
      applied_by text NOT NULL
    )`);
    const { rows } = await client.query<{ version: number }>('SELECT version FROM genway_schema_migrations');
    const done = new Set(rows.map((r) => r.version));
    for (const m of migrations) {
      if (done.has(m.version)) continue;
      await client.query(m.sql);
      await client.query(
        'INSERT INTO genway_schema_migrations (version, name, applied_by) VALUES ($1, $2, $3)',
        [m.version, m.name, `${hostname()}:${process.pid}`],
      );
      applied.push(m.version);
    }
    return applied;
  });
}
