import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { z } from 'zod';
import type { GenwayApi } from '../api';
import { toolResult } from './result';

export function registerGetModelSchema(server: McpServer, api: GenwayApi): void {
  server.registerTool(
    'get_model_schema',
    {
      title: 'Get a model schema',
      description:
        'Returns one model by id or slug: the JSON Schema of its `input` (fields, allowed values, defaults), its price rules, polling guidance and failure codes. Read it before submit_task: inputs that break the schema are rejected with a 400 naming the field.',
      inputSchema: { model: z.string().min(1).describe('Model id or slug, e.g. image-gen') },
    },
    ({ model }) => toolResult(() => api.get(`/models/${encodeURIComponent(model)}`)),
  );
}
