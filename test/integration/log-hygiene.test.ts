import { Redis } from 'ioredis';
import request from 'supertest';
import { createLogger, loggableUrl } from '../../src/observability/logger';
import { rawRequest, useGateway, VENDOR_KEYS, type RunningGateway } from '../helpers/gateway';
import type { MockVendor } from '../helpers/mock-vendor';
import { describeRedis, redisUrl } from '../helpers/redis';
import { LogCapture, testConfig } from '../helpers/services';

/**
 * What reaches a log line: never a key or a secret, whatever the spelling of the query parameter carrying it, and
 * never the arguments a client library hangs on its errors.
 */
describe('log hygiene', () => {
  let vendor: MockVendor;
  let gw: RunningGateway;
  let key: string;
  useGateway({}, 100, (s) => ({ vendor, gw, key } = s));

  test.each([
    ['?key=', (k: string) => `?key=${k}`],
    ['?KEY=', (k: string) => `?KEY=${k}`],
    ['?k%65y= (an escaped letter)', (k: string) => `?k%65y=${k}`],
    ['?%4B%45%59= (all escaped)', (k: string) => `?%4B%45%59=${k}`],
    ['?alt=sse&Key= (not first)', (k: string) => `?alt=sse&Key=${encodeURIComponent(k)}`],
    ['?alt=sse#&key= (after a #, which the gateway reads as query)', (k: string) => `?alt=sse#&key=${k}`],
  ])('a Genway key in %s is used, and redacted in the access line', async (_name, query) => {
    const path = `/v1beta/models/gemini-test:generateContent${query(key)}`;
    // The target sent as is: a URL string would lose what follows a #.
    const res = await rawRequest(gw.base, {
      path,
      headers: { 'content-type': 'application/json' },
      body: '{}',
    });
    expect(res.status).toBe(200);
    expect(vendor.last().headers['x-goog-api-key']).toBe(VENDOR_KEYS.gemini[0]);
    const logs = gw.h.logs.text;
    expect(logs).toContain('=[redacted]');
    expect(logs).not.toContain(key);
    expect(logs).not.toContain(encodeURIComponent(key));
  });

  test('other credential parameters on any route are redacted; the rest of the URL is kept as sent', async () => {
    const secret = 'tok-0123456789-secret';
    await request(gw.h.app).get(`/api/v1/tasks?page=2&access_token=${secret}&Api_Key=${secret}&x=1#frag`);
    const logs = gw.h.logs.text;
    expect(logs).toContain('/api/v1/tasks?page=2&access_token=[redacted]&Api_Key=[redacted]&x=1');
    expect(logs).not.toContain(secret);
  });

  test('loggableUrl: names compared decoded and case-insensitively, values and other parameters untouched', () => {
    expect(loggableUrl('/a?KEY=s1&k%65y=s2&q=key&token=s3')).toBe(
      '/a?KEY=[redacted]&k%65y=[redacted]&q=key&token=[redacted]',
    );
    expect(loggableUrl('/a?%zz=1&monkey=2')).toBe('/a?%zz=1&monkey=2');
    expect(loggableUrl('/a/key=not-a-query')).toBe('/a/key=not-a-query');
    expect(loggableUrl('/v1beta/models?alt=json#&key=gwk_s1')).toBe(
      '/v1beta/models?alt=json#&key=[redacted]',
    );
    // A result file's signed URL is a capability until it expires.
    expect(loggableUrl('/files/task_1/0.png?exp=1800000000000&sig=ab12')).toBe(
      '/files/task_1/0.png?exp=1800000000000&sig=[redacted]',
    );
  });
});

describeRedis('log hygiene: errors from client libraries', () => {
  test('an ioredis error logs its message, never the command arguments it carries (task JSON, tokens)', async () => {
    const redis = new Redis(redisUrl!);
    const secret = '{"prompt":"private words","callbackToken":"cb-secret-0123"}';
    try {
      const err = await redis
        .eval("return redis.error_reply('script refused')", 0, secret)
        .catch((e: unknown) => e as Error & { command?: unknown });
      // The library does attach what was sent: this is what must not be written.
      expect(JSON.stringify((err as { command?: unknown }).command)).toContain('cb-secret-0123');
      const logs = new LogCapture();
      createLogger(testConfig(), logs).error({ err, taskId: 'task_1' }, 'job failed');
      expect(logs.text).toContain('script refused');
      expect(logs.text).toContain('"taskId":"task_1"');
      expect(logs.text).not.toContain('cb-secret-0123');
      expect(logs.text).not.toContain('private words');
    } finally {
      redis.disconnect();
    }
  });
});
