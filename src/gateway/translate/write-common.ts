import type { Message, Part, Reasoning } from './ir';

/** Consecutive messages of one role as one (Gemini wants a parallel call's results in one turn). */
export function mergeTurns(messages: readonly Message[]): Message[] {
  const out: Message[] = [];
  for (const m of messages) {
    const last = out[out.length - 1];
    if (last && last.role === m.role) last.content = [...last.content, ...m.content];
    else out.push({ role: m.role, content: m.content });
  }
  return out;
}

/** The text of a tool result's parts (formats whose results hold text only). */
export const resultText = (content: readonly Part[]): string =>
  content
    .map((p) =>
      p.type === 'text' ? p.text : p.type === 'document' && p.source.kind === 'text' ? p.source.text : '',
    )
    .filter((t) => t)
    .join('\n\n');

/**
 * A thinking budget as an effort level, for targets that take levels only: 0 is none, under 4,096 tokens low, under
 * 16,384 medium, more high.
 */
export function effortOfBudget(r: Reasoning): Reasoning['effort'] {
  if (r.effort) return r.effort;
  if (r.budget === undefined || r.budget < 0) return undefined;
  if (r.budget === 0) return 'none';
  return r.budget < 4096 ? 'low' : r.budget < 16384 ? 'medium' : 'high';
}
