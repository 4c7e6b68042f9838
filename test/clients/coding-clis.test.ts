/**
 * npm run test:clients — the coding CLIs our users point at Genway (Claude Code, Codex over HTTP and over its
 * Responses WebSocket mode, Gemini CLI), run non-interactively against a Genway on loopback whose vendors are a
 * mock on loopback (test/clients/cli-vendor.ts). Each must print the mock's answer and exit 0; the vendor must see
 * only the vendor key; Genway must meter exactly what the mock reported. How long each takes to its first request
 * and to its exit is written to docs/performance.md ("Coding CLIs through Genway").
 *
 * Claude Code and Codex also run on routes to an upstream of another format (translated, src/gateway/translate): a
 * tool-using turn each, against the FormatMocks the translation matrix uses (test/helpers/format-mocks).
 *
 * Not in `npm test`: the three CLIs weigh about 900 MB (installed into .clients/ by scripts/install-clients.js).
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { ModelUsage } from '../../src/gateway/store';
import { emptyUsage } from '../../src/gateway/store';
import { writeSection } from '../../bench/lib';
import { settled } from '../helpers/eventually';
import { FormatMock } from '../helpers/format-mocks';
import { startGateway, VENDOR_KEYS, type RunningGateway } from '../helpers/gateway';
import { meteredOf } from '../helpers/translation-matrix/gateway';
import { fundedKey } from '../helpers/services';
import { CliVendor, PHRASE, USAGE, type Seen } from './cli-vendor';

const BIN = path.join(__dirname, '..', '..', '.clients', 'node_modules', '.bin');
const TIME_LIMIT_MS = 120_000;

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
  /** From spawn to the first request that reached the vendor, through Genway (ms). */
  firstRequestMs: number | null;
  /** From spawn to exit (ms). */
  totalMs: number;
}

/**
 * Runs a CLI in its own process group with a fresh HOME, bounded in time; the group is killed afterwards. `vendor` is
 * what records the upstream requests (the CLI vendor, or a FormatMock), for the time to the first.
 */
async function run(
  vendor: { seen: readonly { at: number }[] },
  bin: string,
  args: string[],
  env: Record<string, string>,
  home: string,
): Promise<Run> {
  const before = vendor.seen.length;
  const start = performance.now();
  const child = spawn(path.join(BIN, bin), args, {
    cwd: home,
    detached: true,
    env: { PATH: process.env.PATH, HOME: home, TERM: 'dumb', NO_COLOR: '1', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const timer = setTimeout(() => process.kill(-child.pid!, 'SIGKILL'), TIME_LIMIT_MS);
  const code = await new Promise<number | null>((resolve) => child.once('close', resolve));
  clearTimeout(timer);
  try {
    process.kill(-child.pid!, 'SIGKILL'); // helpers it left behind
  } catch {
    // the group is gone already
  }
  const totalMs = performance.now() - start;
  const first = vendor.seen[before];
  return { code, stdout, stderr, firstRequestMs: first ? first.at - start : null, totalMs };
}

function freshHome(name: string): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), `genway-${name}-`));
}

/** What Genway must have metered for these vendor requests, by the model each named. */
function expectedUsage(seen: Seen[]): Record<string, ModelUsage> {
  const out: Record<string, ModelUsage> = {};
  const add = (model: string, input: number, output: number, cacheRead = 0, reasoning = 0) => {
    const u = (out[model] ??= emptyUsage());
    u.requests += 1;
    u.input += input;
    u.output += output;
    u.cacheRead += cacheRead;
    u.reasoning += reasoning;
  };
  const { messages, responses, gemini } = USAGE;
  for (const s of seen) {
    const pathname = s.url.split('?')[0];
    if (pathname === '/v1/messages') {
      add((JSON.parse(s.body) as { model: string }).model, messages.input, messages.output);
    } else if (pathname === '/v1/responses' && s.method === 'POST') {
      const { model } = JSON.parse(s.body) as { model: string };
      add(
        model,
        responses.input - responses.cached,
        responses.output - responses.reasoning,
        responses.cached,
        responses.reasoning,
      );
    } else if (pathname === '/v1/responses' && s.messages) {
      for (const m of s.messages) {
        const message = JSON.parse(m) as { type: string; model: string };
        if (message.type !== 'response.create') continue;
        add(
          message.model,
          responses.input - responses.cached,
          responses.output - responses.reasoning,
          responses.cached,
          responses.reasoning,
        );
      }
    } else {
      const action = /\/models\/([^/:]+):(generateContent|streamGenerateContent)$/.exec(pathname);
      if (action) add(action[1], gemini.prompt, gemini.output, 0, gemini.thoughts);
    }
  }
  return out;
}

describe('coding CLIs through Genway', () => {
  let vendor: CliVendor;
  let gw: RunningGateway;
  const timings: { client: string; run: Run; requests: number }[] = [];

  beforeAll(async () => {
    for (const bin of ['claude', 'codex', 'gemini']) {
      if (!fs.existsSync(path.join(BIN, bin)))
        throw new Error(`${bin} is missing: run node scripts/install-clients.js`);
    }
    vendor = await new CliVendor().start();
    gw = await startGateway(vendor.url);
  });

  afterAll(async () => {
    await gw?.close();
    await vendor?.stop();
    if (timings.length) {
      const rows = timings.map(
        ({ client, run: r, requests }) =>
          `| ${client} | ${r.firstRequestMs === null ? '–' : r.firstRequestMs.toFixed(0)} | ${r.totalMs.toFixed(0)} | ${requests} |`,
      );
      writeSection(
        'Coding CLIs through Genway',
        [
          `\`npm run test:clients\`: each CLI run once, non-interactively (one prompt), against Genway embedded on loopback in front of a mock vendor that answers at once; times from spawning the CLI, ${os.cpus().length} CPUs, Node ${process.versions.node}. The first request is the CLI's start-up cost; the rest is its own work around one answer.`,
          '',
          '| client | first request at the vendor, ms | exit, ms | vendor requests |',
          '| - | - | - | - |',
          ...rows,
        ].join('\n'),
      );
    }
  });

  /** Every request the vendor saw during a run: the vendor's key, never the Genway key anywhere. */
  function expectVendorKeyOnly(seen: Seen[], header: string, vendorKey: string, genwayKey: string): void {
    expect(seen.length).toBeGreaterThan(0);
    for (const s of seen) {
      expect(s.headers[header]).toBe(vendorKey);
      expect(JSON.stringify(s.headers) + s.url + s.body + (s.messages ?? []).join('')).not.toContain(
        genwayKey,
      );
    }
  }

  async function expectMetered(keyId: string, seen: Seen[]): Promise<void> {
    const expected = expectedUsage(seen);
    expect(Object.keys(expected).length).toBeGreaterThan(0);
    expect(await settled(() => gw.h.services.store.usage.get(keyId), expected)).toEqual(expected);
  }

  /** Claude Code at Genway with `key`, nothing else reached for. */
  const claudeEnv = (key: string) => ({
    ANTHROPIC_BASE_URL: gw.base,
    ANTHROPIC_API_KEY: key,
    DISABLE_TELEMETRY: '1',
    DISABLE_AUTOUPDATER: '1',
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
  });

  test('Claude Code: ANTHROPIC_BASE_URL at Genway, a Genway key; the answer printed, vendor key swapped in, usage metered', async () => {
    const { key, keyId } = await fundedKey(gw.h.services);
    const before = vendor.seen.length;
    const r = await run(vendor, 'claude', ['-p', 'say pong'], claudeEnv(key), freshHome('claude'));
    const seen = vendor.seen.slice(before);
    timings.push({ client: 'Claude Code', run: r, requests: seen.length });
    expect({ code: r.code, printed: r.stdout.includes(PHRASE) }).toEqual({ code: 0, printed: true });
    expect(seen.every((s) => s.url.startsWith('/v1/messages'))).toBe(true);
    expectVendorKeyOnly(seen, 'x-api-key', VENDOR_KEYS.anthropic[0], key);
    await expectMetered(keyId, seen);
  });

  test('Claude Code with a wrong key stops at the first 401 (x-should-retry: false), without retrying', async () => {
    const home = freshHome('claude-bad');
    const before = gw.h.logs.lines.length;
    const r = await run(
      vendor,
      'claude',
      ['-p', 'say pong'],
      {
        ANTHROPIC_BASE_URL: gw.base,
        ANTHROPIC_API_KEY: `gwk_${'W'.repeat(43)}`,
        DISABLE_TELEMETRY: '1',
        DISABLE_AUTOUPDATER: '1',
        CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
      },
      home,
    );
    timings.push({ client: 'Claude Code, wrong key', run: r, requests: 0 });
    const refused = gw.h.logs.lines
      .slice(before)
      .map((l) => JSON.parse(l) as { res?: { statusCode: number }; route?: string })
      .filter((l) => l.res?.statusCode === 401);
    expect(r.code).not.toBe(0);
    expect(refused.length).toBe(1);
  });

  test("Claude Code with every vendor key refused by the vendor: each tried once, then Genway's 502, not retried", async () => {
    const { key } = await fundedKey(gw.h.services);
    const home = freshHome('claude-refused');
    const before = vendor.seen.length;
    for (const k of VENDOR_KEYS.anthropic) vendor.refusedKeys.add(k);
    try {
      const r = await run(vendor, 'claude', ['-p', 'say pong'], claudeEnv(key), home);
      timings.push({
        client: 'Claude Code, vendor keys refused',
        run: r,
        requests: vendor.seen.length - before,
      });
      expect(r.code).not.toBe(0);
      // What Claude Code prints is Genway's message (its own key is fine), not the vendor's "invalid x-api-key".
      expect(`${r.stdout}${r.stderr}`).toContain("refused Genway's vendor key");
      const tried = vendor.seen.slice(before).filter((s) => s.url.startsWith('/v1/messages'));
      expect(tried.map((s) => s.headers['x-api-key']).sort()).toEqual([...VENDOR_KEYS.anthropic].sort());
    } finally {
      vendor.refusedKeys.clear();
    }
  });

  describe('Claude Code in its Bedrock and Vertex modes, on routes to Anthropic’s API', () => {
    let routed: RunningGateway;
    beforeAll(async () => {
      routed = await startGateway(vendor.url, {
        gateway: {
          routes: [
            { model: 'claude-on-bedrock', targets: [{ upstream: 'anthropic', model: 'claude-cli-bedrock' }] },
            { model: 'claude-on-vertex', targets: [{ upstream: 'anthropic', model: 'claude-cli-vertex' }] },
          ],
        },
      });
    });
    afterAll(async () => {
      await routed?.close();
    });

    /** Every model Claude Code may pick (its main one and its small, fast one) set to the route. */
    const models = (route: string) => ({
      ANTHROPIC_MODEL: route,
      ANTHROPIC_SMALL_FAST_MODEL: route,
      ANTHROPIC_DEFAULT_HAIKU_MODEL: route,
      ANTHROPIC_DEFAULT_SONNET_MODEL: route,
      ANTHROPIC_DEFAULT_OPUS_MODEL: route,
    });
    const quiet = {
      DISABLE_TELEMETRY: '1',
      DISABLE_AUTOUPDATER: '1',
      CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
    };

    test.each([
      [
        'Bedrock',
        'claude-on-bedrock',
        'claude-cli-bedrock',
        (base: string, key: string) => ({
          CLAUDE_CODE_USE_BEDROCK: '1',
          CLAUDE_CODE_SKIP_BEDROCK_AUTH: '1',
          ANTHROPIC_BEDROCK_BASE_URL: `${base}/bedrock`,
          AWS_BEARER_TOKEN_BEDROCK: key,
          AWS_REGION: 'us-east-1',
        }),
      ],
      [
        'Vertex',
        'claude-on-vertex',
        'claude-cli-vertex',
        (base: string, key: string) => ({
          CLAUDE_CODE_USE_VERTEX: '1',
          CLAUDE_CODE_SKIP_VERTEX_AUTH: '1',
          ANTHROPIC_VERTEX_BASE_URL: `${base}/vertex/v1`,
          ANTHROPIC_VERTEX_PROJECT_ID: 'client-project',
          CLOUD_ML_REGION: 'us-east5',
          ANTHROPIC_AUTH_TOKEN: key,
        }),
      ],
    ])(
      'Claude Code in its %s mode: the model routed, the answer printed, the vendor key swapped in, usage metered by the route',
      async (mode, route, upstreamModel, envOf) => {
        const { key, keyId } = await fundedKey(routed.h.services);
        const before = vendor.seen.length;
        const r = await run(
          vendor,
          'claude',
          ['-p', 'say pong'],
          { ...quiet, ...models(route), ...envOf(routed.base, key) },
          freshHome(`claude-${mode.toLowerCase()}`),
        );
        const seen = vendor.seen.slice(before);
        timings.push({ client: `Claude Code, ${mode} mode`, run: r, requests: seen.length });
        expect({
          code: r.code,
          printed: r.stdout.includes(PHRASE),
          stderr: r.code === 0 ? '' : r.stderr,
        }).toEqual({
          code: 0,
          printed: true,
          stderr: '',
        });
        const calls = seen.filter((s) => s.url.split('?')[0] === '/v1/messages');
        expect(calls.length).toBeGreaterThan(0);
        for (const s of calls) expect((JSON.parse(s.body) as { model: string }).model).toBe(upstreamModel);
        // The anthropic pool's keys take turns: each call carried one of them, never the Genway key.
        for (const s of seen) {
          expect(VENDOR_KEYS.anthropic).toContain(s.headers['x-api-key']);
          expect(JSON.stringify(s.headers) + s.url + s.body).not.toContain(key);
        }
        const { messages } = USAGE;
        const expected = {
          [route]: {
            ...emptyUsage(),
            requests: calls.length,
            input: calls.length * messages.input,
            output: calls.length * messages.output,
          },
        };
        expect(await settled(() => routed.h.services.store.usage.get(keyId), expected)).toEqual(expected);
      },
    );
  });

  describe('Claude Code and Codex on routes to an upstream of another format (translated)', () => {
    let chat: FormatMock;
    let messages: FormatMock;
    let translated: RunningGateway;
    beforeAll(async () => {
      [chat, messages] = await Promise.all([
        new FormatMock('chat').start(),
        new FormatMock('messages').start(),
      ]);
      translated = await startGateway(vendor.url, {
        gateway: {
          upstreams: [
            {
              id: 'gpt-server',
              type: 'openai',
              baseUrl: chat.url,
              apiKeys: ['sk-chat-upstream'],
              speaks: ['chat'],
            },
            { id: 'claude-api', type: 'anthropic', baseUrl: messages.url, apiKeys: ['sk-ant-upstream'] },
          ],
          routes: [
            { model: 'claude-on-gpt', targets: [{ upstream: 'gpt-server', model: 'gpt-cli' }] },
            { model: 'codex-on-claude', targets: [{ upstream: 'claude-api', model: 'claude-cli' }] },
          ],
        },
      });
    });
    afterAll(async () => {
      await translated?.close();
      await Promise.all([chat?.stop(), messages?.stop()]);
    });

    /** A file the CLI's tool reads: its first line is the phrase the answer must carry. */
    const SECRET = 'the secret word is marmalade';

    /** Genway's answers to Claude Code's calls, from its access log: path and status. */
    const answered = (gw: RunningGateway, from: number) =>
      gw.h.logs.lines
        .slice(from)
        .map((l) => JSON.parse(l) as { req?: { url: string }; res?: { statusCode: number } })
        .filter((l) => l.req && l.res)
        .map((l) => `${l.res!.statusCode} ${l.req!.url.split('?')[0]}`);

    test('Claude Code on a route to a chat completions upstream: a Read tool turn, the token count refused and tolerated, usage metered by the route', async () => {
      const { key, keyId } = await fundedKey(translated.h.services);
      const home = freshHome('claude-translated');
      // Long enough (about 75 KB) that Claude Code asks count_tokens how long it is before sending it.
      fs.writeFileSync(
        path.join(home, 'notes.txt'),
        `${SECRET}\n${'All work and no play makes Jack a dull boy, line after line.\n'.repeat(1200)}`,
      );
      const route = 'claude-on-gpt';
      const before = chat.received.length;
      const logged = translated.h.logs.lines.length;
      const r = await run(
        { seen: chat.received },
        'claude',
        [
          '-p',
          `Read notes.txt and tell me the secret word [mock:tool=Read] [mock:args={"file_path":"${home}/notes.txt"}]`,
          '--allowedTools',
          'Read',
        ],
        {
          ANTHROPIC_BASE_URL: translated.base,
          ANTHROPIC_API_KEY: key,
          DISABLE_TELEMETRY: '1',
          DISABLE_AUTOUPDATER: '1',
          CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
          ANTHROPIC_MODEL: route,
          ANTHROPIC_SMALL_FAST_MODEL: route,
          ANTHROPIC_DEFAULT_HAIKU_MODEL: route,
          ANTHROPIC_DEFAULT_SONNET_MODEL: route,
          ANTHROPIC_DEFAULT_OPUS_MODEL: route,
        },
        home,
      );
      const seen = chat.received.slice(before);
      timings.push({
        client: 'Claude Code, route to a chat completions upstream',
        run: r,
        requests: seen.length,
      });
      expect({ code: r.code, stderr: r.code === 0 ? '' : r.stderr }).toEqual({ code: 0, stderr: '' });
      // The second turn carried the file's text as the Read tool's result; the mock's answer quotes it.
      expect(r.stdout).toContain(`Tool results: 1\t${SECRET}`);
      const calls = seen.map(
        (s) => s.json as { tools?: { function: { name: string } }[]; messages: unknown[] },
      );
      expect(calls.length).toBeGreaterThanOrEqual(2);
      expect(calls[0]!.tools!.map((t) => t.function.name)).toContain('Read');
      expect(JSON.stringify(calls[calls.length - 1]!.messages)).toContain(SECRET);
      for (const s of seen) {
        expect(s.headers.authorization).toBe('Bearer sk-chat-upstream');
        expect(JSON.stringify(s.json)).not.toContain(key);
      }
      // count_tokens has no chat completions equivalent: refused (400), and Claude Code went on with its own estimate.
      const statuses = answered(translated, logged);
      expect(statuses).toContain('400 /v1/messages/count_tokens');
      expect(statuses.filter((a) => a.startsWith('200 ')).length).toBe(seen.length);
      const expected = meteredOf('chat', seen, route);
      expect(await settled(() => translated.h.services.store.usage.get(keyId), expected)).toEqual(expected);
    });

    test('Codex on a route to a messages upstream: Responses translated to messages, an exec_command tool turn, usage metered by the route', async () => {
      const { key, keyId } = await fundedKey(translated.h.services);
      // Not under /tmp: Codex refuses its helper binaries (the sandbox the command runs in) there.
      const home = fs.mkdtempSync(path.join(os.homedir(), '.genway-codex-translated-'));
      try {
        fs.writeFileSync(path.join(home, 'notes.txt'), `${SECRET}\n`);
        fs.mkdirSync(path.join(home, '.codex'));
        fs.writeFileSync(
          path.join(home, '.codex', 'config.toml'),
          [
            'model = "codex-on-claude"',
            'model_provider = "genway"',
            // OpenAI's hosted web search has no messages-format equivalent: the translation refuses it
            // (docs/decisions.md), so a Codex on such a route turns it off. Its sub-agent tools (a namespace) translate.
            'web_search = "disabled"',
            '',
            '[model_providers.genway]',
            'name = "Genway"',
            `base_url = "${translated.base}/v1"`,
            'env_key = "GENWAY_KEY"',
            'wire_api = "responses"',
          ].join('\n'),
        );
        const before = messages.received.length;
        const r = await run(
          { seen: messages.received },
          'codex',
          [
            'exec',
            '--skip-git-repo-check',
            'Show notes.txt [mock:tool=exec_command] [mock:args={"cmd":"cat notes.txt"}]',
          ],
          { CODEX_HOME: path.join(home, '.codex'), GENWAY_KEY: key },
          home,
        );
        const seen = messages.received.slice(before);
        timings.push({ client: 'Codex, route to a messages upstream', run: r, requests: seen.length });
        expect({ code: r.code, stderr: r.code === 0 ? '' : r.stderr.slice(-2000) }).toEqual({
          code: 0,
          stderr: '',
        });
        expect(r.stdout).toContain(SECRET);
        expect(seen.length).toBe(2);
        expect(seen.every((s) => s.url === '/v1/messages' && s.json!.model === 'claude-cli')).toBe(true);
        // Codex's sub-agent tools, a namespace, reached the target as functions named by it.
        const tools = (seen[0]!.json!.tools as { name: string }[]).map((t) => t.name);
        expect(tools).toEqual(
          expect.arrayContaining(['exec_command', expect.stringMatching(/^multi_agent_v1__/)]),
        );
        // The second turn carried the command's output as the tool's result.
        expect(JSON.stringify(seen[1]!.json!.messages)).toContain(SECRET);
        for (const s of seen) {
          expect(s.headers['x-api-key']).toBe('sk-ant-upstream');
          expect(JSON.stringify(s.json)).not.toContain(key);
        }
        const expected = meteredOf('messages', seen, 'codex-on-claude');
        expect(await settled(() => translated.h.services.store.usage.get(keyId), expected)).toEqual(expected);
      } finally {
        fs.rmSync(home, { recursive: true, force: true });
      }
    });
  });

  const codexConfig = (home: string, websocket: boolean) => {
    fs.mkdirSync(path.join(home, '.codex'), { recursive: true });
    fs.writeFileSync(
      path.join(home, '.codex', 'config.toml'),
      [
        'model = "gpt-codex-test"',
        'model_provider = "genway"',
        '',
        '[model_providers.genway]',
        'name = "Genway"',
        `base_url = "${gw.base}/v1"`,
        'env_key = "GENWAY_KEY"',
        'wire_api = "responses"',
        ...(websocket ? ['supports_websockets = true'] : []),
      ].join('\n'),
    );
    return { CODEX_HOME: path.join(home, '.codex') };
  };

  test.each([
    ['Codex', false],
    ['Codex over its Responses WebSocket mode', true],
  ])(
    '%s: a provider entry at Genway; the answer printed, vendor key swapped in, usage metered',
    async (name, websocket) => {
      const { key, keyId } = await fundedKey(gw.h.services);
      const home = freshHome('codex');
      const before = vendor.seen.length;
      const r = await run(
        vendor,
        'codex',
        ['exec', '--skip-git-repo-check', 'say pong'],
        { ...codexConfig(home, websocket), GENWAY_KEY: key },
        home,
      );
      const seen = vendor.seen.slice(before);
      timings.push({ client: name, run: r, requests: seen.length });
      expect({ code: r.code, printed: r.stdout.includes(PHRASE) }).toEqual({ code: 0, printed: true });
      expect(seen.map((s) => `${s.method} ${s.url} ${s.messages ? 'websocket' : 'http'}`)).toContain(
        `${websocket ? 'GET' : 'POST'} /v1/responses ${websocket ? 'websocket' : 'http'}`,
      );
      expectVendorKeyOnly(seen, 'authorization', `Bearer ${VENDOR_KEYS.openai[0]}`, key);
      await expectMetered(keyId, seen);
    },
  );

  test('Gemini CLI: GOOGLE_GEMINI_BASE_URL at Genway; routing and the answer through Genway, usage metered', async () => {
    const { key, keyId } = await fundedKey(gw.h.services);
    const home = freshHome('gemini');
    fs.mkdirSync(path.join(home, '.gemini'), { recursive: true });
    fs.writeFileSync(
      path.join(home, '.gemini', 'settings.json'),
      JSON.stringify({ security: { auth: { selectedType: 'gemini-api-key' } } }),
    );
    const before = vendor.seen.length;
    const r = await run(
      vendor,
      'gemini',
      ['-p', 'say pong'],
      { GOOGLE_GEMINI_BASE_URL: gw.base, GEMINI_API_KEY: key, GEMINI_CLI_TRUST_WORKSPACE: 'true' },
      home,
    );
    const seen = vendor.seen.slice(before);
    timings.push({ client: 'Gemini CLI', run: r, requests: seen.length });
    expect({ code: r.code, printed: r.stdout.includes(PHRASE) }).toEqual({ code: 0, printed: true });
    expect(seen.some((s) => s.url.includes(':streamGenerateContent?alt=sse'))).toBe(true);
    expectVendorKeyOnly(seen, 'x-goog-api-key', VENDOR_KEYS.gemini[0], key);
    await expectMetered(keyId, seen);
  });
});
