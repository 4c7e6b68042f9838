#!/usr/bin/env node
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { createGenwayApi } from './api';
import { createMcpServer } from './server';

/**
 * genway-mcp: the stdio tool server for coding agents. Configured by GENWAY_API_KEY and GENWAY_BASE_URL (the
 * server root, e.g. http://127.0.0.1:8080). stdout carries only the protocol; anything else goes to stderr.
 */
async function main(): Promise<void> {
  const apiKey = process.env.GENWAY_API_KEY;
  const baseUrl = process.env.GENWAY_BASE_URL ?? 'http://127.0.0.1:8080';
  if (!apiKey) {
    process.stderr.write('genway-mcp: set GENWAY_API_KEY to a Genway API key (gwk_...)\n');
    process.exit(2);
  }
  const server = createMcpServer(createGenwayApi(baseUrl, apiKey), '0.1.0');
  await server.connect(new StdioServerTransport());
  process.stderr.write(`genway-mcp: serving tools for ${baseUrl} on stdio\n`);
}

main().catch((err: unknown) => {
  process.stderr.write(`genway-mcp: ${(err as Error).message}\n`);
  process.exit(1);
});
