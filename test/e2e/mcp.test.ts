import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { adminAccount, listeningPort, ROOT, startGenway, type GenwayProcess } from '../helpers/process';

const ADMIN = 'mcp-test-admin-token-0123456789';
const MCP_MAIN = path.join(ROOT, 'dist', 'mcp', 'main.js');
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

type ToolText = { content: { type: string; text: string }[]; isError?: boolean };

describe('genway-mcp over stdio, driven by the MCP SDK client', () => {
  let genway: GenwayProcess;
  let base: string;
  let client: Client;
  let stderr = '';

  async function connect(apiKey: string): Promise<Client> {
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [MCP_MAIN],
      env: { PATH: process.env.PATH ?? '', GENWAY_API_KEY: apiKey, GENWAY_BASE_URL: base },
      stderr: 'pipe',
    });
    transport.stderr?.on('data', (d) => (stderr += d));
    const c = new Client({ name: 'genway-test', version: '1.0.0' });
    await c.connect(transport);
    return c;
  }
  const call = async (c: Client, name: string, args: Record<string, unknown> = {}) =>
    (await c.callTool({ name, arguments: args })) as ToolText;
  const data = (result: ToolText) => JSON.parse(result.content[0].text);

  beforeAll(async () => {
    genway = startGenway(['serve'], { PORT: '0', GENWAY_ADMIN_TOKEN: ADMIN, GENWAY_CONFIG: '' });
    base = `http://127.0.0.1:${await listeningPort(genway)}`;
    const { key } = await adminAccount(base, 5, ADMIN);
    client = await connect(key);
  });
  afterAll(async () => {
    await client?.close();
    genway.kill();
    await genway.exited;
  });

  test('five tools, each with a description and an input schema', async () => {
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual([
      'get_balance',
      'get_model_schema',
      'get_task_status',
      'list_models',
      'submit_task',
    ]);
    for (const tool of tools) {
      expect(tool.description!.length).toBeGreaterThan(40);
      expect(tool.inputSchema.type).toBe('object');
    }
    const submit = tools.find((t) => t.name === 'submit_task')!;
    expect(submit.inputSchema.required).toEqual(['model', 'input']);
  });

  test('get_balance reads the key account balance', async () => {
    expect(data(await call(client, 'get_balance'))).toEqual({ balanceUsd: 5 });
  });

  test('list_models filters by category and integration type', async () => {
    const video = data(await call(client, 'list_models', { category: 'video' }));
    expect(video.map((m: { id: string }) => m.id).sort()).toEqual([
      'basic-video',
      'first-frame-video',
      'multimodal-video',
      'short-clip-video',
    ]);
    const gateway = data(await call(client, 'list_models', { integration_type: 'llm_gateway' }));
    expect(gateway.every((m: { category: string }) => m.category === 'text')).toBe(true);
    expect(gateway.map((m: { id: string }) => m.id).sort()).toEqual([
      'chat-completions',
      'generate-content',
      'messages',
      'responses',
    ]);
  });

  test('get_model_schema returns the input schema and prices', async () => {
    const model = data(await call(client, 'get_model_schema', { model: 'image-gen' }));
    expect(model.inputSchema.properties.mode.enum).toEqual(['text-to-image', 'image-to-image']);
    expect(model.pricing.usdPerImage.medium['1k']).toBe(0.0424);
  });

  test('submit_task then get_task_status until success', async () => {
    const submitted = data(
      await call(client, 'submit_task', {
        model: 'image-gen',
        input: { mode: 'text-to-image', prompt: '[sandbox:delay=50] fox' },
      }),
    );
    expect(submitted.taskId).toMatch(/^task_/);
    let record = { state: 'pending' };
    for (let i = 0; i < 100 && record.state !== 'success'; i++) {
      await sleep(50);
      record = data(await call(client, 'get_task_status', { model: 'image-gen', task_id: submitted.taskId }));
    }
    expect(record.state).toBe('success');
    expect(data(await call(client, 'get_balance'))).toEqual({ balanceUsd: 5 - 0.0424 });
  });

  test('API errors come back as tool errors carrying the envelope message', async () => {
    const bad = await call(client, 'submit_task', { model: 'image-gen', input: { mode: 'text-to-image' } });
    expect(bad.isError).toBe(true);
    expect(bad.content[0].text).toBe('Genway API error 400: input.prompt is required');
    const missing = await call(client, 'get_task_status', { model: 'image-gen', task_id: 'task_nope' });
    expect(missing).toEqual({
      isError: true,
      content: [{ type: 'text', text: 'Genway API error 404: No task task_nope for model image-gen' }],
    });
    const stranger = await connect(`gwk_${'x'.repeat(43)}`);
    try {
      const denied = await call(stranger, 'get_balance');
      expect(denied).toEqual({
        isError: true,
        content: [{ type: 'text', text: 'Genway API error 401: Invalid API key' }],
      });
    } finally {
      await stranger.close();
    }
  });

  test('logs go to stderr only (stdout is the protocol)', () => {
    expect(stderr).toContain('genway-mcp: serving tools for');
  });
});
