import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { z } from 'zod';
import type { GenwayApi } from '../api';
import { toolResult } from './result';

export function registerSubmitTask(server: McpServer, api: GenwayApi): void {
  server.registerTool(
    'submit_task',
    {
      title: 'Submit a generation task',
      description:
        'Submits an asynchronous generation task and returns its taskId. The price is charged at submission (a failed task is refunded). With request_type async (default) poll get_task_status; with callback, Genway POSTs the result to callback_url (a public HTTPS URL).',
      inputSchema: {
        model: z.string().min(1).describe('Model id, e.g. image-gen'),
        input: z
          .record(z.string(), z.unknown())
          .describe("The model's input object, as described by get_model_schema; always has mode"),
        request_type: z
          .enum(['async', 'callback'])
          .optional()
          .describe('async (poll) or callback (push to callback_url)'),
        callback_url: z.string().optional().describe('Required with request_type callback'),
        provider: z
          .enum(['auto', 'value', 'official'])
          .optional()
          .describe('Routing: auto (default), value (cheapest), official'),
      },
    },
    ({ model, input, request_type, callback_url, provider }) =>
      toolResult(() =>
        api.post(`/generateTask/${encodeURIComponent(model)}`, {
          input,
          request_type,
          callback_url,
          provider,
        }),
      ),
  );
}
