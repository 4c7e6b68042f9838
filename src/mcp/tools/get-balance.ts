import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { GenwayApi } from '../api';
import { toolResult } from './result';

export function registerGetBalance(server: McpServer, api: GenwayApi): void {
  server.registerTool(
    'get_balance',
    {
      title: 'Get balance',
      description: 'Returns the remaining balance, in USD, of the account that owns the configured API key.',
      inputSchema: {},
    },
    () => toolResult(async () => ({ balanceUsd: await api.get('/apikeys/current-balance') })),
  );
}
