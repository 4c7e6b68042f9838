import { execFile } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { MAIN, listeningPort, startGenway } from '../helpers/process';

const ADMIN = 'process-test-admin-token-000';

/**
 * A port for a server that must be started on a known one: below the kernel's ephemeral range (32768 up), from which
 * every port-0 listener and outgoing connection of the other tests takes theirs, so none can hold it first; and
 * above the machine's services' own (RabbitMQ's 25672).
 */
const fixedPort = () => 26000 + Math.floor(Math.random() * 6000);

describe('the genway process', () => {
  test('a bad config value stops it with one line naming the key and what is allowed', async () => {
    const p = startGenway(['serve'], { PORT: 'eighty' });
    expect(await p.exited).toBe(1);
    expect(p.stderr().trim().split('\n')).toEqual([
      'config: server.port: Invalid input: expected number, received string (got "eighty")',
    ]);

    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'genway-config-'));
    const file = path.join(dir, 'bad.yaml');
    fs.writeFileSync(file, 'sandbox:\n  delayMs: soon\n');
    const q = startGenway(['serve'], { GENWAY_CONFIG: file });
    expect(await q.exited).toBe(1);
    const line = q.stderr().trim();
    expect(line.split('\n')).toHaveLength(1);
    expect(line).toBe(
      'config: sandbox.delayMs: Invalid input: expected number, received string (got "soon")',
    );

    // A secret's value is never echoed, only its kind.
    const s = startGenway(['serve'], { GENWAY_ADMIN_TOKEN: 'short-admin-tok' });
    expect(await s.exited).toBe(1);
    expect(s.stderr()).toMatch(/^config: admin\.token: .*\(got 15 characters, not shown\)\n?$/);
    expect(s.stderr()).not.toContain('short-admin-tok');

    fs.writeFileSync(file, 'log:\n  level: loud\n');
    const r = startGenway(['serve'], { GENWAY_CONFIG: file, LOG_LEVEL: '' });
    expect(await r.exited).toBe(1);
    expect(r.stderr().trim()).toBe(
      'config: log.level: Invalid option: expected one of "fatal"|"error"|"warn"|"info"|"debug"|"trace"|"silent" (got "loud")',
    );
  });

  test('embedded start prints a dev key holding 100 USD and a curl line that works as pasted', async () => {
    const port = fixedPort();
    const p = startGenway(['serve'], { PORT: String(port) });
    try {
      const [curlLine] = await p.waitFor(/^\s*curl .*$/m);
      expect(p.stdout()).toContain('holds 100 USD');
      const { stdout } = await promisify(execFile)('sh', ['-c', curlLine.trim()]);
      expect(JSON.parse(stdout)).toEqual({ code: 200, message: 'success', data: 100 });
    } finally {
      p.kill();
      await p.exited;
    }
  });

  test('result URLs point at the port it was started on when no publicUrl is set', async () => {
    const port = fixedPort();
    const p = startGenway(['serve'], { PORT: String(port), GENWAY_CONFIG: undefined });
    try {
      const [, key] = await p.waitFor(/Bearer (gwk_[A-Za-z0-9_-]+)/);
      const base = `http://127.0.0.1:${port}`;
      const auth = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
      const submit = await fetch(`${base}/api/v1/generateTask/image-gen`, {
        method: 'POST',
        headers: { ...auth, prefer: 'wait=30' },
        body: JSON.stringify({ input: { mode: 'text-to-image', prompt: '[sandbox:delay=10] fox' } }),
      });
      const { taskId } = ((await submit.json()) as { data: { taskId: string } }).data;
      const status = await fetch(`${base}/api/v1/statusTask/image-gen?taskId=${taskId}`, {
        headers: { ...auth, prefer: 'wait=30' },
      });
      const { resultJson } = ((await status.json()) as { data: { resultJson: string } }).data;
      const [url] = (JSON.parse(resultJson) as { resultUrls: string[] }).resultUrls;
      expect(new URL(url).origin).toBe(base);
      const file = await fetch(url);
      expect(file.status).toBe(200);
      expect(file.headers.get('content-type')).toBe('image/png');
    } finally {
      p.kill();
      await p.exited;
    }
  });

  test('SIGTERM lets an in-flight request finish, then the process exits 0', async () => {
    const p = startGenway(['serve'], { PORT: '0', GENWAY_ADMIN_TOKEN: ADMIN });
    const port = await listeningPort(p);
    const body = JSON.stringify({ name: 'slow-upload', balanceUsd: 1 });
    // A slow request: headers and half the body now, SIGTERM, the rest of the body later.
    const response = new Promise<{ status: number; body: string }>((resolve, reject) => {
      const req = http.request(
        {
          port,
          method: 'POST',
          path: '/admin/v1/accounts',
          headers: {
            authorization: `Bearer ${ADMIN}`,
            'content-type': 'application/json',
            'content-length': Buffer.byteLength(body),
          },
        },
        (res) => {
          let text = '';
          res.on('data', (d) => (text += d));
          res.on('end', () => resolve({ status: res.statusCode!, body: text }));
        },
      );
      req.on('error', reject);
      req.write(body.slice(0, 10));
      setTimeout(() => {
        p.kill('SIGTERM');
        setTimeout(() => req.end(body.slice(10)), 500);
      }, 200);
    });
    const res = await response;
    expect(res.status).toBe(200);
    expect(JSON.parse(res.body).data.accountId).toMatch(/^acct_/);
    expect(await p.exited).toBe(0);
    expect(p.stdout()).toContain('"msg":"shutdown complete"');
  });

  test('after SIGTERM new connections are refused', async () => {
    const p = startGenway(['serve'], { PORT: '0' });
    const port = await listeningPort(p);
    p.kill('SIGTERM');
    await p.exited;
    await expect(fetch(`http://127.0.0.1:${port}/healthz`)).rejects.toThrow();
  });

  test('genway admin drives the admin API from a terminal', async () => {
    const p = startGenway(['serve'], { PORT: '0', GENWAY_ADMIN_TOKEN: ADMIN });
    const port = await listeningPort(p);
    const env = { PATH: process.env.PATH, GENWAY_URL: `http://127.0.0.1:${port}`, GENWAY_ADMIN_TOKEN: ADMIN };
    const admin = async (...args: string[]) =>
      JSON.parse((await promisify(execFile)(process.execPath, [MAIN, 'admin', ...args], { env })).stdout);
    try {
      const { accountId } = await admin('accounts', 'create', '--name', 'cli', '--balance', '5');
      expect(accountId).toMatch(/^acct_/);
      expect(await admin('credits', 'add', accountId, '2.5', '--reference', 'inv-1')).toEqual({
        balanceUsd: 7.5,
      });
      expect(await admin('credits', 'add', accountId, '2.5', '--reference', 'inv-1')).toEqual({
        balanceUsd: 7.5,
      });
      const key = await admin(
        'keys',
        'create',
        accountId,
        '--name',
        'ci',
        '--models',
        'image-gen,music',
        '--rate',
        '2',
        '--burst',
        '4',
      );
      expect(key.key).toMatch(/^gwk_/);
      const view = await admin('accounts', 'get', accountId);
      expect(view).toMatchObject({
        name: 'cli',
        balanceUsd: 7.5,
        keys: [{ keyId: key.keyId, models: ['image-gen', 'music'], rateLimit: { ratePerSec: 2, burst: 4 } }],
      });
      // Key lifecycle, budgets and usage from the terminal.
      const expires = new Date(Date.now() + 86_400_000).toISOString();
      const labelled = await admin(
        'keys',
        'create',
        accountId,
        '--expires',
        expires,
        '--metadata',
        '{"team":"ml"}',
      );
      expect(await admin('keys', 'get', labelled.keyId)).toMatchObject({
        prefix: labelled.key.slice(0, 12),
        expiresAt: expires,
        metadata: { team: 'ml' },
        status: 'active',
      });
      const rotated = await admin('keys', 'rotate', labelled.keyId, '--grace', '60');
      expect(rotated).toMatchObject({ rotatedFrom: labelled.keyId });
      expect((await admin('keys', 'list', accountId)).keys).toHaveLength(3);
      expect(
        await admin(
          'budgets',
          'set',
          'account',
          accountId,
          '--period',
          'month',
          '--limit',
          '5',
          '--soft',
          '80',
        ),
      ).toMatchObject({ scope: 'account', period: 'month', limitUsd: 5, softPercent: 80, spentUsd: 0 });
      expect(await admin('budgets', 'get', 'key', rotated.keyId).catch(() => 'none')).toBe('none');
      expect(await admin('budgets', 'delete', 'account', accountId)).toEqual({ deleted: true });
      expect(await admin('usage', '--account', accountId, '--group-by', 'model')).toMatchObject({
        accountId,
        groupBy: 'model',
        rows: [],
      });
      const csv = await promisify(execFile)(
        process.execPath,
        [MAIN, 'admin', 'usage', '--account', accountId, '--format', 'csv'],
        { env },
      );
      expect(csv.stdout.split('\r\n')[0]).toMatch(/^day,requests,input_tokens,/);
      expect((await admin('accounts', 'list')).accounts).toEqual(
        expect.arrayContaining([expect.objectContaining({ accountId, balanceUsd: 7.5 })]),
      );
      expect(await admin('keys', 'revoke', key.keyId)).toEqual({ keyId: key.keyId, revoked: true });
      await expect(
        promisify(execFile)(process.execPath, [MAIN, 'admin', 'accounts', 'get', 'acct_nope'], { env }),
      ).rejects.toMatchObject({
        code: 1,
        stderr: 'genway admin: 404 No account with accountId acct_nope\n',
      });
    } finally {
      p.kill();
      await p.exited;
    }
  });
});
