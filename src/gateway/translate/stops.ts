import type { Stop } from './ir';

/**
 * Stop reasons, from each target format's answer into the intermediate form and from it into each caller's format:
 * the code looks them up here, and docs/translation.md renders these tables.
 */

export const STOP_FROM = {
  chat: {
    stop: 'end',
    length: 'max_tokens',
    tool_calls: 'tool_use',
    function_call: 'tool_use',
    content_filter: 'content_filter',
  },
  messages: {
    end_turn: 'end',
    max_tokens: 'max_tokens',
    stop_sequence: 'stop_sequence',
    tool_use: 'tool_use',
    pause_turn: 'pause',
    refusal: 'refusal',
    model_context_window_exceeded: 'context_window',
  },
  /** STOP with function calls in the answer is tool_use; a prompt blocked (`promptFeedback.blockReason`) content_filter. */
  generate: {
    STOP: 'end',
    MAX_TOKENS: 'max_tokens',
    SAFETY: 'content_filter',
    RECITATION: 'content_filter',
    BLOCKLIST: 'content_filter',
    PROHIBITED_CONTENT: 'content_filter',
    SPII: 'content_filter',
    IMAGE_SAFETY: 'content_filter',
    IMAGE_PROHIBITED_CONTENT: 'content_filter',
    IMAGE_RECITATION: 'content_filter',
    MALFORMED_FUNCTION_CALL: 'malformed_tool_call',
    UNEXPECTED_TOOL_CALL: 'malformed_tool_call',
    TOO_MANY_TOOL_CALLS: 'malformed_tool_call',
    LANGUAGE: 'other',
    OTHER: 'other',
  },
} as const satisfies Record<string, Record<string, Stop>>;

export const STOP_TO = {
  chat: {
    end: 'stop',
    stop_sequence: 'stop',
    max_tokens: 'length',
    context_window: 'length',
    tool_use: 'tool_calls',
    content_filter: 'content_filter',
    refusal: 'content_filter',
    pause: 'stop',
    malformed_tool_call: 'stop',
    other: 'stop',
  },
  messages: {
    end: 'end_turn',
    stop_sequence: 'stop_sequence',
    max_tokens: 'max_tokens',
    context_window: 'model_context_window_exceeded',
    tool_use: 'tool_use',
    content_filter: 'refusal',
    refusal: 'refusal',
    pause: 'pause_turn',
    malformed_tool_call: 'end_turn',
    other: 'end_turn',
  },
  generate: {
    end: 'STOP',
    stop_sequence: 'STOP',
    max_tokens: 'MAX_TOKENS',
    context_window: 'MAX_TOKENS',
    tool_use: 'STOP',
    content_filter: 'SAFETY',
    refusal: 'SAFETY',
    pause: 'STOP',
    malformed_tool_call: 'MALFORMED_FUNCTION_CALL',
    other: 'OTHER',
  },
  /** The response's status, and its `incomplete_details.reason` when incomplete. */
  responses: {
    end: 'completed',
    stop_sequence: 'completed',
    max_tokens: 'incomplete: max_output_tokens',
    context_window: 'incomplete: max_output_tokens',
    tool_use: 'completed',
    content_filter: 'incomplete: content_filter',
    refusal: 'completed',
    pause: 'completed',
    malformed_tool_call: 'completed',
    other: 'completed',
  },
} as const satisfies Record<string, Record<Stop, string>>;

/** A target's stop reason in the intermediate form (unknown ones are `other`). */
export function stopFrom(format: keyof typeof STOP_FROM, reason: unknown): Stop {
  const table = STOP_FROM[format] as Record<string, Stop>;
  return (typeof reason === 'string' && table[reason]) || 'other';
}
