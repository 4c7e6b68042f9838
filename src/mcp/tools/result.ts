import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { GenwayApiError } from '../api';

/** Runs an API call as a tool: data as JSON text, an API error as a tool error carrying the envelope message. */
export async function toolResult(run: () => Promise<unknown>): Promise<CallToolResult> {
  try {
    const data = await run();
    return { content: [{ type: 'text', text: JSON.stringify(data, null, 2) }] };
  } catch (err) {
    const message =
      err instanceof GenwayApiError ? `Genway API error ${err.code}: ${err.message}` : (err as Error).message;
    return { isError: true, content: [{ type: 'text', text: message }] };
  }
}
