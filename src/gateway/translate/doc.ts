import { FIELD_TABLES } from './index';
import { STOP_FROM, STOP_TO } from './stops';
import { formatName, type CallFormat, type FieldRule, type Handling, type TargetFormat } from './table';

/**
 * docs/translation.md's generated half, rendered from the tables the code runs on (scripts/translation-table.js
 * writes it; test/unit/translate-table.test.ts fails when the file and the code disagree).
 */

export const GENERATED_MARK =
  '<!-- Generated from src/gateway/translate by scripts/translation-table.js: do not edit below. -->';

const TARGETS: readonly TargetFormat[] = ['chat', 'messages', 'generate'];
const CALLERS: readonly CallFormat[] = ['chat', 'messages', 'generate', 'responses'];

const title = (f: CallFormat): string =>
  ({ chat: 'Chat completions', messages: 'Messages', generate: 'generateContent', responses: 'Responses' })[
    f
  ];

function cell(h: Handling | undefined, rule: FieldRule): string {
  if (!h) return '';
  const how = h.how === 'refused' ? '**refused**' : h.how;
  const neutral = h.how === 'refused' && rule.neutral ? `; ${rule.neutral.note}` : '';
  return `${how}: ${h.note}${neutral}`.replace(/\|/g, '\\|');
}

function fieldsSection(caller: CallFormat): string {
  const table = FIELD_TABLES[caller];
  const targets = TARGETS.filter((t) => t !== caller);
  const lines = [
    `### ${title(caller)} callers`,
    '',
    `| field | ${targets.map((t) => `to ${formatName(t)}`).join(' | ')} |`,
    `| - | ${targets.map(() => '-').join(' | ')} |`,
  ];
  for (const rule of table.rules) {
    lines.push(`| \`${rule.field}\` | ${targets.map((t) => cell(rule.on[t], rule)).join(' | ')} |`);
  }
  return lines.join('\n');
}

function stopSection(): string {
  const lines = ['### Stop reasons', '', 'Each target’s reason, read into the intermediate form:', ''];
  for (const target of TARGETS) {
    const entries = Object.entries(STOP_FROM[target]);
    lines.push(`- ${formatName(target)}: ${entries.map(([from, to]) => `\`${from}\` → ${to}`).join(', ')}`);
  }
  lines.push('', 'The intermediate reason, written for each caller:', '');
  const reasons = Object.keys(STOP_TO.chat) as (keyof typeof STOP_TO.chat)[];
  lines.push(
    `| reason | ${CALLERS.map(formatName).join(' | ')} |`,
    `| - | ${CALLERS.map(() => '-').join(' | ')} |`,
  );
  for (const r of reasons) lines.push(`| ${r} | ${CALLERS.map((c) => `\`${STOP_TO[c][r]}\``).join(' | ')} |`);
  return lines.join('\n');
}

/** How each format counts tokens (readChatUsage, readMessagesUsage, readGenerateUsage and their writers). */
const USAGE: Record<CallFormat, string> = {
  chat: '`prompt_tokens` (cache reads and writes included; `prompt_tokens_details.cached_tokens`, `cache_write_tokens`), `completion_tokens` (reasoning included; `completion_tokens_details.reasoning_tokens`)',
  messages:
    '`input_tokens` (cache reads and writes apart: `cache_read_input_tokens`, `cache_creation_input_tokens`), `output_tokens` (thinking included; `output_tokens_details.thinking_tokens`)',
  generate:
    '`promptTokenCount` (cached included: `cachedContentTokenCount`; `toolUsePromptTokenCount` added to input), `candidatesTokenCount` (thinking apart: `thoughtsTokenCount`)',
  responses:
    '`input_tokens` (cache reads and writes included; `input_tokens_details.cached_tokens`, `cache_write_tokens`), `output_tokens` (reasoning included; `output_tokens_details.reasoning_tokens`)',
};

function usageSection(): string {
  const lines = [
    '### Usage',
    '',
    'Read from the target’s answer into input (uncached), cache reads, cache writes, output (reasoning included) and reasoning, and written in the caller’s terms, totals recomputed:',
    '',
  ];
  for (const f of CALLERS) lines.push(`- ${formatName(f)}: ${USAGE[f]}`);
  lines.push(
    '',
    'A format without cache writes (Gemini) reports them inside its prompt count; one without a reasoning count (a chat server that reports none) reports 0.',
  );
  return lines.join('\n');
}

export function renderGenerated(): string {
  return [
    GENERATED_MARK,
    '',
    '## The mapping table',
    '',
    'For each caller format, each request field against each target format: **passed** (same name and meaning), **mapped** (to what), **dropped** (left out, deliberately: why) or **refused** (a 400 in the caller’s error shape naming the field; a value named after it is left out instead, as it asks for nothing). A field no table lists is refused too.',
    '',
    ...CALLERS.flatMap((c) => [fieldsSection(c), '']),
    stopSection(),
    '',
    usageSection(),
    '',
  ].join('\n');
}
