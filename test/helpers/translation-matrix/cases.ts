/**
 * The translation matrix's case list: every caller (an official SDK, an AI SDK provider, a LangChain client) against
 * a mock upstream of every other format, through a real Genway on routes (test/e2e/translation-*.test.ts run these
 * cases, one test each). The README's matrix is rendered from this list by `node scripts/translation-matrix.js`, and
 * test/e2e/translation-matrix.test.ts fails when the two disagree. Data only: the script bundles this file.
 */

export type TargetFormat = 'chat' | 'messages' | 'generate';
export type CallerFormat = TargetFormat | 'responses';

export const TARGET_FORMATS: readonly TargetFormat[] = ['chat', 'messages', 'generate'];

/** What each scenario proves (the test titles say the rest). */
export const SCENARIOS = {
  text: 'a JSON answer: text, finish reason, the route’s name as the model, usage in the caller’s terms, metered and priced by the route',
  stream: 'a stream the SDK accumulates, metered from the target’s own events',
  tools:
    'tool calls (two at once where the caller can ask) on a first turn, their results answered on a second',
  'free-form tool': 'a free-form tool (Codex’s apply_patch) called and answered',
  namespace: 'a function of a namespace of tools (Codex’s sub-agents) called as one, and answered',
  images: 'images as bytes and as an http URL',
  json: 'JSON output by schema, parsed by the caller',
  reasoning: 'reasoning asked in the caller’s terms, the target’s thinking back in them',
  count: 'token counts: counted by a target with a count, refused (400) by a chat completions target',
  errors:
    'the upstream’s error in the caller’s status and SDK error class; a refused field named; a mid-stream error',
  'allow-list': 'a key whose allow-list lacks the route: 403 in the caller’s shape, nothing sent upstream',
  budget: 'a key over its budget: 402 in the caller’s shape, after a translated call counted against it',
  disconnect:
    'a client leaving mid-stream: the upstream stopped, the usage seen so far metered (a chat completions stream reports none before its end, so there nothing is, as on a passthrough call)',
} as const;
export type Scenario = keyof typeof SCENARIOS;

export interface MatrixCaller {
  /** The test's name for it. */
  id: string;
  /** The README's row. */
  label: string;
  /** The format it calls Genway in. */
  format: CallerFormat;
  scenarios: readonly Scenario[];
}

const GATES: Scenario[] = ['allow-list', 'budget', 'disconnect'];

/** The official SDKs (test/e2e/translation-matrix.test.ts). */
export const SDK_CALLERS: readonly MatrixCaller[] = [
  {
    id: 'openai.chat',
    label: '`openai` chat completions',
    format: 'chat',
    scenarios: ['text', 'stream', 'tools', 'images', 'json', 'reasoning', 'errors', ...GATES],
  },
  {
    id: 'openai.responses',
    label: '`openai` Responses',
    format: 'responses',
    scenarios: [
      'text',
      'stream',
      'tools',
      'free-form tool',
      'namespace',
      'images',
      'json',
      'reasoning',
      'count',
      'errors',
      ...GATES,
    ],
  },
  {
    id: 'anthropic',
    label: '`@anthropic-ai/sdk` messages',
    format: 'messages',
    scenarios: ['text', 'stream', 'tools', 'images', 'json', 'reasoning', 'count', 'errors', ...GATES],
  },
  {
    id: 'google',
    label: '`@google/genai` generateContent',
    format: 'generate',
    scenarios: ['text', 'stream', 'tools', 'images', 'json', 'reasoning', 'count', 'errors', ...GATES],
  },
];

/** The frameworks (test/e2e/translation-frameworks.test.ts). */
export const FRAMEWORK_CALLERS: readonly MatrixCaller[] = [
  ...(
    [
      ['ai.openai.chat', 'AI SDK `@ai-sdk/openai` `.chat()`', 'chat'],
      ['ai.openai.responses', 'AI SDK `@ai-sdk/openai` (Responses)', 'responses'],
      ['ai.anthropic', 'AI SDK `@ai-sdk/anthropic`', 'messages'],
      ['ai.google', 'AI SDK `@ai-sdk/google`', 'generate'],
    ] as const
  ).map(([id, label, format]) => ({
    id,
    label,
    format,
    scenarios: ['text', 'stream', 'tools', 'images', 'json', 'errors'] as Scenario[],
  })),
  ...(
    [
      ['langchain.openai.chat', 'LangChain `ChatOpenAI`', 'chat'],
      ['langchain.openai.responses', 'LangChain `ChatOpenAI` (`useResponsesApi`)', 'responses'],
      ['langchain.anthropic', 'LangChain `ChatAnthropic`', 'messages'],
    ] as const
  ).map(([id, label, format]) => ({
    id,
    label,
    format,
    scenarios: ['text', 'stream', 'tools', 'json', 'errors'] as Scenario[],
  })),
];

export const CALLERS: readonly MatrixCaller[] = [...SDK_CALLERS, ...FRAMEWORK_CALLERS];

/** The scenarios also run with Genway on Redis (the official SDKs' rows). */
export const REDIS_SCENARIOS: readonly Scenario[] = ['text', 'stream', 'tools', 'budget', 'disconnect'];

export const targetsOf = (caller: MatrixCaller): TargetFormat[] =>
  TARGET_FORMATS.filter((t) => t !== caller.format);

export function callerById(id: string): MatrixCaller {
  const found = CALLERS.find((c) => c.id === id);
  if (!found) throw new Error(`no caller ${id} in the matrix`);
  return found;
}

const TARGET_HEADINGS: Record<TargetFormat, string> = {
  chat: 'to a chat completions upstream',
  messages: 'to a messages upstream',
  generate: 'to a generateContent upstream',
};

/** The README's matrix: callers as rows, target formats as columns, cases passed of cases per cell. */
export function renderMatrix(): string {
  const cases = (c: MatrixCaller) => c.scenarios.length;
  let total = 0;
  let redis = 0;
  const rows = CALLERS.map((c) => {
    const cells = TARGET_FORMATS.map((t) => {
      if (t === c.format) return 'same format: passed through';
      total += cases(c);
      if (SDK_CALLERS.includes(c)) redis += c.scenarios.filter((s) => REDIS_SCENARIOS.includes(s)).length;
      return `${cases(c)}/${cases(c)}`;
    });
    return `| ${c.label} | ${cells.join(' | ')} |`;
  });
  const used = (Object.keys(SCENARIOS) as Scenario[]).filter((s) =>
    CALLERS.some((c) => c.scenarios.includes(s)),
  );
  return [
    `| caller | ${TARGET_FORMATS.map((t) => TARGET_HEADINGS[t]).join(' | ')} |`,
    `| - | - | - | - |`,
    ...rows,
    '',
    `${total} cases, each a test of its own through a real Genway (${redis} of them run again with Genway on Redis). A cell is cases passing / cases: \`npm test\` fails when one fails, and when this table and the case list disagree. The scenarios:`,
    '',
    ...used.map((s) => `- **${s}**: ${SCENARIOS[s]}.`),
  ].join('\n');
}
