import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { GenwayApi } from './api';
import { registerGetBalance } from './tools/get-balance';
import { registerGetModelSchema } from './tools/get-model-schema';
import { registerGetTaskStatus } from './tools/get-task-status';
import { registerListModels } from './tools/list-models';
import { registerSubmitTask } from './tools/submit-task';

export function createMcpServer(api: GenwayApi, version: string): McpServer {
  const server = new McpServer({ name: 'genway', version });
  registerListModels(server, api);
  registerGetModelSchema(server, api);
  registerSubmitTask(server, api);
  registerGetTaskStatus(server, api);
  registerGetBalance(server, api);
  return server;
}
