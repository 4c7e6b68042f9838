import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import request from 'supertest';
import { isBlockedAddress, publicHttpsUrlProblem } from '../../src/outbound/addresses';
import { createOutboundClient, vettedLookup } from '../../src/outbound/client';
import { createMediaProbe } from '../../src/media/probe';
import { OutboundError } from '../../src/outbound/types';
import { createHarness, fundedKey } from '../helpers/services';

const FIXTURES = path.join(__dirname, '..', 'fixtures', 'media');

/** A loopback server: /media/<file> serves fixtures, /slow never answers, /big streams 1 MB, /redirect is a 302. */
async function startServer() {
  const hits: string[] = [];
  const server = http.createServer((req, res) => {
    hits.push(`${req.method} ${req.url}`);
    if (req.url?.startsWith('/media/')) {
      const file = path.join(FIXTURES, path.basename(req.url));
      if (!fs.existsSync(file)) return void res.writeHead(404).end();
      return void res.writeHead(200).end(fs.readFileSync(file));
    }
    if (req.url === '/slow') return; // never answers
    if (req.url === '/big') return void res.writeHead(200).end(Buffer.alloc(1_000_000, 1));
    if (req.url === '/redirect') return void res.writeHead(302, { location: '/media/video-5.mp4' }).end();
    let body = '';
    req.on('data', (d) => (body += d));
    req.on('end', () =>
      res
        .writeHead(200, { 'content-type': 'application/json' })
        .end(JSON.stringify({ body, header: req.headers['x-test'] })),
    );
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as { port: number }).port;
  return { base: `http://127.0.0.1:${port}`, port, hits, close: () => new Promise((r) => server.close(r)) };
}

describe('address classification', () => {
  test.each([
    ['127.0.0.1', true],
    ['10.0.0.1', true],
    ['9.255.255.255', false],
    ['100.63.255.255', false],
    ['100.64.0.0', true],
    ['100.127.255.255', true],
    ['100.128.0.0', false],
    ['169.254.169.254', true],
    ['172.15.255.255', false],
    ['172.16.0.0', true],
    ['172.31.255.255', true],
    ['172.32.0.0', false],
    ['192.167.255.255', false],
    ['192.168.0.1', true],
    ['198.17.255.255', false],
    ['198.18.0.0', true],
    ['224.0.0.1', true],
    ['255.255.255.255', true],
    ['8.8.8.8', false],
    ['::1', true],
    ['::', true],
    ['::ffff:127.0.0.1', true],
    ['::ffff:8.8.8.8', false],
    ['::7f00:1', true], // ::127.0.0.1, IPv4-compatible
    ['::808:808', true], // ::8.8.8.8: a deprecated form nothing public uses
    ['fc00::1', true],
    ['fe80::1', true],
    ['2001:db8::1', true],
    ['2606:4700::1111', false],
  ])('%s blocked: %s', (address, blocked) => {
    expect(isBlockedAddress(address)).toBe(blocked);
  });

  test.each([
    ['https://hooks.example.com/x', null],
    ['http://hooks.example.com/x', 'the scheme must be https'],
    ['https://user:pw@hooks.example.com/x', 'credentials in the URL are not allowed'],
    ['https://localhost:8443/x', 'the host is loopback'],
    ['https://127.0.0.1/x', 'the address is private, loopback or reserved'],
    ['https://[::1]/x', 'the address is private, loopback or reserved'],
    ['https://[::127.0.0.1]/x', 'the address is private, loopback or reserved'],
    ['https://[0:0:0:0:0:0:0:1]/x', 'the address is private, loopback or reserved'],
    ['https://localhost./x', 'the host is loopback'],
    ['https://LOCALHOST../x', 'the host is loopback'],
    ['https://api.localhost./x', 'the host is loopback'],
    ['https://0x7f.1/x', 'the address is private, loopback or reserved'],
    ['https://2130706433/x', 'the address is private, loopback or reserved'],
    ['https://017700000001/x', 'the address is private, loopback or reserved'],
    ['https://10.1.2.3/x', 'the address is private, loopback or reserved'],
    ['not a url', 'not a valid URL'],
  ])('submit-time check of %s', (url, problem) => {
    expect(publicHttpsUrlProblem(url, false)).toBe(problem);
  });
});

describe('the outbound client', () => {
  let server: Awaited<ReturnType<typeof startServer>>;
  beforeAll(async () => {
    server = await startServer();
  });
  afterAll(() => server.close());

  test('with private targets allowed (dev): POST with headers and body, 3xx returned as is, bounded time and size', async () => {
    const client = createOutboundClient({ allowPrivateTargets: true });
    try {
      const res = await client.fetch(`${server.base}/echo`, {
        method: 'POST',
        headers: { 'x-test': 'yes' },
        body: 'hello',
        timeoutMs: 2000,
        maxResponseBytes: 1000,
      });
      expect(res.status).toBe(200);
      expect(JSON.parse(res.body.toString())).toEqual({ body: 'hello', header: 'yes' });
      const redirect = await client.fetch(`${server.base}/redirect`, {
        timeoutMs: 2000,
        maxResponseBytes: 1000,
      });
      expect(redirect.status).toBe(302);
      expect(server.hits.filter((h) => h === 'GET /media/video-5.mp4')).toHaveLength(0);
      const big = await client.fetch(`${server.base}/big`, { timeoutMs: 2000, maxResponseBytes: 1000 });
      expect(big.truncated).toBe(true);
      expect(big.body.length).toBe(1000);
      await expect(
        client.fetch(`${server.base}/slow`, { timeoutMs: 200, maxResponseBytes: 1000 }),
      ).rejects.toMatchObject({ reason: 'timeout' });
    } finally {
      await client.close();
    }
  });

  test.each([
    ['http://127.0.0.1', 'invalid_url'],
    ['https://127.0.0.1', 'blocked_target'],
    ['https://[::1]', 'blocked_target'],
    ['https://[::ffff:127.0.0.1]', 'blocked_target'],
    ['https://[::127.0.0.1]', 'blocked_target'],
    ['https://localhost.', 'blocked_target'],
    ['https://10.0.0.1', 'blocked_target'],
    ['https://169.254.169.254', 'blocked_target'],
    ['https://localhost', 'blocked_target'],
  ])('without private targets %s is refused before any connection (%s)', async (origin, reason) => {
    const client = createOutboundClient({ allowPrivateTargets: false });
    try {
      const port = origin.includes('localhost') || origin.includes('127.0.0.1') ? `:${server.port}` : '';
      const before = server.hits.length;
      const err = await client
        .fetch(`${origin}${port}/echo`, { timeoutMs: 2000, maxResponseBytes: 100 })
        .catch((e) => e);
      expect(err).toBeInstanceOf(OutboundError);
      expect((err as OutboundError).reason).toBe(reason);
      expect(server.hits.length).toBe(before);
    } finally {
      await client.close();
    }
  });

  test('localhost is refused by name, before any lookup or connection', async () => {
    const client = createOutboundClient({ allowPrivateTargets: false });
    try {
      const before = server.hits.length;
      const err = await client
        .fetch(`https://localhost:${server.port}/echo`, { timeoutMs: 2000, maxResponseBytes: 100 })
        .catch((e) => e);
      expect(err).toMatchObject({ reason: 'blocked_target' });
      expect(server.hits.length).toBe(before);
    } finally {
      await client.close();
    }
  });

  test('a hostname that resolves to 127.0.0.1 is refused after DNS resolution (the lookup every connection uses)', async () => {
    // `localhost` is the one name that resolves to loopback on every machine; the lookup is what a connection to
    // any other name goes through, so a public-looking name pointing at 127.0.0.1 meets the same refusal.
    const err = await new Promise<unknown>((resolve) => vettedLookup('localhost', {}, (e) => resolve(e)));
    expect(err).toMatchObject({
      reason: 'blocked_target',
      message: 'localhost resolves to a private, loopback or reserved address',
    });
  });
});

describe('the media probe', () => {
  let server: Awaited<ReturnType<typeof startServer>>;
  const client = createOutboundClient({ allowPrivateTargets: true });
  const probe = createMediaProbe(client, { timeoutMs: 2000, maxBytes: 200_000 });
  beforeAll(async () => {
    server = await startServer();
  });
  afterAll(async () => {
    await server.close();
    await client.close();
  });

  test.each([
    ['video-0.5.mp4', 0.5],
    ['video-1.mp4', 1],
    ['video-15.mp4', 15],
    ['video-15.5.mp4', 15.5],
    ['audio-0.5.wav', 0.5],
    ['audio-16.wav', 16],
  ])('reads %s from the media itself: %s s', async (file, seconds) => {
    expect(await probe(`${server.base}/media/${file}`)).toEqual({ durationSeconds: seconds });
  });

  test('unreadable, missing and oversized media fail with a reason', async () => {
    await expect(probe(`${server.base}/media/junk.bin`)).rejects.toThrow(
      'not a readable audio or video file',
    );
    await expect(probe(`${server.base}/media/nope.mp4`)).rejects.toThrow('not reachable: HTTP 404');
    await expect(probe(`${server.base}/big`)).rejects.toThrow('larger than 200000 bytes');
  });
});

describe('reference-to-video through the real probe', () => {
  test('reference media durations are read before the task exists, priced exactly, and unreadable media is a 400 naming the URL', async () => {
    const server = await startServer();
    const h = createHarness({
      overlay: { security: { allowPrivateTargets: true }, sandbox: { delayMs: 10 } },
    });
    try {
      const { auth } = await fundedKey(h.services, 10);
      const submit = (input: Record<string, unknown>) =>
        request(h.app)
          .post('/api/v1/generateTask/multimodal-video')
          .set('Authorization', auth)
          .send({ input });
      const ok = await submit({
        mode: 'reference-to-video',
        video_urls: [`${server.base}/media/video-5.mp4`],
        audio_urls: [`${server.base}/media/audio-5.wav`],
        duration: 4,
        resolution: '480p',
      });
      expect(ok.status).toBe(200);
      const balance = async () =>
        (await request(h.app).get('/api/v1/apikeys/current-balance').set('Authorization', auth)).body.data;
      expect(await balance()).toBeCloseTo(10 - 9 * 0.07, 6);
      const long = await submit({
        mode: 'reference-to-video',
        video_urls: [`${server.base}/media/video-15.5.mp4`],
      });
      expect(long.body).toEqual({
        code: 400,
        message: `input.video_urls[0] must be 1 to 15 seconds long (${server.base}/media/video-15.5.mp4 is 15.500 s)`,
        data: null,
      });
      const junk = await submit({
        mode: 'reference-to-video',
        audio_urls: [`${server.base}/media/junk.bin`],
      });
      expect(junk.body.message).toBe(
        `input.audio_urls[0]: cannot read media at ${server.base}/media/junk.bin: not a readable audio or video file`,
      );
      expect(await balance()).toBeCloseTo(10 - 9 * 0.07, 6);
    } finally {
      await h.close();
      await server.close();
    }
  });
});
