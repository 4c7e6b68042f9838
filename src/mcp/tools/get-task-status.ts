import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { z } from 'zod';
import type { GenwayApi } from '../api';
import { toolResult } from './result';

export function registerGetTaskStatus(server: McpServer, api: GenwayApi): void {
  server.registerTool(
    'get_task_status',
    {
      title: 'Get task status',
      description:
        'Returns a task record: state (pending, processing, success, failed), resultJson (a JSON string with resultUrls, on success), failCode and failMsg (on failure), createTime, completeTime, costTime. Poll no faster than the model polling guidance (get_model_schema); result URLs expire 24 h after completion.',
      inputSchema: {
        model: z.string().min(1).describe('The model the task was submitted to'),
        task_id: z.string().min(1).describe('The taskId returned by submit_task'),
      },
    },
    ({ model, task_id }) =>
      toolResult(() =>
        api.get(`/statusTask/${encodeURIComponent(model)}?taskId=${encodeURIComponent(task_id)}`),
      ),
  );
}
