import type http from 'node:http';
import zlib from 'node:zlib';
import { rawRequest, startGateway, type RunningGateway } from '../helpers/gateway';
import { MockVendor, RESPONSE_JSON, type Received } from '../helpers/mock-vendor';
import { fundedKey } from '../helpers/services';

/**
 * Objects stay with the account that made them, however another account names them (one vendor key per vendor: the
 * shared-key deployment the rule is for). Account B names account A's objects with escapes in JSON names and values,
 * in fields beside the first that reference objects, and through vendor mounts on paths no route names: each is
 * Genway's own 404, and nothing reaches the vendor. (Found by an audit; each case went through before.)
 */

function json(res: http.ServerResponse, status: number, body: unknown, extra: Record<string, string> = {}) {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(text),
    ...extra,
  });
  res.end(text);
}

let vendor: MockVendor;
let gw: RunningGateway;
let victim: string;
let attacker: string;

const vendorAnswer = (req: Received, res: http.ServerResponse) => {
  const path = req.url.split('?')[0];
  const who = String(req.headers['x-who'] ?? 'victim');
  if (req.method === 'POST' && path === '/v1/files') {
    return req.headers['x-api-key'] !== undefined
      ? json(res, 200, { id: 'file_antvictim01', type: 'file' })
      : json(res, 200, { id: 'file-victim0001', object: 'file' });
  }
  if (req.method === 'POST' && path === '/v1/responses')
    return json(res, 200, { ...RESPONSE_JSON, id: 'resp_victim0001' });
  if (req.method === 'POST' && path === '/v1/conversations') return json(res, 200, { id: 'conv_victim0001' });
  if (req.method === 'POST' && path === '/v1/skills') return json(res, 200, { id: 'skill_victim0001' });
  if (req.method === 'POST' && path === '/v1beta/files')
    return json(res, 200, { file: { name: 'files/victimfile1' } });
  if (req.method === 'POST' && path === '/v1beta/fileSearchStores')
    return json(res, 200, { name: 'fileSearchStores/victimstore1' });
  if (req.method === 'POST' && path === '/v1beta/cachedContents')
    return json(res, 200, { name: 'cachedContents/victimcache1' });
  if (
    req.method === 'POST' &&
    path === '/upload/v1beta/files' &&
    req.headers['x-goog-upload-command'] === 'start'
  ) {
    return json(
      res,
      200,
      {},
      {
        'x-goog-upload-url': `${vendor.url}/upload/v1beta/files?upload_id=UP_${who}&upload_protocol=resumable`,
      },
    );
  }
  return json(res, 200, { ok: true, path: req.url });
};

beforeAll(async () => {
  vendor = await new MockVendor(vendorAnswer).start();
  // One vendor key per vendor: the shared-key deployment the isolation rule is for.
  gw = await startGateway(vendor.url, {
    gateway: {
      anthropic: { apiKeys: ['sk-ant-vendor-1'] },
      openai: { apiKeys: ['sk-openai-vendor-1'] },
      gemini: { apiKeys: ['AIza-gemini-vendor-1'] },
    },
  });
  victim = (await fundedKey(gw.h.services)).key;
  attacker = (await fundedKey(gw.h.services)).key;

  // The victim's objects, created through Genway (so they are recorded as the victim's).
  const oa = { authorization: `Bearer ${victim}`, 'content-type': 'application/json' };
  const an = { 'x-api-key': victim, 'anthropic-version': '2023-06-01', 'content-type': 'application/json' };
  const gm = { 'x-goog-api-key': victim, 'content-type': 'application/json' };
  for (const [path, headers, body] of [
    ['/v1/files', { authorization: `Bearer ${victim}`, 'content-type': 'application/octet-stream' }, 'x'],
    ['/v1/responses', oa, '{"model":"gpt-x","input":"secret plans"}'],
    ['/v1/conversations', oa, '{}'],
    ['/v1/files', { ...an, 'content-type': 'application/octet-stream' }, 'x'],
    ['/v1/skills', { ...an, 'content-type': 'application/octet-stream' }, 'x'],
    ['/v1beta/files', gm, '{}'],
    ['/v1beta/fileSearchStores', gm, '{}'],
    ['/v1beta/cachedContents', gm, '{"model":"models/gemini-x"}'],
  ] as [string, Record<string, string>, string][]) {
    const r = await rawRequest(gw.base + path, { headers, body });
    expect(r.status).toBe(200);
  }
  const up = await rawRequest(gw.base + '/upload/v1beta/files', {
    headers: {
      ...gm,
      'x-goog-upload-command': 'start',
      'x-goog-upload-protocol': 'resumable',
      'x-who': 'victim',
    },
    body: '{}',
  });
  expect(up.headers['x-goog-upload-url']).toContain('upload_id=UP_victim');
});

afterAll(async () => {
  await gw?.close();
  await vendor?.stop();
});

/** Sends as the attacker; returns Genway's status and whether (and how) the vendor got it. */
async function asAttacker(method: string, path: string, headers: Record<string, string>, body?: string) {
  const before = vendor.received.length;
  const r = await rawRequest(gw.base, { method, path, headers: { ...headers, 'x-who': 'attacker' }, body });
  const got = vendor.received.slice(before);
  return {
    status: r.status,
    body: r.body.toString(),
    forwarded: got.map((g) => `${g.method} ${g.url} ${g.body.toString().slice(0, 200)}`),
  };
}
const OA = () => ({ authorization: `Bearer ${attacker}`, 'content-type': 'application/json' });
const AN = () => ({
  'x-api-key': attacker,
  'anthropic-version': '2023-06-01',
  'content-type': 'application/json',
});
const GM = () => ({ 'x-goog-api-key': attacker, 'content-type': 'application/json' });

const refusedAll = (cases: Record<string, { status: number; forwarded: string[] }>) => {
  for (const [name, c] of Object.entries(cases))
    expect([name, c.status, c.forwarded]).toEqual([name, 404, []]);
};

describe('LLM gateway: objects stay with their account, however they are named', () => {
  test('the plain spellings (the rule as it always held)', async () => {
    const cases = {
      file: await asAttacker('GET', '/v1/files/file-victim0001/content', OA()),
      prev: await asAttacker(
        'POST',
        '/v1/responses',
        OA(),
        '{"model":"gpt-x","previous_response_id":"resp_victim0001","input":"x"}',
      ),
      antFile: await asAttacker(
        'POST',
        '/v1/messages',
        AN(),
        '{"model":"claude-x","max_tokens":5,"messages":[{"role":"user","content":[{"type":"document","source":{"type":"file","file_id":"file_antvictim01"}}]}]}',
      ),
      gemUri: await asAttacker(
        'POST',
        '/v1beta/models/gemini-x:generateContent',
        GM(),
        '{"contents":[{"parts":[{"fileData":{"fileUri":"https://generativelanguage.googleapis.com/v1beta/files/victimfile1"}}]}]}',
      ),
      conv: await asAttacker('GET', '/v1/conversations/conv_victim0001/items', OA()),
      skill: await asAttacker('GET', '/v1/skills/skill_victim0001', AN()),
      store: await asAttacker('GET', '/v1beta/fileSearchStores/victimstore1/documents', GM()),
      upload: await asAttacker(
        'POST',
        '/upload/v1beta/files?upload_id=UP_victim&upload_protocol=resumable',
        { ...GM(), 'x-goog-upload-command': 'upload, finalize' },
        'bytes',
      ),
    };
    refusedAll(cases);
  });

  test('escapes in a JSON field name or value hide no reference', async () => {
    const cases = {
      prevResp: await asAttacker(
        'POST',
        '/v1/responses',
        OA(),
        '{"model":"gpt-x","previous_response_id":"resp_\\u0076ictim0001","input":"repeat everything"}',
      ),
      oaFileId: await asAttacker(
        'POST',
        '/v1/chat/completions',
        OA(),
        '{"model":"gpt-x","messages":[{"role":"user","content":[{"type":"file","file":{"file_id":"file-\\u0076ictim0001"}}]}]}',
      ),
      escapedKeyName: await asAttacker(
        'POST',
        '/v1/responses',
        OA(),
        '{"model":"gpt-x","previous\\u005fresponse_id":"resp_victim0001","input":"x"}',
      ),
      antFileId: await asAttacker(
        'POST',
        '/v1/messages',
        AN(),
        '{"model":"claude-x","max_tokens":5,"messages":[{"role":"user","content":[{"type":"document","source":{"type":"file","file_id":"file_\\u0061ntvictim01"}}]}]}',
      ),
      gemUri: await asAttacker(
        'POST',
        '/v1beta/models/gemini-x:generateContent',
        GM(),
        '{"contents":[{"parts":[{"fileData":{"fileUri":"https:\\/\\/generativelanguage.googleapis.com\\/v1beta\\/files\\/victimfile1"}}]}]}',
      ),
      gemCache: await asAttacker(
        'POST',
        '/v1beta/models/gemini-x:generateContent',
        GM(),
        '{"cachedContent":"cachedContents\\/victimcache1","contents":[{"parts":[{"text":"x"}]}]}',
      ),
    };
    refusedAll(cases);
  });

  test('every field that names an object, at any depth and in arrays, on every route that takes one', async () => {
    const cases = {
      conversation: await asAttacker(
        'POST',
        '/v1/responses',
        OA(),
        '{"model":"gpt-x","conversation":"conv_victim0001","input":"summarise our chat"}',
      ),
      codeInterpreterFiles: await asAttacker(
        'POST',
        '/v1/responses',
        OA(),
        '{"model":"gpt-x","tools":[{"type":"code_interpreter","container":{"type":"auto","file_ids":["file-victim0001"]}}],"input":"cat the file"}',
      ),
      imageEditFileId: await asAttacker(
        'POST',
        '/v1/images/edits',
        OA(),
        '{"model":"gpt-image-1","prompt":"x","images":[{"file_id":"file-victim0001"}]}',
      ),
      antBatchFile: await asAttacker(
        'POST',
        '/v1/messages/batches',
        AN(),
        '{"requests":[{"custom_id":"a","params":{"model":"claude-x","max_tokens":5,"messages":[{"role":"user","content":[{"type":"document","source":{"type":"file","file_id":"file_antvictim01"}}]}]}}]}',
      ),
      antSkill: await asAttacker(
        'POST',
        '/v1/messages',
        AN(),
        '{"model":"claude-x","max_tokens":5,"container":{"skills":[{"type":"custom","skill_id":"skill_victim0001","version":"latest"}]},"messages":[{"role":"user","content":"print SKILL.md"}]}',
      ),
      gemFileSearch: await asAttacker(
        'POST',
        '/v1beta/models/gemini-x:generateContent',
        GM(),
        '{"contents":[{"parts":[{"text":"what do the documents say?"}]}],"tools":[{"fileSearch":{"fileSearchStoreNames":["fileSearchStores/victimstore1"]}}]}',
      ),
      gemBatchFile: await asAttacker(
        'POST',
        '/v1beta/models/gemini-x:batchGenerateContent',
        GM(),
        '{"batch":{"displayName":"b","inputConfig":{"fileName":"files/victimfile1"}}}',
      ),
      gemImportFile: await asAttacker(
        'POST',
        '/v1beta/fileSearchStores/mine:importFile',
        GM(),
        '{"fileName":"files/victimfile1"}',
      ),
    };
    refusedAll(cases);
  });

  test('a vendor mount: trailing, doubled or encoded slashes, and paths and bodies no route names', async () => {
    const cases = {
      trailingSlash: await asAttacker('GET', '/openai/v1/files/file-victim0001/content/', OA()),
      doubleSlash: await asAttacker('GET', '/openai/v1//files/file-victim0001/content', OA()),
      encodedSlash: await asAttacker('GET', '/openai/v1/files/file-victim0001%2Fcontent', OA()),
      vectorStore: await asAttacker(
        'POST',
        '/openai/v1/vector_stores',
        OA(),
        '{"name":"x","file_ids":["file-victim0001"]}',
      ),
      fineTune: await asAttacker(
        'POST',
        '/openai/v1/fine_tuning/jobs',
        OA(),
        '{"model":"gpt-x","training_file":"file-victim0001"}',
      ),
      gemAction: await asAttacker(
        'POST',
        '/gemini/v1beta/models/gemini-x:generateAnswer',
        GM(),
        '{"contents":[{"parts":[{"fileData":{"fileUri":"https://x/v1beta/files/victimfile1"}}]}]}',
      ),
      antTrailing: await asAttacker('GET', '/anthropic/v1/files/file_antvictim01/content/', AN()),
    };
    refusedAll(cases);
  });

  test('a body that is JSON under another declared type is read all the same (a vendor may take it)', async () => {
    const cases = {
      textPlain: await asAttacker(
        'POST',
        '/v1beta/models/gemini-x:generateContent',
        { ...GM(), 'content-type': 'text/plain' },
        '{"contents":[{"parts":[{"fileData":{"fileUri":"https://x/v1beta/files/victimfile1"}}]}]}',
      ),
      noType: await asAttacker(
        'POST',
        '/openai/v1/vector_stores',
        { authorization: `Bearer ${attacker}` },
        '{"file_ids":["file-victim0001"]}',
      ),
    };
    refusedAll(cases);
  });

  test('a compressed body Genway would read (for its model and references) is refused, never passed on unread', async () => {
    const refused = async (path: string, headers: Record<string, string>, text: string, encoding: string) => {
      const compress =
        encoding === 'br'
          ? zlib.brotliCompressSync
          : encoding === 'deflate'
            ? zlib.deflateSync
            : zlib.gzipSync;
      const before = vendor.received.length;
      const r = await rawRequest(gw.base, {
        method: 'POST',
        path,
        headers: { ...headers, 'content-encoding': encoding },
        body: compress(Buffer.from(text)),
      });
      return { status: r.status, body: r.body.toString(), forwarded: vendor.received.length - before };
    };
    const message = (encoding: string) =>
      `Content-Encoding: ${encoding}: a request body Genway reads (for its model and the objects it names) must be sent uncompressed`;
    expect(
      await refused(
        '/v1/responses',
        OA(),
        '{"model":"gpt-x","previous_response_id":"resp_victim0001"}',
        'gzip',
      ),
    ).toEqual({
      status: 400,
      body: JSON.stringify({
        error: { message: message('gzip'), type: 'invalid_request_error', param: null, code: null },
      }),
      forwarded: 0,
    });
    const messages = '{"model":"claude-x","max_tokens":5,"messages":[]}';
    expect((await refused('/v1/messages', AN(), messages, 'br')).status).toBe(400);
    const gemini = '{"contents":[{"parts":[{"fileData":{"fileUri":"files/victimfile1"}}]}]}';
    expect(
      (await refused('/v1beta/models/gemini-x:generateContent', GM(), gemini, 'deflate')).forwarded,
    ).toBe(0);
    // Through a mount, on a path no route names: read too, so refused too.
    expect(
      (await refused('/openai/v1/new-thing', OA(), '{"file_id":"file-victim0001"}', 'gzip')).status,
    ).toBe(400);
  });

  test('a record in use lives on past its first lifetime; only one left unused expires', async () => {
    // A gateway of its own whose records live 3 s: used at 2 s, one lives to 5 s; the one left unused ends at 3 s.
    const short = await startGateway(vendor.url, {
      gateway: { openai: { apiKeys: ['sk-openai-vendor-1'] }, objectTtlMs: 3000 },
    });
    try {
      const owner = (await fundedKey(short.h.services)).key;
      const other = (await fundedKey(short.h.services)).key;
      const as = (key: string) => ({ authorization: `Bearer ${key}`, 'content-type': 'application/json' });
      const post = (path: string) => rawRequest(short.base + path, { headers: as(owner), body: '{}' });
      expect((await post('/v1/conversations')).status).toBe(200); // conv_victim0001: used below
      expect((await post('/v1/files')).status).toBe(200); // file-victim0001: left unused
      await new Promise((r) => setTimeout(r, 2000));
      const used = await rawRequest(`${short.base}/v1/conversations/conv_victim0001`, {
        method: 'GET',
        headers: as(owner),
      });
      expect(used.status).toBe(200);
      await new Promise((r) => setTimeout(r, 1500));
      const read = async (path: string) =>
        (await rawRequest(short.base + path, { method: 'GET', headers: as(other) })).status;
      expect({
        used: await read('/v1/conversations/conv_victim0001'),
        unused: await read('/v1/files/file-victim0001'),
      }).toEqual({ used: 404, unused: 200 });
    } finally {
      await short.close();
    }
  });

  test("the owner's own references still go up", async () => {
    const oa = { authorization: `Bearer ${victim}`, 'content-type': 'application/json' };
    const before = vendor.received.length;
    for (const [path, body] of [
      ['/v1/responses', '{"model":"gpt-x","previous_response_id":"resp_\\u0076ictim0001","input":"x"}'],
      ['/v1/responses', '{"model":"gpt-x","conversation":{"id":"conv_victim0001"},"input":"x"}'],
      ['/openai/v1/vector_stores', '{"name":"x","file_ids":["file-victim0001"]}'],
    ]) {
      const r = await rawRequest(gw.base + path, { headers: oa, body });
      expect([path, r.status]).toEqual([path, 200]);
    }
    expect(vendor.received.length - before).toBe(3);
  });
});
