/**
 * The intermediate form every translation passes through: a reader per caller format turns a request into it, a
 * writer per target format turns it into the target's body; the target's answer (JSON or stream events) is read into
 * it and written in the caller's format. Only what at least two formats can carry lives here: anything else is
 * refused (or documented as dropped) by the reader, against the field table (./table.ts).
 */

/** Where an image or document comes from. */
export type Source =
  | { kind: 'base64'; mediaType: string; data: string }
  | { kind: 'url'; url: string; mediaType?: string }
  /** Plain text as a document (Anthropic's `text` source, a Gemini `text/plain` blob decoded). */
  | { kind: 'text'; text: string };

export interface TextPart {
  type: 'text';
  text: string;
}
export interface ImagePart {
  type: 'image';
  source: Source;
}
export interface DocumentPart {
  type: 'document';
  source: Source;
  title?: string;
  filename?: string;
}
export interface ToolCallPart {
  type: 'tool_call';
  id: string;
  name: string;
  /** The arguments as an object (every format but chat carries them so; chat's string is parsed on read). */
  args: Record<string, unknown>;
}
export interface ToolResultPart {
  type: 'tool_result';
  id: string;
  /** The called tool's name, when the caller's format states it (Gemini's functionResponse). */
  name?: string;
  content: (TextPart | ImagePart | DocumentPart)[];
  isError?: boolean;
}
export interface ThinkingPart {
  type: 'thinking';
  text: string;
  /** Anthropic's signature (or a Gemini thought signature): the target verifies it. */
  signature?: string;
  /** Anthropic's redacted thinking: opaque data, no text. */
  redacted?: string;
}
export interface RefusalPart {
  type: 'refusal';
  text: string;
}

export type Part =
  | TextPart
  | ImagePart
  | DocumentPart
  | ToolCallPart
  | ToolResultPart
  | ThinkingPart
  | RefusalPart;

export interface Message {
  /** `system` only mid-conversation: the leading instructions are `Request.system`. */
  role: 'user' | 'assistant' | 'system';
  content: Part[];
}

export interface Tool {
  name: string;
  description?: string;
  /** A JSON Schema (draft 2020-12 as the caller wrote it; Gemini's OpenAPI subset is converted on read). */
  parameters: Record<string, unknown>;
  strict?: boolean;
}

export type ToolChoice = { mode: 'auto' | 'none' | 'required' } | { mode: 'tool'; name: string };

export type Output =
  | { kind: 'json_object' }
  | {
      kind: 'json_schema';
      schema: Record<string, unknown>;
      name?: string;
      description?: string;
      strict?: boolean;
    };

/** Reasoning effort on the widest scale any format offers (OpenAI's), lowest first. */
export const EFFORTS = ['none', 'minimal', 'low', 'medium', 'high', 'xhigh', 'max'] as const;
export type Effort = (typeof EFFORTS)[number];

export interface Reasoning {
  /** A level (OpenAI `reasoning_effort`, Anthropic `output_config.effort`, Gemini `thinkingLevel`). */
  effort?: Effort;
  /** A token budget (Anthropic `budget_tokens`, Gemini `thinkingBudget`); 0 is off. */
  budget?: number;
  /** The model decides how much to think (Anthropic `adaptive`, Gemini budget -1). */
  adaptive?: boolean;
  /** Whether the caller asked to see the thinking (a summary where the target gives one). */
  show?: boolean;
}

export interface Request {
  system: TextPart[];
  messages: Message[];
  maxTokens?: number;
  temperature?: number;
  topP?: number;
  topK?: number;
  stop?: string[];
  frequencyPenalty?: number;
  presencePenalty?: number;
  seed?: number;
  tools?: Tool[];
  toolChoice?: ToolChoice;
  /** false: one tool call per turn at most. */
  parallelToolCalls?: boolean;
  output?: Output;
  reasoning?: Reasoning;
  /** An end-user id for the vendor's abuse monitoring. */
  user?: string;
  stream: boolean;
}

/** Why an answer stopped, on the union of the formats' reasons. */
export type Stop =
  | 'end'
  | 'max_tokens'
  | 'stop_sequence'
  | 'tool_use'
  | 'content_filter'
  | 'refusal'
  | 'pause'
  | 'context_window'
  | 'malformed_tool_call'
  | 'other';

/**
 * Token counts. `input` excludes cache reads and writes (Anthropic's sense); `output` includes reasoning (OpenAI's and
 * Anthropic's sense). Each format's reader and writer converts from and to its own sense.
 */
export interface Usage {
  input: number;
  cacheRead: number;
  cacheWrite: number;
  output: number;
  /** Of `output`, the reasoning tokens; undefined when the target does not say. */
  reasoning?: number;
}

/** A whole (non-streamed) answer. */
export interface Answer {
  id?: string;
  /** The model the target reports (the caller is shown the name it called, ctx.model). */
  model?: string;
  content: Part[];
  stop: Stop;
  stopSequence?: string;
  usage?: Usage;
}

/**
 * A streamed answer, event by event. Blocks are implied: text and thinking deltas continue the current block of
 * their kind, anything else ends it; tool calls are keyed by `key`, unique in the answer.
 */
export type Event =
  | { type: 'start'; id?: string; model?: string; usage?: Usage }
  | { type: 'text'; delta: string }
  | { type: 'thinking'; delta: string }
  /** Ends the current thinking block with its signature. */
  | { type: 'signature'; signature: string }
  | { type: 'redacted'; data: string }
  | { type: 'refusal'; delta: string }
  | { type: 'tool_start'; key: number; id: string; name: string }
  | { type: 'tool_args'; key: number; delta: string }
  /** A tool call whose arguments are whole (Gemini): start, args and end at once. */
  | { type: 'tool_call'; key: number; id: string; name: string; args: Record<string, unknown> }
  | { type: 'finish'; stop: Stop; stopSequence?: string }
  | { type: 'usage'; usage: Usage }
  /** The answer is complete: finish reason and usage are known (or never will be). */
  | { type: 'done' }
  | { type: 'error'; status: number; message: string };

/** A token count (count-tokens operations). */
export interface Count {
  input: number;
}
