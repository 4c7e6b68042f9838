import { execFile } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { listeningPort, startGenway } from '../helpers/process';

const ADMIN = 'process-test-admin-token-000';

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

    fs.writeFileSync(file, 'log:\n  level: loud\n');
    const r = startGenway(['serve'], { GENWAY_CONFIG: file, LOG_LEVEL: '' });
    expect(await r.exited).toBe(1);
    expect(r.stderr().trim()).toBe(
      'config: log.level: Invalid option: expected one of "fatal"|"error"|"warn"|"info"|"debug"|"trace"|"silent" (got "loud")',
    );
  });

  test('embedded start prints a dev key holding 100 USD and a curl line that works as pasted', async () => {
    const port = 20000 + Math.floor(Math.random() * 20000);
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
});
