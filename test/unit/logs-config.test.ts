import { loadConfig } from '../../src/config';

describe('logs.* and audit.* configuration', () => {
  test('DATABASE_URL turns PostgreSQL on; GENWAY_DATABASE_URL wins over it', () => {
    expect(loadConfig({ env: {} }).logs.databaseUrl).toBeUndefined();
    expect(loadConfig({ env: { DATABASE_URL: 'postgres://a@db:5432/genway' } }).logs.databaseUrl).toBe(
      'postgres://a@db:5432/genway',
    );
    const both = { DATABASE_URL: 'postgres://a@db/one', GENWAY_DATABASE_URL: 'postgresql://b@db/two' };
    expect(loadConfig({ env: both }).logs.databaseUrl).toBe('postgresql://b@db/two');
  });

  test('a bad database URL stops the start with one line naming the key, never echoing the URL', () => {
    expect(() => loadConfig({ env: { DATABASE_URL: 'mysql://user:hunter2@db/genway' } })).toThrow(
      /^config: logs\.databaseUrl: .*\(got 30 characters, not shown\)$/,
    );
    try {
      loadConfig({ env: { DATABASE_URL: 'mysql://user:hunter2@db/genway' } });
    } catch (err) {
      expect((err as Error).message).not.toContain('hunter2');
    }
  });

  test('bodies, redaction patterns and retention are checked at start', () => {
    expect(() => loadConfig({ env: {}, overlay: { logs: { bodies: 'all' } } })).toThrow(
      'config: logs.bodies: must be one of off, metadata, full (got "all")',
    );
    expect(() => loadConfig({ env: {}, overlay: { logs: { redact: ['(unclosed'] } } })).toThrow(
      /^config: logs\.redact\.0: not a regular expression/,
    );
    expect(() => loadConfig({ env: {}, overlay: { logs: { bodyRetentionDays: 40 } } })).toThrow(
      'config: logs.bodyRetentionDays: must not exceed logs.retentionDays (bodies belong to their rows) (got 40)',
    );
    expect(loadConfig({ env: { GENWAY_LOGS_ENABLED: 'false' } }).logs.enabled).toBe(false);
    const defaults = loadConfig({ env: {} });
    expect(defaults.logs).toMatchObject({
      enabled: true,
      bodies: 'off',
      retentionDays: 30,
      bodyRetentionDays: 3,
    });
    expect(defaults.audit).toEqual({ retentionDays: 400, memoryRows: 20000 });
  });
});
