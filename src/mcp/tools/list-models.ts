import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { z } from 'zod';
import type { GenwayApi } from '../api';
import { toolResult } from './result';

export function registerListModels(server: McpServer, api: GenwayApi): void {
  server.registerTool(
    'list_models',
    {
      title: 'List models',
      description:
        'Lists the models this Genway offers: generation task models (integration_type task_api: image, video, audio) and the LLM gateway formats (integration_type llm_gateway, category text). Use the returned id with get_model_schema before submitting a task.',
      inputSchema: {
        category: z
          .enum(['image', 'video', 'audio', 'text'])
          .optional()
          .describe('Only models of this category'),
        integration_type: z
          .enum(['task_api', 'llm_gateway'])
          .optional()
          .describe('Only task models or only LLM gateway formats'),
      },
    },
    ({ category, integration_type }) => {
      const query = new URLSearchParams();
      if (category) query.set('category', category);
      if (integration_type) query.set('integration_type', integration_type);
      const qs = query.toString();
      return toolResult(() => api.get(`/models${qs ? `?${qs}` : ''}`));
    },
  );
}
