import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { listeningPort, startGenway } from '../helpers/process';

const ADMIN = 'relay-chain-admin-token-01234';
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- envelopes of several endpoints, checked by the assertions
type Body = { code: number; message: string; data: any };

async function json(url: string, init: RequestInit = {}): Promise<{ status: number; body: Body }> {
  const res = await fetch(url, init);
  return { status: res.status, body: (await res.json()) as Body };
}

test('two Genway processes chained relay -> sandbox: result and billing intact', async () => {
  // Any free port, bound by the process itself (a port picked here could be taken by then): its result URLs name
  // the address it bound (no public URL set).
  const upstream = startGenway(['serve'], { PORT: '0', GENWAY_ADMIN_TOKEN: ADMIN });
  const base = `http://127.0.0.1:${await listeningPort(upstream)}`;
  const admin = { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' };
  const { body: acct } = await json(`${base}/admin/v1/accounts`, {
    method: 'POST',
    headers: admin,
    body: JSON.stringify({ name: 'relay', balanceUsd: 20 }),
  });
  const { body: upKey } = await json(`${base}/admin/v1/accounts/${acct.data.accountId}/keys`, {
    method: 'POST',
    headers: admin,
    body: '{}',
  });

  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'genway-relay-'));
  const overlay = path.join(dir, 'relay.yaml');
  const route = `[{ id: upstream, provider: relay, baseUrl: "${base}", apiKey: "${upKey.data.key}", firstPollMs: 100, pollIntervalMs: 100 }]`;
  fs.writeFileSync(
    overlay,
    `sandbox:\n  delayMs: 50\nmodels:\n  - { id: multimodal-video, family: multimodal-video, routes: ${route} }\n`,
  );
  const relay = startGenway(['serve'], { PORT: '0', GENWAY_CONFIG: overlay, GENWAY_ADMIN_TOKEN: ADMIN });
  const relayBase = `http://127.0.0.1:${await listeningPort(relay)}`;
  try {
    const { body: mine } = await json(`${relayBase}/admin/v1/accounts`, {
      method: 'POST',
      headers: admin,
      body: JSON.stringify({ name: 'client', balanceUsd: 10 }),
    });
    const { body: myKey } = await json(`${relayBase}/admin/v1/accounts/${mine.data.accountId}/keys`, {
      method: 'POST',
      headers: admin,
      body: '{}',
    });
    const auth = { authorization: `Bearer ${myKey.data.key}`, 'content-type': 'application/json' };
    const submitted = await json(`${relayBase}/api/v1/generateTask/multimodal-video`, {
      method: 'POST',
      headers: auth,
      body: JSON.stringify({
        input: {
          mode: 'text-to-video',
          prompt: '[sandbox:output_seconds=7] tide',
          duration: -1,
          resolution: '720p',
        },
      }),
    });
    expect(submitted.status).toBe(200);
    let status: { body: Body } = { body: { code: 0, message: '', data: { state: 'pending' } } };
    for (let i = 0; i < 100 && status.body.data?.state !== 'success'; i++) {
      await sleep(100);
      status = await json(
        `${relayBase}/api/v1/statusTask/multimodal-video?taskId=${submitted.body.data.taskId}`,
        { headers: auth },
      );
    }
    expect(status.body.data.state).toBe('success');
    expect(status.body.data.billing).toEqual({
      settlementState: 'final',
      inputVideoSeconds: 0,
      outputVideoSeconds: 7,
      totalBillableSeconds: 7,
      unit: 'second',
      rounding: 'round half up to 3 decimal places',
      inputVideoCount: 0,
      outputVideoCount: 1,
    });
    const [url] = JSON.parse(status.body.data.resultJson as string).resultUrls;
    expect(url.startsWith(`${base}/files/`)).toBe(true);
    const media = Buffer.from(await (await fetch(url)).arrayBuffer());
    expect(media.subarray(4, 8).toString()).toBe('ftyp'); // a real MP4 from the upstream sandbox
    for (let i = 0; i < 40; i++) {
      const bal = await json(`${relayBase}/api/v1/apikeys/current-balance`, { headers: auth });
      if (Math.abs(bal.body.data - (10 - 7 * 0.12)) < 1e-9) break;
      await sleep(100);
    }
    expect(
      (await json(`${relayBase}/api/v1/apikeys/current-balance`, { headers: auth })).body.data,
    ).toBeCloseTo(10 - 7 * 0.12, 6);
    expect(
      (
        await json(`${base}/api/v1/apikeys/current-balance`, {
          headers: { authorization: `Bearer ${upKey.data.key}` },
        })
      ).body.data,
    ).toBeCloseTo(20 - 7 * 0.12, 6);
  } finally {
    relay.kill();
    upstream.kill();
    await Promise.all([relay.exited, upstream.exited]);
  }
});
